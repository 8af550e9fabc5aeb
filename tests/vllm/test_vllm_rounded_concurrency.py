"""The low-context-concurrency alert on vLLM's rounded "Maximum concurrency" figure.

vLLM prints "Maximum concurrency for %s tokens per request: %.2fx" (v1/core/kv_cache_utils.py
:853 in 0.10.1, :1311 in 0.14.1), the float `num_blocks / num_block_per_request`
(`get_max_concurrency_for_kv_cache_config`, kv_cache_utils.py in 0.10.1 and 0.14.1) rounded to
two decimals: a pool of 1.9956 requests prints "2.00x". Where the calculator reproduces that
figure from the pool (the same %.2f of its own ratio), the alert compares the ratio itself with
the threshold, and quotes the logged figure beside it.

The lines are written here in the wording of vLLM 0.14's format strings, for Llama-3.1-8B (the
preset: 32 layers, 8 KV heads of 128, a BF16 block of 16 tokens is 2 MiB over 32 layers).
"""

from __future__ import annotations

import math

from kvtui.core.alerts import Alert
from tests.helpers import session_of

BLOCK = 16
CONTEXT = 32768
PER_REQUEST = math.ceil(CONTEXT / BLOCK)  # 2,048 blocks


def lines(blocks: int, model: str = "meta-llama/Llama-3.1-8B-Instruct") -> list[str]:
    return [
        "(APIServer pid=1) INFO 05-01 10:00:00 [utils.py:263] non-default args: "
        f"{{'model': '{model}', 'max_model_len': {CONTEXT}}}",
        "(EngineCore_DP0 pid=9) INFO 05-01 10:00:05 [core.py:98] Initializing a V1 LLM engine "
        f"(v0.14.1) with config: model='{model}', dtype=torch.bfloat16, "
        f"max_seq_len={CONTEXT}, tensor_parallel_size=1, kv_cache_dtype=auto, "
        "enable_prefix_caching=True, compilation_config={}",
        "(EngineCore_DP0 pid=9) INFO 05-01 10:00:42 [kv_cache_utils.py:1307] GPU KV cache "
        f"size: {blocks * BLOCK:,} tokens",
        "(EngineCore_DP0 pid=9) INFO 05-01 10:00:42 [kv_cache_utils.py:1311] Maximum "
        f"concurrency for {CONTEXT:,} tokens per request: {blocks / PER_REQUEST:.2f}x",
    ]


def alerts(blocks: int, **kw: str) -> dict[str, Alert]:
    s = session_of(lines(blocks, **kw), "log")
    return {a.rule: a for a in s.report().alerts}


def test_a_pool_just_below_two_requests_that_vllm_prints_as_two_alerts():
    assert f"{4087 / PER_REQUEST:.2f}" == "2.00"  # 1.99561 requests
    found = alerts(4087)
    assert "low-context-concurrency" in found
    alert = found["low-context-concurrency"]
    assert "1.99 full-context" in alert.title
    assert "2.00x" in alert.detail  # the logged figure, said as vLLM prints it
    assert alert.extra["concurrency"] == 1.99


def test_a_pool_just_above_two_requests_stays_quiet():
    assert f"{4100 / PER_REQUEST:.2f}" == "2.00"  # 2.00195 requests
    assert "low-context-concurrency" not in alerts(4100)


def test_without_a_model_spec_the_logged_figure_decides():
    """No spec: the calculator cannot reproduce the logged figure, which then decides."""
    assert "low-context-concurrency" not in alerts(4087, model="org/unknown-model")


# A pool in several KV cache groups (a hybrid's attention and Mamba layers): vLLM 0.9-0.19 print
# "GPU KV cache size" as num_blocks // len(groups) x block_size (v1/core/kv_cache_utils.py
# :1288-1311 in 0.14.1) and the concurrency as num_blocks / the blocks one request takes over
# every group (`get_max_concurrency_for_kv_cache_config`, :792-809), so the two disagree: 768
# blocks of 544 tokens in 3 groups print 768 // 3 x 544 = 139,264 tokens, and (say) 1.52x for
# 131,072 tokens, where 139,264 / 131,072 is 1.06. A dense pool's tokens over the length are
# never below its printed concurrency (V1: blocks x block size / max_model_len >= blocks /
# cdiv(max_model_len, block size); V0: the same ratio).
E = "(EngineCore pid=21) INFO 05-02 08:10:11 "
HYBRID = [
    E + "[gpu_worker.py:359] Available KV cache memory: 9.25 GiB",
    E + "[kv_cache_utils.py:1305] GPU KV cache size: 139,264 tokens",
    E + "[kv_cache_utils.py:1311] Maximum concurrency for 131,072 tokens per request: 1.52x",
]


def test_without_a_spec_a_pool_whose_tokens_are_not_its_concurrency_claims_no_other_cell():
    """Without the spec the other lengths and dtypes cannot be scaled from the tokens: 139,264
    tokens over 131,072 is 1.06, not the 1.52 logged."""
    s = session_of(HYBRID, "log")
    w = s.report().whatif
    assert w is not None
    cells = {(r.dtype, k): v for r in w.scenarios for k, v in r.concurrency.items()}
    assert cells[("bf16", "131072")] == 1.52  # the logged figure, quoted
    others = {key: v for key, v in cells.items() if key != ("bf16", "131072")}
    assert others and all(v is None for v in others.values()), others
    assert any("1.52x" in line and "groups" in line for line in w.explanation)


def test_a_dense_pool_without_a_spec_keeps_its_scaled_cells():
    dense = [HYBRID[0], HYBRID[1].replace("139,264", "199,232"), HYBRID[2]]  # 12,452 blocks
    s = session_of(dense, "log")
    w = s.report().whatif
    assert w is not None
    row = next(r for r in w.scenarios if r.dtype == "bf16")
    assert row.concurrency["32768"] == 6.08  # 199,232 / 32,768 = 6.0801, cut
