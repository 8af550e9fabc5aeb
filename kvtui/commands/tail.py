"""`kvtui tail FILE`: follow a local log live in the TUI, through rotation and truncation."""

from __future__ import annotations

import argparse
import os
import sys

from kvtui.commands.replay import positive_int


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="the log file to follow")
    p.add_argument("--from-start", action="store_true",
                   help="read the whole file first (default: start near its end)")
    p.add_argument("--poll", action="store_true",
                   help="poll instead of using filesystem events (network filesystems)")
    p.add_argument("--model", metavar="M",
                   help="model preset, config.json or model directory for the calculator")
    p.add_argument("--log-window", type=positive_int, default=20000, metavar="N",
                   help="lines kept in the log pane (default 20000)")


def run(args: argparse.Namespace) -> int:
    path = args.file
    if os.path.isdir(path):
        print(f"kvtui: {path}: is a directory, not a log file", file=sys.stderr)
        return 2
    if os.path.exists(path) and not os.access(path, os.R_OK):
        print(f"kvtui: {path}: permission denied", file=sys.stderr)
        return 2
    if path.endswith(".gz"):
        print(f"kvtui: {path}: a compressed file does not grow; use `kvtui replay`",
              file=sys.stderr)
        return 2
    from kvtui.commands.replay import open_tui
    from kvtui.sources.local import LocalFollower

    source = LocalFollower(path, from_start=args.from_start,
                           force_polling=True if args.poll else None)
    return open_tui(source, path, args)
