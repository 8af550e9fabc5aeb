"""The alerts on what the engine itself reports as a limit or a failure (issue 12): negative
profiled capacity, requests longer than allowed, crashed processes, pool leaks, the Mamba cap
and a reduced max_running_requests. Each fires on real-format lines, carries its evidence and
numbers, and stays quiet without them."""

from __future__ import annotations

import pytest

from kvtui.core.pipeline import Session
from tests.helpers import session_of

START = [
    "[2026-03-01 12:00:00] server_args=ServerArgs(model_path='m', tp_size=1, "
    "kv_cache_dtype='auto', page_size=1)",
    "[2026-03-01 12:00:05 TP0] Load weight begin. avail mem=78.43 GB",
    "[2026-03-01 12:00:09 TP0] Load weight end. elapsed=4.00 s, type=Qwen3NextForCausalLM, "
    "avail mem=60.12 GB, mem usage=18.31 GB.",
]


def alerts(*lines: str) -> dict[str, dict]:
    s = session_of([*START, *lines], "inline")
    return {a["rule"]: a for a in s.report().to_json()["alerts"]}


def test_quiet_without_the_lines():
    got = alerts()
    assert not {"profiled-capacity-negative", "input-too-long", "process-exception",
                "pool-leak", "mamba-cap", "requests-reduced"} & got.keys()


def test_negative_profiled_capacity_is_critical():
    line = ("[2025-07-02 07:41:59 DP0 TP0] max_total_tokens=131072 is larger than the profiled "
            "value -561981. Use the profiled value instead.")
    a = alerts(line, line.replace("DP0 TP0", "DP7 TP7"))["profiled-capacity-negative"]
    assert a["severity"] == "critical"
    assert "-561,981" in a["title"] and a["extra"]["profiled_tokens"] == -561981
    assert a["evidence"]["count"] == 2 and a["evidence"]["line"] == 4


def test_a_positive_profiled_value_is_only_a_cap():
    line = ("[2026-03-01 12:00:10 TP0] max_total_tokens=900000 is larger than the profiled "
            "value 600000. Use the profiled value instead.")
    assert "profiled-capacity-negative" not in alerts(line)


@pytest.mark.parametrize(("line", "truncated"), [
    ("[2025-03-03 06:49:28 TP5] Input length (160062 tokens) exceeds the maximum allowed length "
     "(59862 tokens). Use a shorter input or enable --allow-auto-truncate.", False),
    ("[2025-03-03 06:49:28 TP5] Request length is longer than the KV cache pool size or the max "
     "context length. Truncated. len(req.origin_input_ids)=160062, max_req_input_len=59862.",
     True),
])
def test_requests_longer_than_allowed(line: str, truncated: bool):
    a = alerts(line, line)["input-too-long"]
    assert a["severity"] == "warning" and a["extra"]["requests"] == 2
    assert "160,062" in a["detail"] and "59,862" in a["detail"]
    assert ("truncated" in a["detail"]) == truncated


def test_a_scheduler_exception_is_critical():
    a = alerts("[2025-03-03 06:49:28 TP5] Scheduler hit an exception: Traceback (most recent "
               "call last):", "  File \"/x/scheduler.py\", line 1, in f",
               "AssertionError")["process-exception"]
    assert a["severity"] == "critical" and a["title"] == "Scheduler hit an exception"
    assert a["evidence"]["rank"] == "TP5"


def test_a_pool_leak_names_the_pool_and_its_counts():
    a = alerts("[2026-03-01 12:10:00 TP0] token_to_kv_pool_allocator memory leak detected! "
               "self.max_total_num_tokens=1024, available_size=1000, evictable_size=0, "
               "protected_size=0")["pool-leak"]
    assert a["severity"] == "warning"
    assert "token_to_kv_pool_allocator" in a["title"] and "1,000 of 1,024" in a["detail"]


@pytest.mark.parametrize(("cap", "severity"), [(6, "warning"), (0, "critical")])
def test_the_mamba_cap_limits_concurrency(cap: int, severity: str):
    a = alerts(f"[2026-03-01 12:00:10 TP0] max_running_requests is capped to {cap} by the mamba "
               "state cache (max_mamba_cache_size=32, 5 state slots per request). To raise it: "
               "increase --mamba-full-memory-ratio or --max-mamba-cache-size, or halve the "
               "state size with --mamba-ssm-dtype bfloat16.")["mamba-cap"]
    assert a["severity"] == severity and a["extra"]["max_running_requests"] == cap
    assert "32 state slots, 5 per request" in a["detail"]
    assert "--mamba-full-memory-ratio" in a["fix"]


def test_a_reduced_max_running_requests():
    a = alerts("[2026-03-01 12:00:10 TP0] max_running_requests was reduced from the requested "
               "512 to 96 (per dp worker) due to the available KV cache capacity."
               )["requests-reduced"]
    assert a["extra"] == {"requested": 512, "max_running_requests": 96}
    assert "--max-running-requests" in a["fix"]


def test_the_fp4_warning_proves_the_kv_dtype_when_nothing_else_does():
    s = Session()
    s.feed_lines("inline", [*START, "[2026-08-14 21:03:09] NVFP4 KV Cache might lead to an "
                            "accuracy drop!"])
    report = s.report().to_json()
    assert report["kv_cache"]["effective_dtype"] == "nvfp4"
    assert report["kv_cache"]["effective_basis"] == "accuracy_warning"
    assert "kv-fp4" in {a["rule"] for a in report["alerts"]}


def test_more_free_slots_than_the_pool_holds_is_an_over_release():
    # sglang 0.5.8 managers/scheduler_runtime_checker_mixin.py:150-161 and :234-249: the idle
    # check fires when available + evictable != max_total_num_tokens - protected, so a free
    # list longer than the pool (available_size > max_total_num_tokens) is slots freed twice,
    # not slots lost.
    a = alerts("[2026-03-01 12:10:00 TP0] token_to_kv_pool_allocator memory leak detected! "
               "self.max_total_num_tokens=1024, available_size=1088, evictable_size=0, "
               "protected_size=0")["pool-leak"]
    assert "double free" in a["title"] and "leak" not in a["title"].lower()
    assert "1,088" in a["detail"] and "1,024" in a["detail"]
    assert "64 more" in a["detail"] and "Leaked slots stay taken" not in a["detail"]


# vllm-project/vllm#23278 (https://github.com/vllm-project/vllm/issues/23278, vLLM 0.10.1,
# gpt-oss-120b): the worker logs a negative KV budget, then the engine stops; the lines below are
# written in that paste's shape. The budget is `requested_memory - non_kv_cache_memory`
# (v1/worker/gpu_worker.py:256-257 and :275-276 in 0.10.1, requested = total x
# gpu_memory_utilization at :175-176; non_kv = weights + torch peak + non-torch,
# utils/__init__.py:2744), and a budget <= 0 raises "No available memory for the cache blocks"
# (v1/core/kv_cache_utils.py:681-684 in 0.10.1, :615-617 in 0.14.1).
VLLM_NEGATIVE = [
    "(EngineCore_0 pid=77) INFO 08-20 18:04:10 [gpu_model_runner.py:2007] Model loading took "
    "61.5000 GiB and 11.000000 seconds",
    "(EngineCore_0 pid=77) INFO 08-20 18:04:22 [gpu_worker.py:276] Available KV cache memory: "
    "-1.25 GiB",
    "(EngineCore_0 pid=77) ERROR 08-20 18:04:22 [core.py:700] EngineCore failed to start.",
]


def _vllm_alerts(lines: list[str]) -> dict[str, dict]:
    s = session_of(lines, "inline")
    return {a["rule"]: a for a in s.report().to_json()["alerts"]}


@pytest.mark.parametrize("budget", ["-1.25", "0.00", "0"])
def test_a_negative_or_zero_vllm_kv_budget_is_a_failed_start(budget: str):
    lines = [ln.replace("-1.25 GiB", f"{budget} GiB") for ln in VLLM_NEGATIVE]
    a = _vllm_alerts(lines)["profiled-capacity-negative"]
    assert a["severity"] == "critical"
    assert a["evidence"]["line"] == 2 and "Available KV cache memory" in a["evidence"]["text"]
    assert f"{budget} GiB" in a["title"] and a["extra"]["kv_budget_gib"] == float(budget)
    # why: what the profile set aside exceeds the utilization's share of the GPU
    for word in ("weights", "activation", "CUDA graph", "non-torch",
                 "gpu_memory_utilization x total"):
        assert word in a["detail"], word
    # what to type: vLLM's knobs, not SGLang's
    for flag in ("--gpu-memory-utilization", "--max-model-len", "--max-num-seqs",
                 "--max-num-batched-tokens", "-tp"):
        assert flag in a["fix"], flag
    assert "--mem-fraction-static" not in a["fix"] + a["detail"]
    assert "--max-total-tokens" not in a["detail"]


def test_a_positive_vllm_kv_budget_raises_nothing():
    lines = [ln.replace("-1.25 GiB", "1.71 GiB") for ln in VLLM_NEGATIVE]
    assert "profiled-capacity-negative" not in _vllm_alerts(lines)
