"""vLLM 0.8-0.10 logs every worker's KV cache size, then runs all of them at the smallest.

The EngineCore sizes each worker's cache in turn and logs its size and concurrency
(get_kv_cache_config in v1/engine/core.py's loop: 0.9.0 :142, 0.10.2 :193), then cuts every
worker to the smallest block count (unify_kv_cache_configs: 0.9.0 :151, 0.10.2 :202). A TP=2
Qwen2.5-Coder-7B run on 0.8.3 (a public repository's saved log) printed 1,095,520 then
1,096,080 tokens: its pool is 1,095,520 at 33.43x, not the last line's 1,096,080.
"""

from __future__ import annotations

import pytest

from tests.vllm.reports import report_of

CFG = ("INFO 07-08 02:34:27 [core.py:61] Initializing a V1 LLM engine (v0.8.3) with config: "
       "model='Qwen/Qwen2.5-Coder-7B-Instruct', dtype=torch.bfloat16, max_seq_len=32768, "
       "tensor_parallel_size=2, kv_cache_dtype=auto")
H = "INFO 07-08 02:34:38 [kv_cache_utils.py:{}] "


def _pair(tokens: str, conc: str) -> list[str]:
    return [H.format(578) + f"GPU KV cache size: {tokens} tokens",
            H.format(581) + f"Maximum concurrency for 32,768 tokens per request: {conc}x"]


@pytest.mark.parametrize("order", [("1,095,520", "33.43", "1,096,080", "33.45"),
                                   ("1,096,080", "33.45", "1,095,520", "33.43")])
def test_the_pool_is_the_smallest_workers(order):
    a, ca, b, cb = order
    r = report_of([CFG, *_pair(a, ca), *_pair(b, cb)])
    cap = r.capacity
    assert cap is not None
    assert (cap.max_total_num_tokens, cap.max_concurrency, cap.context_len) == \
        (1_095_520, 33.43, 32_768)
    assert r.whatif is not None and r.whatif.current.tokens == 1_095_520


def test_equal_workers_and_a_single_line_read_as_before():
    r = report_of([CFG, *_pair("1,095,520", "33.43"), *_pair("1,095,520", "33.43")])
    assert r.capacity is not None and r.capacity.max_total_num_tokens == 1_095_520
    one = report_of([CFG, *_pair("991,200", "30.25")])
    assert one.capacity is not None
    assert (one.capacity.max_total_num_tokens, one.capacity.max_concurrency) == (991_200, 30.25)


def test_a_restart_is_sized_by_its_own_lines():
    """The smallest-of rule holds within one start: a new start's larger pool is its own."""
    later = CFG.replace("02:34:27", "03:00:00")
    r = report_of([CFG, *_pair("1,095,520", "33.43"), later, *_pair("2,000,000", "61.04")])
    assert r.capacity is not None and r.capacity.max_total_num_tokens == 2_000_000
