"""`kvtui exporter`: follow one server's log (a local file, or a host's over SSH) and serve
kvtui's verdicts as `kvtui_*` Prometheus series on an HTTP port (issue 38 point 4). Also
`kvtui check --format prometheus [--output FILE]` (`write_check`), the textfile-collector form.

The series are `kvtui.core.export_prometheus`'s; the log is folded by the one pipeline as it
arrives, and a scrape builds the report (memoised per line count, so scrapes between lines
cost nothing but the exposition).
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from typing import Any

from kvtui.core.report_types import Report


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("log", metavar="LOG", help="the server's log: a local file, or a path on "
                   "--host")
    p.add_argument("--host", metavar="HOST", help="follow LOG on this host over SSH (an "
                   "ssh_config alias or a host name)")
    p.add_argument("-F", "--config", metavar="FILE", help="ssh config file (with --host)")
    p.add_argument("--server", metavar="NAME",
                   help="the `server` label (default: --host, else the log's path)")
    p.add_argument("--port", type=int, default=9842, metavar="N",
                   help="HTTP port for /metrics (default 9842)")
    p.add_argument("--bind", default="127.0.0.1", metavar="ADDR",
                   help="address to listen on (default 127.0.0.1; 0.0.0.0 for all)")
    p.add_argument("--from-end", action="store_true",
                   help="start at the log's end instead of reading it from its start")


def write_check(reports: list[Report], args: argparse.Namespace) -> int:
    """`kvtui check --format prometheus`: every file's series, to --output (atomically) or
    stdout; the exit code is check's gate."""
    from kvtui.core.export_prometheus import Snapshot, exposition, write_atomically
    from kvtui.core.gate import gate

    snaps = [Snapshot(r.sources[0].name if r.sources else "-", r) for r in reports]
    data = exposition(snaps)
    output = getattr(args, "output", None)
    if output:
        try:
            write_atomically(output, data)
        except OSError as exc:
            print(f"kvtui: {output}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    return gate(reports, args.fail_on)


class Exported:
    """One followed log: its session, fed by the follower's thread, read by the scrapes."""

    def __init__(self, server: str) -> None:
        from kvtui.core.pipeline import Session

        self.server = server
        self.session = Session()
        self.lock = threading.Lock()
        self.last_line: float | None = None  # monotonic time of the last line
        self._memo: tuple[int, Report] | None = None

    def emit(self, items: list[Any]) -> None:
        from kvtui.sources.base import SourceLine

        with self.lock:
            for item in items:
                if isinstance(item, SourceLine):
                    self.session.feed_line(item.source, item.line_no, item.text)
                    self.last_line = time.monotonic()

    def snapshots(self) -> list[Any]:
        from kvtui.core.export_prometheus import Snapshot

        with self.lock:
            n = self.session.lines
            if self._memo is None or self._memo[0] != n:
                self._memo = (n, self.session.report())
            report = self._memo[1]
            age = time.monotonic() - self.last_line if self.last_line is not None else None
        return [Snapshot(self.server, report, age)]


def source_for(args: argparse.Namespace) -> Any:
    if args.host:
        from kvtui.core.fleet.config import Entry
        from kvtui.sources.fleet import ReadOptions, connector_for
        from kvtui.sources.ssh.follow import RemoteFollower, Target

        connector = connector_for(Entry(host=args.host), ReadOptions(config=args.config))
        return RemoteFollower(connector, Target("file", args.log), lines=0 if args.from_end
                              else None, host_label=args.host)
    from kvtui.sources.local import LocalFollower

    return LocalFollower(args.log, from_start=not args.from_end)


def serve(args: argparse.Namespace, stop: threading.Event,
          ready: Any = None) -> int:
    """Follow and serve until `stop` is set; `ready(port)` once the port listens (tests)."""
    from prometheus_client import start_http_server

    from kvtui.core.export_prometheus import registry_of

    exported = Exported(args.server or args.host or args.log)
    source = source_for(args)
    follower = threading.Thread(target=source.run, args=(exported.emit, stop), daemon=True,
                                name="kvtui-exporter-follow")
    follower.start()
    httpd, thread = start_http_server(args.port, args.bind, registry_of(exported.snapshots))
    try:
        if ready is not None:
            ready(httpd.server_port)
        while not stop.wait(0.5):
            pass
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
        follower.join(timeout=5)
    return 0


def run(args: argparse.Namespace) -> int:
    import signal

    stop = threading.Event()

    def ended(_signum: int, _frame: Any) -> None:
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, ended)
    try:
        return serve(args, stop, ready=lambda port: print(
            f"kvtui exporter: serving http://{args.bind}:{port}/metrics", file=sys.stderr))
    except OSError as exc:
        print(f"kvtui exporter: {exc.strerror or exc}", file=sys.stderr)
        return 2
