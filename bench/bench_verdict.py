"""Time to the verdict: how soon the FP8 alert of a big log is known, in `check` and in the TUI.

Goal (issue 14): <= 0.5 s for `kvtui check --stream` and <= 1.5 s for the TUI on a 2-core
machine, flat in the file's size (0.5M, 1M, 2M lines: the Qwen3.5 FP8 sample's start-up followed
by runtime lines). Each figure is measured from the process start; the full report's time is
shown beside it. The TUI runs headless (`App.run_test`, the same app and ingest code without a
terminal) and the clock stops when the alerts pane first holds kv-fp8-unscaled. A benchmark,
not a test: it prints the figures.

    .venv/bin/python bench/bench_verdict.py [--sizes 500000,1000000,2000000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from biglog import write_big_log  # noqa: E402
from installed import as_installed  # noqa: E402

TUI = r"""
import asyncio, sys, time
t0 = float(sys.argv[2])
from kvtui.sources.replay import ReplaySource
from kvtui.ui.app import KvApp
first = {}
real = KvApp._apply_report
def spy(self, report, timeline):
    alerts = getattr(report, "alerts", ())  # a Report (a build that failed has none)
    if "kv-fp8-unscaled" in [a.rule for a in alerts] and "verdict" not in first:
        first["verdict"] = time.time() - t0
    runtime = getattr(report, "runtime", None)
    if not getattr(report, "partial", True) and runtime is not None \
            and runtime.decode_batches > 10**5:
        first.setdefault("full", time.time() - t0)
    return real(self, report, timeline)
KvApp._apply_report = spy
async def main():
    app = KvApp(ReplaySource([sys.argv[1]], instant=True), "bench")
    async with app.run_test(size=(160, 45)) as pilot:
        while "full" not in first:
            await pilot.pause(0.02)
asyncio.run(main())
print(first["verdict"], first["full"])
"""


def check_times(path: Path) -> tuple[float, float]:
    t0 = time.time()
    proc = subprocess.Popen([sys.executable, "-m", "kvtui", "check", "--stream", "--fail-on",
                             "never", str(path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    first = json.loads(proc.stdout.readline())
    verdict = time.time() - t0
    assert first.get("partial") and first["alerts"][0]["rule"] == "kv-fp8-unscaled", first
    proc.stdout.read()
    proc.wait()
    return verdict, time.time() - t0


def tui_times(path: Path) -> tuple[float, float]:
    out = subprocess.run([sys.executable, "-c", TUI, str(path), repr(time.time())],
                         capture_output=True, text=True, check=True)
    verdict, full = map(float, out.stdout.split())
    return verdict, full


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="500000,1000000,2000000")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    as_installed()
    out_dir = HERE / "out"
    out_dir.mkdir(exist_ok=True)
    print(f"{'lines':>9} {'MB':>6}  {'check verdict':>13} {'check full':>10}  "
          f"{'TUI verdict':>11} {'TUI full':>8}   (best of {args.runs}, seconds)")
    for n in (int(x) for x in args.sizes.split(",")):
        path = out_dir / f"big-{n}.log"
        if not path.exists():
            write_big_log(path, n)
        c = min((check_times(path) for _ in range(args.runs)), key=lambda r: r[0])
        t = min((tui_times(path) for _ in range(args.runs)), key=lambda r: r[0])
        print(f"{n:>9,} {path.stat().st_size / 1e6:>6.0f}  {c[0]:>13.2f} {c[1]:>10.2f}  "
              f"{t[0]:>11.2f} {t[1]:>8.2f}")
    print("goal: check verdict <= 0.5 s, TUI verdict <= 1.5 s, flat in the size")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
