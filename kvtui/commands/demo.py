"""`kvtui demo`: the TUI on the bundled Qwen3.5-397B NVFP4 TP=8 log with unscaled FP8 KV."""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

DEMO_LOG = "qwen35-397b-nvfp4-tp8-fp8.log"


def configure(p: argparse.ArgumentParser) -> None:
    from kvtui.commands.replay import add_speed_options, add_tui_options

    add_speed_options(p)
    p.add_argument("--log", default=DEMO_LOG, metavar="NAME",
                   help=f"which bundled sample to open (default {DEMO_LOG}; see the list "
                        "in sample_logs/)")
    add_tui_options(p)


def sample_dir() -> Traversable:
    """The bundled samples, package data of kvtui (pyproject.toml): in a wheel the logs
    themselves, in a checkout the link `kvtui/sample-logs` to sample_logs/ that generate.py
    writes; read through importlib.resources either way."""
    return resources.files("kvtui") / "sample-logs"


def bundled_samples() -> list[str]:
    try:
        return sorted(p.name for p in sample_dir().iterdir() if p.name.endswith(".log"))
    except OSError:  # no samples folder at all (an install that dropped the package data)
        return []


def run(args: argparse.Namespace) -> int:
    samples = bundled_samples()
    name = Path(args.log).name
    path = sample_dir() / name
    if not path.is_file():
        if samples:
            print(f"kvtui: no bundled sample named {name!r}; the samples are: "
                  + ", ".join(samples), file=sys.stderr)
        else:
            print(f"kvtui: the bundled samples are missing ({sample_dir()} has no .log file; "
                  "a source checkout has them under sample_logs/, and "
                  "`python sample_logs/generate.py` writes them again)", file=sys.stderr)
        return 2
    from kvtui.commands.replay import open_tui
    from kvtui.sources import replay
    from kvtui.ui.export import xdg_export_dir

    if args.export_dir is None:
        # The sample's directory belongs to kvtui, not to the user: exports go to the data dir.
        args.export_dir = str(xdg_export_dir())
    with resources.as_file(path) as local:  # a real file, even from a zipped install
        source = replay.ReplaySource([str(local)],
                                     speed=args.speed if args.speed else replay.DEFAULT_SPEED,
                                     instant=args.instant)
        return open_tui(source, f"demo: {path.name}", args)
