"""How many requests fit is cut, never rounded: 0.996 requests is 0.99, not "1.0" (which reads
as one that fits when not one full request does). Every figure of a concurrency the what-if,
the report and the alerts compute is cut to its decimals (`floor_fit`), and the readers that cut
it further (the pane's one decimal, `int()` for what can run) never round it up again. A figure
the engine printed is quoted as printed instead (vLLM's "Maximum concurrency ...: %.2fx", in
the what-if cell of the logged setting at the logged length): a quote, not kvtui's answer."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from kvtui.core.alerts import evaluate
from kvtui.core.capacity.render import render_whatif_text
from kvtui.core.capacity.whatif import floor_fit
from kvtui.engines.sglang.calculator import Calculator as SGLangCalculator
from kvtui.engines.vllm.calculator import Calculator as VLLMCalculator
from kvtui.sources.readers import iter_lines
from kvtui.ui.whatif_calc import fmt_fit
from tests.helpers import session_of

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
CONTEXT = 131072
JUST_UNDER = 130547  # 0.99599 x 131,072 tokens: round(x, 2) says 1.0


def test_floor_fit_cuts_and_reads_floats_as_they_print():
    assert floor_fit(JUST_UNDER, CONTEXT) == 0.99
    assert round(JUST_UNDER / CONTEXT, 2) == 1.0  # what the what-if said before
    assert floor_fit(0.996) == 0.99 and floor_fit(0.996, digits=1) == 0.9
    assert floor_fit(3 * CONTEXT, CONTEXT) == 3.0
    # a float that prints k/100 stays k/100 (math.floor(0.29 * 100) is 28)
    assert all(floor_fit(k / 100) == k / 100 for k in range(20000))
    assert all(floor_fit(k / 100, digits=1) == k // 10 / 10 for k in range(20000))


def test_sglang_what_if_says_not_one_request_fits():
    calc = SGLangCalculator(current_dtype="bf16", tokens=JUST_UNDER, context_len=CONTEXT)
    row = calc.scenario("bf16", context_lengths=[CONTEXT])
    assert row.concurrency == {str(CONTEXT): 0.99}
    assert calc.current().concurrency_at_context_len == 0.99
    text = render_whatif_text(calc.report(["bf16"], [CONTEXT]), explain=False)
    assert "0.99" in text and "1.00" not in text
    assert fmt_fit(row.concurrency[str(CONTEXT)]) == "0.9"


def test_vllm_what_if_says_not_one_request_fits():
    calc = VLLMCalculator(current_dtype="bf16", tokens=JUST_UNDER, context_len=CONTEXT)
    assert calc.concurrency("bf16", [CONTEXT]) == {str(CONTEXT): 0.99}
    assert calc.current().concurrency_at_context_len == 0.99


def test_the_cell_vllm_printed_is_vllms_figure():
    """vllm-project/vllm#25350 (https://github.com/vllm-project/vllm/issues/25350): "GPU KV
    cache size: 230,528 tokens" and "Maximum concurrency for 100,000 tokens per request:
    2.31x", which vLLM prints with "%.2fx" (v1/core/kv_cache_utils.py:853 and :1017 in 0.10.1,
    :1311 in 0.14.1), rounded. The what-if cell for that very setting showed 2.30 (2.30528 cut),
    contradicting the log; it quotes the log. Every other cell answers a fit question of
    kvtui's own and stays cut."""
    calc = VLLMCalculator(current_dtype="bf16", tokens=230528, context_len=100000,
                          concurrency_logged=2.31)
    assert calc.concurrency("bf16", [100000, 32768]) == {"100000": 2.31, "32768": 7.03}
    assert calc.concurrency("fp8_e4m3", [100000]) == {"100000": 4.61}  # 4.61056, cut
    assert calc.current().concurrency_at_context_len == 2.31
    # the same pool from a paste's lines: the table says what the log says
    lines = ["(EngineCore_DP0 pid=5) INFO 09-21 10:00:00 [gpu_worker.py:276] Available KV cache "
             "memory: 10.55 GiB",
             "(EngineCore_DP0 pid=5) INFO 09-21 10:00:00 [kv_cache_utils.py:864] GPU KV cache "
             "size: 230,528 tokens",
             "(EngineCore_DP0 pid=5) INFO 09-21 10:00:00 [kv_cache_utils.py:868] Maximum "
             "concurrency for 100,000 tokens per request: 2.31x"]
    s = session_of(lines, "paste")
    report = s.report()
    assert report.whatif is not None
    row = next(r for r in report.whatif.scenarios if r.dtype == "bf16")
    assert row.concurrency["100000"] == 2.31
    text = render_whatif_text(report.whatif, explain=True)
    assert "2.31" in text and "2.30 " not in text
    # a length vLLM did not print for is kvtui's own fit, cut
    assert VLLMCalculator(current_dtype="bf16", tokens=230528, context_len=65536,
                          concurrency_logged=3.52).concurrency("bf16", [100000]) == {
        "100000": 2.30}


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.glob("*.log")))
def test_every_samples_concurrency_is_the_engines_ratio_cut(name):
    """Each what-if cell lies in (exact - 0.01, exact], the exact ratio from the engine's own
    arithmetic: tokens / length for SGLang, blocks / blocks per request (or blocks x block
    size / length) for vLLM; but the one cell vLLM printed, which is its "%.2f" of that ratio."""
    s = session_of(iter_lines(str(SAMPLES / name)), name)
    calc = s.calculator()
    if calc is None:
        pytest.skip("no pool")
    report = s.report()
    assert report.whatif is not None
    seen = 0
    for row in report.whatif.scenarios:
        for key, value in row.concurrency.items():
            if value is None:
                continue
            c = int(key)
            lay = calc.layout(row.dtype) if isinstance(calc, VLLMCalculator) else None
            budget = calc.budget_bytes()[0] if lay is not None else None
            if lay is not None and budget is not None:
                exact = Fraction(*lay.concurrency_ratio(lay.blocks(budget), c, calc.max_batched))
            else:
                exact = Fraction(row.tokens, c)
            logged = (calc.concurrency_logged_at or calc.context_len
                      if isinstance(calc, VLLMCalculator) and calc.concurrency_logged is not None
                      else None)
            if row.current and c == logged:
                # the cell vLLM printed quotes it: its "%.2f" of the same ratio
                assert value == float(f"{float(exact):.2f}"), (row.dtype, key, value)
            else:
                assert exact - Fraction(1, 100) < Fraction(value) <= exact, (row.dtype, key,
                                                                             value)
            seen += 1
    assert seen


def test_low_concurrency_alert_never_says_two_when_fewer_fit():
    # 91,749 / 45,967 = 1.99599 requests: below the default threshold of 2, and not "2.00"
    cap = ("[2025-06-01 10:00:41 TP0] max_total_num_tokens=91749, chunked_prefill_size=8192, "
           "max_prefill_tokens=16384, max_running_requests=64, context_len=45967")
    s = session_of([cap], "paste")
    alerts = {a.rule: a for a in evaluate(s.state.settled())}
    alert = alerts["low-context-concurrency"]
    assert "1.99 full-context" in alert.title and "2.00" not in alert.title + alert.detail
    assert alert.extra["concurrency"] == 1.99
