"""`kvtui fleet FILE.toml`: the servers of a deployment side by side, and the alerts that exist
only between them (issue 38). `--check` reads every server's log so far over SSH (in parallel,
`--parallel` at a time), prints every report and the cross-server alerts, and exits with one
code (`kvtui.core.fleet.result.exit_code`: check's codes; an unreachable host is an error).

`kvtui ssh HOST1 HOST2 ...` is the same fleet with one entry per host and discovery on each.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from kvtui.core.fleet.config import Entry, FleetConfigError, parse
from kvtui.sources.fleet import ReadOptions, read_all

DEFAULT_PARALLEL = 8  # hosts read at once: SSH handshakes and discovery are host-bound


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE.toml", help="the fleet: one [[server]] table each "
                   "(host, optional log / docker / kubectl / journal, role, metrics_port)")
    add_fleet_options(p)


def add_fleet_options(p: argparse.ArgumentParser, *, ssh_options: bool = True) -> None:
    """The options `kvtui fleet` shares with `kvtui ssh HOST1 HOST2 ...` (which has its own
    ssh options: `ssh_options` False)."""
    if ssh_options:
        p.add_argument("--check", action="store_true",
                       help="headless: read every server's log so far, print the reports and "
                            "the cross-server alerts, exit with one code")
        p.add_argument("--json", action="store_true", help="with --check: one JSON object")
        p.add_argument("--fail-on", choices=("critical", "warning", "never"),
                       default="critical",
                       help="exit 1 when an alert at or above this level exists (default "
                            "critical); an unreachable server exits 2")
        p.add_argument("-F", "--config", metavar="FILE",
                       help="ssh config file (default ~/.ssh/config)")
        p.add_argument("--accept-new-host-key", action="store_true",
                       help="trust and remember a host key seen for the first time")
        p.add_argument("--connect-timeout", type=float, default=None, metavar="S",
                       help="give up connecting to a host after S seconds")
        p.add_argument("--reconnect-timeout", type=float, default=30.0, metavar="S",
                       help="with --check: give up on a lost host after S seconds")
        p.add_argument("--python", default="python3", metavar="EXE",
                       help="python on the hosts (default python3)")
        p.add_argument("--no-checkpoint", action="store_true",
                       help="with --check: do not read the served checkpoint's KV scales on "
                            "each host (the FP8 alerts then rest on the log alone)")
    p.add_argument("--parallel", type=int, default=DEFAULT_PARALLEL, metavar="N",
                   help=f"hosts connected and searched at once (default {DEFAULT_PARALLEL})")


def _err(msg: str) -> None:
    from kvtui.core.text import inert

    sys.stderr.write(f"kvtui fleet: {inert(msg, 1000)}\n")


def run(args: argparse.Namespace) -> int:
    try:
        with open(args.file, encoding="utf-8") as f:
            entries = parse(f.read())
    except OSError as exc:
        _err(f"{args.file}: {exc.strerror or exc}")
        return 2
    except FleetConfigError as exc:
        _err(f"{args.file}: {exc}")
        return 2
    return run_entries(entries, args)


def run_hosts(hosts: list[str], args: argparse.Namespace) -> int:
    """`kvtui ssh HOST1 HOST2 ...`: one entry per host, discovery on each (a source flag names
    one host's log, so it is refused here); -p/-l/-i apply to every host."""
    from kvtui.core.fleet.config import from_hosts

    named = [f for f in ("log", "docker", "kubectl", "journal", "cmd") if getattr(args, f, None)]
    if named:
        _err(f"--{named[0]} names one host's source: with several hosts write a fleet file "
             "(kvtui fleet FILE.toml, a log= per server)")
        return 2
    try:
        entries = [replace(e, port=args.port, user=args.user, identity=args.identity)
                   for e in from_hosts(hosts)]
    except FleetConfigError as exc:
        _err(str(exc))
        return 2
    return run_entries(entries, args)


def run_entries(entries: list[Entry], args: argparse.Namespace) -> int:
    """`kvtui fleet` and `kvtui ssh HOST1 HOST2 ...` once the entries are known."""
    if args.parallel < 1:
        _err("--parallel must be at least 1")
        return 2
    if not args.check:
        from kvtui.ui.fleet import run_fleet_app

        return run_fleet_app(entries, args, options_of(args))
    return check(entries, args)


def options_of(args: argparse.Namespace) -> ReadOptions:
    return ReadOptions(config=args.config, accept_new_host_key=args.accept_new_host_key,
                       connect_timeout=args.connect_timeout,
                       give_up_after=args.reconnect_timeout, python=args.python,
                       checkpoint=not args.no_checkpoint)



# -- the headless check ------------------------------------------------------------------------
def check(entries: list[Entry], args: argparse.Namespace) -> int:
    import json

    from kvtui.core.fleet import evaluate
    from kvtui.core.fleet.result import exit_code, render_text, to_json

    outcomes = read_all(entries, options_of(args), args.parallel)
    for o in outcomes:
        if o.error:
            _err(f"{o.host}: {o.error}")
    alerts = evaluate([o.server for o in outcomes if o.server is not None])
    code = exit_code(outcomes, alerts, args.fail_on)
    if args.json:
        sys.stdout.write(json.dumps(to_json(outcomes, alerts, code), indent=2,
                                    ensure_ascii=False, default=str) + "\n")
    else:
        sys.stdout.write(render_text(outcomes, alerts, code, args.fail_on))
    sys.stdout.flush()
    return code
