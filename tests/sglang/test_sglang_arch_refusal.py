"""A DeepSeek-V4 log with no model spec still gets no flag SGLang refuses.

A DeepSeek-V4.1-Flash head log (repository report of 2026-09, TP3 over three DGX Spark, DSpark
draft) names only the architecture (`Load weight end. ... type=DeepseekV4ForCausalLM`) and its
override line "Setting KV cache dtype to fp8_e4m3 for DeepseekV4ForCausalLM."; kvtui's what-if
offered --kv-cache-dtype fp8_e5m2 / mxfp8 / nvfp4, which SGLang asserts against: the check reads
hf_config.architectures[0] alone (0.5.23 arg_groups/overrides.py:891-913).
"""

from __future__ import annotations

from kvtui.engines.sglang.calculator import Calculator
from kvtui.engines.sglang.sizing.families import dtype_refusal
from kvtui.engines.sglang.version import SGLANG_LINE


def test_refusal_from_the_architecture_alone():
    arch = "DeepseekV4ForCausalLM"
    assert dtype_refusal(None, "fp8_e5m2", (0, 5, 23), architecture=arch) is not None
    assert dtype_refusal(None, "nvfp4", (0, 5, 23), architecture=arch) is not None
    assert dtype_refusal(None, "bf16", (0, 5, 23), architecture=arch) is None
    assert dtype_refusal(None, "bf16", (0, 5, 13), architecture=arch) is not None
    assert dtype_refusal(None, "fp8_e5m2", (0, 5, 23)) is None  # nothing known: no refusal


def test_calculator_flag_without_a_spec():
    calc = Calculator(current_dtype="fp8_e4m3", tokens=2999808, context_len=1048576,
                      version=SGLANG_LINE.between((0, 5, 23), (0, 5, 23)),
                      architecture="DeepseekV4ForCausalLM")
    flag, advice = calc.flag("fp8_e5m2")
    assert flag is None and "refuses" in advice
    assert calc.flag("mxfp8")[0] is None
    # "bf16" fails the DSv4 assertion (no normalization on that path, 0.5.23
    # arg_groups/overrides.py:907-910): the accepted spelling is "bfloat16"
    assert calc.flag("bf16")[0] == "--kv-cache-dtype bfloat16"
    assert calc.flag("fp8_e4m3")[0] == "--kv-cache-dtype fp8_e4m3"


def test_a_log_naming_only_the_class_gets_the_refusal():
    """End to end: the weight line's class reaches the what-if (fromrun), so no row offers a
    flag SGLang 0.5.23 asserts against."""
    from kvtui.core.pipeline import Session

    lines = [
        "[2026-09-26 19:55:58 TP0] Load weight end. type=DeepseekV4ForCausalLM, "
        "dtype=torch.bfloat16, avail mem=60.00 GB, mem usage=40.00 GB.",
        "[2026-09-26 19:56:00 TP0] KV Cache is allocated. #tokens: 2999808, "
        "K size: 5.00 GB, V size: 5.00 GB",
        "[2026-09-26 19:56:05 TP0] max_total_num_tokens=2999808, chunked_prefill_size=8192, "
        "max_prefill_tokens=16384, max_running_requests=64, context_len=1048576, "
        "available_gpu_mem=8.00 GB",
    ]
    from kvtui.engines.sglang.fromrun import calculator_from_run

    s = Session()
    s.feed_lines("v4.log", lines)  # these line forms date no release: pin the one V4 runs on
    calc = calculator_from_run(s.state.settled().current, sglang_version="0.5.23")
    assert calc is not None
    rows = {r.dtype: r for r in calc.report().scenarios}
    assert rows["fp8_e5m2"].flag is None and "refuses" in rows["fp8_e5m2"].flag_advice


def test_a_dsa_class_alone_refuses_the_dtypes_dsa_does_not_take():
    """GLM-5-FP8 on ROCm (repository file's log; rocm/sgl-dev v0.5.8.post1, 2026-02) names only
    `type=GlmMoeDsaForCausalLM` and no preset matches: the what-if offered fp8_e5m2 and
    fp4_e2m1, which SGLang asserts against for a DSA model ("DeepSeek DSA only supports
    bf16/bfloat16 or fp8_e4m3 kv_cache_dtype", 0.5.9 server_args.py:1146-1150, under
    is_deepseek_nsa at :1205). The class alone is DSA for V3.2's and GLM-5's classes; a
    DeepseekV3ForCausalLM is DSA only with index_topk, which the class does not tell."""
    for arch in ("GlmMoeDsaForCausalLM", "DeepseekV32ForCausalLM"):
        assert dtype_refusal(None, "fp8_e5m2", (0, 5, 9), architecture=arch) is not None
        assert dtype_refusal(None, "fp4_e2m1", (0, 5, 9), architecture=arch) is not None
        assert dtype_refusal(None, "bf16", (0, 5, 9), architecture=arch) is None
        assert dtype_refusal(None, "fp8_e4m3", (0, 5, 9), architecture=arch) is None
    assert dtype_refusal(None, "fp8_e5m2", (0, 5, 9), architecture="DeepseekV3ForCausalLM") is None
