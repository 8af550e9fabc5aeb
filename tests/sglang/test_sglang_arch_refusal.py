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
    assert calc.flag("bf16")[0] == "--kv-cache-dtype bf16"
    assert calc.flag("fp8_e4m3")[0] == "--kv-cache-dtype fp8_e4m3"
