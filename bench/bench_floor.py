"""How fast can CPython read bench_check's log at all? The floor under `kvtui check`.

Issue 2 asks for `kvtui check` in at most lnav's wall time on a 2,000,000-line log. This
measures, on the same log and on every core (the same byte-range split `kvtui check` uses),
programs that do strictly less than kvtui's fold, each timed from process start to exit like
`bench_check.py` times kvtui:

- `split`: read each range and split it into lines. Touches every line, parses nothing.
- `findall-regex`: also pull the four values the runtime aggregates need (running requests,
  token usage, gen throughput, queue) out of every decode line with one `regex.findall` per
  4 MiB block, and fold them as column sums and maxima in C (`zip`, `map`, `sum`, `max`).
  Ignores line order, evidence lines, ranks, timestamps and every other kind of line, so it
  is a lower bound for a correct fold, not a fold.
- `findall-re`: the same with the standard library's `re` (the brief asks for `regex`).

If the lower bounds are already slower than lnav, no pure-Python fold of every decode line
can reach the goal on this machine. Run: `python bench/bench_floor.py [--lines N] [--keep]`.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import regex

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from bench_check import timed  # noqa: E402
from biglog import write_big_log  # noqa: E402

from kvtui.sources.readers import line_start_offsets  # noqa: E402

BLOCK = 4 << 20
# The four aggregated values of a decode line, whatever pool columns sit between them.
DECODE = (rb"Decode batch, #running-req: (\d+), [^\n]*?token usage: (\d+\.\d+), [^\n]*?"
          rb"gen throughput \(token/s\): (\d+\.\d+), #queue-req: (\d+)")
ENGINES: dict[str, Any] = {"findall-regex": regex.compile(DECODE),
                           "findall-re": re.compile(DECODE)}


def _blocks(path: str, start: int, end: int | None) -> Any:
    """The range's bytes in blocks that end at a newline."""
    with open(path, "rb") as f:
        f.seek(start)
        left = None if end is None else end - start
        carry = b""
        while left is None or left > 0:
            data = f.read(BLOCK if left is None else min(BLOCK, left))
            if not data:
                break
            if left is not None:
                left -= len(data)
            data = carry + data
            cut = data.rfind(b"\n") + 1
            carry = data[cut:]
            yield data[:cut]
        if carry:
            yield carry


def _probe_range(job: tuple[str, str, int, int | None]) -> tuple[int, int, float, float, int]:
    """(lines, decode lines, running sum, max usage, max queue) of one byte range."""
    kind, path, start, end = job
    lines = decodes = running_sum = queue_max = 0
    usage_max = 0.0
    pattern = ENGINES.get(kind)
    for block in _blocks(path, start, end):
        lines += len(block.split(b"\n")) - 1
        if pattern is None:
            continue
        rows = pattern.findall(block)
        if not rows:
            continue
        running, usage, gen, queue = zip(*rows, strict=True)
        decodes += len(rows)
        running_sum += sum(map(int, running))
        usage_max = max(usage_max, max(map(float, usage)))
        queue_max = max(queue_max, max(map(int, queue)))
        sum(map(float, gen))
    return lines, decodes, running_sum, usage_max, queue_max


def probe(kind: str, path: str) -> None:
    n = os.cpu_count() or 1
    cuts = line_start_offsets(path, n)
    jobs = [(kind, path, s, e) for s, e in zip(cuts, [*cuts[1:], None], strict=True)]
    with multiprocessing.get_context("fork").Pool(len(jobs)) as pool:
        parts = pool.map(_probe_range, jobs, chunksize=1)
    print(sum(p[0] for p in parts), sum(p[1] for p in parts))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", action="store_true", help="keep the generated log")
    ap.add_argument("--probe", nargs=2, metavar=("KIND", "FILE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.probe:
        probe(*args.probe)
        return 0
    out_dir = HERE / "out"
    out_dir.mkdir(exist_ok=True)
    big = out_dir / f"big-{args.lines}.log"
    if not big.exists():
        print(f"generating {big.name} ...", flush=True)
        write_big_log(big, args.lines)
    decode_in_file = int(subprocess.run(["grep", "-c", "Decode batch", str(big)],
                                        capture_output=True, text=True).stdout)

    def best(cmd: list[str]) -> tuple[float, bytes]:
        runs = [timed(cmd) for _ in range(args.runs)]
        wall, _, out = min(runs, key=lambda r: r[0])
        return wall, out

    rows: list[tuple[str, float]] = []
    rows.append(("python -c pass (interpreter start)", best([sys.executable, "-c", "pass"])[0]))
    for kind in ("split", "findall-regex", "findall-re"):
        wall, out = best([sys.executable, __file__, "--probe", kind, str(big)])
        lines, decodes = map(int, out.split())
        assert lines == args.lines, f"{kind}: {lines} lines"
        assert kind == "split" or decodes == decode_in_file, f"{kind}: {decodes} decode lines"
        rows.append((f"floor: {kind}", wall))
    kvtui_wall = best([sys.executable, "-m", "kvtui", "check", "--json", "--fail-on", "never",
                       str(big)])[0]
    rows.append(("kvtui check --json", kvtui_wall))
    lnav = shutil.which("lnav")
    if lnav:
        rows.append(("lnav -n -c 'SELECT count(*)'",
                     best([lnav, "-n", "-c", ";SELECT count(*) FROM all_logs", str(big)])[0]))
    print(f"\n{args.lines:,} lines, {big.stat().st_size / 1e6:.0f} MB, {decode_in_file:,} decode "
          f"lines; best of {args.runs}, {os.cpu_count()} cores\n")
    print(f"{'command':<40}{'wall s':>8}{'/ lnav':>8}")
    for name, wall in rows:
        ratio = f"{wall / rows[-1][1]:>8.2f}" if lnav else ""
        print(f"{name:<40}{wall:>8.2f}{ratio}")
    if not args.keep:
        big.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
