"""The inline decode fold in `State.apply` gives exactly what the general route gives."""

from __future__ import annotations

import dataclasses
import random
import sys
from pathlib import Path

import pytest

from kvtui.core import state as state_mod
from kvtui.core.analyzer import Analyzer
from kvtui.core.report import build_report

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs"


def fold(lines: list[str], hot: bool, monkeypatch) -> dict:
    monkeypatch.setattr(state_mod, "HOT_PATH", hot)
    a = Analyzer()
    a.feed_many("x", lines)
    out = {"report": build_report(a.state), "runs": []}
    for run in a.state.runs:
        rt = dataclasses.asdict(run.runtime) | {"timeline": list(run.runtime.timeline)}
        out["runs"].append({"rt": rt, "ranks": sorted(run.ranks), "seen": run.lines_seen})
    return out


def stress_lines(seed: int) -> list[str]:
    """Saturation runs, peaks, queue growth and drops, hybrid and plain layouts."""
    rng = random.Random(seed)
    lines, q = [], 5
    for i in range(1500):
        u = rng.choice([0.5, 0.9, 0.95, 0.96, 0.99, 1.0]) if (i // 40) % 2 else rng.random()
        q = max(0, q + rng.choice([1, 1, 0, -1, -3]))
        run = rng.randint(1, 64)
        if rng.random() < 0.5:
            usage = f"#token: {i}, token usage: {u:.2f}"
        else:
            usage = (f"#full token: {i}, full token usage: {u:.2f}, mamba num: 3, "
                     f"mamba usage: 0.10")
        rank = rng.choice(["TP0", "DP1 TP1"])
        lines.append(f"[2026-01-01 10:{i // 60 % 60:02d}:{i % 60:02d} {rank}] Decode batch, "
                     f"#running-req: {run}, {usage}, cuda graph: True, gen throughput (token/s): "
                     f"{rng.uniform(0, 3000):.2f}, #queue-req: {q}")
        if rng.random() < 0.05:
            lines.append(f"[2026-01-01 10:00:00 TP0] Prefill batch, #new-seq: 1, #new-token: 5, "
                         f"#cached-token: 0, token usage: {u:.2f}, #running-req: {run}, "
                         f"#queue-req: {q}, ")
    return lines


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.glob("*.log")))
def test_samples(name, monkeypatch):
    lines = (SAMPLES / name).read_text().splitlines()
    assert fold(lines, True, monkeypatch) == fold(lines, False, monkeypatch)


@pytest.mark.parametrize("seed", range(4))
def test_stress(seed, monkeypatch):
    lines = stress_lines(seed)
    assert fold(lines, True, monkeypatch) == fold(lines, False, monkeypatch)


def test_big_log_slice(monkeypatch, tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from biglog import write_big_log
    finally:
        sys.path.pop(0)
    path = tmp_path / "big.log"
    write_big_log(path, 20000, seed=5)
    lines = path.read_text().splitlines()
    assert fold(lines, True, monkeypatch) == fold(lines, False, monkeypatch)
