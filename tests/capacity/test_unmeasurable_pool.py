"""A pool line whose sizes print as 0.00 GB measures no bytes per token.

SGLang prints each size to two decimals of GiB (0.5.9 mem_cache/memory_pool.py:652
`K size: {k_size_GB:.2f} GB`), so `0.00 GB` only says the buffer is under 0.005 GiB: a tiny test
config or a drafter's few-slot pool (sgl-project/sglang#24589's 64-token MTP pool; the
bench_one_batch run of sgl-project/sglang#11032). Dividing 0.00 by the tokens gave "0 B/token
measured" and a what-if that held "0 B" of budget while listing thousands of tokens.
"""

from __future__ import annotations

from tests.helpers import session_of

LINES = [
    "[2025-10-02 09:00:00 TP0] Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, "
    "avail mem=70.00 GB, mem usage=0.20 GB.",
    "[2025-10-02 09:00:00 TP0] Using KV cache dtype: torch.bfloat16",
    "[2025-10-02 09:00:00 TP0] KV Cache is allocated. #tokens: 2048, K size: 0.00 GB, "
    "V size: 0.00 GB",
    "[2025-10-02 09:00:00 TP0] Memory pool end. avail mem=69.90 GB",
]


def _report():
    a = session_of(LINES, "tiny.log")
    return a.report().to_json()


def test_a_zero_printed_pool_has_no_measured_bytes_per_token():
    pool = _report()["pools"][0]
    assert (pool["tokens"], pool["k_gib"], pool["v_gib"]) == (2048, 0.0, 0.0)
    assert pool["bytes_per_token"] is None


def test_the_whatif_claims_no_zero_byte_budget():
    wi = _report()["whatif"]
    assert wi is not None and wi["current"]["tokens"] == 2048
    assert wi["current"]["bytes_per_token"] is None
    rows = {s["dtype"]: s for s in wi["scenarios"]}
    assert all(s["bytes_per_token"] in (None,) for s in rows.values())
    # the rows still scale the logged token count by the value size, as a capacity line does
    assert rows["fp8_e4m3"]["tokens"] == 4096
