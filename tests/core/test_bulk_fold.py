"""Folding blocks column-wise (the pipeline's column route) builds exactly the line-by-line
state."""

from __future__ import annotations

import dataclasses
import gc
import random
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvtui.core.pipeline import Options, Session
from kvtui.core.pipeline import fold as fold_mod
from kvtui.core.report import build_report
from kvtui.core.runtime import TIMELINE_POINTS
from tests.conftest import ROOT, SAMPLES, corpus_dir

HTTP = '[2026-01-01 10:00:00] INFO:     127.0.0.1:41956 - "POST /generate HTTP/1.1" 200 OK'


def snapshot(a: Session) -> dict:
    st = a.state
    out = {"report": build_report(st, engine=a.engine), "events": st.events, "kinds": st.kinds,
           "sources": st.sources, "lines": a.lines, "runs": []}
    for run in st.runs:
        run.runtime.gen_by_running  # noqa: B018 - the column route's rows sorted in
        rt = dataclasses.asdict(run.runtime) | {"timeline": list(run.runtime.timeline)}
        out["runs"].append({"rt": rt, "ranks": sorted(run.ranks), "seen": run.lines_seen,
                            "hints": sorted(run.hints), "kinds": sorted(run.kinds_seen),
                            "opener": run.opener, "index": run.index})
    return out


def fold(lines: list[str], bulk: bool, block: int, monkeypatch) -> dict:
    a = Session(Options(columns=bulk))
    n = 1
    for i in range(0, len(lines), block):
        n = a.feed_lines("x", lines[i:i + block], n)
    return snapshot(a)


def same(lines: list[str], monkeypatch, blocks=(64, 257, 4000)) -> int:
    """Compare both routes at several block sizes; returns the fewest rows that went
    column-wise at any of them."""
    calls: list[int] = []
    counts: list[int] = []
    real = fold_mod.Fold._join_stretch

    def counting(self, cols):
        calls.append(len(cols))
        return real(self, cols)

    monkeypatch.setattr(fold_mod.Fold, "_join_stretch", counting)
    expected = fold(lines, False, 4000, monkeypatch)
    for block in blocks:
        calls.clear()
        assert fold(lines, True, block, monkeypatch) == expected, f"block {block}"
        counts.append(sum(calls))
    return min(counts)


def runtime_mix(seed: int, n: int = 3000) -> list[str]:
    """Decode and prefill rows (both usage layouts, several ranks) with saturation runs, queue
    growth and drops, among access lines, odd layouts the bulk patterns leave alone, and
    events that must be applied in place (retractions, an OOM, a restart)."""
    rng = random.Random(seed)
    lines: list[str] = []
    q = 5
    for i in range(n):
        ts = f"2026-01-01 10:{i // 60 % 60:02d}:{i % 60:02d}"
        rank = rng.choice(["TP0", "TP1", "DP1 TP1"])
        u = rng.choice([0.5, 0.94, 0.95, 0.96, 1.0]) if (i // 50) % 2 else rng.random()
        q = max(0, q + rng.choice([1, 1, 0, -1, -3]))
        usage = (f"#token: {i}, token usage: {u:.2f}" if rng.random() < 0.5 else
                 f"#full token: {i}, full token usage: {u:.2f}, mamba num: 3, mamba usage: 0.10")
        r = rng.random()
        if r < 0.8:
            lines.append(f"[{ts} {rank}] Decode batch, #running-req: {rng.randint(1, 64)}, "
                         f"{usage}, cuda graph: True, gen throughput (token/s): "
                         f"{rng.uniform(0, 3000):.2f}, #queue-req: {q}")
        elif r < 0.9:
            # 0.5.4's layout, and 0.5.9's and 0.5.10's with the input throughput (zero too)
            tput = rng.choice(["", f", input throughput (token/s): {rng.uniform(0, 9000):.2f}"
                               ", cuda graph: False", ", cuda graph: False, input throughput "
                               f"(token/s): {rng.choice([0, 0.5, 4321.49]):.2f}"])
            lines.append(f"[{ts} {rank}] Prefill batch, #new-seq: 1, #new-token: 5, "
                         f"#cached-token: 0, token usage: {u:.2f}, #running-req: "
                         f"{rng.randint(1, 64)}, #queue-req: {q}{tput or ', '}")
        elif r < 0.97:
            lines.append(HTTP)
        elif r < 0.98:  # spec decoding: parsed line by line, in its place
            lines.append(f"[{ts} TP0] Decode batch, #running-req: 3, {usage}, accept len: 2.5, "
                         f"gen throughput (token/s): 10.00, #queue-req: {q}")
        elif r < 0.99:
            lines.append(f"[{ts} TP0] KV cache pool is full. Retract requests. #retracted_reqs: "
                         f"{rng.randint(1, 4)}, #new_token_ratio: 0.7 -> 0.9")
        elif r < 0.995:
            lines.append(f"[{ts} TP0] Decode batch, #running-req: 2, #token: 5, token usage: "
                         f"{u * 10:.2f}, gen throughput (token/s): 12.00, #queue-req: {q}")
        elif r < 0.997:  # a head that is no timestamp prefix: ts and rank None
            lines.append(f"[gpu=0] Decode batch, #running-req: 2, #token: 5, token usage: "
                         f"{u:.2f}, gen throughput (token/s): 12.00, #queue-req: {q}")
        else:
            lines.append("")
        if i == n // 2:
            lines.append(f"[{ts}] server_args=ServerArgs(model_path='m', tp_size=2, "
                         f"kv_cache_dtype='fp8_e4m3')")
            lines.append(f"[{ts} TP0] Load weight begin. avail mem=75.00 GB")
            lines.append(f"[{ts} TP0] Load weight end. type=LlamaForCausalLM, dtype=torch."
                         f"bfloat16, avail mem=60.00 GB, mem usage=15.00 GB.")
            lines.append(f"[{ts} TP0] Memory pool end. avail mem=10.00 GB")
    return lines


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.glob("*.log")))
def test_samples(name, monkeypatch):
    same((SAMPLES / name).read_text().splitlines(), monkeypatch)


@pytest.mark.parametrize("seed", range(6))
def test_runtime_mix(seed, monkeypatch):
    lines = runtime_mix(seed)
    assert same(lines, monkeypatch) > len(lines) // 3


def test_prefill_throughput_goes_column_wise_and_agrees(monkeypatch):
    """The prefill rows' input throughput (SGLang 0.5.9+) is folded by the column route as by
    the line route: the restart pair's prefill lines print it, most of its rows go column-wise,
    and each run keeps the same non-empty prefill throughput summary either way."""
    lines = (SAMPLES / "qwen35-397b-nvfp4-tp8-fp8-then-bf16.log").read_text().splitlines()
    assert same(lines, monkeypatch) > 100
    snap = fold(lines, True, 257, monkeypatch)
    assert len(snap["runs"]) == 2
    for run in snap["runs"]:
        assert sum(run["rt"]["prefill_by_tput"].values()) > 10


def test_a_stretch_longer_than_the_timeline(monkeypatch):
    lines = [ln for ln in runtime_mix(7, 6000) if "Decode batch, #running-req" in ln
             and "accept" not in ln and "token usage: 0" in ln
             and ln.startswith("[2026")][: TIMELINE_POINTS * 3]
    assert len(lines) == TIMELINE_POINTS * 3
    assert same(lines, monkeypatch, blocks=(len(lines),)) == len(lines) - 1


def test_a_head_that_is_no_prefix_goes_line_by_line(monkeypatch):
    """`[gpu=0] Decode batch, ...` parses with ts None, which must not become the last ts."""
    rows = [ln for ln in runtime_mix(3, 400) if ln.startswith("[2026")
            and "Decode batch, #running-req" in ln and "accept" not in ln][:100]
    odd = rows[-1].replace(rows[-1][: rows[-1].index("]")], "[gpu=0")
    assert same([*rows, odd], monkeypatch, blocks=(101,)) == 99  # the first takes the hints


def test_corpus(monkeypatch):
    corpus = corpus_dir()
    if not corpus.is_dir():
        pytest.skip(f"corpus not found at {corpus}")
    for path in sorted(corpus.glob("*.log")):
        same(path.read_text(encoding="utf-8", errors="replace").splitlines(), monkeypatch,
             blocks=(64,))


def test_benchmark_log(monkeypatch, tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from biglog import write_big_log
    finally:
        sys.path.pop(0)
    lines = write_big_log(tmp_path / "big.log", 30000, seed=11).read_text().splitlines()
    assert same(lines, monkeypatch, blocks=(5000,)) > 25000


def test_the_cycle_collector_is_left_as_it_was():
    lines = runtime_mix(1, 200)
    assert gc.isenabled()
    Session().feed_lines("x", lines)
    assert gc.isenabled()
    gc.disable()
    try:
        Session().feed_lines("x", lines)
        assert not gc.isenabled()
    finally:
        gc.enable()


_row = st.tuples(st.sampled_from(["decode"] * 6 + ["prefill"] * 2
                                 + ["http", "retract", "spec", "empty"]),
                 st.sampled_from(["0.10", "0.94", "0.95", "0.99", "1.00"]),
                 st.integers(0, 12), st.integers(0, 40), st.sampled_from(["TP0", "DP1 TP1", ""]))


def _render(i: int, kind: str, usage: str, queue: int, running: int, rank: str) -> str:
    head = f"[2026-01-01 10:00:{i % 60:02d}{' ' + rank if rank else ''}] "
    if kind == "decode":
        return (f"{head}Decode batch, #running-req: {running}, #token: {i}, token usage: "
                f"{usage}, gen throughput (token/s): {i * 1.37:.2f}, #queue-req: {queue}")
    if kind == "prefill":
        return (f"{head}Prefill batch, #new-seq: 1, #new-token: 5, #cached-token: 0, "
                f"token usage: {usage}, #running-req: {running}, #queue-req: {queue}")
    if kind == "retract":
        return f"{head}KV cache pool is full. Retract requests. #retracted_reqs: {running}"
    if kind == "spec":
        return (f"{head}Decode batch, #running-req: {running}, #token: {i}, token usage: "
                f"{usage}, accept len: 2.00, gen throughput (token/s): 1.00, "
                f"#queue-req: {queue}")
    return HTTP if kind == "http" else ""


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_row, min_size=1, max_size=400), st.sampled_from([7, 64, 400]))
def test_random_sequences(rows, block):
    lines = [_render(i, *row) for i, row in enumerate(rows)]
    with pytest.MonkeyPatch.context() as mp:
        # Fold even short blocks and stretches column-wise.
        mp.setattr(fold_mod, "BULK_MIN", 2)
        mp.setattr(fold_mod, "STRETCH_MIN", 2)
        expected = fold(lines, False, block, mp)
        assert fold(lines, True, block, mp) == expected
