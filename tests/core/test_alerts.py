"""Each alert rule fires on the sample log that shows its problem, and not on the others."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtui.core.alerts import RULES, AlertOptions, evaluate
from kvtui.core.pipeline import Options, Session
from kvtui.sources.readers import iter_lines

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
ALL = sorted(p.name for p in SAMPLES.glob("*.log"))

# sample -> the exact set of rules it must raise with default options.
EXPECTED: dict[str, set[str]] = {
    "qwen35-397b-nvfp4-tp8-fp8.log": {"kv-fp8-unscaled"},
    "qwen35-397b-nvfp4-tp8-bf16.log": {"low-context-concurrency"},
    "qwen35-397b-nvfp4-tp8-auto-fp8.log": {"kv-auto-fp8"},
    "deepseek-v3-tp8-mla.log": set(),
    "llama31-70b-tp8.log": set(),
    "llama31-70b-tp8-fp8-scaled.log": set(),
    "llama31-8b-retraction.log": {"context-exceeds-pool", "kv-retraction", "pool-saturated"},
    "sglang-0.3-legacy.log": {"kv-retraction", "pool-saturated"},
    "qwen3-235b-tp8-nvfp4-kv.log": {"kv-fp4"},
    "gpt-oss-120b-tp4-e5m2-restart.log": {"kv-fp8-e5m2", "mem-unbalanced"},
    # restart pairs (sample_logs/restarts.py): the last run's alerts only
    "qwen35-397b-nvfp4-tp8-fp8-then-bf16.log": {"low-context-concurrency"},
    "llama31-70b-tp8-mem-fraction-restart.log": set(),
    "llama31-8b-tp1-then-tp2-no-dump.log": {"low-context-concurrency"},
    "vllm-llama31-70b-tp8-then-tp4.log": set(),
    # vLLM samples (sample_logs/vllm_samples.py)
    "vllm-llama31-8b-tp2-fp8-unscaled.log": {"kv-fp8-unscaled", "pool-saturated", "kv-retraction"},
    "vllm-qwen3-next-80b-tp4-hybrid.log": set(),
    "vllm-llama31-70b-tp8-bf16.log": set(),
    "vllm-gpt-oss-120b-tp2-extensible.log": set(),
}


def analyse(*names: str, lines: list[str] | None = None, **kw) -> Session:
    a = Session(Options(**kw))
    for name in names:
        a.feed_lines(name, iter_lines(str(SAMPLES / name)))
    if lines is not None:
        a.feed_lines("inline", lines)
    return a


def rules_of(a: Session, options: AlertOptions | None = None) -> set[str]:
    report = a.report().to_json() if options is None else None
    if report is not None:
        return {x["rule"] for x in report["alerts"]}
    a.configure(alert_options=options)
    return {x["rule"] for x in a.report().to_json()["alerts"]}


def test_every_sample_has_an_expectation():
    assert set(ALL) == set(EXPECTED), "a new sample log needs its expected alert set"


@pytest.mark.parametrize("name", ALL)
def test_sample_raises_exactly_its_alerts(name):
    assert rules_of(analyse(name)) == EXPECTED[name]


def test_every_rule_is_exercised_somewhere():
    covered = set().union(*EXPECTED.values()) | {
        "kv-fp8", "bf16-does-not-fit", "oom", "calibration-mismatch",  # tested below
        # the engine's own limit and failure lines: tests/core/test_alerts_engine_limits.py
        "profiled-capacity-negative", "input-too-long", "process-exception", "pool-leak",
        "mamba-cap", "requests-reduced",
        "fp8-attention-scales",
        "checkpoint-kv-scales",  # tests/core/test_checkpoint_verdicts.py
        # the accuracy checklist's rules: tests/core/test_accuracy.py
        "context-beyond-model", "weights-quantized-on-load", "chat-template-missing",
        "parser-not-enabled", "generation-defaults-ignored"}
    assert {name for name, _ in RULES} <= covered


def test_fp8_unscaled_carries_evidence_count_and_fix():
    alerts = analyse("qwen35-397b-nvfp4-tp8-fp8.log").report().to_json()["alerts"]
    (a,) = [x for x in alerts if x["rule"] == "kv-fp8-unscaled"]
    assert a["severity"] == "critical"
    ev = a["evidence"]
    assert ev["count"] == 8 and ev["rank"] == "TP0" and ev["line"] > 1
    assert "no scaling factors provided" in ev["text"]
    assert "--kv-cache-dtype bf16" in a["fix"]
    assert "--quantization-param-path" in a["fix"]
    assert "448" in a["detail"]


def test_restart_with_bf16_clears_the_fp8_alerts():
    fp8 = rules_of(analyse("qwen35-397b-nvfp4-tp8-fp8.log"))
    both = rules_of(analyse("qwen35-397b-nvfp4-tp8-fp8.log", "qwen35-397b-nvfp4-tp8-bf16.log"))
    assert "kv-fp8-unscaled" in fp8
    assert not {r for r in both if r.startswith("kv-")}


def test_fp8_without_scale_evidence_is_kv_fp8():
    # The same deployment seen from mid-log: no dump, no warning, an FP8 pool line.
    lines = [ln for ln in iter_lines(str(SAMPLES / "qwen35-397b-nvfp4-tp8-auto-fp8.log"))
             if "server_args" not in ln]
    rules = rules_of(analyse(lines=lines))
    assert "kv-fp8" in rules and "kv-auto-fp8" not in rules


def test_bf16_does_not_fit_against_a_target():
    a = analyse("qwen35-397b-nvfp4-tp8-fp8.log")
    assert "bf16-does-not-fit" not in rules_of(a)  # BF16 still fits 1.15 full-context requests
    assert "bf16-does-not-fit" in rules_of(a, AlertOptions(target_concurrency=2))
    alert = next(x for x in a.report().to_json()["alerts"] if x["rule"] == "bf16-does-not-fit")
    assert "1.15" in alert["title"]  # 1.1599...: cut, not rounded


def test_low_context_concurrency_is_not_the_pools_fault_under_a_running_cap_it_holds():
    # guqiong96/Lsglang#9 (https://github.com/guqiong96/Lsglang/issues/9): one request at
    # full context by design; the pool fits it, the running cap is what queues the rest
    cap = ("[2026-06-07 11:28:36] max_total_num_tokens=262144, chunked_prefill_size=32000, "
           "max_prefill_tokens=16384, max_running_requests={}, context_len=262144, "
           "available_gpu_mem=37.75 GB")
    assert "low-context-concurrency" not in rules_of(analyse(lines=[cap.format(1)]))
    assert "low-context-concurrency" in rules_of(analyse(lines=[cap.format(16)]))


def test_low_context_concurrency_threshold_is_configurable():
    a = analyse("qwen35-397b-nvfp4-tp8-fp8.log")  # 608,174 / 262,144 = 2.32
    assert "low-context-concurrency" not in rules_of(a)
    assert "low-context-concurrency" in rules_of(a, AlertOptions(min_context_concurrency=3))


def test_oom_in_the_current_run():
    lines = list(iter_lines(str(SAMPLES / "gpt-oss-120b-tp4-e5m2-restart.log")))
    first_run = lines[: next(i for i, ln in enumerate(lines) if "sigquit" in ln) + 1]
    alerts = analyse(lines=first_run).report().to_json()["alerts"]
    oom = next(x for x in alerts if x["rule"] == "oom")
    assert oom["severity"] == "critical"
    assert "Capture cuda graph failed" in oom["evidence"]["text"]


# vLLM's own lines (0.33.0 model_executor/layers/quantization/kv_cache.py:149, :204)
Q_FROM_K = ("(EngineCore pid=100) WARNING 07-06 23:16:53 [kv_cache.py:134] Checkpoint does not "
            "provide a q scaling factor. Setting it to k_scale. This only matters for FP8 "
            "Attention backends (flash-attn or flashinfer).")
Q_UNCALIBRATED = ("(EngineCore pid=100) WARNING 07-06 23:16:53 [kv_cache.py:187] Using "
                  "uncalibrated q_scale 1.0 and/or prob_scale 1.0 with fp8 attention. This may "
                  "cause accuracy issues. Please make sure q/prob scaling factors are available "
                  "in the fp8 checkpoint.")


@pytest.mark.parametrize(("lines", "severity"), [
    ([Q_FROM_K], "info"), ([Q_FROM_K, Q_UNCALIBRATED], "warning"), ([Q_UNCALIBRATED], "warning")])
def test_attention_scales_by_what_the_engine_said(lines: list[str], severity: str) -> None:
    alerts = analyse(lines=lines).report().to_json()["alerts"]
    (a,) = [x for x in alerts if x["rule"] == "fp8-attention-scales"]
    assert a["severity"] == severity and a["confidence"] == "medium"
    assert a["evidence"]["line"] == 1 and "bfloat16" in a["fix"]


def test_calibration_mismatch_with_the_wrong_model():
    from kvtui.core import capacity

    wrong, _ = capacity.resolve_model("meta-llama/Llama-3.1-8B")
    a = analyse("llama31-70b-tp8.log", model=wrong)
    alerts = {x["rule"]: x for x in a.report().to_json()["alerts"]}
    assert "calibration-mismatch" in alerts
    assert alerts["calibration-mismatch"]["severity"] == "info"


def test_alerts_are_sorted_most_severe_first():
    a = analyse("llama31-8b-retraction.log")
    sev = [x.severity for x in evaluate(a.state)]
    order = {"critical": 0, "warning": 1, "info": 2}
    assert sev == sorted(sev, key=order.__getitem__)


def test_checkpoint_with_scales_softens_the_unscaled_alert():
    from kvtui.core.checkpoint import CheckpointFacts

    a = analyse("qwen35-397b-nvfp4-tp8-fp8.log")
    with_scales = CheckpointFacts(has_k_scale=True, kv_cache_quant_algo="FP8")
    a.configure(checkpoint=with_scales)
    alert = next(x for x in a.report().to_json()["alerts"] if x["rule"] == "kv-fp8-unscaled")
    assert alert["severity"] == "warning" and "carries" in alert["title"]
    a.configure(checkpoint=CheckpointFacts(has_k_scale=False, kv_cache_quant_algo="FP8"))
    alert = next(x for x in a.report().to_json()["alerts"] if x["rule"] == "kv-fp8-unscaled")
    assert alert["severity"] == "critical" and alert["confidence"] == "high"
    assert "no k_scale/v_scale" in alert["detail"]


def test_the_inverse_sentence_without_the_pools_layout_says_tokens_not_none():
    """vLLM's calculator answers the inverse in tokens when the pool's layout is not known
    (vllm#49011, an NVFP4 run): the alert said "needs None GiB of KV per GPU (None GiB
    missing)"."""
    from kvtui.core.alerts import AlertOptions, _Ctx, _inverse_summary
    from kvtui.core.report_types import Inverse

    ctx = _Ctx(AlertOptions(), None, None, None, None, None)
    tokens = Inverse(keys=(), dtype="bf16", context_len=1_048_576, concurrency=1,
                     tokens_needed=1_048_576, tokens_available=512_823)
    text = _inverse_summary(tokens, ctx)
    assert "None" not in text
    assert "needs 1,048,576 tokens of KV (the pool holds 512,823)" in text
    gib = Inverse(keys=(), dtype="bf16", context_len=131_072, concurrency=2,
                  tokens_needed=262_144, kv_gib_needed=32.0, missing_gib_per_gpu=4.5)
    assert "needs 32.0 GiB of KV per GPU (4.5 GiB missing)" in _inverse_summary(gib, ctx)


def test_a_retraction_logged_by_every_tp_rank_counts_once():
    # sgl-project/sglang#2746 (https://github.com/sgl-project/sglang/issues/2746): one
    # retraction printed by five TP ranks at the same instant (every rank logs it: 0.4.1.post4
    # managers/scheduler.py:927), decode stats by TP0 only
    lines = [f"[2025-01-06 02:58:44 TP{r}] Decode out of memory happened. #retracted_reqs: 1, "
             "#new_token_ratio: 0.0980 -> 0.9446" for r in (0, 5, 7, 2, 6)]
    rt = analyse(lines=lines).report().runtime
    assert (rt.retractions, rt.retracted_reqs) == (1, 1)
    # DP-attention ranks retract on their own: they add up
    dp = [line.replace(f"TP{r}]", f"DP{r} TP{r}]") for r, line in zip((0, 5), lines, strict=False)]
    rt = analyse(lines=dp).report().runtime
    assert (rt.retractions, rt.retracted_reqs) == (2, 2)


def _effective_bases() -> set[str]:
    """Every basis `Run.effective` can name (the second item of each tuple it returns)."""
    import inspect
    import re

    from kvtui.core.state import Run

    src = inspect.getsource(Run.effective.fget)
    return set(re.findall(r'return [^\n]*?, "(\w+)", ', src)) - {"unknown"}


def test_every_basis_has_its_own_words():
    from kvtui.core.alerts import BASIS_WORDS

    bases = _effective_bases()
    assert {"fallback_line", "dsa_backend_line", "override_line"} <= bases
    assert bases <= set(BASIS_WORDS)
    assert len(set(BASIS_WORDS.values())) == len(BASIS_WORDS)


@pytest.mark.parametrize(("line", "words"), [
    # 0.5.9 server_args.py:1179 (the DSA backends set for the resolved KV dtype)
    ("Set DSA backends for fp8_e4m3 KV Cache: prefill=flashmla_auto, decode=flashmla_kv.",
     "DSA attention-backend line"),
    # 0.5.8 server_args.py:1168: SGLang's own default for DeepSeek DSA on SM100+
    ("Setting KV cache dtype to fp8_e4m3 for DeepSeek DSA on SM10 device.",
     "'Setting KV cache dtype ... for <model>' default line"),
    # a wording kvtui does not know as a model default
    ("Setting KV cache dtype to fp8_e4m3 for some reason.",
     "'Setting KV cache dtype' override line"),
])
def test_the_auto_fp8_alert_names_the_line_that_says_fp8(line, words):
    s = Session()
    s.feed_lines("inline", [
        "[2026-03-01 12:00:00] " + line,
        "[2026-03-01 12:00:00] server_args=ServerArgs(model_path='/models/ckpt', tp_size=8, "
        "kv_cache_dtype='auto', page_size=64)"])
    alert = next(a for a in s.report().alerts if a.rule == "kv-auto-fp8")
    assert f"yet the {words} (line 1) shows" in alert.detail, alert.detail
    assert "the log (line" not in alert.detail
