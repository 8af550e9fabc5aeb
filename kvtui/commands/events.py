"""`kvtui events FILE...`: JSON Lines, one object per recognized line."""

from __future__ import annotations

import argparse
import json
import sys


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help="log files (.gz ok; - for stdin)")


def run(args: argparse.Namespace) -> int:
    from kvtui.sources.readers import LogOpenError, check_readable, iter_lines
    from parsers import parse_line

    try:
        for path in args.files:
            check_readable(path)
    except LogOpenError as exc:
        print(f"kvtui: {exc}", file=sys.stderr)
        return 2
    out = sys.stdout
    dumps = json.dumps
    for path in args.files:
        source = "<stdin>" if path == "-" else path
        try:
            for n, text in enumerate(iter_lines(path), 1):
                ev = parse_line(text)
                if ev is None:
                    continue
                obj = {"source": source, "line": n}
                obj.update(ev.to_dict())
                out.write(dumps(obj, ensure_ascii=False))
                out.write("\n")
        except LogOpenError as exc:
            print(f"kvtui: {exc}", file=sys.stderr)
            return 2
    out.flush()
    return 0
