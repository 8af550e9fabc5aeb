"""`kvtui events FILE...`: JSON Lines, one object per recognized line."""

from __future__ import annotations

import argparse
import json
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
    dumps = json.dumps
    for path in args.files:
        inp = log_input(path)
        try:
            for n, ev in events(inp):
                obj = {"source": inp.name, "line": n}
                obj.update(ev.to_dict())
                out.write(dumps(obj, ensure_ascii=False))
                out.write("\n")
        except LogOpenError as exc:
            print(f"kvtui: {exc}", file=sys.stderr)
            return 2
    out.flush()
    return 0
