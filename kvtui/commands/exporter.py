"""`kvtui exporter`: follow one server's log (a local file, or a host's over SSH) and its
/metrics where it serves them, and serve kvtui's verdicts as `kvtui_*` Prometheus series on an
HTTP port (issue 38 point 4). Also
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

from kvtui.core.pipeline.shared import SharedSession
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
    p.add_argument("--metrics", metavar="URL",
                   help="the server's /metrics, used as given (default: the port its logged "
                        "arguments name on the host's loopback: with --host through the SSH "
                        "connection, else on this machine)")
    p.add_argument("--metrics-port", type=int, metavar="N",
                   help="the server's /metrics port on the host's loopback (instead of the "
                        "one its logged arguments name)")
    p.add_argument("--metrics-interval", type=float, default=2.0, metavar="S",
                   help="seconds between /metrics scrapes (1-5, default 2; doubled after a "
                        "failure)")
    p.add_argument("--no-metrics", action="store_true", help="do not read the server's /metrics")


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


class Exported(SharedSession):
    """One followed log: its session, fed by the follower's thread and by the metrics
    poller's (the server's own /metrics), read by the scrapes of kvtui's endpoint."""

    def __init__(self, server: str) -> None:
        super().__init__()
        self.server = server

    def emit(self, items: list[Any]) -> None:
        from kvtui.sources.base import SourceLine

        with self.lock:
            for item in items:
                if isinstance(item, SourceLine):
                    self.feed_line(item.source, item.line_no, item.text)

    def endpoint(self) -> tuple[int | None, str]:
        """Where the server serves /metrics, as its engine reads its logged arguments."""
        from kvtui.core.engine import metrics_endpoint

        with self.lock:
            engine = self.session.engine
            server_args = dict(self.session.state.current.server_args)
        number, why = metrics_endpoint(engine, server_args)
        return number, why if number is not None else \
            f"{why}; --metrics-port or --metrics names the endpoint"

    def snapshots(self) -> list[Any]:
        from kvtui.core.export_prometheus import Snapshot

        with self.lock:
            return [Snapshot(self.server, self.report(), self.line_age())]


def connector_of(args: argparse.Namespace) -> Any:
    from kvtui.core.fleet.config import Entry
    from kvtui.sources.fleet import ReadOptions, connector_for

    return connector_for(Entry(host=args.host), ReadOptions(config=args.config))


def source_for(args: argparse.Namespace) -> Any:
    if args.host:
        from kvtui.sources.ssh.follow import RemoteFollower, Target

        return RemoteFollower(connector_of(args), Target("file", args.log),
                              lines=0 if args.from_end else None, host_label=args.host)
    from kvtui.sources.local import LocalFollower

    return LocalFollower(args.log, from_start=not args.from_end)


def metrics_poller(args: argparse.Namespace, exported: Exported) -> Any:
    """The server's /metrics beside its log (issue 38 point 4: "its /metrics where enabled"),
    fed to the exported session on a thread of its own; None with --no-metrics. --metrics URL
    is scraped as given; else the port (--metrics-port, or the engine's reading of the logged
    arguments, asked at each scrape: the log may name it only later) on the host's loopback:
    through a direct-tcpip channel of an SSH connection of its own with --host (the
    follower's is its own to drop), on this machine's otherwise (an exporter beside the
    server). A server without /metrics (SGLang without --enable-metrics) is scraped not at
    all: its state says so."""
    if args.no_metrics:
        return None
    from kvtui.sources.metrics import MetricsPoller, Scraper, ScrapeResult, fetch

    def port() -> tuple[int | None, str]:
        if args.metrics_port:
            return args.metrics_port, "--metrics-port"
        return exported.endpoint()

    if args.metrics:
        scraper = Scraper(args.metrics, args.metrics_interval, clock=time.time)
    elif args.host:
        from kvtui.sources.ssh.metrics import channel_fetcher, reconnecting

        scraper = Scraper(f"ssh://{args.host}/metrics", args.metrics_interval, clock=time.time,
                          fetcher=channel_fetcher(reconnecting(connector_of(args)), port))
    else:
        def local(url: str, timeout: float, clock: Any) -> ScrapeResult:
            number, why = port()
            if number is None:
                return ScrapeResult("not_enabled", None, why, clock())
            return fetch(f"http://127.0.0.1:{number}/metrics", timeout, clock)

        scraper = Scraper("http://127.0.0.1/metrics", args.metrics_interval, clock=time.time,
                          fetcher=local)
    return MetricsPoller(scraper, exported, f"{exported.server} /metrics").start()


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
    poller = metrics_poller(args, exported)
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
        if poller is not None:
            poller.close()
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
