"""FP4 / MXFP8 / DSA / draft-layer parts of the cell, and what the pool line prints, by release.

Llama-3.1-8B at TP1: 8 KV heads x 128, 32 layers. DeepSeek-V3.2: MLA 512 + 64, 61 layers, DSA
indexer 128. Every expected value is worked by hand from the source in the comment.
"""

from __future__ import annotations

import pytest

from kvtui.core.capacity import Parallel, preset_spec
from kvtui.core.capacity.modelspec import from_hf_config
from kvtui.engines.sglang.cell import kv_cell, printed_bytes
from kvtui.engines.sglang.sizing.args import SizingArgs
from kvtui.engines.sglang.sizing.cells import add_draft
from kvtui.engines.sglang.sizing.families import CannotModel

LLAMA = "llama-3.1-8b"


@pytest.mark.parametrize(("dtype", "version", "args", "budget", "print_k"), [
    # 0.5.5: no FP4 branch for MHA, budgeted like FP8 (model_runner.py:1309-1316)
    ("fp4_e2m1", (0, 5, 5), SizingArgs(), 65_536, 16_384),
    # 0.5.6-0.5.15: 65,536 // 2 + 8 x 128 x 32 x 2 // 16 (model_runner.py:1425-1440 in 0.5.6);
    # the FP4 pool prints only (m, 8, 64) per layer (memory_pool.py:2057-2100 in 0.5.15)
    ("fp4_e2m1", (0, 5, 15), SizingArgs(), 36_864, 16_384),
    # 0.5.16-0.5.20 nvfp4: 8 x 64 x 32 x 2 + 8 x 8 x 32 x 2 + 8 x 128 x 2 (workspace), all
    # printed, half in K (fp4_kv_cache_quant_method.py:536-555; memory_pool.py:2118-2129)
    ("nvfp4", (0, 5, 16), SizingArgs(), 38_912, 19_456),
    # 0.5.21+: trtllm_mha both phases: values + one native layout, no workspace (:744-768)
    ("nvfp4", (0, 5, 21), SizingArgs(attention_backend="trtllm_mha"), 36_864, 18_432),
    # flashinfer prefill + trtllm_mha decode on SM100: linear + native layouts + workspace
    ("nvfp4", (0, 5, 23), SizingArgs(prefill_attention_backend="flashinfer",
                                     decode_attention_backend="trtllm_mha"), 43_008, 21_504),
    # fp4_mx_block16: values + one layout, no workspace (:682-699 in 0.5.16)
    ("fp4_mx_block16", (0, 5, 16), SizingArgs(), 36_864, 18_432),
    # mxfp8: + 8 x 256 x 32 // 32; printed K + 8 x 4 x 32 (pool_configurator.py:278-283 in 0.5.16)
    ("mxfp8", (0, 5, 16), SizingArgs(), 67_584, 33_792),
])
def test_low_precision_cells(dtype, version, args, budget, print_k):
    cell = kv_cell(preset_spec(LLAMA), dtype, Parallel(tp=1), version=version, args=args)
    assert (cell.bytes_per_token, cell.k_bytes) == (budget, print_k)


@pytest.mark.parametrize(("dtype", "version"), [("fp4_e2m1", (0, 5, 16)), ("nvfp4", (0, 5, 15))])
def test_fp4_spellings_refused_outside_their_releases(dtype, version):
    with pytest.raises(CannotModel):
        kv_cell(preset_spec(LLAMA), dtype, version=version)


def test_v_head_dim_counts_from_0_5_7():
    """<= 0.5.6 the MHA cell is heads x head_dim x layers x 2 (model_runner.py:1116-1122 in
    0.5.3); from 0.5.7 heads x (head_dim + v_head_dim) (mixin :82-88 in 0.5.8)."""
    spec = from_hf_config({"num_hidden_layers": 2, "num_attention_heads": 4,
                           "num_key_value_heads": 4, "head_dim": 192, "v_head_dim": 128,
                           "hidden_size": 768})
    assert kv_cell(spec, "bf16", version=(0, 5, 6)).bytes_per_token == 4 * 192 * 2 * 2 * 2
    assert kv_cell(spec, "bf16", version=(0, 5, 7)).bytes_per_token == 4 * 320 * 2 * 2


HOPPER = SizingArgs(dsa_prefill_backend="flashmla_kv", dsa_decode_backend="flashmla_kv")
TRTLLM = SizingArgs(dsa_prefill_backend="trtllm", dsa_decode_backend="trtllm")


@pytest.mark.parametrize(("dtype", "version", "args", "budget", "per_layer_store", "approx"), [
    # indexer keys (128 + 128 // 128 x 4) x 61 = 8,052 B in the budget from 0.5.4
    ("bf16", (0, 5, 23), SizingArgs(), 576 * 61 * 2 + 8052, 576 * 2, False),
    # 0.5.3-0.5.16: the pool stores 512 + 16 + 64 x 2 = 656 (memory_pool.py:1052-1058 in
    # 0.5.3, :1246-1251 in 0.5.4), the budget still 576
    ("fp8_e4m3", (0, 5, 3), SizingArgs(), 576 * 61, 656, False),  # no indexer in 0.5.3's budget
    ("fp8_e4m3", (0, 5, 4), SizingArgs(), 576 * 61 + 8052, 656, False),
    # 0.5.9: FP8 defaults to flashmla_auto / flashmla_kv on every GPU (server_args.py:1157-1162)
    ("fp8_e4m3", (0, 5, 9), SizingArgs(), 576 * 61 + 8052, 656, False),
    ("fp8_e4m3", (0, 5, 16), HOPPER, 576 * 61 + 8052, 656, False),
    # 0.5.17+: the budget divides by 656 too (pool_configurator.py:252-262 in 0.5.18)
    ("fp8_e4m3", (0, 5, 17), HOPPER, 656 * 61 + 8052, 656, False),
    # trtllm DSA backends keep the raw layout (calculate_mla_kv_cache_dim: 0.5.9
    # model_runner_kv_cache_mixin.py:223-230, 0.5.23 kv_cache_configurator.py:3425-3440)
    ("fp8_e4m3", (0, 5, 9), TRTLLM, 576 * 61 + 8052, 576, False),
    ("fp8_e4m3", (0, 5, 17), TRTLLM, 576 * 61 + 8052, 576, False),
    ("fp8_e4m3", (0, 5, 23), SizingArgs(dsa_decode_backend="trtllm"), 576 * 61 + 8052, 576,
     False),
    # 0.5.8 has no trtllm DSA backend (server_args.py NSA_CHOICES): the scaled store
    ("fp8_e4m3", (0, 5, 8), TRTLLM, 576 * 61 + 8052, 656, False),
    # no backends known from 0.5.10: SM100's default trtllm (0.5.10 server_args.py:1464-1467,
    # 0.5.23 arg_groups/overrides.py:714-720), the only GPU FP8 is the default on: assumed
    ("fp8_e4m3", (0, 5, 16), SizingArgs(), 576 * 61 + 8052, 576, False),  # budget 576 anyway
    ("fp8_e4m3", (0, 5, 23), SizingArgs(), 576 * 61 + 8052, 576, True),
    # CUDA tilelang with both phases: raw in 0.5.23 (kv_cache_configurator.py:3450-3456)
    ("fp8_e4m3", (0, 5, 23), SizingArgs(dsa_prefill_backend="tilelang",
                                        dsa_decode_backend="tilelang"), 576 * 61 + 8052, 576,
     False),
    # mixed prefill/decode on 0.5.20+: the local role decides (:3425-3437); colocated assumed
    ("fp8_e4m3", (0, 5, 23), SizingArgs(dsa_prefill_backend="flashmla_kv",
                                        dsa_decode_backend="trtllm"), 576 * 61 + 8052, 576,
     True),
])
def test_dsa_cells(dtype, version, args, budget, per_layer_store, approx):
    cell = kv_cell(preset_spec("deepseek-v3.2"), dtype, Parallel(tp=8), version=version,
                   args=args)
    assert cell.bytes_per_token == budget
    assert cell.k_bytes == per_layer_store * 61
    assert cell.approximate is approx
    if approx:
        assert any("assumed" in line for line in cell.lines)


def test_dsa_printed_kv_size_includes_page_rounded_indexer():
    """KV size = (tokens + page) x latent + (tokens + page + 1) // page x page x indexer
    (memory_pool.py:1784-1800 and get_kv_size_bytes :1879-1883 in 0.5.9), page 64."""
    cell = kv_cell(preset_spec("deepseek-v3.2"), "fp8_e4m3", version=(0, 5, 9))
    k, v = printed_bytes(100_000, cell, 64)
    assert k == 100_064 * 656 * 61 + (100_065 // 64) * 64 * 132 * 61
    assert v == 0


def test_dsa_0_5_3_prints_the_656_latent_without_indexer():
    """0.5.3, the first DSA release: NSATokenToKVPool stores 656 B per layer for fp8_e4m3
    (memory_pool.py:1052-1058), keeps no indexer in the budget (model_runner.py:1274-1279) and
    prints the latent buffers alone (get_kv_size_bytes, memory_pool.py:1096-1102)."""
    cell = kv_cell(preset_spec("deepseek-v3.2"), "fp8_e4m3", version=(0, 5, 3))
    assert cell.bytes_per_token == 576 * 61
    k, v = printed_bytes(100_000, cell, 64)
    assert (k, v) == (100_064 * 656 * 61, 0)


def test_draft_layers_in_the_target_cell():
    """From 0.5.14 an EAGLE/MTP draft's layers are budgeted: int(cell x (1 + d/L)) in
    0.5.14-0.5.15 (pool_configurator.py:142-145), cell + int(cell x d/L) from 0.5.16."""
    args = SizingArgs(speculative_algorithm="EAGLE", speculative_draft_model_path="/d")
    spec = preset_spec(LLAMA)
    assert kv_cell(spec, "bf16", version=(0, 5, 13), args=args,
                   draft_layers=1).bytes_per_token == 131_072
    cell = kv_cell(spec, "bf16", version=(0, 5, 14), args=args, draft_layers=1)
    assert cell.bytes_per_token == 131_072 + 4096
    assert cell.k_bytes == 65_536  # the target's pool still prints only its own layers
    # the two roundings differ: int(9 x (1 + 2/3)) = 14 in floating point, 9 + int(9 x 2/3) = 15
    assert add_draft(9, 3, 2, (0, 5, 14)) == 14
    assert add_draft(9, 3, 2, (0, 5, 16)) == 15
