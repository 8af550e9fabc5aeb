"""`kvtui ssh HOST`: follow an SGLang or vLLM log on a remote host, or check it headless.

Module-level imports are stdlib only: `kvtui --help` builds every subcommand's parser, and must
not pay for paramiko. Everything that can fail before the TUI (config, passphrase, host key,
authentication, discovery) happens first, in the terminal, with a one-line message and exit 2.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import TYPE_CHECKING, Any

from kvtui.core.engine import release_options

if TYPE_CHECKING:
    from kvtui.core.report_types import Report


# `--check` without a source to read: discovery found several logs (choose one) or none. Not 0
# (nothing was checked), not 1 (no alert was found), not 2 (nothing failed), not 3 (check's "no
# SGLang or vLLM line recognised"): a gate never reads "choose a source" as a pass.
EXIT_CHOOSE = 4


def _positive_int(text: str) -> int:
    from kvtui.commands.replay import positive_int

    return positive_int(text)


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("host", metavar="HOST", nargs="+",
                   help="host or ssh_config alias (user@host works too); several: the fleet "
                        "(kvtui fleet, one server per host, discovery on each)")
    p.add_argument("-p", "--port", type=int, help="port (overrides ssh_config)")
    p.add_argument("-l", "--user", help="login user (overrides ssh_config)")
    p.add_argument("-i", "--identity", metavar="KEY", help="private key file, tried first")
    p.add_argument("-F", "--config", metavar="FILE", help="ssh config file (default ~/.ssh/config)")
    p.add_argument("--accept-new-host-key", action="store_true",
                   help="trust a host key never seen before (recorded in kvtui's known_hosts); "
                        "a changed key is always refused")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--log", metavar="PATH", help="follow this log file on the host")
    src.add_argument("--docker", metavar="CONTAINER",
                     help="follow a container on the host: docker logs --follow --timestamps")
    src.add_argument("--kubectl", metavar="POD",
                     help="follow a pod with the host's kubectl: kubectl logs --follow "
                          "--timestamps")
    src.add_argument("--journal", metavar="UNIT",
                     help="follow a systemd unit on the host: journalctl --follow -o short-iso")
    src.add_argument("--cmd", metavar="COMMAND", help="follow the output of a shell command")
    p.add_argument("-n", "--namespace", metavar="NS", help="with --kubectl: the pod's namespace")
    p.add_argument("-c", "--container", metavar="NAME",
                   help="with --kubectl: the container in the pod")
    p.add_argument("--previous", action="store_true",
                   help="with --kubectl: read the previous (crashed) instance of the container")
    hist = p.add_mutually_exclusive_group()
    hist.add_argument("--lines", type=int, metavar="N", help="start with the last N lines")
    hist.add_argument("--all", action="store_true", help="start with the whole log (default)")
    p.add_argument("--check", action="store_true",
                   help="headless: read what is logged so far, inspect the checkpoint, print the "
                        "report like `kvtui check`, exit 0/1 by --fail-on (2 on errors, "
                        f"{EXIT_CHOOSE} when no source was named and discovery cannot choose one)")
    p.add_argument("--json", action="store_true",
                   help="with --check or --list: print one JSON object")
    p.add_argument("--fail-on", choices=("critical", "warning", "never"), default="critical",
                   help="with --check: exit 1 at or above this alert level (default critical)")
    p.add_argument("--list", action="store_true",
                   help="list the SGLang and vLLM logs discovered on the host and exit")
    p.add_argument("--no-checkpoint", action="store_true",
                   help="do not read the model's config/index files over SFTP")
    p.add_argument("--model", metavar="M",
                   help="model preset, config.json or model directory for the calculator")
    p.add_argument("--checkpoint", metavar="DIR",
                   help="a local copy of the served checkpoint, read here instead of over SFTP")
    for option in release_options():  # each engine's (`--sglang-version`, ...)
        p.add_argument(option.flag, metavar="X", help=option.help)
    p.add_argument("--metrics-port", type=_positive_int, metavar="PORT",
                   help="the server's /metrics port on the host, read through this SSH "
                        "connection (default: the --port the log shows, else the engine's "
                        "default: SGLang 30000 with --enable-metrics, vLLM 8000)")
    p.add_argument("--metrics-interval", type=float, default=2.0, metavar="S",
                   help="seconds between /metrics scrapes in the TUI (1-5, default 2)")
    p.add_argument("--no-metrics", action="store_true",
                   help="do not read the server's /metrics")
    p.add_argument("--record", metavar="DIR",
                   help="keep the log lines and the /metrics scrapes in DIR (log.txt, "
                        "metrics.jsonl): `kvtui replay DIR` and `kvtui check DIR` read them")
    p.add_argument("--python", default="python3", metavar="EXE",
                   help="python interpreter on the host for the log follower (default: the "
                   "first python3 on the host's PATH outside a */shims directory)")
    p.add_argument("--connect-timeout", type=float, default=None, metavar="S",
                   help="seconds to wait for the connection (default ConnectTimeout or 10)")
    p.add_argument("--log-window", type=_positive_int, default=20000, metavar="N",
                   help="lines kept in the log pane (default 20000)")
    from kvtui.commands.fleet import add_fleet_options

    add_fleet_options(p, ssh_options=False)  # --parallel, for several hosts
    p.add_argument("--reconnect-timeout", type=float, default=30.0, metavar="S",
                   help="with --check: give up (exit 2) when the host went away mid-read and "
                        "is not back within S seconds (default 30)")


def _err(msg: str) -> None:
    print(f"kvtui: {msg}", file=sys.stderr)


def _prompt(path: str) -> str | None:
    if not sys.stdin.isatty():
        return None
    try:
        return getpass.getpass(f"Enter passphrase for key '{path}': ")
    except (EOFError, KeyboardInterrupt):
        return None


class _Interrupted(BaseException):
    """SIGTERM or SIGHUP during a headless read: unwind (closing the connection), exit 128+n."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def run(args: argparse.Namespace) -> int:
    """Exit 2 on every error, never 1 (that means "alert found"), and never a traceback."""
    import os
    import signal

    previous: dict[Any, Any] = {}
    hosts = [args.host] if isinstance(args.host, str) else list(args.host)
    if len(hosts) > 1:  # the fleet (issue 38): kvtui.commands.fleet
        from kvtui.commands import fleet

        return fleet.run_hosts(hosts, args)
    args.host = hosts[0]

    import threading

    def interrupted(signum: int, frame: Any) -> None:
        # Python swallows an exception raised in a finalizer ("Exception ignored in
        # <function Group.__del__>": regex's, run by the GC wherever it runs), so a raise there
        # would be lost and the read go on to its reconnect timeout (a real-sshd test caught
        # it exiting 2): the signal is sent again in a moment, outside the finalizer.
        while frame is not None:
            if frame.f_code.co_name == "__del__":
                threading.Timer(0.05, os.kill, (os.getpid(), signum)).start()
                return
            frame = frame.f_back
        raise _Interrupted(signum)

    if args.check:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            previous[sig] = signal.signal(sig, interrupted)
    try:
        return _run(args)
    except _Interrupted as exc:
        _err(f"interrupted by {signal.Signals(exc.signum).name}")
        return 128 + exc.signum
    except Exception as exc:
        if os.environ.get("KVTUI_DEBUG"):
            raise
        _err(f"unexpected error: {type(exc).__name__}: {_inert(str(exc))} "
             f"(KVTUI_DEBUG=1 shows the traceback)")
        return 2
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _inert(text: str, limit: int = 400) -> str:
    """Safe to print: escapes made inert, a name's non-UTF-8 bytes as \\xNN."""
    from kvtui.core.text import inert
    from kvtui.sources.ssh.follow import visible

    return inert(visible(text), limit)


def _label(text: str) -> str:
    """A candidate's one line: a newline in a file name shown as \\n (the list stays a list)."""
    return _inert(text.replace("\n", "\\n"))


def _shell_word(text: str) -> str:
    """`text` as one shell word that is safe to print: shlex quoting, or ANSI-C `$'...'` with
    escapes when it holds control characters (printed raw they would drive the terminal)."""
    import shlex

    if text.isprintable():
        return shlex.quote(text)
    out = []
    for ch in text:
        if ch in "\\'":
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        else:  # the file name's own bytes, so the shell rebuilds exactly that name
            out.extend(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogateescape"))
    return "$'" + "".join(out) + "'"


def _run(args: argparse.Namespace) -> int:
    from kvtui.sources.ssh.config import SSHConfigError, resolve_host, resolve_jump
    from kvtui.sources.ssh.connect import Connector, SSHError, load_identities

    host, user = args.host, args.user
    if "@" in host and not user:
        user, host = host.rsplit("@", 1)
    try:
        spec = resolve_host(host, config_path=args.config, port=args.port, user=user,
                            identity=args.identity)
        jumps = [resolve_jump(h, spec) for h in spec.proxy_jump]
    except SSHConfigError as exc:
        _err(str(exc))
        return 2
    try:
        options = pipeline_options(args)
    except ValueError as exc:
        _err(_inert(str(exc), 1000))
        return 2
    identities = load_identities(spec, _prompt, extra_specs=jumps)
    connector = Connector(spec, identities, accept_new_host_key=args.accept_new_host_key,
                          timeout=args.connect_timeout)
    try:
        conn = connector.connect()
    except SSHError as exc:
        _err(str(exc))
        return 2
    for msg in connector.messages:
        _err(_inert(msg, 1000))
    connector.messages.clear()
    try:
        return _run_connected(args, host, connector, conn, options)
    finally:
        conn.close()


def _target_from_args(args: argparse.Namespace) -> Any:
    """The source the flags name, or None (discover one). ValueError: misuse (the checks of
    `kvtui tail`'s client flags: a name that starts with "-" would be read as a flag)."""
    from kvtui.commands.tail import client_for
    from kvtui.sources.ssh.follow import Target

    client_for(args)
    for kind, value in (("file", args.log), ("docker", args.docker), ("kubectl", args.kubectl),
                        ("journal", args.journal), ("cmd", args.cmd)):
        if value:
            return Target(kind, value, python=args.python, namespace=args.namespace,
                          container=args.container, previous=args.previous)
    return None


def pipeline_options(args: argparse.Namespace) -> Any:
    """The user's --model, --checkpoint and release options as the pipeline's `Options`
    (checked as `kvtui check` checks them: a ValueError names what is wrong): every session of
    the run, the read-ahead preview included (`Session.preview_lines`), is built with them."""
    from kvtui.commands.check import _inspect_checkpoint, _releases, _resolve_model
    from kvtui.core.pipeline import Options

    checkpoint = getattr(args, "checkpoint", None)
    return Options(model=_resolve_model(getattr(args, "model", None)), releases=_releases(args),
                   checkpoint=_inspect_checkpoint(checkpoint) if checkpoint else None)


def _run_connected(args: argparse.Namespace, host: str, connector: Any, conn: Any,
                   options: Any = None) -> int:
    from kvtui.sources.ssh.discover import discover
    from kvtui.sources.ssh.follow import Target

    try:
        target = _target_from_args(args)
    except ValueError as exc:
        _err(str(exc))
        return 2
    model_path = None
    python = None
    if target is None or args.list:
        found = discover(conn)
        usable = [c for c in found.candidates if c.kind != "none"]
        if args.list or args.check or not sys.stdin.isatty() or not usable:
            # `--check` read nothing: a distinct code, so a gate never takes the list for a pass
            code = EXIT_CHOOSE if args.check and not args.list else 0
            if args.json:
                _print_candidates_json(host, found, code)
            else:
                _print_candidates(host, found)
                if code:
                    _err(f"nothing checked: name the source to check (exit {code})")
            return code
        choice = _pick(host, found.candidates)
        if choice is None:
            return 0
        target = Target(choice.kind, choice.target, python=args.python,
                        namespace=choice.namespace, container=choice.container)
        model_path, python = choice.model_path, choice.python
    lines = None if args.all or args.lines is None else max(0, args.lines)
    if args.check:
        return _check(args, host, connector, conn, target, lines, model_path, python, options)
    return _interactive(args, host, connector, conn, target, lines, model_path, python, options)


def _print_candidates(host: str, found: Any) -> None:
    """The discovered sources; every string from the host made inert first."""
    from kvtui.core.engine import all_engines

    labels = [e.label for e in all_engines()]
    if not found.candidates:
        print(f"No {' or '.join(labels)} logs found on {host}. Name one with --log PATH, "
              f"--docker CONTAINER, --kubectl POD, --journal UNIT or --cmd COMMAND.")
    else:
        print(f"{' and '.join(labels)} logs found on {host}:")
        for i, c in enumerate(found.candidates, 1):
            print(f"  {i}. {_label(c.label)}")
            if c.model_path:
                print(f"     model: {_inert(c.model_path)}")
            if c.detail:
                print(f"     {_inert(c.detail)}")
            flags = c.source_flag()
            if flags:
                print(f"     kvtui ssh {_shell_word(host)} {' '.join(map(_shell_word, flags))}")
    for note in found.notes:
        print(f"note: {_inert(note)}")


def _print_candidates_json(host: str, found: Any, code: int) -> None:
    """The discovered sources as one JSON object (ASCII only: a name's control characters and
    non-UTF-8 bytes come out as escapes, never raw on a terminal)."""
    import json

    from kvtui import __version__
    from kvtui.sources.ssh.follow import visible

    doc = {"kvtui_version": __version__, "host": host,
           "status": "choose a source" if code else "list",
           "candidates": [{"kind": c.kind, "target": visible(c.target),
                           "label": visible(c.label), "detail": visible(c.detail), "pid": c.pid,
                           "model_path": c.model_path and visible(c.model_path),
                           "namespace": c.namespace, "container": c.container,
                           "command": " ".join(["kvtui", "ssh", *map(_shell_word, [
                               host, *c.source_flag()])]) if c.source_flag() else None}
                          for c in found.candidates],
           "notes": list(found.notes), "exit_code": code}
    sys.stdout.write(json.dumps(doc, indent=2) + "\n")


def _pick(host: str, candidates: list[Any]) -> Any:
    """Choose among the discovered sources: a Textual picker on a terminal, else a numbered
    prompt (pipes, scripts); one candidate is taken as is."""
    usable = [c for c in candidates if c.kind != "none"]
    if len(usable) == 1:
        return usable[0]
    if usable and sys.stdin.isatty() and sys.stdout.isatty():
        from kvtui.ui.picker import pick

        labels = [(_label(c.label), _inert(f"model {c.model_path}") if c.model_path
                   else _inert(c.detail or "")) for c in usable]
        index = pick(f"server logs found on {host}", labels)
        return None if index is None else usable[index]
    print(f"server logs found on {host}:")
    for i, c in enumerate(usable, 1):
        model = f"  [model {_inert(c.model_path)}]" if c.model_path else ""
        print(f"  {i}. {_label(c.label)}{model}")
    while True:
        try:
            answer = input(f"Follow which one? [1-{len(usable)}, q to quit] ").strip()
        except (EOFError, KeyboardInterrupt):
            return None
        if answer.lower() in ("q", "quit", ""):
            return None
        if answer.isdigit() and 1 <= int(answer) <= len(usable):
            return usable[int(answer) - 1]


def _inspector(host: str, python: str | None, sink: list[Any]) -> Any:
    from kvtui.sources.ssh.checkpoint import inspect_checkpoint

    def inspect(conn: Any, model_path: str) -> str:
        facts = inspect_checkpoint(conn, model_path, host=host, python=python)
        sink.append(facts)
        return facts.summary()

    return inspect


def _check(args: argparse.Namespace, host: str, connector: Any, conn: Any, target: Any,
           lines: int | None, model_path: str | None, python: str | None,
           options: Any = None) -> int:
    from kvtui.commands.check import render_and_exit
    from kvtui.sources.ssh.checkpoint import inspect_after_read

    try:
        session = analyse_remote(connector, conn, target, lines, host, model_path,
                                 give_up_after=args.reconnect_timeout, say=_Say(),
                                 on_verdict=_say_verdict, options=options)
    except _CheckError as exc:
        _err(str(exc))
        return 2
    if not args.no_metrics:
        _scrape_once(args, host, connector, conn, session)
    report = session.report()
    path = model_path or report.model.path
    if path and not args.no_checkpoint and session.options.checkpoint is None:
        session.configure(checkpoint=inspect_after_read(connector, conn, path, host, python))
        report = session.report()
    return render_and_exit(report, as_json=args.json, fail_on=args.fail_on)


def metrics_fetcher(args: argparse.Namespace, connector: Any, conn: Any, session: Any) -> Any:
    """A scrape fetcher over this SSH connection (a direct-tcpip channel to the host's
    loopback port), the port from --metrics-port or the server's arguments in `session`'s
    log, asked at each scrape. A dropped connection is replaced from the connector."""
    from kvtui.core.engine import metrics_endpoint
    from kvtui.sources.ssh.metrics import channel_fetcher, reconnecting

    def port() -> tuple[int | None, str]:
        if args.metrics_port:
            return args.metrics_port, "--metrics-port"
        number, why = metrics_endpoint(session.engine, session.state.current.server_args)
        return number, why if number is not None else f"{why}; --metrics-port names the port"

    return channel_fetcher(reconnecting(connector, conn), port)


def _scrape_once(args: argparse.Namespace, host: str, connector: Any, conn: Any,
                 session: Any) -> None:
    """`--check`: one scrape of the server's /metrics once the log is read, fed to the
    session (its facts join the report). When no port was asked for and nothing answers at
    the one the log implies, the report stays the log's and stderr says why."""
    from kvtui.sources.metrics import Scraper, deliver

    fetcher = metrics_fetcher(args, connector, conn, session)
    result = Scraper(f"ssh://{host}/metrics", fetcher=fetcher).scrape()
    if result.state != "ok" and not args.metrics_port:
        _err(f"metrics: {result.state}: {_inert(result.detail, 400)}")
        return
    deliver(result, session, f"{host} /metrics over SSH")


def _say_verdict(block: Any, report: Report) -> None:
    """The running server's start-up verdict, on stderr, while the rest of the log arrives."""
    alerts = list(report.alerts)
    worst = [a for a in alerts if a.severity == "critical"] or alerts
    what = "; ".join(f"{a.severity}: {_inert(a.title, 160)}" for a in worst[:3]) or "no alert"
    _err(f"read ahead: the start-up at line {block.first_line_no:,} says {what} "
         f"(the full report follows once the whole log is read)")


class _Say:
    """What a headless read tells the user on stderr while it runs: every event once, and a
    lost connection when it is lost and then every 10 s (never silence while waiting)."""

    def __init__(self) -> None:
        self.last_state: str | None = None
        self.last_time = 0.0

    def __call__(self, notice: Any) -> None:
        import time

        state = notice.state
        now = time.monotonic()
        if state in ("rotated", "truncated", "missing", "stale", "info") or (
                state in ("reconnecting", "live") and state != self.last_state) or (
                state == "reconnecting" and now - self.last_time >= 10):
            if state != "live" or self.last_state in ("reconnecting", "stale", "missing"):
                _err(f"{_inert(notice.source)}: {state}: {_inert(notice.message, 600)}")
            self.last_time = now
        if state != "info":
            self.last_state = state




class _CheckError(Exception):
    pass


def startup_markers(*, anchors: bool = False) -> tuple[str, ...]:
    """What starts a server, for every engine (the seam's `start_markers`): what the follower
    reads ahead, so the verdict of the running server comes before the rest of a big log."""
    from kvtui.core.engine import all_engines
    from kvtui.core.pipeline.startup import start_markers

    return tuple(m.decode("utf-8") for m in start_markers(all_engines(), anchors=anchors))


def startup_anchors() -> tuple[str, ...]:
    """The markers every server start prints (the seam's `start_anchors`): the host searches a
    whole big file only for these."""
    return startup_markers(anchors=True)


def analyse_remote(connector: Any, conn: Any, target: Any, lines: int | None, host: str,
                   model_path: str | None = None, *, give_up_after: float = 30.0,
                   say: Any = None, on_verdict: Any = None, options: Any = None) -> Any:
    """What has been logged so far, analysed as it arrives: the `--check` read (also used by
    bench_ssh.py). Blocks of lines are folded while the next ones are on the wire, on every
    core when the log is big (`Session.stream`: the size the host announced decides, as
    `Session.is_big` decides for a local file); nothing is copied to disk. The start-up region
    of the last server start, read ahead by the host, is folded on its own first and
    `on_verdict(block, report)` sees its report (the full read still folds those lines in their
    place). `options`: the pipeline's (kvtui.core.pipeline.Options; tests make small logs
    big). Raises _CheckError with a one-line message when the log cannot be read.
    """
    import threading

    from kvtui.core.pipeline import Session, StreamFold
    from kvtui.sources.base import SourceNotice
    from kvtui.sources.ssh.blocks import LineBlock
    from kvtui.sources.ssh.follow import RemoteFollower

    session = Session(options) if options is not None else Session()
    errors: list[str] = []
    feed: list[StreamFold] = []  # opened at the first block, once the host said the size

    def deliver(batch: list[Any]) -> None:
        for item in batch:
            if isinstance(item, LineBlock) and item.prelude:
                if on_verdict is not None:
                    early = session.preview_lines(item.source, item.texts,
                                                  item.first_line_no)
                    on_verdict(item, early.report())
            elif isinstance(item, LineBlock):
                if not feed:
                    feed.append(session.stream(follower.expected_bytes))
                item.fold_into(feed[0])
            elif isinstance(item, SourceNotice):
                if item.state == "error":
                    errors.append(item.message)
                elif say is not None:
                    say(item)

    live = conn if conn is not None and conn.is_active() else None
    follower = RemoteFollower(connector, target, lines=lines, stop_at_end=True, connection=live,
                              host_label=host, model_path=model_path,
                              give_up_after=give_up_after,
                              prelude_markers=startup_markers() if on_verdict is not None else (),
                              prelude_anchors=startup_anchors())
    try:
        follower.run_blocks(deliver, threading.Event())
        if feed and not errors:
            feed.pop().close()
    finally:
        for unfinished in feed:  # an error, a signal: the workers end with the read
            unfinished.abort()
    if errors:
        raise _CheckError(_inert(errors[-1], 1000))
    return session


def _interactive(args: argparse.Namespace, host: str, connector: Any, conn: Any, target: Any,
                 lines: int | None, model_path: str | None, python: str | None,
                 options: Any = None) -> int:
    from kvtui.core.pipeline import Session
    from kvtui.sources.ssh.follow import RemoteFollower

    try:
        from kvtui.ui.app import run_app
    except ImportError as exc:
        _err(f"the TUI is not available ({exc}); use --check for a headless report")
        return 2
    session = Session(options) if options is not None else Session()
    facts: list[Any] = []

    def on_checkpoint(c: Any, path: str) -> str:
        message = _inspector(host, python, facts)(c, path)
        session.configure(checkpoint=facts[-1])
        return message

    def model_path_probe() -> str | None:
        # called on the follower's thread, the one that feeds `session` (via the TUI's ingest)
        path = session.state.current.server_args.get("model_path")
        return path if isinstance(path, str) and path else None

    # The follower borrows `conn` for its first session (and closes nothing it was lent);
    # later sessions use fresh connections from the connector. The host reads ahead the
    # running server's start-up, whose verdict the TUI's ingest shows before the rest arrives.
    follower = RemoteFollower(connector, target, lines=lines, connection=conn, host_label=host,
                              model_path=model_path, model_path_probe=model_path_probe,
                              on_checkpoint=None if args.no_checkpoint
                              or session.options.checkpoint is not None else on_checkpoint,
                              prelude_markers=startup_markers(),
                              prelude_anchors=startup_anchors())
    import time

    from kvtui.sources.record import Recorder, recording

    recorder = Recorder(args.record) if args.record else None
    source: Any = recording(follower, recorder) if recorder is not None else follower
    poller = None
    if not args.no_metrics:
        from kvtui.sources.metrics import MetricsPoller, Scraper

        # a channel of the connection the follower starts on (the one this command opened):
        # when the follower drops it (it closes a lent one on a loss), the scrapes open their
        # own from the connector, as the fleet screen's do
        scraper = Scraper(f"ssh://{host}/metrics", args.metrics_interval, clock=time.time,
                          fetcher=metrics_fetcher(args, connector, conn, session))
        poller = MetricsPoller(scraper, session, f"{host} /metrics over SSH",
                               record=recorder.scrape if recorder is not None else None).start()
    try:
        return run_app(source, f"{host}:{target.label}", session=session,
                       log_window=args.log_window)
    finally:
        if poller is not None:
            poller.close()
        if recorder is not None:
            recorder.close()
