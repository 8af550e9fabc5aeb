"""vLLM's DeepSeek-V3.2 (DSA): the per-layer indexer key cache beside the MLA latent, and the
656-byte fp8_ds_mla row FP8 is stored as.

vLLM's rules (cited where kvtui encodes them, kvtui/engines/vllm/sizing.py and calculator.py):
- every layer of a config with `index_topk` has an Indexer whose `k_cache` is a
  DeepseekV32IndexerCache of head_dim index_head_dim + index_head_dim // 128 x 4 = 132 uint8
  bytes, one head, not split by TP (model_executor/models/deepseek_v2.py:770-775 in 0.11.0,
  :638-668 / :731-736 in 0.33.0);
- the latent and indexer pages are one group of per-layer page sizes: num_blocks = available
  // their sum (v1/core/kv_cache_utils.py:1030-1037 in 0.11.0);
- FP8 is fp8_ds_mla, 656 B per token (mla_attention.py:1386 `state_content_bytes` in 0.33.0),
  by the model's config in 0.11-0.14 (models/config.py:419-422 in 0.11.0, :522-524 in 0.14.0),
  by the backend from 0.18 (mla_attention.py:358-375 in 0.33.0).
The figures are that arithmetic, computed here.
"""

from __future__ import annotations

from kvtui.core.capacity import preset_spec
from kvtui.engines.vllm.plan import plan
from kvtui.engines.vllm.sizing import RULES, indexer_token_bytes, layout
from parsers.vllm.line import parse_line

GIB = 1 << 30
LAYERS = 61


def test_the_indexer_adds_132_bytes_per_layer_on_every_gpu():
    spec = preset_spec("deepseek-v3.2")
    assert indexer_token_bytes(spec) == 128 + 128 // 128 * 4 == 132
    for tp in (1, 8):
        lay = layout(spec, "bf16", tp, RULES["v1-0.22"])
        assert lay.block_size == 64 and lay.group_size == LAYERS
        assert lay.block_bytes == 64 * (576 * 2 + 132) * LAYERS
    # kvtui's latent-only block gave 11% more blocks from the same memory
    assert round((576 * 2 + 132) / (576 * 2) - 1, 2) == 0.11
    assert indexer_token_bytes(preset_spec("deepseek-v3")) == 0  # no index_topk: no indexer


def test_fp8_is_the_656_byte_row_plus_the_indexer():
    spec = preset_spec("deepseek-v3.2")
    lay = layout(spec, "fp8_ds_mla", 8, RULES["v1-0.9"])
    assert lay.block_bytes == 64 * (656 + 132) * LAYERS
    assert round((656 + 132) / 576 - 1, 2) == 0.37  # kvtui's old FP8 figure: 576 per token


def _plan(release: str, pool_gib: float = 40.0):
    return plan(preset_spec("deepseek-v3.2"), "preset", current_dtype="bf16", tokens=None,
                context_len=131072, tp=8, attn_dp=1, page_size=None, pool_gib=pool_gib,
                release=release)


def test_the_what_if_sizes_fp8_as_vllm_stores_it():
    """0.14: FP8 is fp8_ds_mla by the model config (exact); 0.33: by the backend (marked
    approximate, and said why)."""
    budget = int(40 * GIB)
    for release, approx in (("0.14.0", False), ("0.33.0", True)):
        calc = _plan(release)
        bf16 = calc.scenario("bf16")
        fp8 = calc.scenario("fp8_e4m3")
        per_request = -(-131072 // 64)
        b16 = budget // (64 * (1152 + 132) * LAYERS)
        # GPU KV cache size: blocks x 64 (0.9-0.19), int(concurrency x max_model_len) (0.22+)
        assert bf16.tokens == (b16 * 64 if release == "0.14.0"
                               else int(b16 / per_request * 131072))
        blocks = budget // (64 * (656 + 132) * LAYERS)
        assert fp8.concurrency["131072"] == int(blocks / per_request * 100) / 100
        assert fp8.approximate is approx and not bf16.approximate
        if approx:
            assert "FLASHINFER_MLA_SPARSE" in fp8.basis


def test_the_logged_format_settles_it():
    """"Using standard fp8 KV cache format ..." (mla_attention.py:541-544 in 0.33.0): the plain
    576 bytes, exact; "Using fp8_ds_mla KV cache format for FLASHMLA_SPARSE backend." (:530-534)
    and 0.11-0.14's "Using custom fp8 kv-cache format for DeepSeekV3.2": 656."""
    head = "(EngineCore_DP0 pid=9) INFO 05-01 10:00:00 [mla_attention.py:541] "
    plain = parse_line(head + "Using standard fp8 KV cache format. To use DeepSeek's fp8_ds_mla "
                       "KV cache format, please set `--attention-backend FLASHMLA_SPARSE`")
    assert plain is not None and plain.kind == "kv_layout" and plain.get("ds_mla_fp8") is False
    ev = parse_line(head + "Using fp8_ds_mla KV cache format for FLASHMLA_SPARSE backend.")
    assert ev is not None and ev.get("ds_mla_fp8") is True
    ev = parse_line(head + "Using custom fp8 kv-cache format for DeepSeekV3.2")
    assert ev is not None and ev.kind == "kv_dtype" and ev.get("dtype") == "fp8_ds_mla"
    calc = _plan("0.33.0")
    calc.ds_mla_fp8 = False
    fp8 = calc.scenario("fp8_e4m3")
    assert not fp8.approximate
    lay = calc.layout("fp8_e4m3")
    assert lay is not None and lay.block_bytes == 64 * (576 + 132) * LAYERS
