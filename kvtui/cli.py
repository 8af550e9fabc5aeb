"""Entry point. Each subcommand lives in `kvtui.commands.<name>` with `configure(parser)` and
`run(args) -> int`; modules are imported lazily so `--help`, `--version` and the headless
commands never import Textual or paramiko.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Sequence

from kvtui import __version__

# name -> one-line help. The module kvtui.commands.<name> provides configure() and run().
COMMANDS: dict[str, str] = {
    "check": "analyse log files headless and print the report (human or --json)",
    "events": "print every recognized log line as JSON Lines",
    "compare": "compare two server runs: changed args, pools, alerts, throughput, prediction",
    "whatif": "KV capacity what-if: tokens and concurrency for BF16 / FP8 / FP4",
    "replay": "replay saved logs in the TUI, timed by their own timestamps",
    "tail": "follow a log live in the TUI: a file, stdin (-), --docker, --kubectl or --journal",
    "demo": "open the TUI on a bundled sample log",
    "ssh": "follow SGLang or vLLM logs on a remote host over SSH",
    "metrics": "scrape a server's Prometheus /metrics: KV pools, queues, latency percentiles",
    "fleet": "several servers (FILE.toml) side by side, with cross-server alerts",
    "exporter": "serve kvtui's verdicts on a log as Prometheus kvtui_* series over HTTP",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; only `command`'s module is imported and configured (fast, and one broken
    subcommand cannot take the others down)."""
    parser = argparse.ArgumentParser(
        prog="kvtui",
        description="Live analysis of SGLang and vLLM server logs: KV-cache precision alerts "
        "and a capacity what-if.",
    )
    parser.add_argument("--version", action="version", version=f"kvtui {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if name == command:
            _command_module(name).configure(p)
            parser.set_defaults(_subparser=p)
    return parser


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """Parse the command line; an unknown option is reported by the subcommand's parser, with
    its usage (argparse's own parse_args would print the top-level usage instead)."""
    parser = build_parser(_first_command(argv))
    args, extra = parser.parse_known_args(argv)
    if extra:
        where = getattr(args, "_subparser", None) or parser
        where.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def _first_command(argv: Sequence[str]) -> str | None:
    for arg in argv:
        if arg in COMMANDS:
            return arg
        if not arg.startswith("-"):
            return None
    return None


def _command_module(name: str):  # type: ignore[no-untyped-def]
    return importlib.import_module(f"kvtui.commands.{name}")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse(argv)
    if not args.command:
        build_parser().print_help()
        return 0
    try:
        result: int = _command_module(args.command).run(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `kvtui events big.log | head` must end quietly.
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return 0
    return result


if __name__ == "__main__":
    raise SystemExit(main())
