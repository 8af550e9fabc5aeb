"""Gemma-4 on both engines (issue 35): its two attention shapes, its KV-shared layers, and each
engine's figure for one configuration, worked by hand from the released code cited beside it.

The configuration: google/gemma-4-31B-it (the `gemma-4-31b` preset, values with sources) on two
80 GB GPUs (TP 2), BF16 KV, max_model_len 32,768, with 38 GiB of KV budget per GPU. The budget
is what each engine measures at start-up (SGLang's rest memory after the weights and
mem_fraction_static; vLLM's "Available KV cache memory", after warmup in 0.34): a runtime
figure kvtui reads from the log, given here as `--pool-gib` gives it. Everything after the
budget is the engines' arithmetic, and exact.
"""

from __future__ import annotations

import pytest

from kvtui.core.capacity import Parallel, from_hf_config, preset_spec
from kvtui.engines.sglang import coverage as sgl_cov
from kvtui.engines.sglang.cell import kv_cell, pool_gib
from kvtui.engines.sglang.plan import plan as sglang_plan
from kvtui.engines.sglang.sizing.args import SizingArgs
from kvtui.engines.sglang.sizing.families import CannotModel, check_supported
from kvtui.engines.sglang.sizing.swa import pool_applies
from kvtui.engines.vllm import coverage as vllm_cov
from kvtui.engines.vllm.plan import plan as vllm_plan
from kvtui.engines.vllm.sizing import RULES, layout

GIB = 1 << 30
BUDGET = 38 * GIB  # 40,802,189,312 B per GPU
CTX = 32_768


def _text(**over: object) -> dict:
    base = {"model_type": "gemma4_text", "num_hidden_layers": 12, "num_attention_heads": 8,
            "num_key_value_heads": 4, "head_dim": 256, "sliding_window": 512,
            "hidden_size": 1024}
    return {"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4",
            "text_config": {**base, **over}}


# -- the config, as transformers' Gemma4TextConfig and both engines read it ------------------
def test_the_31b_preset_has_two_attention_shapes():
    """full layers: global_head_dim 512, num_global_key_value_heads 4 (attention_k_eq_v);
    sliding layers: head_dim 256, num_key_value_heads 16 (transformers 5.19.0
    configuration_gemma4.py:210-222; SGLang 0.5.23 utils/hf_transformers/config.py:115-148;
    vLLM 0.34.0 models/gemma4.py:599-602)."""
    spec = preset_spec("gemma-4-31b")
    assert (spec.num_kv_heads, spec.head_dim, spec.v_head_dim) == (4, 512, 512)
    assert (spec.swa_num_kv_heads, spec.swa_head_dim, spec.swa_v_head_dim) == (16, 256, 256)
    assert len(spec.full_layer_ids) == 10 and len(spec.swa_layer_ids) == 50
    assert spec.full_layer_ids == tuple(range(5, 60, 6))
    assert (spec.sliding_window, spec.kv_shared_layers, spec.wrapper_model_type) == (
        1024, 0, "gemma4")


def test_without_attention_k_eq_v_the_full_layers_keep_num_key_value_heads():
    """E4B: no attention_k_eq_v, no num_global_key_value_heads: 2 KV heads of 512 on the full
    layers, 2 of 256 on the sliding ones; the last 18 of 42 layers share KV."""
    spec = preset_spec("gemma-4-e4b")
    assert (spec.num_kv_heads, spec.head_dim, spec.swa_num_kv_heads, spec.swa_head_dim) == (
        2, 512, 2, 256)
    assert (spec.kv_shared_layers, spec.first_kv_shared_layer) == (18, 24)
    assert (len(spec.full_layer_ids), len(spec.swa_layer_ids)) == (7, 35)


def test_transformers_defaults_and_the_forced_last_full_layer():
    """No layer_types: sliding unless (i + 1) % 6 == 0, the last layer forced to full
    (configuration_gemma4.py:190-201); no global_head_dim: 512 (:210); num_global_key_value_heads
    is taken only with attention_k_eq_v (:214-218); use_bidirectional_attention "all" halves the
    window (:186-188)."""
    spec = from_hf_config(_text(num_global_key_value_heads=2))
    kinds = ["full" if i in spec.full_layer_ids else "swa" for i in range(12)]
    assert kinds == ["swa"] * 5 + ["full"] + ["swa"] * 5 + ["full"]
    assert (spec.num_kv_heads, spec.head_dim) == (4, 512) and spec.unsupported is not None
    eq = from_hf_config(_text(num_global_key_value_heads=2, attention_k_eq_v=True,
                              layer_types=["sliding_attention"] * 12))
    assert eq.full_layer_ids == (11,) and (eq.num_kv_heads, eq.unsupported) == (2, None)
    assert from_hf_config(_text(use_bidirectional_attention="all")).sliding_window == 257


def test_a_per_layer_config_reads_as_the_global_fields():
    """A config saved with its per_layer_config (transformers >= 5.15) gives the same shapes."""
    types = (["sliding_attention"] * 5 + ["full_attention"]) * 2
    flat = from_hf_config(_text(layer_types=types, global_head_dim=512, attention_k_eq_v=True,
                                num_global_key_value_heads=2))
    per = from_hf_config(_text(layer_types=types, attention_k_eq_v=True, per_layer_config={
        "05": {"head_dim": 512, "num_key_value_heads": 2},
        "11": {"head_dim": 512, "num_key_value_heads": 2}}))
    assert (per.num_kv_heads, per.head_dim, per.swa_num_kv_heads, per.unsupported) == (
        flat.num_kv_heads, flat.head_dim, flat.swa_num_kv_heads, None)
    odd = from_hf_config(_text(layer_types=types, per_layer_config={
        "05": {"head_dim": 512}, "11": {"head_dim": 256}}))
    assert odd.unsupported and "one shape per layer type" in odd.unsupported


# -- SGLang -----------------------------------------------------------------------------------
def test_sglang_figure_for_31b_at_tp2():
    """SGLang 0.5.23, HybridSWAPoolConfigurator (model_executor/pool_configurator.py:656-801):
    - F per full layer = get_num_kv_heads(2) x (head_dim + v_head_dim) x 2 B
      = max(1, 4 // 2) x (512 + 512) x 2 = 4,096 B;
    - S per SWA layer = get_swa_num_kv_heads(2) x (swa_head_dim + swa_v_head_dim) x 2 B
      = max(1, 16 // 2) x (256 + 256) x 2 = 8,192 B (configs/model_config.py:1713-1724);
    - layers: 10 full, 50 SWA (get_hybrid_layer_ids, configs/model_config.py:2752-2771);
    - cell = F x 10 + 0.8 x S x 50 = 40,960 + 327,680 = 368,640 B per full-pool token;
    - full = int(40,802,189,312 // 368,640) = 110,683 (page 1: triton, Gemma-4's default
      backend off SM100, arg_groups/model_overrides/gemma4.py), swa = int(110,683 x 0.8) =
      88,546 (_solve_pool_sizes, :859-893).
    0.5.11 (pool_configurator.py:184-260) gives the same."""
    spec = preset_spec("gemma-4-31b")
    for release in ("0.5.23", "0.5.11"):
        calc = sglang_plan(spec, "preset", current_dtype="bf16", tokens=None, context_len=CTX,
                           tp=2, attn_dp=1, page_size=1, pool_gib=38.0, release=release)
        bf16 = {r.dtype: r for r in calc.report().scenarios}["bf16"]
        assert (calc.tokens, bf16.tokens) == (110_683, 110_683)
        cell = kv_cell(spec, "bf16", Parallel(tp=2), swa_pool=True,
                       version=tuple(int(x) for x in release.split(".")))
        assert cell.swa is not None
        assert (cell.swa.f_layer, cell.swa.s_layer, cell.swa.cost) == (4_096, 8_192, 368_640)
        assert cell.swa.tokens(BUDGET, 1) == (110_683, 88_546)


def test_sglang_reproduces_a_real_gemma4_e4b_pool():
    """A real SGLang start of google/gemma-4-E4B-it in BF16 on one GPU (DGX Spark; find_string
    id 66975556316, SGLang dev with transformers 5.12.1): "SWAKVPool mem usage: 79.94 GB,
    swa size: 798276, full size: 997846". SGLang counts all 42 layers, the 18 KV-shared ones
    too: F = 2 x (512 + 512) x 2 = 4,096 B x 7 full layers, S = 2 x (256 + 256) x 2 = 2,048 B x
    35 SWA layers; cell = 28,672 + 0.8 x 71,680 = 86,016 B; any budget that gives 997,846 full
    tokens gives int(997,846 x 0.8) = 798,276 SWA tokens, and the two pools hold
    (997,846 + 1) x 28,672 + (798,276 + 1) x 71,680 = 85,830,764,544 B = 79.94 GiB (both
    sub-pools' K + V, each of size + page_size rows per layer over every full / SWA layer id:
    mem_cache/swa_memory_pool.py:80-124 in 0.5.19)."""
    spec = preset_spec("gemma-4-e4b")
    cell = kv_cell(spec, "bf16", Parallel(tp=1), swa_pool=True, version=(0, 5, 19))
    assert cell.swa is not None
    assert (cell.swa.full_layers, cell.swa.swa_layers, cell.swa.cost) == (7, 35, 86_016)
    assert cell.swa.tokens(997_846 * 86_016, 1) == (997_846, 798_276)
    assert cell.swa.tokens(997_847 * 86_016 - 1, 1) == (997_846, 798_276)
    full_k, full_v = pool_gib(997_846, cell)
    swa_k, swa_v = pool_gib(798_276, cell, swa_pool=True)
    assert f"{full_k + full_v + swa_k + swa_v:.2f}" == "79.94"


def test_sglang_serves_gemma4_from_0_5_11_with_an_swa_pool():
    spec = preset_spec("gemma-4-31b")
    check_supported(spec, (0, 5, 11))
    with pytest.raises(CannotModel, match=r"first in 0\.5\.11"):
        check_supported(spec, (0, 5, 10))
    assert pool_applies(spec, (0, 5, 11), SizingArgs())[0]
    assert not pool_applies(spec, (0, 5, 23), SizingArgs(disable_hybrid_swa_memory=True))[0]


def test_sglang_maps_the_shapes_only_for_the_gemma4_wrapper():
    """A text-only gemma4_text config is not mapped to SGLang's full/sliding shapes
    (utils/hf_transformers/config.py:311-312 in 0.5.23): kvtui says so rather than size it."""
    wrapped = _text()
    text_only = {**wrapped["text_config"], "architectures": ["Gemma4ForCausalLM"]}
    spec = from_hf_config(text_only)
    assert spec.wrapper_model_type is None
    with pytest.raises(CannotModel, match="gemma4 wrapper"):
        check_supported(spec, (0, 5, 23))
    check_supported(from_hf_config({**wrapped, "architectures": ["Gemma4ForCausalLM"]}),
                    (0, 5, 23))
    assert sgl_cov.verdict("Gemma4ForConditionalGeneration").sized
    assert not sgl_cov.verdict("Gemma4UnifiedForConditionalGeneration").sized


# -- vLLM -------------------------------------------------------------------------------------
def test_vllm_figure_for_31b_at_tp2():
    """vLLM 0.34.0 on an 80 GB GPU (max_num_batched_tokens 8192, engine/arg_utils.py:3026-3029;
    async scheduling: 2 batches in flight, config/vllm.py:560-575), block size 16 (FLASH_ATTN
    or TRITON_ATTN with BF16 KV off SM100: platforms/interface.py:777-791):
    - full layer page: FullAttentionSpec(16 tokens, max(1, 4 // 2) = 2 heads, 512 + 512, 2 B)
      = 16 x 4,096 = 65,536 B; sliding: SlidingWindowSpec(16, 8 heads, 256 + 256)
      = 16 x 8,192 = 131,072 B (model_executor/layers/attention/attention.py:650-711);
    - unify_kv_cache_spec_page_size (v1/core/kv_cache_planning.py:392-452): 131,072 %
      65,536 == 0, so the full spec's block size becomes 16 x 2 = 32, every page 131,072 B;
    - groups (:462-602): 50 sliding, 10 full, group size 10 (50 >= 1.5 x 10): 5 sliding + 1
      full group, bytes per block 10 x 131,072 = 1,310,720 (:620-648, a layer-outer layout);
    - num_blocks = 40,802,189,312 // 1,310,720 = 31,129 (:724);
    - a 32,768-token request: full cdiv(32,768, 32) = 1,024 blocks; each sliding group
      cdiv(min(1,024 - 1 + 2 x 8,192, 32,768), 16) + 1 = cdiv(17,407, 16) + 1 = 1,089
      (v1/kv_cache_interface.py:932-970): 1,024 + 5 x 1,089 = 6,469 blocks;
    - concurrency 31,129 / 6,469 = 4.812...x, "GPU KV cache size" int(4.812... x 32,768) =
      157,680 tokens (v1/core/kv_cache_utils.py:1083-1150)."""
    spec = preset_spec("gemma-4-31b")
    calc = vllm_plan(spec, "preset", current_dtype="bf16", tokens=None, context_len=CTX, tp=2,
                     attn_dp=1, page_size=16, pool_gib=38.0,
                     release="0.34.0").with_max_batched(8192)
    assert calc.unmodelled is None
    lay = calc.layout("bf16")
    assert lay is not None
    assert (lay.full_block_size, lay.swa_block_size, lay.page_bytes) == (32, 16, 131_072)
    assert (lay.group_size, lay.full_groups, lay.swa_groups, lay.block_bytes) == (
        10, 1, 5, 1_310_720)
    assert lay.blocks(BUDGET) == 31_129
    assert lay.blocks_per_request(CTX) == 6_469
    assert calc.tokens == int(31_129 / 6_469 * CTX) == 157_680
    assert calc.concurrency("bf16", [CTX]) == {str(CTX): 4.81}
    # the block size and the batch tokens given: nothing assumed, the row is exact
    row = {r.dtype: r for r in calc.report().scenarios}["bf16"]
    assert (row.tokens, row.approximate) == (157_680, False)
    # without them, the same figure is marked approximate, and says why
    guess = vllm_plan(spec, "preset", current_dtype="bf16", tokens=None, context_len=CTX, tp=2,
                      attn_dp=1, page_size=None, pool_gib=38.0, release="0.34.0")
    row = {r.dtype: r for r in guess.report().scenarios}["bf16"]
    assert row.tokens == 157_680 and row.approximate and "--page-size" in row.basis


def test_vllm_0_19_reports_blocks_per_group_by_the_smallest_block():
    """0.19.0 (Gemma-4's first vLLM release): one batch in flight (SlidingWindowSpec
    max_memory_usage_bytes, v1/kv_cache_interface.py:251-270), and "GPU KV cache size" =
    num_blocks // groups x the smallest group block size (_report_kv_cache_config,
    v1/core/kv_cache_utils.py:1287-1306): 31,129 // 6 x 16 = 83,008; a request takes 1,024 +
    5 x (cdiv(1,023 + 8,192, 16) + 1) = 3,909 blocks."""
    calc = vllm_plan(preset_spec("gemma-4-31b"), "preset", current_dtype="bf16", tokens=None,
                     context_len=CTX, tp=2, attn_dp=1, page_size=None, pool_gib=38.0,
                     release="0.19.0")
    lay = calc.layout("bf16")
    assert lay is not None and lay.rules is RULES["v1-0.14"]
    assert calc.tokens == 31_129 // 6 * 16 == 83_008
    assert lay.blocks_per_request(CTX) == 3_909
    early = vllm_plan(preset_spec("gemma-4-31b"), "preset", current_dtype="bf16", tokens=None,
                      context_len=CTX, tp=2, attn_dp=1, page_size=None, pool_gib=38.0,
                      release="0.18.1")
    assert early.unmodelled and "served from 0.19.0" in early.unmodelled


def test_vllm_gives_kv_shared_layers_no_cache():
    """E4B on one GPU: layers 24-41 read layer 22's or 23's KV and get no KV cache spec
    (v1/worker/gpu/attn_utils.py:140-147 in 0.34.0): 20 sliding + 4 full layers hold KV. The
    full page (2 x 1,024 x 2 x 16 = 65,536 B) is the larger one here, so the sliding block
    doubles to 32; groups of 4: 5 sliding + 1 full, 262,144 B a block."""
    lay = layout(preset_spec("gemma-4-e4b"), "bf16", 1, RULES["v1-0.22"], batches=2)
    assert (lay.full_block_size, lay.swa_block_size, lay.page_bytes) == (16, 32, 65_536)
    assert (lay.group_size, lay.full_groups, lay.swa_groups, lay.block_bytes) == (
        4, 1, 5, 262_144)
    assert lay.shared_layers == 18


def test_vllm_0_26_to_0_29_start_sliding_pages_at_the_smallest_kernel_block():
    """With --block-size 32: 0.26-0.29 give a sliding layer the backend's smallest kernel block
    (16, attention.py:634 in 0.29.0), 0.30+ the cache's block (:648-649 in 0.30.0), so the
    unified pages differ: 16 x 8,192 = 131,072 B against 32 x 8,192 = 262,144 B."""
    spec = preset_spec("gemma-4-31b")
    old = layout(spec, "bf16", 2, RULES["v1-0.22"], block_size=32, release=(0, 28, 0))
    new = layout(spec, "bf16", 2, RULES["v1-0.22"], block_size=32, release=(0, 34, 0))
    assert (old.full_block_size, old.swa_block_size, old.page_bytes) == (32, 16, 131_072)
    assert (new.full_block_size, new.swa_block_size, new.page_bytes) == (64, 32, 262_144)


def test_vllm_verdicts():
    assert vllm_cov.verdict("Gemma4ForCausalLM").sized
    assert vllm_cov.verdict("Gemma4ForConditionalGeneration").sized
    assert not vllm_cov.verdict("Gemma4MTPModel").sized
    e4b = preset_spec("gemma-4-e4b")
    assert "pipeline parallel" in (vllm_cov.for_run(e4b, pp=2) or "")


def test_vllm_without_the_hybrid_manager_keeps_each_layer_page_in_one_group():
    """--disable-hybrid-kv-cache-manager: the sliding specs are promoted to full ones of the
    full layers' block size (_promote_local_kv_cache_specs, v1/core/kv_cache_planning.py:
    783-856, 0.34.0), which gives one group of per-layer page sizes (UniformTypeKVCacheSpecs,
    v1/kv_cache_interface.py:1354-1365): a block is 16 x (10 x 4,096 + 50 x 8,192) =
    7,208,960 B at TP 2, and a request takes cdiv(max_model_len, 16) of them."""
    lay = layout(preset_spec("gemma-4-31b"), "bf16", 2, RULES["v1-0.22"],
                 hybrid_allocator=False)
    assert (lay.block_bytes, lay.groups) == (16 * (10 * 4_096 + 50 * 8_192), 1)
    assert lay.blocks_per_request(CTX) == CTX // 16


def test_vllm_takes_the_own_sliding_shape_of_gemma4_only():
    """MiMo-V2's config has swa_* fields too, but its vLLM rule was not read (not modelled):
    the layout gives another family's sliding layers a full layer's page, as before."""
    from kvtui.engines.vllm.sizing import attn_token_bytes, swa_token_bytes

    mimo = preset_spec("mimo-v2-flash")
    assert swa_token_bytes(mimo, "bf16", 4) == attn_token_bytes(mimo, "bf16", 4)
    gemma = preset_spec("gemma-4-31b")
    assert (swa_token_bytes(gemma, "bf16", 1), attn_token_bytes(gemma, "bf16", 1)) == (
        16_384, 8_192)
