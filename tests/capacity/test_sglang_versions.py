"""Version advice and model configs: which release accepts which --kv-cache-dtype, which models
refuse one, and every KV-head attribute SGLang reads, in its order."""

from __future__ import annotations

import pytest

from kvtui.core.capacity import Parallel, preset_spec
from kvtui.core.capacity.modelspec import from_hf_config
from kvtui.engines.sglang.calculator import Calculator
from kvtui.engines.sglang.sizing.families import dtype_refusal
from kvtui.engines.sglang.version import (
    SGLANG_LINE,
    check_release,
    first_version_with,
    kv_dtype_flag,
)


@pytest.mark.parametrize(("value", "first"), [
    # argparse choices of --kv-cache-dtype in each wheel's server_args.py
    ("fp8_e4m3", (0, 4, 2)), ("bf16", (0, 5, 4)), ("fp4_e2m1", (0, 5, 5)),
    ("nvfp4", (0, 5, 16)), ("mxfp8", (0, 5, 16)), ("fp4_mx_block16", (0, 5, 16)),
])
def test_first_release_accepting(value, first):
    assert first_version_with(value) == first


def test_bf16_on_0_5_4_and_fp4_e2m1_gone_from_0_5_16():
    assert kv_dtype_flag("bf16", SGLANG_LINE.between((0, 5, 4), (0, 5, 4)),
                         checkpoint_kv_fp8=True)[0] == "--kv-cache-dtype bf16"
    flag, advice = kv_dtype_flag("bf16", SGLANG_LINE.between((0, 5, 3), (0, 5, 3)),
                                 checkpoint_kv_fp8=True)
    assert flag is None and "0.5.4" in advice
    # fp4_e2m1 is refused at start-up from 0.5.16 (mem_cache/kv_cache_dtype.py:57-61)
    flag, _ = kv_dtype_flag("fp4_e2m1", SGLANG_LINE.between((0, 5, 16), (0, 5, 20)))
    assert flag == "--kv-cache-dtype fp4_mx_block16"


@pytest.mark.parametrize(("pid", "dtype", "version", "refused"), [
    # DSA: bf16 or fp8_e4m3 only, from 0.5.5 (server_args.py:1089-1092)
    ("deepseek-v3.2", "fp8_e5m2", (0, 5, 5), True),
    ("deepseek-v3.2", "nvfp4", (0, 5, 23), True),
    ("deepseek-v3.2", "bf16", (0, 5, 23), False),
    ("deepseek-v3.2", "fp8_e5m2", (0, 5, 4), False),
    ("deepseek-v3", "fp8_e5m2", (0, 5, 23), False),  # plain MLA, no indexer
])
def test_model_refusals(pid, dtype, version, refused):
    assert (dtype_refusal(preset_spec(pid), dtype, version) is not None) is refused


def test_deepseek_v4_refuses_bf16_until_0_5_14():
    """arg_groups/deepseek_v4_hook.py:32-34 (0.5.13) asserts fp8_e4m3; 0.5.14+ also bfloat16."""
    spec = from_hf_config({"architectures": ["DeepseekV4ForCausalLM"], "num_hidden_layers": 2,
                           "num_attention_heads": 2, "hidden_size": 64})
    assert dtype_refusal(spec, "bf16", (0, 5, 13)) is not None
    assert dtype_refusal(spec, "bf16", (0, 5, 14)) is None
    assert dtype_refusal(spec, "fp8_e5m2", (0, 5, 23)) is not None


def test_refused_dtype_gets_no_flag():
    calc = Calculator(current_dtype="bf16", tokens=100_000, spec=preset_spec("deepseek-v3.2"),
                      parallel=Parallel(tp=8), version=SGLANG_LINE.between((0, 5, 23), (0, 5, 23)))
    row = calc.scenario("fp8_e5m2").to_json()
    assert row["flag"] is None and "refuses" in row["flag_advice"]


def test_check_release():
    assert check_release("0.5.10.post1") == (0, 5, 10)
    for bad in ("0.9.9", "banana", "0.5", "0.5.24"):
        with pytest.raises(ValueError):
            check_release(bad)


@pytest.mark.parametrize(("cfg", "kv", "attr"), [
    # ModelConfig.get_total_num_kv_heads (configs/model_config.py:1626-1690 in 0.5.23)
    ({"multi_query": True, "num_key_value_heads": 8}, 1, "multi_query"),  # checked first
    ({"model_type": "falcon", "new_decoder_architecture": True, "multi_query": True,
      "n_head_kv": 4}, 4, "n_head_kv"),
    ({"model_type": "mpt", "attn_config": {"kv_n_heads": 2}}, 2, "attn_config.kv_n_heads"),
    ({"model_type": "dbrx", "attn_config": {"kv_n_heads": 8}}, 8, "attn_config.kv_n_heads"),
    ({"model_type": "dbrx", "attn_config": {}}, 16, "num_attention_heads"),
    ({"num_kv_heads": 3, "num_key_value_heads": 8}, 3, "num_kv_heads"),  # order of the list
    ({"multi_query_group_num": 2}, 2, "multi_query_group_num"),
    ({"num_attention_groups": 4}, 4, "num_attention_groups"),  # Step3, from 0.5.2
    ({"num_key_value_heads": None}, 16, "num_attention_heads (no KV-head key)"),
    ({"model_type": "nemotron-nas", "block_configs": [
        {"attention": {"n_heads_in_group": 8, "no_op": False}},
        {"attention": {"no_op": True}}]}, 2, "block_configs.attention.n_heads_in_group"),
])
def test_kv_head_attributes_in_sglang_order(cfg, kv, attr):
    spec = from_hf_config({"num_hidden_layers": 2, "num_attention_heads": 16,
                           "hidden_size": 1024, **cfg})
    assert (spec.num_kv_heads, spec.kv_heads_from) == (kv, attr)
