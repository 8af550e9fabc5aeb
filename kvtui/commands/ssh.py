"""`kvtui ssh HOST`: follow an SGLang log on a remote host, or check it headless.

Module-level imports are stdlib only: `kvtui --help` builds every subcommand's parser, and must
not pay for paramiko. Everything that can fail before the TUI (config, passphrase, host key,
authentication, discovery) happens first, in the terminal, with a one-line message and exit 2.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any


def _positive_int(text: str) -> int:
    from kvtui.commands.replay import positive_int

    return positive_int(text)


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("host", metavar="HOST", help="host or ssh_config alias (user@host works too)")
    p.add_argument("-p", "--port", type=int, help="port (overrides ssh_config)")
    p.add_argument("-l", "--user", help="login user (overrides ssh_config)")
    p.add_argument("-i", "--identity", metavar="KEY", help="private key file, tried first")
    p.add_argument("-F", "--config", metavar="FILE", help="ssh config file (default ~/.ssh/config)")
    p.add_argument("--accept-new-host-key", action="store_true",
                   help="trust a host key never seen before (recorded in kvtui's known_hosts); "
                        "a changed key is always refused")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--log", metavar="PATH", help="follow this log file on the host")
    src.add_argument("--docker", metavar="CONTAINER", help="follow `docker logs` of a container")
    src.add_argument("--journal", metavar="UNIT", help="follow `journalctl -u UNIT`")
    src.add_argument("--cmd", metavar="COMMAND", help="follow the output of a shell command")
    hist = p.add_mutually_exclusive_group()
    hist.add_argument("--lines", type=int, metavar="N", help="start with the last N lines")
    hist.add_argument("--all", action="store_true", help="start with the whole log (default)")
    p.add_argument("--check", action="store_true",
                   help="headless: read what is logged so far, inspect the checkpoint, print the "
                        "report like `kvtui check`, exit 0/1 by --fail-on (2 on errors)")
    p.add_argument("--json", action="store_true", help="with --check: print one JSON object")
    p.add_argument("--fail-on", choices=("critical", "warning", "never"), default="critical",
                   help="with --check: exit 1 at or above this alert level (default critical)")
    p.add_argument("--list", action="store_true",
                   help="list the SGLang logs discovered on the host and exit")
    p.add_argument("--no-checkpoint", action="store_true",
                   help="do not read the model's config/index files over SFTP")
    p.add_argument("--python", default="python3", metavar="EXE",
                   help="python interpreter on the host for the log follower (default python3)")
    p.add_argument("--connect-timeout", type=float, default=None, metavar="S",
                   help="seconds to wait for the connection (default ConnectTimeout or 10)")
    p.add_argument("--log-window", type=_positive_int, default=20000, metavar="N",
                   help="lines kept in the log pane (default 20000)")


def _err(msg: str) -> None:
    print(f"kvtui: {msg}", file=sys.stderr)


def _prompt(path: str) -> str | None:
    if not sys.stdin.isatty():
        return None
    try:
        return getpass.getpass(f"Enter passphrase for key '{path}': ")
    except (EOFError, KeyboardInterrupt):
        return None


def run(args: argparse.Namespace) -> int:
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
    identities = load_identities(spec, _prompt, extra_specs=jumps)
    connector = Connector(spec, identities, accept_new_host_key=args.accept_new_host_key,
                          timeout=args.connect_timeout)
    try:
        conn = connector.connect()
    except SSHError as exc:
        _err(str(exc))
        return 2
    for msg in connector.messages:
        print(f"kvtui: {msg}", file=sys.stderr)
    connector.messages.clear()
    try:
        return _run_connected(args, host, connector, conn)
    finally:
        conn.close()


def _target_from_args(args: argparse.Namespace) -> Any:
    from kvtui.sources.ssh.follow import Target

    for kind, value in (("file", args.log), ("docker", args.docker),
                        ("journal", args.journal), ("cmd", args.cmd)):
        if value:
            return Target(kind, value, python=args.python)
    return None


def _run_connected(args: argparse.Namespace, host: str, connector: Any, conn: Any) -> int:
    from kvtui.sources.ssh.discover import discover
    from kvtui.sources.ssh.follow import Target

    target = _target_from_args(args)
    model_path = None
    python = None
    if target is None or args.list:
        found = discover(conn)
        usable = [c for c in found.candidates if c.kind != "none"]
        if args.list or args.check or not sys.stdin.isatty() or not usable:
            _print_candidates(host, found)
            return 0
        choice = _pick(host, found.candidates)
        if choice is None:
            return 0
        target = Target(choice.kind, choice.target, python=args.python)
        model_path, python = choice.model_path, choice.python
    lines = None if args.all or args.lines is None else max(0, args.lines)
    if args.check:
        return _check(args, host, connector, conn, target, lines, model_path, python)
    return _interactive(args, host, connector, conn, target, lines, model_path, python)


def _print_candidates(host: str, found: Any) -> None:
    if not found.candidates:
        print(f"No SGLang logs found on {host}. Name one with --log PATH, --docker CONTAINER, "
              f"--journal UNIT or --cmd COMMAND.")
    else:
        print(f"SGLang logs found on {host}:")
        for i, c in enumerate(found.candidates, 1):
            print(f"  {i}. {c.label}")
            if c.model_path:
                print(f"     model: {c.model_path}")
            if c.detail:
                print(f"     {c.detail}")
            flags = c.source_flag()
            if flags:
                import shlex

                print(f"     kvtui ssh {shlex.quote(host)} {' '.join(map(shlex.quote, flags))}")
    for note in found.notes:
        print(f"note: {note}")


def _pick(host: str, candidates: list[Any]) -> Any:
    """Choose among the discovered sources: a Textual picker on a terminal, else a numbered
    prompt (pipes, scripts); one candidate is taken as is."""
    usable = [c for c in candidates if c.kind != "none"]
    if len(usable) == 1:
        return usable[0]
    if usable and sys.stdin.isatty() and sys.stdout.isatty():
        from kvtui.ui.picker import pick

        labels = [(c.label, f"model {c.model_path}" if c.model_path else (c.detail or ""))
                  for c in usable]
        index = pick(f"SGLang logs found on {host}", labels)
        return None if index is None else usable[index]
    print(f"SGLang logs found on {host}:")
    for i, c in enumerate(usable, 1):
        model = f"  [model {c.model_path}]" if c.model_path else ""
        print(f"  {i}. {c.label}{model}")
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
           lines: int | None, model_path: str | None, python: str | None) -> int:
    from kvtui.commands.check import render_and_exit

    try:
        analyzer = analyse_remote(connector, conn, target, lines, host, model_path)
    except _CheckError as exc:
        _err(str(exc))
        return 2
    report = analyzer.report()
    path = model_path or report.model.path
    if path and not args.no_checkpoint:
        analyzer.configure(checkpoint=_inspect_after_read(connector, conn, path, host, python))
        report = analyzer.report()
    return render_and_exit(report, as_json=args.json, fail_on=args.fail_on)


def _inspect_after_read(connector: Any, conn: Any, path: str, host: str,
                        python: str | None) -> Any:
    """The checkpoint, read on `conn` or, if the read lost it (the follower closes a lent
    connection on a drop), on a fresh one; whatever fails becomes a note, never a traceback."""
    from kvtui.core.checkpoint import CheckpointFacts
    from kvtui.sources.ssh.checkpoint import inspect_checkpoint
    from kvtui.sources.ssh.connect import SSHError

    fresh = None
    try:
        if not conn.is_active():
            fresh = conn = connector.connect()
            connector.messages.clear()
        return inspect_checkpoint(conn, path, host=host, python=python)
    except SSHError as exc:
        facts = CheckpointFacts(model_path=path)
        facts.notes.append(f"checkpoint not inspected: reconnecting failed: {exc}")
        return facts
    except Exception as exc:  # best effort, as in the TUI: the log report still stands
        facts = CheckpointFacts(model_path=path)
        facts.notes.append(f"checkpoint inspection failed: {type(exc).__name__}: {exc}")
        return facts
    finally:
        if fresh is not None:
            fresh.close()


class _CheckError(Exception):
    pass


def analyse_remote(connector: Any, conn: Any, target: Any, lines: int | None, host: str,
                   model_path: str | None = None) -> Any:
    """What has been logged so far, analysed: the `--check` read (also used by bench_ssh.py).

    Raises _CheckError with a one-line message when the log cannot be read.
    """
    analyzer = None
    if _worth_spooling(conn, target, lines):
        analyzer = _read_big_log(connector, _live(conn), target, lines, host)
    if analyzer is None:  # the spool read may have lost (and closed) `conn`
        analyzer = _read_log(connector, _live(conn), target, lines, host, model_path)
    return analyzer


def _live(conn: Any) -> Any:
    """`conn` to lend to a follower, or None (it then connects through the connector) when the
    connection is gone: a follower closes a lent connection when its stream is lost."""
    return conn if conn is not None and conn.is_active() else None


def _run_headless(follower: Any) -> None:
    """Run a stop-at-end follower to completion; its last error notice becomes _CheckError."""
    import threading

    from kvtui.sources.base import SourceNotice

    errors: list[str] = []

    def emit(items: list[Any]) -> None:
        from kvtui.sources.base import SourceLine

        # command sources still hand over SourceLines; feed_many per run of consecutive lines
        # keeps the per-source line counts that `kvtui check` reports
        run: list[str] = []
        first = 0
        for item in items:
            if isinstance(item, SourceLine):
                if not run:
                    first = item.line_no
                run.append(item.text)
                continue
            if run:
                follower.on_texts(run, first)
                run = []
            if isinstance(item, SourceNotice) and item.state == "error":
                errors.append(item.message)
        if run:
            follower.on_texts(run, first)

    follower.run(emit, threading.Event())
    if errors:
        raise _CheckError(errors[-1])


def _read_log(connector: Any, conn: Any, target: Any, lines: int | None, host: str,
              model_path: str | None) -> Any:
    """Lines straight into one pipeline Session, in bulk (no SourceLine per line)."""
    from kvtui.core.pipeline import Session
    from kvtui.sources.ssh.follow import RemoteFollower

    analyzer = Session()

    def on_texts(texts: list[str], first: int) -> None:
        analyzer.feed_lines(follower.name, texts, first)

    follower = RemoteFollower(connector, target, lines=lines, stop_at_end=True,
                              connection=conn, host_label=host, model_path=model_path,
                              on_texts=on_texts)
    _run_headless(follower)
    return analyzer


def _worth_spooling(conn: Any, target: Any, lines: int | None) -> bool:
    """A whole big file on a multi-core machine: copy it, then analyse it on every core the way
    `kvtui check` does locally (otherwise the remote read would be the slower path)."""
    import os

    from kvtui.core.pipeline import MIN_PARALLEL_BYTES

    if target.kind != "file" or lines is not None or (os.cpu_count() or 1) < 2:
        return False
    try:
        size = conn.sftp().stat(target.value).st_size or 0
    except Exception:
        return False
    return size >= MIN_PARALLEL_BYTES


def _read_big_log(connector: Any, conn: Any, target: Any, lines: int | None,
                  host: str) -> Any:
    """Spool the file to a private temporary file and fold it on all cores; None to fall back."""
    import os
    import tempfile

    from kvtui.core.pipeline import Session
    from kvtui.sources.readers import ranged_file
    from kvtui.sources.ssh.follow import RemoteFollower

    fd, tmp = tempfile.mkstemp(prefix="kvtui-ssh-", suffix=".log")
    try:
        with os.fdopen(fd, "wb", buffering=1 << 20) as spool:
            follower = RemoteFollower(connector, target, lines=lines, stop_at_end=True,
                                      connection=conn, host_label=host, spool=spool)
            _run_headless(follower)
        if follower.spool_broken:  # rotated or truncated while being copied: read it plainly
            return None
        analyzer = Session()
        analyzer.fold_file(ranged_file(tmp), follower.name)
        return analyzer
    finally:
        os.unlink(tmp)


def _interactive(args: argparse.Namespace, host: str, connector: Any, conn: Any, target: Any,
                 lines: int | None, model_path: str | None, python: str | None) -> int:
    from kvtui.core.pipeline import Session
    from kvtui.sources.ssh.follow import RemoteFollower

    try:
        from kvtui.ui.app import run_app
    except ImportError as exc:
        _err(f"the TUI is not available ({exc}); use --check for a headless report")
        return 2
    session = Session()
    facts: list[Any] = []

    def on_checkpoint(c: Any, path: str) -> str:
        message = _inspector(host, python, facts)(c, path)
        session.configure(checkpoint=facts[-1])
        return message

    # The follower borrows `conn` for its first session (and closes nothing it was lent);
    # later sessions use fresh connections from the connector.
    follower = RemoteFollower(connector, target, lines=lines, connection=conn, host_label=host,
                              model_path=model_path,
                              on_checkpoint=None if args.no_checkpoint else on_checkpoint)
    return run_app(follower, f"{host}:{target.label}", session=session,
                   log_window=args.log_window)
