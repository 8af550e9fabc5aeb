"""Speculative decoding: the draft model's pool line never replaces the target's as "the" pool.

SGLang initialises the draft worker after the target on each rank, so its "Load weight end"
(type=...Eagle3 / ...NextN) and "KV Cache is allocated" lines follow the target's.
"""

from __future__ import annotations

from kvtui.core.pipeline import Session
from kvtui.engines.sglang.fromrun import whatif_for_run
from tests.helpers import session_of

LINES = [
    "[2025-07-28 11:00:00] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B', "
    "tp_size=1, kv_cache_dtype='auto', page_size=1, mem_fraction_static=0.85, "
    "speculative_algorithm='EAGLE3', speculative_draft_model_path='/d/eagle3', "
    "speculative_num_draft_tokens=4, max_running_requests=48)",
    "[2025-07-28 11:00:01 TP0] Load weight begin. avail mem=78.66 GB",
    "[2025-07-28 11:00:05 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, "
    "avail mem=63.52 GB, mem usage=15.14 GB.",
    "[2025-07-28 11:00:06 TP0] KV Cache is allocated. #tokens: 423698, K size: 25.86 GB, "
    "V size: 25.86 GB",
    "[2025-07-28 11:00:07 TP0] Load weight end. type=LlamaForCausalLMEagle3, "
    "dtype=torch.bfloat16, avail mem=11.30 GB, mem usage=0.80 GB.",
    "[2025-07-28 11:00:07 TP0] KV Cache is allocated. #tokens: 423698, K size: 0.81 GB, "
    "V size: 0.81 GB",
]


def _run():
    a = session_of(LINES, "spec.log")
    return a.state.current


def test_target_pool_stays_primary():
    run = _run()
    pool = run.primary_kv_pool()
    assert pool is not None and (pool.k_gib, pool.role) == (25.86, "target")
    assert [(p.k_gib, p.role) for p in run.draft_kv_pools()] == [(0.81, "draft")]
    # the draft's weight load does not replace the target's memory figures
    assert run.weights["TP0"]["avail_gib"] == 63.52
    assert run.draft_weights["TP0"]["model_class"] == "LlamaForCausalLMEagle3"


def test_whatif_reports_both_pools_by_role():
    w = whatif_for_run(_run()).to_json()
    assert w is not None
    assert [p["role"] for p in w["pools"]] == ["target", "draft"]
    assert w["current"]["calibration"]["within_rounding"]
    # The log formats date it <= 0.5.8 (dtype= on Load weight end): no draft layers in the
    # target's cell before 0.5.14, so the cell is Llama-3.1-8B's own 131,072 B.
    assert w["current"]["theoretical_bytes_per_token"] == 131_072


def test_report_pools_carry_their_role():
    a = session_of(LINES, "spec.log")
    report = a.report().to_json()
    assert sorted(p["role"] for p in report["pools"]) == ["draft", "target"]


def test_report_shows_the_draft_models_weights():
    """The draft's own weight load is reported next to the target's (JSON `weights.draft_*`,
    the check text's Weights line), not only kept apart from it."""
    from kvtui.core.render import render_text

    a = session_of(LINES, "spec.log")
    report = a.report()
    w = report.to_json()["weights"]
    assert (w["model_class"], w["usage_gib"]) == ("LlamaForCausalLM", 15.14)
    assert (w["draft_model_class"], w["draft_usage_gib"], w["draft_ranks"]) == (
        "LlamaForCausalLMEagle3", 0.8, 1)
    line = next(s for s in render_text(report).splitlines() if s.startswith("Weights"))
    assert "draft LlamaForCausalLMEagle3, 0.80 GiB per GPU" in line


def test_a_draft_only_paste_still_reports_its_weights():
    """A paste that holds only the draft worker's loads (the wording of sgl-project/sglang#30609:
    `type=...NextN, quant=fp8, fmt=e4m3, ... mem usage=1.00 GB.`) still reports them; the target
    stays unknown rather than becoming the draft."""
    from kvtui.core.render import render_text

    a = Session()
    a.feed_lines("nextn.log", [
        "[2026-07-14 07:51:06 TP0 EP0] Load weight end. elapsed=10.26 s, "
        "type=DeepseekV3ForCausalLMNextN, quant=fp8, fmt=e4m3, avail mem=41.92 GB, "
        "mem usage=1.00 GB.",
        "[2026-07-14 07:51:06 TP1 EP1] Load weight end. elapsed=10.31 s, "
        "type=DeepseekV3ForCausalLMNextN, quant=fp8, fmt=e4m3, avail mem=44.51 GB, "
        "mem usage=1.00 GB.",
    ])
    report = a.report()
    w = report.to_json()["weights"]
    assert (w["model_class"], w["usage_gib"], w["ranks"]) == (None, None, 0)
    assert (w["draft_model_class"], w["draft_quant"], w["draft_usage_gib"], w["draft_ranks"]) \
        == ("DeepseekV3ForCausalLMNextN", "quant=fp8, fmt=e4m3", 1.0, 2)
    line = next(s for s in render_text(report).splitlines() if s.startswith("Weights"))
    assert line == ("Weights    draft DeepseekV3ForCausalLMNextN (quant=fp8, fmt=e4m3),"
                    " 1.00 GiB per GPU")


def test_a_gemma4_assistant_is_a_draft_and_its_pool_a_draft_pool():
    """Gemma 4's MTP drafter is named `...AssistantForCausalLM` (SGLang 0.5.23
    models/gemma4_mtp.py:59 `class Gemma4AssistantForCausalLM`, :400
    `Gemma4UnifiedAssistantForCausalLM`, EntryClass :404). A paste of only the drafter's start
    (the shape of sgl-project/sglang#24589, numbers made up) is a draft's load and a draft's
    tiny pool: never the model, never the pool a what-if sizes."""
    a = Session()
    a.feed_lines("assistant.log", [
        "[2026-05-02 10:00:01] Load weight end. elapsed=12.50 s, type=Gemma4AssistantForCausalLM, "
        "avail mem=5.10 GB, mem usage=0.41 GB.",
        "[2026-05-02 10:00:01] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 128, "
        "K size: 0.00 GB, V size: 0.00 GB",
        "[2026-05-02 10:00:01] Memory pool end. avail mem=5.08 GB",
    ])
    run = a.state.current
    assert run.weights == {} and run.draft_weights[None]["model_class"] == \
        "Gemma4AssistantForCausalLM"
    assert run.primary_kv_pool() is None
    assert [(p.tokens, p.role) for p in run.draft_kv_pools()] == [(128, "draft")]
    report = a.report().to_json()
    assert report["model"]["model_class"] is None
    assert report["weights"]["draft_model_class"] == "Gemma4AssistantForCausalLM"
    assert report["whatif"] is None
