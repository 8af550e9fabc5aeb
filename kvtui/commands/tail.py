"""`kvtui tail`: follow a log live in the TUI, from a file, standard input or a log client.

`kvtui tail FILE` follows a local file through rotation and truncation; `kvtui tail -` reads a
pipe (`kubectl logs -f POD | kvtui tail -`) while the keys come from the terminal; `--docker`,
`--kubectl` and `--journal` run the usual client and resume it when it dies.
"""

from __future__ import annotations

import argparse
import os
import sys

from kvtui.commands.replay import add_metrics_options, add_record_option, positive_int


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", nargs="?",
                   help="the log file to follow, or - for standard input")
    client = p.add_mutually_exclusive_group()
    client.add_argument("--docker", metavar="CONTAINER",
                        help="follow a container: docker logs --follow --timestamps")
    client.add_argument("--kubectl", metavar="POD",
                        help="follow a pod: kubectl logs --follow --timestamps")
    client.add_argument("--journal", metavar="UNIT",
                        help="follow a systemd unit: journalctl --follow -o short-iso")
    p.add_argument("-n", "--namespace", metavar="NS", help="with --kubectl: the pod's namespace")
    p.add_argument("-c", "--container", metavar="NAME",
                   help="with --kubectl: the container in the pod")
    p.add_argument("--previous", action="store_true",
                   help="with --kubectl: read the previous (crashed) instance of the container")
    p.add_argument("--from-start", action="store_true",
                   help="read the whole file first (default: start near its end)")
    p.add_argument("--poll", action="store_true",
                   help="poll instead of using filesystem events (network filesystems)")
    p.add_argument("--model", metavar="M",
                   help="model preset, config.json or model directory for the calculator")
    p.add_argument("--log-window", type=positive_int, default=20000, metavar="N",
                   help="lines kept in the log pane (default 20000)")
    add_metrics_options(p)
    add_record_option(p)


def _fail(message: str) -> int:
    print(f"kvtui: {message}", file=sys.stderr)
    return 2


def client_for(args: argparse.Namespace) -> object | None:
    """The log-client recipe the flags ask for (None: a file or stdin). ValueError: misuse."""
    from kvtui.sources import clients

    for flag in ("docker", "kubectl", "journal", "namespace", "container"):
        value = getattr(args, flag, None)
        if value is not None and (not value or value.startswith("-")):
            raise ValueError(f"--{flag}: not a name: {value!r}")
    pod_only = [f"--{f}" for f in ("namespace", "container", "previous") if getattr(args, f)]
    if pod_only and not args.kubectl:
        raise ValueError(f"{', '.join(pod_only)} only go with --kubectl")
    if args.docker:
        return clients.DockerLogs(args.docker)
    if args.kubectl:
        return clients.KubectlLogs(args.kubectl, namespace=args.namespace,
                                   container=args.container, previous=args.previous)
    if args.journal:
        return clients.JournalLogs(args.journal)
    return None


def run(args: argparse.Namespace) -> int:
    from kvtui.commands.replay import open_tui

    try:
        client = client_for(args)
    except ValueError as exc:
        return _fail(str(exc))
    if client is not None:
        if args.file is not None:
            return _fail("give a FILE or a log client (--docker/--kubectl/--journal), not both")
        from kvtui.sources.process import ClientFollower

        follower = ClientFollower(client)  # type: ignore[arg-type]
        return open_tui(follower, follower.name, args)
    path = args.file
    if path is None:
        return _fail("tail needs a FILE, - for standard input, or --docker/--kubectl/--journal")
    if path == "-":
        from kvtui.sources.stdin import NoTerminal, StdinFollower, take_stdin

        try:
            fd = take_stdin()
        except NoTerminal as exc:
            return _fail(str(exc))
        return open_tui(StdinFollower(fd), "<stdin>", args)
    if os.path.isdir(path):
        return _fail(f"{path}: is a directory, not a log file")
    if os.path.exists(path) and not os.access(path, os.R_OK):
        return _fail(f"{path}: permission denied")
    if path.endswith(".gz"):
        return _fail(f"{path}: a compressed file does not grow; use `kvtui replay`")
    from kvtui.sources.local import LocalFollower

    source = LocalFollower(path, from_start=args.from_start,
                           force_polling=True if args.poll else None)
    # A log this machine's server writes in this machine's local time, scraped on its wall
    # clock: the two clocks are one (`parsers.prefix.ts_seconds` reads a stamp as local time).
    return open_tui(source, path, args, metrics_offset=0.0)
