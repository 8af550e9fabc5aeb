"""The inverse ("what do N requests take") agrees with the table and the budget what-if.

All three answer from the engine's own per-request arithmetic (SGLang: pool tokens over the
length; vLLM: `Layout.blocks_per_request`, with a window's blocks and one state block per
Mamba group), so on every bundled sample and every corpus log, at the logged setting and at
another memory setting and TP:
- N requests a row says fit (its concurrency, cut) are N the inverse at that setting says fit,
  and a few more do not;
- what the inverse says is missing per GPU is that setting's gap, so it moves with the memory
  setting (it stayed at the logged pool's gap before);
- a memory setting or TP the inverse proposes is one whose budget row fits the requests, and a
  TP is one the engines shard the model to (`tp_refused`).
The bundled vLLM Qwen3-Next sample said 22 requests of 256K need 5.77M tokens (the table's 10.58
requests hold 695,504) and proposed TP 64, which its 16 attention heads refuse.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from kvtui.core.capacity.parallel import tp_refused
from kvtui.core.pipeline import analyse
from kvtui.sources.readers import log_input
from tests.conftest import corpus_dir

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "sample_logs").glob("*.log"))
CORPUS = sorted(corpus_dir().glob("*.log")) if corpus_dir().is_dir() else []


def _calc(path: Path) -> Any:
    session = analyse([log_input(str(path))])[0]
    if session.engine is None:
        return None
    return session.engine.calculator(session.state.settled().current)


def _conc(calc: Any, dtype: str, ctx: int, tp: int | None, knob: float | None) -> float | None:
    row = calc.scenario(dtype, tp=tp, mem_fraction_static=knob, context_lengths=[ctx])
    if row.cannot_model or row.does_not_fit:
        return None
    return row.concurrency.get(str(ctx))


def _settings(calc: Any) -> list[tuple[int | None, float | None]]:
    out: list[tuple[int | None, float | None]] = [(None, None)]
    knob = calc.memory_knob()
    if knob.unit == "fraction" and isinstance(knob.value, float):
        for m in (knob.value - 0.05, knob.value + 0.03):
            if 0.05 < m < 0.99:
                out.append((None, round(m, 2)))
    if calc.spec is not None:
        out.append((calc.parallel.tp * 2, None))
    return out


def _check(calc: Any) -> int:
    ctx = calc.context_len
    checked = 0
    for row in calc.scenarios():
        if row.cannot_model:
            continue
        for tp, knob in _settings(calc):
            conc = _conc(calc, row.dtype, ctx, tp, knob)
            if conc is None or conc < 0.05:
                continue
            where = f"{row.dtype} tp={tp} knob={knob}"
            fit = calc.inverse(row.dtype, ctx, conc - 0.01, tp=tp, mem_fraction_static=knob)
            assert fit.fits_now, (where, conc, fit)
            over = calc.inverse(row.dtype, ctx, conc * 1.2 + 0.02, tp=tp,
                                mem_fraction_static=knob)
            assert not over.fits_now, (where, conc, over)
            if over.missing_gib_per_gpu is not None and over.kv_gib_needed is not None \
                    and over.kv_gib_available is not None:
                gap = max(0.0, over.kv_gib_needed - over.kv_gib_available)
                assert abs(over.missing_gib_per_gpu - gap) <= 0.011, (where, over)
            if over.tp_needed is not None:
                spec = calc.spec
                kv = None if spec.is_mla else spec.num_kv_heads
                attn_tp = over.tp_needed // max(1, calc.parallel.attn_dp)
                assert tp_refused(spec.num_attention_heads, kv, attn_tp) is None, (where, over)
                then = _conc(calc, row.dtype, ctx, over.tp_needed, knob)
                assert then is not None and then >= over.concurrency - 0.01, (where, over, then)
            if calc.spec is not None:
                # a TP whose row holds the requests (one the engines shard to) is found:
                # the CLI's inverse proposes what the pane's TP field shows fitting
                wider = calc.parallel.tp * 2
                then = _conc(calc, row.dtype, ctx, wider, knob)
                if then is not None and then >= over.concurrency + 0.01 and \
                        tp_refused(calc.spec.num_attention_heads,
                                   None if calc.spec.is_mla else calc.spec.num_kv_heads,
                                   wider // max(1, calc.parallel.attn_dp)) is None:
                    assert over.tp_needed is not None and over.tp_needed <= wider, (where, over)
            needed = over.mem_fraction_static_needed
            if needed is not None and not over.fits_now:
                then = _conc(calc, row.dtype, ctx, tp, needed)
                assert then is not None and then >= over.concurrency - 0.01, (where, over, then)
            checked += 1
    return checked


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_the_inverse_agrees_with_the_table_on_every_sample(path: Path) -> None:
    calc = _calc(path)
    if calc is None or not calc.context_len:
        pytest.skip("no what-if for this log")
    assert _check(calc) > 0


@pytest.mark.skipif(not CORPUS, reason="corpus not present")
def test_the_inverse_agrees_with_the_table_on_the_corpus() -> None:
    checked = 0
    for path in CORPUS:
        calc = _calc(path)
        if calc is None or not calc.context_len:
            continue
        checked += _check(calc)
    assert checked >= 25


def test_the_qwen3_next_sample_needs_its_table_tokens_and_no_unshardable_tp() -> None:
    calc = _calc(ROOT / "sample_logs" / "vllm-qwen3-next-80b-tp4-hybrid.log")
    inv = calc.inverse("bf16", 262_144, 22)
    # 22 x (cdiv(262144, 272) full blocks + 3 state blocks) = 21,274 blocks, which vLLM 0.11
    # prints as 21,274 // 4 groups x 272 = 1,446,496 tokens (kv_cache_utils.py, the table's
    # unit: 695,504 for its 10.58 requests)
    assert inv.blocks_needed == 22 * (math.ceil(262_144 / 272) + 3)
    assert inv.tokens_needed == inv.blocks_needed // 4 * 272
    # 16 attention heads: vLLM refuses TP 32 and 64 (config/model.py:1577-1584 in 0.34.0)
    assert not calc.shardable_tp(32) and calc.shardable_tp(16)
    assert inv.tp_needed in (None, 4, 8, 16)


def test_missing_per_gpu_moves_with_the_memory_fraction() -> None:
    calc = _calc(ROOT / "sample_logs" / "qwen35-397b-nvfp4-tp8-bf16.log")
    missing = [calc.inverse("bf16", 262_144, 4, mem_fraction_static=m).missing_gib_per_gpu
               for m in (0.82, 0.85, 0.90)]
    assert missing[0] > missing[1] > missing[2], missing
    # the CLI and the pane ask the same question at the same setting
    at = calc.inverse("bf16", 262_144, 4, tp=16, mem_fraction_static=0.9)
    assert at.tp_target == 16 and at.mem_fraction_static_target == 0.9


def test_the_pane_and_the_cli_ask_the_inverse_at_the_target_setting() -> None:
    """The what-if pane's "missing per GPU" is the target setting's gap (it stayed at the
    logged pool's at every memory fraction), and its "TP that fits" is the CLI's."""
    import argparse
    import contextlib
    import io
    import json

    from kvtui.commands import whatif
    from kvtui.ui.whatif_calc import WhatIfInputs, compute

    log = ROOT / "sample_logs" / "qwen35-397b-nvfp4-tp8-bf16.log"
    calc = _calc(log)
    ctx = 262_144
    seen = []
    for mf in (0.82, 0.85, 0.90):
        res = compute(calc, WhatIfInputs(dtype="bf16", mem_fraction=mf, contexts=[ctx],
                                         concurrency=4))
        rows = {label: target for label, _, target in res.rows}
        inv = calc.inverse("bf16", ctx, 4, mem_fraction_static=mf)
        assert rows["missing per GPU"] == f"{inv.missing_gib_per_gpu:.2f} GiB"
        seen.append(rows["missing per GPU"])
        parser = argparse.ArgumentParser()
        whatif.configure(parser)
        args = parser.parse_args(["--from-log", str(log), "--dtype", "bf16", "--json",
                                  "--target-concurrency", "4", "--mem-fraction-static",
                                  str(mf)])
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert whatif.run(args) == 0
        cli = json.loads(out.getvalue())["inverse"]
        assert f"{cli['missing_gib_per_gpu']:.2f} GiB" == rows["missing per GPU"]
        assert cli["tp_needed"] == inv.tp_needed
        assert ("TP that fits" in rows) is (inv.tp_needed is not None)
    assert len(set(seen)) == 3, seen


def test_a_setting_the_log_cannot_size_keeps_the_requests_and_says_why() -> None:
    """vLLM without the GPU's total memory cannot move --gpu-memory-utilization (the budget
    what-if says so): the inverse still says what the requests take, in the table's unit, and
    why it cannot say whether they fit."""
    calc = _calc(ROOT / "sample_logs" / "vllm-qwen3-next-80b-tp4-hybrid.log")
    now = calc.inverse("bf16", 262_144, 22)
    there = calc.inverse("bf16", 262_144, 22, mem_fraction_static=0.95)
    assert calc.scenario("bf16", mem_fraction_static=0.95).tokens is None
    assert there.tokens_needed == now.tokens_needed and there.kv_gib_needed == now.kv_gib_needed
    assert not there.fits_now and there.missing_gib_per_gpu is None
    assert there.note is not None and "total memory" in there.note


def test_a_pool_that_holds_more_requests_than_sglang_runs_says_so() -> None:
    """Qwen3.5-397B at TP8: 100 requests of 1K fit the pool's tokens, but the table's
    max_running_requests (58: the request and Mamba state slots, kv_cache_configurator.py
    :3119-3160 in 0.5.23) runs fewer at once: the inverse names that cap."""
    calc = _calc(ROOT / "sample_logs" / "qwen35-397b-nvfp4-tp8-bf16.log")
    inv = calc.inverse("bf16", 1024, 100)
    mrr = calc.scenario("bf16", context_lengths=[1024]).max_running_requests
    assert inv.fits_now and mrr is not None and inv.max_running_requests == mrr < 100
    assert calc.inverse("bf16", 1024, mrr).max_running_requests is None


def test_the_pane_names_the_running_cap_too() -> None:
    from kvtui.ui.whatif_calc import WhatIfInputs, compute

    calc = _calc(ROOT / "sample_logs" / "qwen35-397b-nvfp4-tp8-bf16.log")
    res = compute(calc, WhatIfInputs(dtype="bf16", contexts=[1024], concurrency=100))
    rows = {label: target for label, _, target in res.rows}
    assert rows["100 reqs @ 1K"] == "fits"
    cap = calc.inverse("bf16", 1024, 100).max_running_requests
    assert rows["runs at once"] == f"{cap:,} (the rest queue)"


def test_a_target_tp_whose_weights_do_not_fit_says_so_not_that_lines_are_missing() -> None:
    """`kvtui whatif --from-log qwen35-...-bf16.log --target-tp 4 --target-concurrency 4`:
    the budget row says the weights (60.60 GiB) do not fit at TP 4, yet the inverse beside it
    said it "needs the Load weight begin/end lines and mem_fraction_static" the log has. The
    inverse says the setting's own reason, as the budget row and the pane do."""
    calc = _calc(ROOT / "sample_logs" / "qwen35-397b-nvfp4-tp8-bf16.log")
    row = calc.scenario("bf16", tp=4, context_lengths=[262_144])
    assert row.does_not_fit
    inv = calc.inverse("bf16", 262_144, 4, tp=4)
    assert not inv.fits_now
    note = inv.mem_fraction_static_note or ""
    assert "Load weight" not in note, note
    assert note == row.does_not_fit


def test_the_inverse_says_its_gib_with_two_decimals_throughout() -> None:
    """`whatif --from-log vllm-gpt-oss-120b-tp2-extensible.log --target-concurrency 50
    --mem-fraction-static 0.95` said '86.1 GiB per GPU missing; ... short of 86.10 GiB' in one
    line: the missing GiB print as every other GiB figure of the line does."""
    from kvtui.core.capacity.render import _inverse_parts
    from kvtui.core.report_types import Inverse

    inv = Inverse.of(dtype="bf16", context_len=131_072, concurrency=50,
                     tokens_needed=6_553_600, fits_now=False, missing_gib_per_gpu=86.1,
                     missing_rest_gib_per_gpu=90.0)
    text = "; ".join(_inverse_parts(inv))
    assert "86.10 GiB per GPU missing (90.00 GiB more rest memory" in text, text


def test_the_default_inverse_is_asked_at_the_setting_the_command_names() -> None:
    """README's `whatif --from-log ...fp8.log --dtype bf16 --mem-fraction-static 0.9`: the
    budget row was at 0.9 and the inverse beside it (no --target-concurrency) at the logged
    0.82 ('3.15 GiB per GPU missing' where 0.9 leaves 1.18)."""
    import argparse
    import contextlib
    import io
    import json

    from kvtui.commands import whatif

    log = ROOT / "sample_logs" / "qwen35-397b-nvfp4-tp8-fp8.log"
    parser = argparse.ArgumentParser()
    whatif.configure(parser)
    args = parser.parse_args(["--from-log", str(log), "--dtype", "bf16", "--json",
                              "--mem-fraction-static", "0.9"])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert whatif.run(args) == 0
    cli = json.loads(out.getvalue())["inverse"]
    inv = _calc(log).inverse("bf16", cli["context_len"], cli["concurrency"],
                             mem_fraction_static=0.9)
    assert cli["mem_fraction_static_target"] == 0.9
    assert cli["missing_gib_per_gpu"] == inv.missing_gib_per_gpu


def test_a_budget_row_at_the_logged_tp_names_it() -> None:
    """'budget what-if (bf16, TP -, mem_fraction_static 0.9)': the row is at the logged TP 8,
    and says so."""
    from kvtui.core.capacity.render import render_whatif_text

    calc = _calc(ROOT / "sample_logs" / "qwen35-397b-nvfp4-tp8-fp8.log")
    report = calc.report(["bf16"], None)
    from dataclasses import replace
    report = replace(report, budget_scenarios=(
        calc.scenario("bf16", mem_fraction_static=0.9, context_lengths=[262_144]),))
    text = render_whatif_text(report, explain=False)
    assert "budget what-if (bf16, TP 8, mem_fraction_static 0.9)" in text, text


def test_a_budget_row_at_another_tp_says_only_what_moved() -> None:
    """`--target-tp 16` alone said its memory was 'moved by the change in mem_fraction_static
    and by the weights per GPU at the new TP': the fraction did not change."""
    calc = _calc(ROOT / "sample_logs" / "qwen35-397b-nvfp4-tp8-bf16.log")
    basis = calc.scenario("bf16", tp=16, context_lengths=[262_144]).basis
    assert "mem_fraction_static" not in basis and "weights per GPU at the new TP" in basis
    both = calc.scenario("bf16", tp=16, mem_fraction_static=0.9,
                         context_lengths=[262_144]).basis
    assert "mem_fraction_static" in both and "new TP" in both
    one = calc.scenario("bf16", mem_fraction_static=0.9, context_lengths=[262_144]).basis
    assert "mem_fraction_static" in one and "new TP" not in one
