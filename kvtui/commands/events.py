"""`kvtui events FILE...`: JSON Lines, one object per recognized line."""

from __future__ import annotations

import argparse
import sys


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help="log files (.gz ok; - for stdin)")


def run(args: argparse.Namespace) -> int:
    from kvtui.core.pipeline import events
    from kvtui.sources.readers import LogOpenError, check_readable, log_input

    try:
        for path in args.files:
            check_readable(path)
    except LogOpenError as exc:
        print(f"kvtui: {exc}", file=sys.stderr)
        return 2
    out = sys.stdout
    for path in args.files:
        try:
            for text in events(log_input(path)):
                out.write(text)
        except LogOpenError as exc:
            print(f"kvtui: {exc}", file=sys.stderr)
            return 2
    out.flush()
    return 0
