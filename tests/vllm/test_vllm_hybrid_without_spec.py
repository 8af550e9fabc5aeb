"""A hybrid (attention + Mamba) pool without the model spec: no dtype or length is the tokens
scaled.

vLLM 0.22+ prints "GPU KV cache size" as int(max_concurrency x max_model_len)
(`_report_kv_cache_config`, v1/core/kv_cache_utils.py:1735-1744 in 0.23.0), so a hybrid's
tokens over its length always equal its printed concurrency, and the several-groups check
(tests/vllm/test_vllm_rounded_concurrency.py) cannot see it. The Mamba state a request holds does
not follow --kv-cache-dtype (its page is fixed by the Mamba layers and padded to the attention
page, platforms/interface.py:655-700 in 0.23.0), so the bf16 pool is not the fp8 pool halved,
nor the pool at another length the tokens over that length. The log says the model is a hybrid:
"Setting attention block size to %d tokens to ensure that attention page size is >= mamba page
size." and "Padding mamba page size by %.2f%% ..." (platforms/interface.py:670-699 in 0.23.0),
"Mamba cache mode is set to '%s' ..." (models/config.py).

Seen on a Qwen3.6-27B NVFP4 start-up (vLLM 0.23.1rc1, fp8 KV, a repository log of a DGX Spark
run, 2026-07): kvtui's what-if gave bf16 half the fp8 tokens and scaled every length. The lines
below are written in that release's wording with figures of their own.
"""

from __future__ import annotations

from tests.helpers import session_of

E = "(EngineCore pid=77) INFO 06-11 09:14:"
BASE = [
    E + "02 [core.py:114] Initializing a V1 LLM engine (v0.23.0) with config: "
    "model='org/some-hybrid-27b', dtype=torch.bfloat16, max_seq_len=131072, "
    "tensor_parallel_size=1, kv_cache_dtype=fp8, enable_prefix_caching=True, "
    "compilation_config={}",
    E + "40 [gpu_worker.py:515] Available KV cache memory: 21.50 GiB",
    E + "40 [kv_cache_utils.py:2146] GPU KV cache size: 655,360 tokens",
    E + "40 [kv_cache_utils.py:2147] Maximum concurrency for 131,072 tokens per request: 5.00x",
]
BLOCK_LINE = (E + "20 [interface.py:773] Setting attention block size to 1056 tokens to ensure "
              "that attention page size is >= mamba page size.")
PAD_LINE = (E + "20 [interface.py:797] Padding mamba page size by 0.42% to ensure that mamba "
            "page size and attention page size are exactly equal.")


def _whatif(lines: list[str]):
    s = session_of(lines, "log")
    w = s.report().whatif
    assert w is not None
    return w


def _cells(w) -> dict[tuple[str, str], float | None]:
    return {(r.dtype, k): v for r in w.scenarios for k, v in r.concurrency.items()}


def test_a_mamba_aligned_pool_without_a_spec_claims_no_other_cell():
    for extra in ([BLOCK_LINE], [PAD_LINE], [BLOCK_LINE, PAD_LINE]):
        lines = BASE[:1] + extra + BASE[1:]
        w = _whatif(lines)
        cells = _cells(w)
        assert cells[("fp8_e4m3", "131072")] == 5.00  # the logged figure, quoted
        others = {k: v for k, v in cells.items() if k != ("fp8_e4m3", "131072")}
        assert others and all(v is None for v in others.values()), (extra, others)
        tokens = {r.dtype: r.tokens for r in w.scenarios}
        assert tokens["fp8_e4m3"] == 655_360
        assert all(t is None for d, t in tokens.items() if d != "fp8_e4m3"), tokens
        assert any("mamba" in line.lower() for line in w.explanation), w.explanation


def test_the_same_pool_without_the_mamba_lines_keeps_its_scaled_cells():
    w = _whatif(BASE)
    cells = _cells(w)
    assert cells[("bf16", "131072")] == 2.5
    assert {r.dtype: r.tokens for r in w.scenarios}["bf16"] == 327_680
