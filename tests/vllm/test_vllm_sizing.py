"""vLLM's KV cache arithmetic (kvtui.engines.vllm.sizing) against vLLM's code and real logs.

Each rule is quoted from the release that encodes it; each figure that a real log printed is
reproduced from the model's config.json and the log's own settings, nothing fitted.
"""

from __future__ import annotations

import pytest

from kvtui.core.capacity import from_hf_config, preset_spec
from kvtui.engines.vllm.sizing import RULES, attn_token_bytes, layout, nvfp4_dim, rules_for

V22 = RULES["v1-0.22"]
V11 = RULES["v1-0.9"]

# Qwen3.6-27B / Qwen3.5-27B text config (public config.json copies: 64 layers, one full-attention
# layer in four, 4 KV heads of 256, Gated DeltaNet 16 key / 48 value heads of 128, kernel 4,
# mamba_ssm_dtype float32, one MTP layer).
QWEN36_27B = from_hf_config({
    "architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
    "text_config": {
        "model_type": "qwen3_5_text", "hidden_size": 5120, "num_hidden_layers": 64,
        "num_attention_heads": 24, "num_key_value_heads": 4, "head_dim": 256,
        "full_attention_interval": 4, "linear_num_key_heads": 16, "linear_num_value_heads": 48,
        "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4,
        "mamba_ssm_dtype": "float32", "mtp_num_hidden_layers": 1,
        "max_position_embeddings": 262144, "dtype": "bfloat16"}}, name="qwen3.6-27b")

# Qwen/Qwen3-0.6B config.json: 28 layers, 8 KV heads, head_dim 128, bfloat16.
QWEN3_06B = from_hf_config({
    "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 1024,
    "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8,
    "head_dim": 128, "max_position_embeddings": 40960, "torch_dtype": "bfloat16"},
    name="qwen3-0.6b")


def test_page_of_one_token_per_layer():
    """AttentionSpec.page_size_bytes = 2 x block x kv_heads x head_size x dtype
    (v1/kv_cache_interface.py:63, 0.11.0); heads per GPU max(1, kv // tp) (config/model.py:1190);
    MLA one latent, not split by TP (MLAAttentionSpec, get_num_kv_heads returns 1)."""
    llama8b = preset_spec("llama-3.1-8b")
    assert attn_token_bytes(llama8b, "bf16", 1) == 8 * 256 * 2
    assert attn_token_bytes(llama8b, "fp8_e4m3", 8) == 1 * 256
    assert attn_token_bytes(llama8b, "bf16", 16) == 1 * 256 * 2  # replicated past 8 heads
    ds = preset_spec("deepseek-v3")
    assert attn_token_bytes(ds, "bf16", 8) == attn_token_bytes(ds, "bf16", 1) == 576 * 2
    assert attn_token_bytes(ds, "fp8_ds_mla", 8) == 656  # "block_size * 656" (0.11.0)


def test_nvfp4_packs_data_and_block_scales():
    """nvfp4_kv_cache_full_dim = d // 2 + d // 16 (utils/torch_utils.py:542, 0.33.0), K and V
    each (FullAttentionSpec.real_page_size_bytes, kv_cache_interface.py:280, 0.22.0)."""
    assert nvfp4_dim(128) == 72
    assert attn_token_bytes(preset_spec("llama-3.1-8b"), "nvfp4", 1) == 8 * 2 * 72


def test_dense_blocks_and_the_logged_size():
    """One group of every layer: num_blocks = available // page // layers (get_num_blocks,
    kv_cache_utils.py:813, 0.11.0); GPU KV cache size = num_blocks // groups x block_size."""
    lay = layout(QWEN3_06B, "bf16", 1, V11)
    assert (lay.block_size, lay.group_size, lay.groups) == (16, 28, 1)
    assert lay.block_bytes == 16 * 4096 * 28
    # vLLM PR 24577: "Available KV cache memory: 69.66 GiB" -> "GPU KV cache size: 652,144
    # tokens", "Maximum concurrency for 4,096 tokens per request: 159.21x". 69.66 GiB is
    # rounded to 0.01: the interval it allows must contain the logged figure.
    lo = lay.tokens(lay.blocks(int(69.655 * (1 << 30))), 4096)
    hi = lay.tokens(lay.blocks(int(69.665 * (1 << 30))), 4096)
    assert lo <= 652_144 <= hi
    assert round(lay.concurrency(652_144 // 16, 4096), 2) == 159.21


def test_hybrid_block_size_and_mamba_padding():
    """Attention block = 16 x cdiv(mamba page, 16 x attention token bytes) and the Mamba page
    padded to it (models/config.py:367-397, 0.11.0; platforms/interface.py:1098, 0.33.0).
    club-3090 issue 1047 (Qwen3.6-27B, TP 1, fp8_e4m3 KV) logs "Setting attention block size to
    1568 tokens" and "Padding mamba page size by 0.13%"; the SSM state is float32 (Qwen3.5's
    mamba_ssm_dtype, honoured from 0.22)."""
    lay = layout(QWEN36_27B, "fp8_e4m3", 1, V22, ssm_dtype="fp32")
    assert lay.block_size == 1568
    assert lay.mamba_bytes == (10240 * 3 * 2) + (48 * 128 * 128 * 4)
    assert round(100 * (lay.page_bytes - lay.mamba_bytes) / lay.mamba_bytes, 2) == 0.13
    # The same state in BF16 KV halves the block: the page stays the Mamba state's size.
    bf16 = layout(QWEN36_27B, "bf16", 1, V22, ssm_dtype="fp32")
    assert bf16.block_size == 784 and bf16.page_bytes == lay.page_bytes


def test_hybrid_groups_and_padding_layers():
    """Layers grouped by the smallest kind, the last group padded (kv_cache_utils.py:960-990,
    0.11.0). club-3090 issue 104 (Qwen3.6-27B with MTP, TP 2) logs "Add 3 padding layers, may
    waste at most 6.25% KV cache memory": 16 + 1 draft full-attention layers against 48 linear
    ones make groups of 17, and the three linear groups hold 51 slots for 48 layers."""
    lay = layout(QWEN36_27B, "fp8_e5m2", 2, V22, ssm_dtype="fp32", draft_layers=1)
    assert (lay.group_size, lay.full_groups, lay.mamba_groups) == (17, 1, 3)
    assert lay.padding_layers == 3 and round(3 / 48 * 100, 2) == 6.25
    assert layout(QWEN36_27B, "fp8_e5m2", 2, V22).padding_layers == 0


def test_tokens_from_concurrency_with_prefix_caching():
    """0.22+: GPU KV cache size = int(concurrency x max_model_len), concurrency = num_blocks /
    blocks one request takes (kv_cache_utils.py:1731, 0.22.0); with prefix caching a Mamba
    group holds 2 blocks per request ("align": MambaSpec.max_memory_usage_bytes, 0.22.0:589).
    A public boot log of the same model at TP 2 with fp8_e4m3 KV prints "GPU KV cache size:
    302,921 tokens" and "Maximum concurrency for 131,072 tokens per request: 2.31x": 208 blocks
    with align reproduce both, and no block count does without it."""
    align = layout(QWEN36_27B, "fp8_e4m3", 2, V22, ssm_dtype="fp32", draft_layers=1,
                   mamba_blocks=2)
    assert align.blocks_per_request(131072) == 84 + 3 * 2
    assert align.tokens(208, 131072) == 302_921
    assert round(align.concurrency(208, 131072), 2) == 2.31
    none = layout(QWEN36_27B, "fp8_e4m3", 2, V22, ssm_dtype="fp32", draft_layers=1,
                  mamba_blocks=1)
    assert all(none.tokens(n, 131072) != 302_921 for n in range(150, 260))


def test_older_releases_divide_the_pool_by_the_groups():
    """0.9-0.19 print num_blocks // len(groups) x min block size (kv_cache_utils.py:1083 in
    0.11.0, :1288 in 0.14.0): a hybrid's logged size understates what one request can use."""
    lay = layout(QWEN36_27B, "fp8_e4m3", 1, V11)  # SSM state in the model dtype before 0.22
    assert (lay.groups, lay.block_size) == (4, 800)
    assert lay.tokens(400, 131072) == 400 // 4 * 800
    assert lay.concurrency(400, 131072) > lay.tokens(400, 131072) / 131072


def test_v0_pool_is_blocks_times_block_size():
    """V0: "# GPU blocks: %d" then concurrency = blocks x block_size / max_model_len
    (executor/gpu_executor.py:122-127, 0.6.3). vLLM issue 7593 (Gemma 2 9B, TP 8): 22982 blocks;
    vLLM PR 10909: 189945 blocks, "Maximum concurrency for 1024 tokens per request: 2967.89x"."""
    v0 = layout(QWEN3_06B, "bf16", 1, RULES["v0"])
    assert v0.tokens(189_945, 1024) == 189_945 * 16
    assert round(v0.concurrency(189_945, 1024), 2) == 2967.89


def test_eras_follow_the_release_range():
    assert [r.name for r in rules_for((0, 10, 2), (0, 13, 9), False)] == [RULES["v1-0.9"].name]
    assert rules_for((0, 28, 0), (0, 33, 0), False)[0] is RULES["v1-0.22"]
    assert rules_for((0, 5, 0), (0, 6, 3), True) == [RULES["v0"]]
    assert len(rules_for((0, 5, 0), (0, 33, 0), False)) == 4  # undated: every V1 era, newest first


@pytest.mark.parametrize(("tp", "heads"), [(1, 4), (2, 2), (4, 1), (8, 1)])
def test_replicated_heads_do_not_shrink_past_one(tp, heads):
    spec = preset_spec("qwen3-235b-a22b")  # 4 KV heads
    assert attn_token_bytes(spec, "bf16", tp) == heads * 256 * 2
