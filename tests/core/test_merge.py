"""Folding a log in chunks and joining them gives exactly the sequential answer, or refuses."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest

from kvtui.core.engine import all_engines
from kvtui.core.pipeline import Options, Session
from kvtui.core.pipeline.chunks import fold_ranges
from kvtui.core.pipeline.fold import Fold
from kvtui.core.report import build_report
from kvtui.sources.readers import iter_batches, line_start_offsets, ranged_file

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def sequential(path: Path) -> Session:
    a = Session()
    a.feed_blocks(str(path), iter_batches(str(path)))
    return a


def snapshot(state) -> dict:
    out = {"report": build_report(state, engine=all_engines()[0]), "runs": []}
    for run in state.runs:
        run.runtime.gen_by_running  # noqa: B018 - the column route's rows sorted in
        rt = dataclasses.asdict(run.runtime) | {"timeline": list(run.runtime.timeline)}
        out["runs"].append({"runtime": rt, "hints": sorted(run.hints), "ranks": sorted(run.ranks),
                            "lines_seen": run.lines_seen})
    out["kinds"] = state.kinds
    out["events"] = state.events
    return out


def line_offsets(path: Path) -> list[int]:
    data = path.read_bytes()
    offs, pos = [], 0
    for line in data.split(b"\n")[:-1]:
        pos += len(line) + 1
        offs.append(pos)
    return offs


def chunked(path: Path, cuts: list[int]) -> Fold | None:
    fold = Fold(all_engines())
    return fold if fold_ranges(ranged_file(str(path)), str(path), fold, cuts, 1) else None


def check_cuts(path: Path, cuts: list[int]) -> bool:
    fold = chunked(path, cuts)
    if fold is None:
        return False
    ref = sequential(path)
    assert fold.lines == ref.lines
    assert fold.engine is ref.engine
    assert snapshot(fold.state) == snapshot(ref.state), f"cuts {cuts}"
    return True


@pytest.mark.full
@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.glob("*.log")))
def test_every_single_cut_of_every_sample(name):
    path = SAMPLES / name
    offs = line_offsets(path)
    joined = 0
    for off in offs[::11]:
        if off < path.stat().st_size:
            joined += check_cuts(path, [0, off])
    # Cuts in the runtime section (most of each sample) must be joinable; a restart that
    # opens with no start line (no dump) leaves every cut before it to a sequential read
    # (`kvtui.core.pipeline.chunks`), so only the cuts in its own run's lines join.
    share = 4 if "no-dump" in name else 2
    assert joined > len(offs[::11]) // share


def test_many_cuts_on_concatenated_runs(tmp_path):
    path = tmp_path / "two-runs.log"
    path.write_bytes((SAMPLES / "qwen35-397b-nvfp4-tp8-fp8.log").read_bytes()
                     + (SAMPLES / "llama31-8b-retraction.log").read_bytes())
    offs = line_offsets(path)
    rng = random.Random(7)
    joined = 0
    for _ in range(20):
        cuts = sorted({0, *rng.sample(offs[:-1], rng.randint(1, 6))})
        joined += check_cuts(path, cuts)
    assert joined > 0


def test_streaks_join_across_cuts(tmp_path):
    """Saturation and queue-growth runs that straddle a cut are counted whole."""
    rng = random.Random(3)
    lines = []
    q = 0
    for i in range(400):
        usage = 0.97 if (i // 25) % 2 else rng.choice([0.5, 0.96, 0.99])
        q = q + rng.choice([1, 1, 1, 0, -1]) if i % 50 else 0
        lines.append(f"[2026-01-01 10:{i // 60:02d}:{i % 60:02d} TP0] Decode batch, "
                     f"#running-req: {i % 7}, #token: {i}, token usage: {usage:.2f}, cuda graph: "
                     f"True, gen throughput (token/s): {rng.uniform(1, 999):.2f}, #queue-req: "
                     f"{max(q, 0)}")
        if i % 9 == 0:
            lines.append(f"[2026-01-01 10:00:00 TP0] Prefill batch, #new-seq: 1, #new-token: 5, "
                         f"#cached-token: 0, token usage: {usage:.2f}, #running-req: 1, "
                         f"#queue-req: {max(q, 0)}, ")
        if i % 37 == 0:
            lines.append("[2026-01-01 10:00:00 TP0] KV cache pool is full. Retract requests. "
                         f"#retracted_reqs: {i % 3 + 1}, #new_token_ratio: 0.4000 -> 0.7000")
    path = tmp_path / "runtime.log"
    path.write_text("\n".join(lines) + "\n")
    offs = line_offsets(path)
    for off in offs[:-1:13]:
        assert check_cuts(path, [0, off])
    for _ in range(12):
        assert check_cuts(path, sorted({0, *rng.sample(offs[:-1], 5)}))


def test_a_cut_inside_startup_falls_back(tmp_path):
    path = SAMPLES / "qwen35-397b-nvfp4-tp8-fp8.log"
    offs = line_offsets(path)
    assert chunked(path, [0, offs[20]]) is None


def test_parallel_entry_point_uses_processes_and_agrees(tmp_path, monkeypatch):
    path = tmp_path / "big.log"
    body = (SAMPLES / "llama31-8b-retraction.log").read_text().splitlines()
    # (the dump mentions "batch" too: it is no runtime line, and repeated below the lines it
    # precedes in time it would be read as their start, which only a sequential read decides)
    runtime = [ln for ln in body if ("batch" in ln or "Retract" in ln) and "server_args" not in ln]
    path.write_text("\n".join(body + runtime * 40) + "\n")
    calls = []
    real = Fold.feed_lines

    def counting(self, *a, **kw):
        calls.append(1)  # in this process only: the forked workers count in their own copy
        return real(self, *a, **kw)

    fast = Session(Options(workers=2, min_parallel_bytes=0))
    monkeypatch.setattr(Fold, "feed_lines", counting)
    fast.fold_file(ranged_file(str(path)))
    assert not calls  # folded in worker processes, not in this one
    monkeypatch.undo()
    assert snapshot(fast.state) == snapshot(sequential(path).state)
    assert line_start_offsets(str(path), 2, None)[0] == 0
    assert not Session(Options(workers=2)).is_big(path.stat().st_size)


def test_cuts_around_an_override_opened_start(tmp_path):
    """A restart whose first line is a KV dtype override (logged before the dump): every cut
    either joins exactly or declines, never misplaces the start."""
    override = (b"[2026-11-24 10:00:00] Setting KV cache dtype to bfloat16 for DeepSeek DSA on SM9 "
                b"device.\n")
    path = tmp_path / "restart.log"
    path.write_bytes((SAMPLES / "qwen35-397b-nvfp4-tp8-fp8.log").read_bytes() + override
                     + (SAMPLES / "qwen35-397b-nvfp4-tp8-bf16.log").read_bytes())
    offs = line_offsets(path)
    at = offs.index(len((SAMPLES / "qwen35-397b-nvfp4-tp8-fp8.log").read_bytes()) + len(override))
    joined = [check_cuts(path, [0, offs[i]]) for i in range(at - 3, at + 4)]
    assert any(joined)
    assert len(sequential(path).state.runs) == 2
