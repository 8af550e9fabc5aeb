"""The texts name a vLLM run's capacity figures the way vLLM's configuration does.

The report's keys are SGLang's names (context_len, max_total_num_tokens), the first engine's; a
vLLM engineer sets and greps `max_model_len` (vllm 0.33.0 config/model.py:249) and reads the pool
as "GPU KV cache size: N tokens" (0.10.1 v1/core/kv_cache_utils.py:849 and :1013), the words of
the log, not the name of a variable inside vLLM. The JSON keeps its keys (a contract); the check
text, the alerts' sentences and the facts pane use the engine's names (`Engine.terms`).
"""

from __future__ import annotations

from kvtui.core.render import render_text
from kvtui.ui.panes import facts_text
from tests.vllm.reports import report_of, sample_report

H = "(EngineCore_DP0 pid=9) INFO 05-01 10:00:42 [kv_cache_utils.py:1148] "
LOW = [H + "GPU KV cache size: 1,823,372 tokens",
       H + "Maximum concurrency for 1,048,576 tokens per request: 1.74x"]


def test_vllm_check_text_and_pane_say_max_model_len():
    r = sample_report("vllm-llama31-70b-tp8-bf16.log")
    text = render_text(r)
    cap = next(ln for ln in text.splitlines() if ln.startswith("Capacity"))
    # the pool in vLLM's own words: "GPU KV cache size: %s tokens" (kv_cache_utils.py:849)
    assert "GPU KV cache size: 1,364,400 tokens," in cap and "max_model_len=131,072" in cap
    assert "GPU KV cache size=" not in cap
    assert "context_len" not in cap and "max_total_num_tokens" not in cap
    assert "kv_cache_size_tokens" not in cap  # a name inside vLLM, never in its log
    pane = facts_text(r).plain
    assert "GPU KV cache size: 1,364,400 tokens" in pane and "max_model_len=131,072" in pane
    assert "context_len=" not in pane and "max_total_num_tokens=" not in pane
    # the JSON contract keeps the report's keys
    assert r.capacity is not None and r.to_json()["capacity"]["context_len"] == 131072


def test_vllm_alert_sentence_says_max_model_len():
    r = report_of(LOW)
    low = next(a for a in r.alerts if a.rule == "low-context-concurrency")
    assert "at max_model_len 1,048,576" in low.detail and "context_len" not in low.detail


def test_sglang_keeps_its_own_names():
    r = sample_report("qwen35-397b-nvfp4-tp8-fp8.log")
    cap = next(ln for ln in render_text(r).splitlines() if ln.startswith("Capacity"))
    assert "max_total_num_tokens=608,174" in cap and "context_len=262,144" in cap
    assert "max_total_num_tokens=608,174" in facts_text(r).plain
