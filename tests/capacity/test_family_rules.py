"""The family rules issue 35 added, each holding SGLang's figure for one configuration, worked by
hand from the 0.5.23 source named in each comment (the presets give the shapes, with sources)."""

from __future__ import annotations

import pytest

from kvtui.core.capacity import Parallel, from_hf_config, preset_spec
from kvtui.engines.sglang.cell import kv_cell
from kvtui.engines.sglang.sizing import mamba
from kvtui.engines.sglang.sizing.args import SizingArgs
from kvtui.engines.sglang.sizing.families import CannotModel, check_supported, linear_kind
from kvtui.engines.vllm import coverage as vllm_cov
from kvtui.engines.vllm.plan import plan

V = (0, 5, 23)


@pytest.mark.parametrize(("dtype", "tp", "cell"), [
    # MLA: (kv_lora_rank 512 + qk_rope_head_dim 64) x 2 B x 56 layers, whatever the TP:
    # num_attention_layers = num_layers 28 x 2 (configs/model_config.py:1583-1584,
    # configs/longcat_flash.py:81-83), MLATokenToKVPool one latent per layer
    ("bf16", 8, 576 * 2 * 56),
    ("bf16", 1, 576 * 2 * 56),
    ("fp8_e4m3", 8, 576 * 56),
])
def test_longcat_flash_on_sglang_counts_two_mla_layers_per_decoder_layer(dtype, tp, cell):
    spec = preset_spec("longcat-flash")
    check_supported(spec, V)
    c = kv_cell(spec, dtype, Parallel(tp=tp), version=V)
    assert c.kind == "mla" and c.layers == 56
    assert c.bytes_per_token == cell


def test_longcat_flash_before_the_release_read_is_not_modelled():
    with pytest.raises(CannotModel, match=r"read its sizing in 0\.5\.23 only"):
        check_supported(preset_spec("longcat-flash"), (0, 5, 22))


def test_longcat_flash_on_vllm():
    """Two DeepseekV2MLAAttention per decoder layer (models/longcat_flash.py:267-286, vLLM
    0.34.0) over num_layers 28: 56 MLA layers, one group; a page of 64 tokens (kvtui's MLA
    block, sizing.MLA_BLOCK) x (512 + 64) x 2 B = 73,728 B per layer, a block of the group
    4,128,768 B. 40 GiB // that = 10,402 blocks; at max_model_len 32,768 a request takes
    32,768 / 64 = 512 blocks, and 0.22+ prints int(10,402 / 512 x 32,768) = 665,728 tokens
    (the layout rules of the newest release kvtui dates, sizing.RULES["v1-0.22"]; 0.34's
    post-warmup budget is issue 35 point 6, this is the pool a given budget makes)."""
    calc = plan(preset_spec("longcat-flash"), "preset", current_dtype="bf16", tokens=None,
                context_len=32768, tp=8, attn_dp=1, page_size=None, pool_gib=40.0,
                release=None)
    assert calc.unmodelled is None
    lay = calc.layout("bf16")
    assert (lay.block_size, lay.group_size, lay.block_bytes) == (64, 56, 4_128_768)
    assert calc.tokens == 665_728
    assert vllm_cov.verdict("LongcatFlashForCausalLM").sized


def test_longcat_flash_cases_kvtui_does_not_size():
    base = {"architectures": ["LongcatFlashForCausalLM"], "num_attention_heads": 4,
            "hidden_size": 64, "kv_lora_rank": 16, "qk_rope_head_dim": 8}
    # a config carrying both counts, unequal: SGLang takes 2 x 4, vLLM 2 x 2
    both = from_hf_config({**base, "num_layers": 2, "num_hidden_layers": 4})
    assert both.unsupported and "does not pick one" in both.unsupported
    with pytest.raises(CannotModel):
        check_supported(both, V)
    # equal counts agree: sized
    assert from_hf_config({**base, "num_layers": 2, "num_hidden_layers": 2}).num_layers == 4
    # with an indexer (DSA on SGLang, a sparse indexer on vLLM), or split by PP on vLLM
    dsa = from_hf_config({**base, "num_layers": 2, "index_topk": 4, "index_head_dim": 8})
    assert vllm_cov.for_run(dsa) and "index_topk" in vllm_cov.for_run(dsa)
    assert "pipeline parallel" in vllm_cov.for_run(preset_spec("longcat-flash"), pp=2)


@pytest.mark.parametrize(("tp", "cell", "slot"), [
    # KV: 6 attention layers (full_attn_idxs) x 8 KV heads / TP x (64 + 64) x 2 B;
    # state: Lfm2Config.mamba2_cache_params (configs/lfm2.py:59-96): Mamba2StateShape.create
    # (configs/mamba_utils.py:195-240) with intermediate 2048, n_groups 1, state_size 0:
    # conv (2048 // tp) x (conv_L_cache 3 - 1) x 2 B (bf16 conv), temporal 0, x 10 conv layers
    (1, 6 * 8 * 128 * 2, 2048 * 2 * 2 * 10),
    (2, 6 * 4 * 128 * 2, 1024 * 2 * 2 * 10),
])
def test_lfm2_on_sglang_is_a_mamba2_hybrid_whose_state_is_the_conv(tp, cell, slot):
    spec = preset_spec("lfm2-1.2b")
    check_supported(spec, V)
    assert linear_kind(spec, V) == "mamba2"
    assert len(spec.full_layer_ids) == 6 and len(spec.linear_layer_ids) == 10
    assert kv_cell(spec, "bf16", Parallel(tp=tp), version=V).bytes_per_token == cell
    st = mamba.state_per_slot(spec, tp, SizingArgs(), V, "mamba2")
    assert (st.per_slot, st.ssm_bytes) == (slot, 0)


def test_lfm2_layer_types_and_full_attn_idxs_give_the_same_layout():
    base = {"architectures": ["Lfm2ForCausalLM"], "model_type": "lfm2",
            "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
            "num_key_value_heads": 2, "conv_L_cache": 3}
    by_idx = from_hf_config({**base, "full_attn_idxs": [1, 3]})
    by_types = from_hf_config({**base, "layer_types": ["conv", "full_attention", "conv",
                                                       "full_attention"]})
    assert by_idx.layer_kinds == by_types.layer_kinds
    assert by_idx.full_layer_ids == (1, 3)


def test_lfm2_variants_stay_not_modelled():
    spec = preset_spec("lfm2-1.2b")
    with pytest.raises(CannotModel, match=r"0\.5\.23 only"):
        check_supported(spec, (0, 5, 21))
    vl = from_hf_config({"architectures": ["Lfm2VlForConditionalGeneration"],
                         "model_type": "lfm2_vl", "num_hidden_layers": 2, "hidden_size": 64,
                         "num_attention_heads": 4, "num_key_value_heads": 2,
                         "conv_L_cache": 3, "layer_types": ["conv", "full_attention"]})
    with pytest.raises(CannotModel, match="Lfm2VlForConditionalGeneration on SGLang"):
        check_supported(vl, V)
    vl_vllm = plan(vl, "preset", current_dtype="bf16", tokens=None, context_len=32768, tp=1,
                   attn_dp=1, page_size=None, pool_gib=10.0, release="0.34.0")
    assert vl_vllm.unmodelled and "short-convolution" in vl_vllm.unmodelled


@pytest.mark.parametrize("preset", ["ring-linear", "minimax-m1", "deepseek-v4"])
def test_presets_of_unmodelled_families_say_so_on_both_engines(preset):
    spec = preset_spec(preset)
    with pytest.raises(CannotModel):
        check_supported(spec, V)
    calc = plan(spec, "preset", current_dtype="bf16", tokens=None, context_len=32768, tp=8,
                attn_dp=1, page_size=None, pool_gib=40.0, release=None)
    rows = calc.report().scenarios
    assert calc.unmodelled and all(r.cannot_model and r.tokens is None for r in rows)


@pytest.mark.parametrize(("name", "preset"), [
    ("google/gemma-4-26b-a4b-it", "gemma-4-26b-a4b"), ("/models/gemma-4-31b-it", "gemma-4-31b"),
    ("google/gemma-4-E4B-it", "gemma-4-e4b"), ("gemma-4-E2B", "gemma-4-e2b"),
    ("ai21labs/Jamba-v0.1", "jamba-v0.1"), ("inclusionAI/Ring-mini-linear-2.0",
                                             "ring-linear"),
    ("MiniMaxAI/MiniMax-M1-40k", "minimax-m1"), ("meituan-longcat/LongCat-Flash-Chat-FP8",
                                                  "longcat-flash"),
    ("LiquidAI/LFM2-1.2B", "lfm2-1.2b"),
])
def test_served_names_find_the_family_presets(name, preset):
    from kvtui.core.capacity import match_preset

    hit = match_preset(name)
    assert hit is not None and hit[0] == preset


def test_nemotron_h_on_vllm_0_33_and_later():
    """Nemotron-H-8B at TP1, bf16 KV, 10 GiB, max_model_len 8,192 (vLLM 0.33.0 / 0.34.0:
    models/nemotron_h.py:780-810, layers/mamba/mamba_utils.py:186 / :194):
    Mamba2 state per layer: conv (128 x 64 + 2 x 8 x 128) x (4 - 1) x 2 B = 61,440 B, SSM
    128 x 64 x 128 x 4 B (float32, NemotronHForCausalLMConfig) = 4,194,304 B: 4,255,744 B.
    Attention token: 8 x (128 + 128) x 2 B = 4,096 B; block raised to 16 x cdiv(4,255,744,
    16 x 4,096) = 1,040 tokens (platforms/interface.py). 4 attention and 24 Mamba layers:
    groups of 4 (24 >= 1.5 x 4), 1 full + 6 Mamba; a block 1,040 x 4,096 x 4 = 17,039,360 B;
    10 GiB holds 630. A request of 8,192 takes cdiv(8,192, 1,040) = 8 + 6 x 1 = 14 blocks:
    concurrency 45.0, GPU KV cache size int(45.0 x 8,192) = 368,640 tokens."""
    calc = plan(preset_spec("nemotron-h-8b-base-8k"), "preset", current_dtype="bf16",
                tokens=None, context_len=8192, tp=1, attn_dp=1, page_size=None, pool_gib=10.0,
                release="0.33.0")
    assert calc.unmodelled is None
    lay = calc.layout("bf16")
    assert lay.mamba_bytes == 61_440 + 4_194_304
    assert (lay.block_size, lay.group_size, lay.full_groups, lay.mamba_groups) == (1040, 4, 1, 6)
    assert lay.blocks(10 << 30) == 630
    assert calc.tokens == 368_640


def test_nemotron_h_on_vllm_is_not_modelled_where_it_was_not_read():
    spec = preset_spec("nemotron-h-8b-base-8k")
    calc = plan(spec, "preset", current_dtype="bf16", tokens=None, context_len=8192, tp=1,
                attn_dp=1, page_size=None, pool_gib=10.0, release="0.28.0")
    assert calc.unmodelled and "0.33.0 and 0.34.0 only" in calc.unmodelled
    assert all(r.tokens is None for r in calc.report().scenarios)
    assert "speculative" in vllm_cov.for_run(spec, lo=(0, 33, 0), spec_tokens=2)
    for arch in ("FalconH1ForCausalLM", "GraniteMoeHybridForCausalLM"):
        assert vllm_cov.verdict(arch).unmodelled, arch


def test_jamba_on_vllm_0_33_and_later():
    """Jamba-v0.1 at TP1, bf16 KV, 20 GiB, max_model_len 8,192 (vLLM 0.33.0 / 0.34.0:
    models/jamba.py:478, layers/mamba/mamba_utils.py:179): Mamba1 state per layer, intermediate
    2 x 4,096 = 8,192: conv 8,192 x (4 - 1) x 2 B = 49,152 B, SSM 8,192 x 16 x 2 B (the model
    dtype: mamba1_state_dtype with auto) = 262,144 B: 311,296 B. Attention token 8 x 256 x 2 B
    = 4,096 B; block 16 x cdiv(311,296, 65,536) = 80 tokens. Attention at 4, 12, 20, 28 (period
    8, offset 4), 28 Mamba layers: groups of 4, 1 full + 7 Mamba; a block 80 x 4,096 x 4 =
    1,310,720 B; 20 GiB holds 16,384. A request of 8,192 takes cdiv(8,192, 80) = 103 + 7 = 110
    blocks: int(16,384 / 110 x 8,192) = 1,220,161 tokens."""
    spec = preset_spec("jamba-v0.1")
    assert spec.full_layer_ids == (4, 12, 20, 28) and len(spec.linear_layer_ids) == 28
    calc = plan(spec, "preset", current_dtype="bf16", tokens=None, context_len=8192, tp=1,
                attn_dp=1, page_size=None, pool_gib=20.0, release="0.33.0")
    assert calc.unmodelled is None
    lay = calc.layout("bf16")
    assert lay.mamba_bytes == 49_152 + 262_144
    assert (lay.block_size, lay.group_size, lay.full_groups, lay.mamba_groups) == (80, 4, 1, 7)
    assert lay.blocks(20 << 30) == 16_384
    assert calc.tokens == 1_220_161
    older = plan(spec, "preset", current_dtype="bf16", tokens=None, context_len=8192, tp=1,
                 attn_dp=1, page_size=None, pool_gib=20.0, release="0.28.0")
    assert older.unmodelled and "0.33.0 and 0.34.0 only" in older.unmodelled
    with pytest.raises(CannotModel, match="not in SGLang"):
        check_supported(spec, V)


def test_minimax_m1_on_vllm_0_22():
    """MiniMax-M1 at TP8, bf16, 40 GiB, max_model_len 131,072 (vLLM 0.22.0: models/
    minimax_text_01.py:509, :993-1009; layers/mamba/mamba_utils.py:130-137): 10 softmax layers
    of max(1, 8 // 8) x (128 + 128) x 2 B = 512 B per token; 70 lightning layers of a
    (64 // 8) x 128 x 128 x 2 B = 262,144 B state. Block 16 x cdiv(262,144, 16 x 512) = 512
    tokens (page 262,144 B: no padding); groups of 10 (70 >= 1.5 x 10): 1 full + 7 lightning;
    a block 2,621,440 B, 40 GiB holds 16,384; a request of 131,072 takes 256 + 7 = 263:
    int(16,384 / 263 x 131,072) = 8,165,337 tokens."""
    calc = plan(preset_spec("minimax-m1"), "preset", current_dtype="bf16", tokens=None,
                context_len=131072, tp=8, attn_dp=1, page_size=None, pool_gib=40.0,
                release="0.22.0")
    assert calc.unmodelled is None
    lay = calc.layout("bf16")
    assert (lay.block_size, lay.mamba_bytes, lay.group_size) == (512, 262_144, 10)
    assert (lay.full_groups, lay.mamba_groups, lay.blocks(40 << 30)) == (1, 7, 16_384)
    assert calc.tokens == 8_165_337


def test_lfm2_moe_on_sglang_has_the_lfm2_state():
    """LFM2-8B-A1B at attention TP 1 (configs/lfm2_moe.py, 0.5.23: the same Mamba2StateShape
    as LFM2): KV 6 layers x 8 x (64 + 64) x 2 B = 12,288 B/token; state 18 conv layers x 2,048
    x (3 - 1) x 2 B = 147,456 B per request."""
    spec = preset_spec("lfm2-8b-a1b")
    check_supported(spec, V)
    assert linear_kind(spec, V) == "mamba2"
    assert kv_cell(spec, "bf16", Parallel(tp=1), version=V).bytes_per_token == 12_288
    assert mamba.state_per_slot(spec, 1, SizingArgs(), V, "mamba2").per_slot == 147_456


def test_lfm2_on_vllm_0_33_and_later():
    """LFM2-1.2B at TP1, bf16 KV, 10 GiB, max_model_len 32,768 (vLLM 0.33.0 / 0.34.0).
    Short-conv state per layer: short_conv_state_shape(TP, hf_config.conv_dim, conv_L_cache)
    (models/lfm2.py:573-577; layers/mamba/mamba_utils.py:257-266 in 0.34.0) = divide(2,048, 1)
    x (3 - 1) in the model dtype (short_conv_state_dtype, auto) = 2,048 x 2 x 2 B = 8,192 B.
    Attention (6 layers, layer_types from full_attn_idxs): head_dim 2,048 // 32 = 64 (models/
    lfm2.py:135), 8 KV heads: 8 x (64 + 64) x 2 B = 2,048 B per token. Block: 16 x cdiv(8,192,
    16 x 2,048) = 16 tokens (platforms/interface.py:1110-1119). Groups: 6 attention, 10 conv
    layers, 10 >= 1.5 x 6 so groups of 6 (v1/core/kv_cache_planning.py:567-578): 1 full + 2
    conv (2 padding layers); a block 16 x 2,048 x 6 = 196,608 B; 10 GiB // that = 54,613
    (kv_cache_planning.py:724). A request of 32,768 takes 32,768 / 16 = 2,048 + 2 x 1 = 2,050
    blocks: int(54,613 / 2,050 x 32,768) = 872,955 tokens."""
    spec = preset_spec("lfm2-1.2b")
    assert spec.full_layer_ids == (2, 5, 8, 10, 12, 14) and len(spec.linear_layer_ids) == 10
    for release in ("0.33.0", "0.34.0"):
        calc = plan(spec, "preset", current_dtype="bf16", tokens=None, context_len=32768,
                    tp=1, attn_dp=1, page_size=None, pool_gib=10.0, release=release)
        assert calc.unmodelled is None, release
        lay = calc.layout("bf16")
        assert (lay.token_bytes, lay.mamba_bytes) == (2048, 2048 * 2 * 2)
        assert (lay.block_size, lay.group_size, lay.full_groups, lay.mamba_groups,
                lay.padding_layers) == (16, 6, 1, 2, 2)
        assert lay.blocks(10 << 30) == 54_613
        assert calc.tokens == 872_955
    assert vllm_cov.verdict("Lfm2ForCausalLM").sized
    older = plan(spec, "preset", current_dtype="bf16", tokens=None, context_len=32768, tp=1,
                 attn_dp=1, page_size=None, pool_gib=10.0, release="0.28.0")
    assert older.unmodelled and "0.33.0 and 0.34.0 only" in older.unmodelled


def test_lfm2_on_vllm_needs_conv_dim_and_the_moe_reads_hidden_size():
    """vLLM's Lfm2ForCausalLM reads hf_config.conv_dim (models/lfm2.py:575), which
    transformers' Lfm2Config does not define: a config without it is not sized. The MoE class
    passes hidden_size (models/lfm2_moe.py:563-567): LFM2-8B-A1B's conv state at TP 2 is
    divide(2,048, 2) x (3 - 1) x 2 B = 2,048 B per layer."""
    from kvtui.core.capacity.presets import load_presets
    from kvtui.engines.vllm.states import short_conv_state_bytes

    cfg = dict(load_presets()["lfm2-1.2b"]["config"])
    cfg.pop("conv_dim")
    spec = from_hf_config(cfg, name="lfm2 without conv_dim")
    calc = plan(spec, "preset", current_dtype="bf16", tokens=None, context_len=32768, tp=1,
                attn_dp=1, page_size=None, pool_gib=10.0, release="0.34.0")
    assert calc.unmodelled and "no conv_dim" in calc.unmodelled
    assert all(r.tokens is None for r in calc.report().scenarios)
    moe = preset_spec("lfm2-8b-a1b")
    assert short_conv_state_bytes(moe, 2, "bf16", "bf16") == 1024 * 2 * 2
    assert short_conv_state_bytes(moe, 3, "bf16", "bf16") is None  # divide() asserts
    assert vllm_cov.verdict("Lfm2MoeForCausalLM").sized
    assert vllm_cov.verdict("Lfm2VlForConditionalGeneration").unmodelled


# No checkpoint config.json of a BailingMoeV2_5ForCausalLM model (Ling/Ring 2.5, Ling-2.6) was
# found to store: the configuration below is the defaults of inclusionAI's own
# BailingMoeV2_5Config (github inclusionAI/Ring-V2.5, models/configuration_bailing_moe_v2_5.py),
# the fields vLLM reads, not a released checkpoint's.
BAILING_V25_DEFAULTS = {
    "architectures": ["BailingMoeV2_5ForCausalLM"], "hidden_size": 2048,
    "num_hidden_layers": 20, "num_attention_heads": 16, "num_key_value_heads": 4,
    "head_dim": 128, "layer_group_size": 5, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128, "v_head_dim": 128, "max_position_embeddings": 32768,
}


def test_bailing_v2_5_on_vllm_0_33_and_later():
    """BailingMoeV2_5ForCausalLM at TP1, bf16, 10 GiB, max_model_len 32,768 (vLLM 0.33.0 /
    0.34.0, identical there). Layers: linear unless (i + 1) % 5 == 0 (is_linear_layer,
    models/bailing_moe_linear.py:68-74, :463-470): full (MLA) at 4, 9, 14, 19, 16 linear.
    MLA latent (kv_lora_rank 512 + qk_rope_head_dim 64) x 2 B = 1,152 B per token and layer.
    Lightning state: linear_attention_state_shape(16, TP 1, head_dim 128) (:768-786;
    layers/mamba/mamba_utils.py:162-170) = 16 x 128 x 128 x 2 B (model dtype, :63-70) =
    524,288 B. Block: an MLA hybrid aligns to 128 (platforms/interface.py:1095-1100 in
    0.34.0): 128 x cdiv(524,288, 128 x 1,152) = 512 tokens (page 589,824 B). Groups of 4
    (16 >= 1.5 x 4, v1/core/kv_cache_planning.py:567-578): 1 MLA + 4 lightning; a block
    512 x 1,152 x 4 = 2,359,296 B; 10 GiB holds 4,551. A request of 32,768 takes 32,768 / 512
    = 64 + 4 x 1 = 68 blocks: int(4,551 / 68 x 32,768) = 2,193,046 tokens."""
    spec = from_hf_config(BAILING_V25_DEFAULTS, name="BailingMoeV2_5Config defaults")
    assert spec.full_layer_ids == (4, 9, 14, 19) and len(spec.linear_layer_ids) == 16
    for release in ("0.33.0", "0.34.0"):
        calc = plan(spec, "preset", current_dtype="bf16", tokens=None, context_len=32768,
                    tp=1, attn_dp=1, page_size=None, pool_gib=10.0, release=release)
        assert calc.unmodelled is None, release
        lay = calc.layout("bf16")
        assert (lay.token_bytes, lay.mamba_bytes) == (1152, 16 * 128 * 128 * 2)
        assert (lay.block_size, lay.group_size, lay.full_groups, lay.mamba_groups,
                lay.padding_layers) == (512, 4, 1, 4, 0)
        assert lay.blocks(10 << 30) == 4551
        assert calc.tokens == 2_193_046
    older = plan(spec, "preset", current_dtype="bf16", tokens=None, context_len=32768, tp=1,
                 attn_dp=1, page_size=None, pool_gib=10.0, release="0.28.0")
    assert older.unmodelled and "0.33.0 and 0.34.0 only" in older.unmodelled
    assert vllm_cov.verdict("BailingMoeV2_5ForCausalLM").sized


def test_bailing_v2_5_on_sglang_0_5_23():
    """The same BailingMoeV2_5Config defaults on SGLang 0.5.23, attention TP 1: MLA by
    architecture (configs/model_config.py:1476-1489) over the 4 full layers
    (layers_block_type, configs/bailing_hybrid.py:172-195): 4 x (512 + 64) x 2 B = 4,608 B per
    token. The lightning state (hybrid_lightning_config in mambaish_config, configs/
    hybrid_arch.py:46-52, :145-155): Mamba2StateShape.create(intermediate 0, n_groups 0,
    heads 16, head_dim 128, state 128, conv_kernel 1) (configs/bailing_hybrid.py:226-236;
    configs/mamba_utils.py:195-243): conv (0, 0), temporal (16, 128, 128) in float32 (the
    dtype field's default, mamba2_state_dtype(None)) = 1,048,576 B, x 16 layers = 16 MiB per
    request slot; at attention TP 4, (16 // 4) x 128 x 128 x 4 B x 16 = 4 MiB."""
    spec = from_hf_config({**BAILING_V25_DEFAULTS, "model_type": "bailing_hybrid"})
    check_supported(spec, V)
    assert linear_kind(spec, V) == "mamba2"
    assert kv_cell(spec, "bf16", Parallel(tp=1), version=V).bytes_per_token == 4 * 576 * 2
    assert mamba.state_per_slot(spec, 1, SizingArgs(), V, "mamba2").per_slot == \
        16 * 128 * 128 * 4 * 16
    assert mamba.state_per_slot(spec, 4, SizingArgs(), V, "mamba2").per_slot == \
        4 * 128 * 128 * 4 * 16
    with pytest.raises(CannotModel, match=r"0\.5\.23 only"):
        check_supported(spec, (0, 5, 22))


@pytest.mark.parametrize("extra", [{"short_conv_kernel_size": 4},
                                   {"layer_group_size": [1, 1, 1, 1, 0] * 4},
                                   {"kv_lora_rank": None}])
def test_bailing_v2_5_forms_the_engines_read_differently_are_not_modelled(extra):
    cfg = {k: v for k, v in {**BAILING_V25_DEFAULTS, **extra}.items() if v is not None}
    spec = from_hf_config(cfg)
    with pytest.raises(CannotModel, match=r"Bailing V2\.5"):
        check_supported(spec, V)
    calc = plan(spec, "preset", current_dtype="bf16", tokens=None, context_len=32768, tp=1,
                attn_dp=1, page_size=None, pool_gib=10.0, release="0.34.0")
    assert calc.unmodelled and "Bailing V2.5" in calc.unmodelled
