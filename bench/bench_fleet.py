"""Benchmark (issue 38): the fleet screen following 8 servers whose logs grow by 2,000 lines/s
each: the kvtui process's CPU, its peak memory, the lag of each server's fold behind its writer,
and the key latency of the fleet table (a cursor move, timed until its action ran).

The writers run in a process of their own (so the CPU and memory figures are the fleet's
alone); the logs are local files followed by LocalFollower, the LineSource a host's follower
also is (SSH adds the transport, measured by bench_ssh.py). On 2 cores the writers share the
CPU with the fleet: the figures are reported, there is no target.
Run: `python bench/bench_fleet.py [--servers 8] [--rate 2000] [--seconds 20]`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "sample_logs"))


def writer(paths: list[str], rate: int, seconds: float, counts: Any) -> None:
    """Append batch lines to every log at `rate` lines/s each, in 20 slices a second."""
    import random

    import sglang_samples as g

    rng = random.Random(7)
    stack = contextlib.ExitStack()
    files = [stack.enter_context(open(p, "a", buffering=1 << 16))  # noqa: SIM115 (in stack)
             for p in paths]
    per_slice = max(1, rate // 20)
    t0 = time.monotonic()
    n = 0
    clock = g.Clock(g.datetime(2026, 11, 30, 12, 0, 0))
    while time.monotonic() - t0 < seconds:
        clock.tick(0.05)
        for i, f in enumerate(files):
            lines = []
            for _ in range(per_slice):
                u = rng.uniform(0.2, 0.9)
                lines.append(clock.prefix("TP0") + g.decode_line(
                    "0.5.9", running=rng.randint(10, 60), tokens=int(1_290_000 * u), usage=u,
                    gen=1200.0, queue=rng.randint(0, 5)) + "\n")
            f.write("".join(lines))
            f.flush()
            counts[i] += per_slice
        n += 1
        sleep = t0 + n * 0.05 - time.monotonic()
        if sleep > 0:
            time.sleep(sleep)
    stack.close()


async def fleet_child(servers: int, rate: int, seconds: float) -> dict[str, float]:
    from kvtui.core.fleet.config import Entry
    from kvtui.sources.local import LocalFollower
    from kvtui.ui.fleet import FleetApp, LiveFleet

    out = ROOT / "bench" / "out" / "fleet"
    out.mkdir(parents=True, exist_ok=True)
    start = (ROOT / "sample_logs" / "fleet" / "replica-a-bf16.log").read_text()
    paths = []
    for i in range(servers):
        p = out / f"server-{i}.log"
        p.write_text(start)
        paths.append(str(p))
    base = start.count("\n")
    entries = [Entry(host=f"gpu-{i}", role="replica") for i in range(servers)]
    live = LiveFleet(entries, lambda e: (LocalFollower(paths[int(e.host[4:])],
                                                       from_start=True, poll_ms=100), e.host))
    counts = multiprocessing.Array("l", servers)
    proc = multiprocessing.Process(target=writer, args=(paths, rate, seconds, counts))
    handled: list[float] = []

    class TimedFleet(FleetApp):
        def on_data_table_row_highlighted(self, _event: object) -> None:
            handled.append(time.perf_counter())  # the cursor key's effect, when it ran

    app = TimedFleet(live, tick=1.0)
    lags: list[float] = []
    latencies: list[float] = []
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.monotonic()
    async with app.run_test(size=(200, 50)) as pilot:
        live.start()
        proc.start()
        i = 0
        while proc.is_alive() or time.monotonic() - t0 < seconds:
            await asyncio.sleep(0.4)
            written = list(counts)
            for s, w in zip(live.servers, written, strict=True):
                lags.append((base + w - s.session.lines) / rate)  # seconds behind
            before = len(handled)
            k0 = time.perf_counter()
            press = asyncio.ensure_future(pilot.press("down" if i % 2 == 0 else "up"))
            while len(handled) == before and time.perf_counter() - k0 < 5:
                await asyncio.sleep(0.001)
            if len(handled) > before:
                latencies.append((handled[-1] - k0) * 1000)
            await press
            i += 1
            if not proc.is_alive() and time.monotonic() - t0 > seconds + 30:
                break
        proc.join()
        # drain: until every fold caught up with its writer (or 30 s)
        d0 = time.monotonic()
        written = list(counts)
        while time.monotonic() - d0 < 30 and any(
                s.session.lines < base + w for s, w in zip(live.servers, written, strict=True)):
            await asyncio.sleep(0.1)
        drain = time.monotonic() - d0
        await pilot.press("q")
    live.close()
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    wall = time.monotonic() - t0
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    from peak import peak_rss_kib

    return {"servers": servers, "rate_per_server": rate, "seconds": seconds,
            "lines_written": int(sum(counts)), "cpu_s": round(cpu, 2),
            "cpu_pct_of_one_core": round(100 * cpu / wall, 1),
            "peak_rss_mb": round(peak_rss_kib() / 1024, 1),
            "lag_s_median": round(statistics.median(lags), 3) if lags else 0.0,
            "lag_s_max": round(max(lags), 3) if lags else 0.0,
            "drain_after_writers_s": round(drain, 2),
            "key_presses": len(latencies),
            "key_ms_median": round(statistics.median(latencies), 1) if latencies else 0.0,
            "key_ms_max": round(max(latencies), 1) if latencies else 0.0}


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--servers", type=int, default=8)
    p.add_argument("--rate", type=int, default=2000)
    p.add_argument("--seconds", type=float, default=20.0)
    a = p.parse_args(argv)
    os.environ.setdefault("PYTHONPATH", str(ROOT))
    res = asyncio.run(fleet_child(a.servers, a.rate, a.seconds))
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
