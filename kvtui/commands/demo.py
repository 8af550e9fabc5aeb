"""`kvtui demo`: the TUI on the bundled Qwen3.5-397B NVFP4 TP=8 log with unscaled FP8 KV."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

DEMO_LOG = "qwen35-397b-nvfp4-tp8-fp8.log"


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--speed", type=float, default=None, metavar="X",
                   help="replay speed relative to the log's clock (default 50)")
    p.add_argument("--instant", action="store_true", help="ingest as fast as possible")
    p.add_argument("--log", default=DEMO_LOG, metavar="NAME",
                   help=f"which bundled sample to open (default {DEMO_LOG})")


def sample_dir() -> Path:
    import kvtui

    return Path(kvtui.__file__).resolve().parents[1] / "sample_logs"


def run(args: argparse.Namespace) -> int:
    path = sample_dir() / Path(args.log).name
    if not path.is_file():
        print(f"kvtui: the bundled sample {path} is missing (a source checkout has it under "
              "sample_logs/; run `python sample_logs/generate.py` to write it)", file=sys.stderr)
        return 2
    from kvtui.commands.replay import open_tui
    from kvtui.sources import replay

    source = replay.ReplaySource([str(path)],
                                 speed=args.speed if args.speed else replay.DEFAULT_SPEED,
                                 instant=args.instant)
    return open_tui(source, f"demo: {path.name}", args)
