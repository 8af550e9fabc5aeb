"""`kvtui check` on a 2,000,000-line SGLang runtime log, against lnav and grep.

Goal (issue 2): kvtui's wall time at most lnav's (`lnav -n -c ';SELECT count(*) FROM all_logs'`)
with every decode line parsed into the runtime aggregates, and a peak RSS <= 150 MB that does not
grow with the file. This is a benchmark, not a test: it prints the figures.

    .venv/bin/python bench/bench_check.py [--lines N] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import peak  # noqa: E402
from biglog import write_big_log  # noqa: E402
from installed import as_installed  # noqa: E402


def timed(cmd: list[str]) -> tuple[float, int, bytes]:
    """(wall seconds, peak RSS in KiB of the command alone, stdout): see bench/peak.py."""
    wall, rss, out, _ = peak.run(cmd)
    return wall, rss, out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=2_000_000)
    ap.add_argument("--keep", action="store_true", help="keep the generated logs")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    as_installed()
    out_dir = HERE / "out"
    out_dir.mkdir(exist_ok=True)
    big = out_dir / f"big-{args.lines}.log"
    half = out_dir / f"big-{args.lines // 2}.log"
    for path, n in ((big, args.lines), (half, args.lines // 2)):
        if not path.exists():
            print(f"generating {path.name} ...", flush=True)
            write_big_log(path, n)
    size_mb = big.stat().st_size / 1e6
    kvtui = [sys.executable, "-m", "kvtui", "check", "--json", "--fail-on", "never"]
    rows: list[tuple[str, float, int]] = []

    def best(cmd: list[str]) -> tuple[float, int, bytes]:
        runs = [timed(cmd) for _ in range(args.runs)]
        return min(runs, key=lambda r: r[0])

    wall, rss, out = best([*kvtui, str(big)])
    report = json.loads(out)
    decode_in_file = int(subprocess.run(["grep", "-c", "Decode batch", str(big)],
                                        capture_output=True, text=True).stdout)
    assert report["runtime"]["decode_batches"] == decode_in_file, "decode lines missed"
    rows.append(("kvtui check --json", wall, rss))
    # Issue 11: `whatif --from-log` goes through the same pipeline, so it takes check's time.
    wi_wall, wi_rss, wi_out = best([sys.executable, "-m", "kvtui", "whatif", "--from-log",
                                    str(big), "--json"])
    assert json.loads(wi_out).get("scenarios"), "whatif --from-log gave no scenarios"
    rows.append(("kvtui whatif --from-log --json", wi_wall, wi_rss))
    wall_half, rss_half, _ = best([*kvtui, str(half)])
    rows.append((f"kvtui check --json ({args.lines // 2:,} lines)", wall_half, rss_half))
    lnav = shutil.which("lnav")
    if lnav:
        rows.append(("lnav -n -c 'SELECT count(*)'",
                     *best([lnav, "-n", "-c", ";SELECT count(*) FROM all_logs", str(big)])[:2]))
    rows.append(("grep -c 'Decode batch'",
                 *best(["grep", "-c", "Decode batch", str(big)])[:2]))
    print(f"\n{args.lines:,} lines, {size_mb:.0f} MB, {decode_in_file:,} decode lines "
          f"(all {report['runtime']['decode_batches']:,} folded into the runtime aggregates); "
          f"best of {args.runs}, {os.cpu_count()} cores\n")
    print(f"{'command':<44}{'wall s':>8}{'peak RSS MB':>13}")
    for name, w, r in rows:
        print(f"{name:<44}{w:>8.2f}{r / 1024:>13.1f}")
    print(f"\nwhatif --from-log / check wall-time ratio: {wi_wall / wall:.2f} (goal ~1.0)")
    if lnav:
        lnav_wall = next(w for name, w, _ in rows if name.startswith("lnav"))
        print(f"kvtui / lnav wall-time ratio: {wall / lnav_wall:.2f} (goal <= 1.0)")
    print(f"peak RSS {rss / 1024:.0f} MB at {args.lines:,} lines vs {rss_half / 1024:.0f} MB at "
          f"{args.lines // 2:,} (goal <= 150 MB, flat)")
    if not args.keep:
        for p in (big, half):
            p.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
