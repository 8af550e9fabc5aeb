"""SGLang's multimodal reserve comes out of the KV budget before the pool is sized.

0.5.18+ (mem_cache/kv_cache_configurator.py `_profile_available_bytes`, :1789 in 0.5.18, :3038
in 0.5.23): `rest_memory = available_gpu_memory - slack_gb - mm_reservation_gb`, then the
Mamba split and the token count; `mm_runtime_reservation_gb` (:130 in 0.5.18, :202 in 0.5.23)
reserves SGLANG_VLM_CACHE_SIZE_MB (default 100) for a multimodal model, plus
SGLANG_MM_FEATURE_CACHE_MB (default 1024) under the cuda_ipc / cuda_vmm feature transport, and
logs "Reserving %.2f GB of the KV budget for post-sizing multimodal allocations
(feature-transport pools + embedding cache)." The post-capture re-sizing takes it out again
(model_executor/model_runner_components/kv_pool_runtime.py:143 in 0.5.23).

The synthetic log is built like SGLang 0.5.23's lines: Qwen3-VL-30B-A3B (48 layers x 4 KV heads
x 128, BF16: 98,304 B/token), TP1 on a large Hopper GPU, mem_fraction_static 0.85. There
0.5.23's Qwen3-VL override sets SGLANG_VLM_CACHE_SIZE_MB to 0 and the transport to cuda_ipc
(arg_groups/model_overrides/qwen3_vl.py:95, :110), so the reserve is SGLANG_MM_FEATURE_CACHE_MB
= 1024 MB (environ.py:1622): "1.00 GB", exact (a reserve that is not a multiple of 256 MB prints
rounded, like the avail figures). SGLang's arithmetic on the logged figures:
  rest = 21.50 - 78.50 x (1 - 0.85) - 1.00 = 8.725 GiB -> 9,368,397,414 // 98,304 = 95,300
Without the reserve it would be 9.725 GiB -> 106,222 tokens.
"""

from __future__ import annotations

from kvtui.core.pipeline import Session
from kvtui.core.render import render_text
from kvtui.engines.sglang.fromrun import calculator_from_run
from tests.helpers import session_of

P = "[2026-06-01 10:00:{:02d} TP0] "
ARGS = ("[2026-06-01 10:00:00] server_args={{'model_path': 'Qwen/Qwen3-VL-30B-A3B-Instruct', "
        "'kv_cache_dtype': 'auto', 'mem_fraction_static': 0.85, 'max_running_requests': None, "
        "'max_total_tokens': {cap}, 'chunked_prefill_size': 8192, 'page_size': 1, "
        "'tp_size': 1, 'pp_size': 1, 'dp_size': 1, 'enable_dp_attention': False, "
        "'mm_feature_transport': 'cuda_ipc'}}")
RESERVE = (P.format(3) + "Reserving 1.00 GB of the KV budget for post-sizing multimodal "
           "allocations (feature-transport pools + embedding cache).")


def lines(tokens: int, k_gib: str, cap: str = "None") -> list[str]:
    return [
        ARGS.format(cap=cap),
        P.format(1) + "Load weight begin. avail mem=78.50 GB",
        P.format(2) + "Load weight end. elapsed=30.00 s, type=Qwen3VLMoeForConditionalGeneration, "
        "dtype=torch.bfloat16, avail mem=21.50 GB, mem usage=57.00 GB.",
        RESERVE,
        P.format(4) + f"KV Cache is allocated. dtype: torch.bfloat16, #tokens: {tokens}, "
        f"K size: {k_gib} GB, V size: {k_gib} GB",
        P.format(5) + "Memory pool end. avail mem=12.50 GB",
        P.format(9) + f"max_total_num_tokens={tokens}, chunked_prefill_size=8192, "
        "max_prefill_tokens=16384, max_running_requests=2048, context_len=262144, "
        "available_gpu_mem=11.80 GB",
    ]


def fold(log: list[str]) -> Session:
    s = session_of(log, "log")
    return s


def test_the_memory_lines_give_sglangs_pool_only_net_of_the_reserve():
    s = fold(lines(95_300, "4.36"))
    calc = calculator_from_run(s.state.current)
    assert calc is not None and calc.memory is not None
    assert calc.memory.reserved_gib == 1.0
    check = calc.memory_check()
    assert check is not None
    assert (check["predicted_tokens"], check["logged_tokens"], check["difference"]) == (
        95_300, 95_300, 0.0)
    assert check["reserved_gib"] == 1.0 and check["rest_gib"] == 8.725


def test_a_what_if_from_the_memory_lines_takes_the_reserve_out():
    """--max-total-tokens 60000 capped the pool, so the memory lines size the what-if; at
    --mem-fraction-static 0.80 SGLang would have 21.50 - 78.50 x 0.20 - 1.00 = 4.80 GiB:
    5,153,960,755 // 98,304 = 52,428 tokens (the cap no longer binds). Without the reserve:
    5.80 GiB, 63,351, capped at 60,000."""
    s = fold(lines(60_000, "2.75", cap="60000"))
    calc = calculator_from_run(s.state.current)
    assert calc is not None
    row = calc.scenario("bf16", mem_fraction_static=0.80).to_json()
    assert row["tokens"] == 52_428


def test_the_reserve_is_a_fact_of_the_report():
    s = fold(lines(95_300, "4.36"))
    report = s.report()
    assert report.capacity is not None and report.capacity.kv_budget_reserved_gib == 1.0
    assert report.to_json()["capacity"]["kv_budget_reserved_gib"] == 1.0
    text = render_text(report)
    assert "kv_budget_reserved_gib=1" in text
    assert report.whatif is not None
    assert any("reserved 1 GiB of the KV budget" in x for x in report.whatif.explanation)
    # a log without the line keeps its JSON as it was
    plain = fold([x for x in lines(95_300, "4.36") if x != RESERVE]).report().to_json()
    assert "kv_budget_reserved_gib" not in plain["capacity"]
    assert "reserved_gib" not in plain["whatif"]["memory_budget"]
