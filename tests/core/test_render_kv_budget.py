"""The check text says what a vLLM whole-cache budget is, and why a what-if waits.

vLLM's `Available KV cache memory: X GiB` (v1/worker/gpu_worker.py) is the memory for all KV
layers of the GPU together, not a per-layer figure; a log that stops after it (the engine failed
before `GPU KV cache size`, as in vllm-project/vllm#27508) has a pool line but no token count,
so the what-if waits for a model spec, not for "a pool or capacity line". Fixture lines are
written in the style of vLLM 0.11's gpu_worker.py / core.py lines.
"""

from __future__ import annotations

from kvtui.core.render import render_text
from tests.helpers import session_of

LINES = [
    "(EngineCore_DP0 pid=100) INFO 10-31 15:07:49 [gpu_worker.py:298] Available KV cache "
    "memory: 1.71 GiB",
    "(EngineCore_DP0 pid=100) ERROR 10-31 15:07:50 [core.py:708] EngineCore failed to start.",
]


def _text() -> str:
    s = session_of(LINES, "v.log")
    return render_text(s.report())


def test_budget_reads_as_all_layers_together():
    text = _text()
    assert "1.71 GiB for all KV layers" in text
    assert "for every KV layer" not in text


def test_whatif_names_the_logged_budget_it_cannot_size():
    text = _text()
    assert "no pool or capacity line in the log" not in text
    assert "1.71 GiB" in text.split("What-if", 1)[1]


def test_a_negative_budget_is_not_offered_for_sizing():
    """vllm-project/vllm#23278: `Available KV cache memory: -2.14 GiB` before the engine fails."""
    s = session_of([LINES[0].replace("1.71", "-2.14"), LINES[1]], "v.log")
    tail = render_text(s.report()).split("What-if", 1)[1]
    assert "--pool-gib" not in tail and "-2.14 GiB" in tail


def test_a_small_vllm_usage_is_not_shown_as_zero():
    """vLLM prints usage as a percentage with one decimal (`GPU KV cache usage: 0.3%`): the text
    keeps that precision (0.003), where two decimals showed 0.00; SGLang's d.dd stays d.dd."""
    from kvtui.core.render import _fmt_usage

    assert _fmt_usage(0.3 / 100) == "0.003"
    assert _fmt_usage(26.1 / 100) == "0.261"
    assert _fmt_usage(0.26) == "0.26" and _fmt_usage(None) == "-"
