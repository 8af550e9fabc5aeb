"""Errors: out of memory, crashed processes, pool leaks, requests longer than allowed.

They arrive as a scheduler log line, as the `RuntimeError:`/`ValueError:`/`AssertionError:` tail
of a traceback, via `warnings.warn` (`path.py:N: UserWarning: ...`) or pasted inline, so all but
the process crash are searched for anywhere in the message rather than anchored (its catalogue
entry, `FORMATS` below, lists each one's needles as `infixes`). "Decode out of memory
happened." is a retraction (`runtime.py`), not an OOM, and is dispatched there before this
module is asked.

`torch.OutOfMemoryError` / "CUDA out of memory" is engine-agnostic: a vLLM traceback line with
it is reported as `oom` too, since the allocator failure means the same thing for capacity.
"""

from __future__ import annotations

from typing import Any

import regex

from parsers.catalogue import Format, Variant
from parsers.sglang.fields import cols
from parsers.sglang.releases import EVERY, P, between, since

Parsed = tuple[dict[str, Any], str | None]

# (needle, reason, variant); first hit wins, so the specific SGLang wordings come before the
# generic CUDA allocator text they may wrap. Variants name the wordings some releases print.
OOM_NEEDLES: tuple[tuple[str, str, str], ...] = (
    ("Out of memory even after retracting", "after_retract", "oom:after_retract"),
    ("Prefill out of memory", "prefill", "oom:prefill"),
    ("Decode out of memory. Try", "decode", "oom:decode"),
    ("Out of memory. Try to lower", "alloc", "oom:alloc"),
    ("runs out of memory", "alloc", "oom:alloc"),
    ("Capture cuda graph failed", "cuda_graph", "oom:cuda_graph"),
    ("Not enough memory. Please try to increase --mem-fraction-static", "not_enough_memory",
     "oom:not_enough_memory"),
    ("Loaded weights leave no GPU memory for the KV cache", "weights_leave_no_kv",
     "oom:weights_leave_no_kv"),
    ("Not enough GPU memory for hybrid", "mamba_state", "oom:mamba_state"),
    ("Memory pool size is too small", "pool_too_small", "oom:pool_too_small"),
    ("OutOfMemoryError", "torch", "oom:torch"),
    ("CUDA out of memory", "torch", "oom:torch"),
)


# "Capture cuda graph failed: {e}" wraps whatever RuntimeError the capture raised (0.4.6
# model_executor/cuda_graph_runner.py:277-279, 0.5.23 model_executor/runner/
# decode_cuda_graph_runner.py:600-603, and the EAGLE draft runners): an out-of-memory only when
# `e` says so. A ROCm build without its kernels failed capture with "ROCm shim:
# sgl_kernel.rotary_embedding was really called" (a repository note of 2026-08, Qwen3 on
# MI355X), which is no memory error.
_GRAPH_FAILED = "Capture cuda graph failed"
_MEMORY_CAUSES = ("out of memory", "outofmemory", "alloc_failed")


def _graph_failure_not_memory(msg: str, at: int) -> bool:
    """The wrapped cause is stated and names no allocation failure (an empty cause, a paste cut
    or wrapped at the colon, stays an OOM: SGLang's own advice under it is memory first)."""
    cause = msg[at + len(_GRAPH_FAILED):].lstrip(": ").strip().lower()
    return bool(cause) and not any(c in cause for c in _MEMORY_CAUSES)


def parse_oom(msg: str) -> Parsed | None:
    for needle, reason, variant in OOM_NEEDLES:
        if needle in msg:
            if reason == "cuda_graph" and _graph_failure_not_memory(msg, msg.index(needle)):
                continue  # not an OOM; a later needle (the torch text) may still be in it
            if reason == "not_enough_memory":
                # 0.5.3-0.5.9 `{self.server_args.mem_fraction_static=}`, 0.5.10+ the bare name
                if "self.server_args.mem_fraction_static=" in msg:
                    variant = "oom:not_enough_memory_self"
                elif "Current value: mem_fraction_static=" in msg:
                    variant = "oom:not_enough_memory_value"
            return {"message": msg.strip(), "reason": reason}, variant
    return None


# managers/utils.py validate_input_length (0.4.6+; 0.5.23 :283): "Input length ({n} tokens)
# exceeds the maximum allowed length ({max_req_input_len} tokens). Use a shorter input or enable
# --allow-auto-truncate."; with --allow-auto-truncate (0.5.23 :275): "Request length is longer
# than the KV cache pool size or the max context length. Truncated. len(req.origin_input_ids)=N,
# max_req_input_len=M."
_TOO_LONG = regex.compile(
    r"Input length \((\d+) tokens\) exceeds the maximum allowed length(?: \((\d+) tokens\))?")
_TRUNCATED = cols(("len(req.origin_input_ids)", "input_tokens", "i", True),
                  ("max_req_input_len", "max_tokens", "i", True))


# The tokenizer manager's own check against the context length (0.5.23
# managers/tokenizer_manager.py:1338-1351; 0.4.10 :557 raises only): a warning when
# --allow-auto-truncate cuts the input (0.5.5 :656), else a ValueError returned to the client.
_TOKENIZER = regex.compile(r"The input \((\d+) tokens\) is longer than the model's context "
                           r"length \((\d+) tokens\)")


def parse_input_too_long(msg: str) -> Parsed | None:
    m = _TOKENIZER.search(msg)
    if m is not None:
        cut = "Truncating the input" in msg
        return ({"input_tokens": int(m.group(1)), "max_tokens": int(m.group(2)),
                 "truncated": cut},
                "input_too_long:tokenizer_truncated" if cut else "input_too_long:tokenizer")
    at = msg.find("Input length (")
    if at >= 0:
        m = _TOO_LONG.match(msg, at)
        if m is not None:
            return ({"input_tokens": int(m.group(1)),
                     "max_tokens": None if m.group(2) is None else int(m.group(2)),
                     "truncated": False}, "input_too_long:rejected")
    at = msg.find("Request length is longer than the KV cache pool size")
    if at >= 0:
        fields: dict[str, Any] = {"input_tokens": None, "max_tokens": None, "truncated": True}
        _TRUNCATED.read(msg.rstrip(". \n"), fields, start=at, closed=True)
        return fields, "input_too_long:truncated"
    return None


# `logger.error(f"{Process} hit an exception: {traceback}")` in every long-running process:
# Scheduler (0.4.6 managers/scheduler.py:2040, 0.5.23 :6372), DataParallelController,
# TokenizerManager, DetokenizerManager, TpModelWorkerClient, Multi(De)TokenizerRouter. Always
# with the colon: vLLM's worker says "WorkerProc hit an exception." (a period:
# v1/executor/multiproc_executor.py:654 in 0.10.2), which is not SGLang's.
_EXCEPTION = regex.compile(r"(\w+) hit an exception:")


def parse_exception(msg: str) -> Parsed | None:
    m = _EXCEPTION.search(msg)
    if m is None:
        return None
    return {"process": m.group(1)}, "process_exception:hit"


# Memory-leak checks: 0.1.x router/model_rpc.py "KV cache pool leak detected!" (a warning line
# of its own); 0.4.x-0.5.x "{pool} memory leak detected! ..." (token_to_kv_pool_allocator,
# req_to_token_pool; 0.5.14+ managers/scheduler_components/invariant_checker.py _report_leak);
# the busy-time asserts "Mem Leak Detected! total_tokens=..." (0.5.4-0.5.9) and
# "Full Pool / SWA Pool Mem Leak Detected! ..." (0.5.14+).
_LEAK = regex.compile(
    r"(?:(?P<pool>KV cache pool|Full Pool|SWA Pool|[\w.]+) )?(?:memory leak|leak|Mem Leak) "
    r"[Dd]etected!")
_LEAK_COUNTS = cols(
    ("self.max_total_num_tokens", "total_tokens", "i", True),
    ("max_total_num_tokens", "total_tokens", "i", True), ("total", "total_tokens", "i", True),
    ("total_size", "total_tokens", "i", True), ("available_size", "available_tokens", "i", True),
    ("available", "available_tokens", "i", True),
)


def parse_leak(msg: str) -> Parsed | None:
    m = _LEAK.search(msg)
    if m is None:
        return None
    pool = m.group("pool")
    fields: dict[str, Any] = {"pool": pool}
    _LEAK_COUNTS.read(msg, fields, start=m.end(), closed=True)
    if pool == "KV cache pool":
        return fields, "pool_leak:old"
    if "Mem Leak Detected" in m.group(0):
        return fields, "pool_leak:busy_check"
    return fields, "pool_leak:memory_leak"


# --- the catalogue: the kinds this module parses, their layouts and releases ----------------------
FORMATS: tuple[Format, ...] = (
    Format("input_too_long", ("Input length (", "Request length is longer than the KV",
                              "The input ("),
           parse_input_too_long, (
        Variant("input_too_long:tokenizer_truncated", None,
                "The input ({n} tokens) is longer than the model's context length ({m} "
                "tokens). Truncating the input.",
                "0.5.23 managers/tokenizer_manager.py:1340 (0.5.5 :656; --allow-auto-truncate)",
                "[2026-03-01 12:00:00] The input (140000 tokens) is longer than the model's "
                "context length (131072 tokens). Truncating the input.",
                ("input_tokens", "max_tokens", "truncated")),
        Variant("input_too_long:tokenizer", None,
                "The input ({n} tokens) is longer than the model's context length ({m} tokens).",
                "0.5.23 managers/tokenizer_manager.py:1348 (0.4.10 :557), a ValueError",
                "ValueError: The input (140000 tokens) is longer than the model's context length "
                "(131072 tokens).", ("input_tokens", "max_tokens")),
        Variant("input_too_long:rejected", EVERY,
                "Input length ({n} tokens) exceeds the maximum allowed length "
                "({max_req_input_len} tokens). Use a shorter input or enable "
                "--allow-auto-truncate.", "0.4.6 managers/utils.py:34, 0.5.23 :283",
                "[2025-03-03 06:49:28 TP5] Input length (160062 tokens) exceeds the maximum "
                "allowed length (59862 tokens). Use a shorter input or enable "
                "--allow-auto-truncate.", ("input_tokens", "max_tokens")),
        Variant("input_too_long:truncated", EVERY,
                "Request length is longer than the KV cache pool size or the max context "
                "length. Truncated. len(req.origin_input_ids)=N, max_req_input_len=M.",
                "0.4.6 managers/utils.py:26, 0.5.23 :275",
                P + "Request length is longer than the KV cache pool size or the max context "
                "length. Truncated. len(req.origin_input_ids)=70000, max_req_input_len=65535.",
                ("input_tokens", "max_tokens", "truncated")),
    ), infixes=("length",)),
    Format("process_exception", (
        "Scheduler hit an exception", "TpModelWorkerClient hit an exception",
        "DataParallelController hit an exception", "TokenizerManager hit an exception",
        "DetokenizerManager hit an exception", "MultiTokenizerRouter hit an exception",
        "MultiDetokenizerRouter hit an exception"), parse_exception, (
        Variant("process_exception:hit", EVERY,
                "{Process} hit an exception: {traceback}",
                "0.4.6 managers/scheduler.py:2040, 0.5.23 :6372 (and the other processes)",
                "[2025-10-12 21:14:09] Scheduler hit an exception: Traceback (most recent "
                "call last):", ("process",)),
    ), infixes=(" hit an exception",)),
    Format("pool_leak", ("KV cache pool leak detected", "token_to_kv_pool_allocator memory",
                         "req_to_token_pool memory"), parse_leak, (
        Variant("pool_leak:old", None, "KV cache pool leak detected!",
                "sglang 0.1.x router/model_rpc.py (corpus sglang-issue-105)",
                "KV cache pool leak detected!", ("pool",)),
        Variant("pool_leak:memory_leak", EVERY,
                "{pool} memory leak detected! {token_msg}",
                "0.4.6 managers/scheduler.py:1093, 0.5.14+ "
                "managers/scheduler_components/invariant_checker.py _report_leak (0.5.23 :453)",
                P + "token_to_kv_pool_allocator memory leak detected! available_size=1000, "
                "protected_size=0, self.max_total_num_tokens=1024",
                ("pool", "available_tokens", "total_tokens")),
        Variant("pool_leak:busy_check", since("0.5.4"),
                "Mem Leak Detected! total_tokens=.. vs self.max_total_num_tokens=.. | "
                "{Full|SWA} Pool Mem Leak Detected! {msg}",
                "0.5.4 managers/scheduler_runtime_checker_mixin.py:119, 0.5.23 "
                "managers/scheduler_components/invariant_checker.py:344",
                "AssertionError: Full Pool Mem Leak Detected! [full] total=1000, "
                "available=900, evictable=50, protected=0", ("pool", "total_tokens")),
    ), infixes=("etected!",)),
    Format("oom", (
        "Prefill out of memory", "Decode out of memory. Try", "Out of memory",
        "Capture cuda graph failed", "Not enough memory", "Loaded weights leave no GPU",
        "Not enough GPU memory for hybrid", "Memory pool size is too small"),
        parse_oom, (
        Variant("oom:prefill", EVERY, "Prefill out of memory. Try to lower your batch size.",
                "0.4.6 managers/schedule_batch.py:891, 0.5.23 mem_cache/allocation.py:239",
                P + "Prefill out of memory. Try to lower your batch size.", ("reason",)),
        Variant("oom:decode", EVERY, "Decode out of memory. Try to lower your batch size.",
                "sglang-log-lines.md 7.4 (0.4.4+)",
                P + "Decode out of memory. Try to lower your batch size.", ("reason",)),
        Variant("oom:alloc", EVERY, "Out of memory. Try to lower your batch size. | "
                "alloc_req_slots runs out of memory",
                "0.5.4 mem_cache/common.py:213, 0.5.23 mem_cache/allocation.py:163",
                P + "Out of memory. Try to lower your batch size.", ("reason",)),
        Variant("oom:after_retract", since("0.5.7"),
                "Out of memory even after retracting all other requests in the decode batch.",
                "0.5.7 managers/schedule_batch.py:1796, 0.5.23 :3516",
                P + "Out of memory even after retracting all other requests in the decode "
                "batch.", ("reason",)),
        Variant("oom:cuda_graph", EVERY,
                "Capture cuda graph failed: {e} (an OOM when e is one; errors.py)",
                "0.4.6 model_executor/cuda_graph_runner.py:279, 0.5.23 "
                "model_executor/runner/decode_cuda_graph_runner.py:603",
                "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate "
                "1 MiB.", ("reason",)),
        Variant("oom:not_enough_memory", EVERY,
                "Not enough memory. Please try to increase --mem-fraction-static.",
                "0.4.6 model_executor/model_runner.py:790",
                P + "Not enough memory. Please try to increase --mem-fraction-static.",
                ("reason",)),
        Variant("oom:not_enough_memory_self", between("0.5.3", "0.5.9"),
                "... Current value: {self.server_args.mem_fraction_static=}",
                "0.5.3 model_executor/model_runner.py:1498, 0.5.9 "
                "model_runner_kv_cache_mixin.py:418",
                P + "Not enough memory. Please try to increase --mem-fraction-static. Current "
                "value: self.server_args.mem_fraction_static=0.8", ("reason",)),
        Variant("oom:not_enough_memory_value", since("0.5.10"),
                "... Current value: mem_fraction_static={m}",
                "0.5.10 model_executor/model_runner_kv_cache_mixin.py:59, 0.5.23 "
                "model_executor/pool_configurator.py:98",
                P + "Not enough memory. Please try to increase --mem-fraction-static. Current "
                "value: mem_fraction_static=0.8", ("reason",)),
        Variant("oom:weights_leave_no_kv", since("0.5.14"),
                "Loaded weights leave no GPU memory for the KV cache under "
                "--mem-fraction-static={m}. ...",
                "0.5.14 model_executor/model_runner_kv_cache_mixin.py:111, 0.5.23 "
                "mem_cache/kv_cache_configurator.py:3051",
                "ValueError: Loaded weights leave no GPU memory for the KV cache under "
                "--mem-fraction-static=0.88. Raise --mem-fraction-static above 0.911",
                ("reason",)),
        Variant("oom:mamba_state", since("0.5.13"),
                "Not enough GPU memory for hybrid (mamba/linear-attention) state cache. ...",
                "0.5.13 model_executor/model_runner_kv_cache_mixin.py:169, 0.5.23 "
                "mem_cache/kv_cache_configurator.py:3394",
                P + "Not enough GPU memory for hybrid (mamba/linear-attention) state cache. "
                "Computed max_mamba_cache_size=0", ("reason",)),
        Variant("oom:pool_too_small", EVERY, "Memory pool size is too small",
                "0.4.6 managers/tp_worker.py:127, 0.5.23 :425",
                "AssertionError: Memory pool size is too small", ("reason",)),
        Variant("oom:torch", EVERY, "torch.OutOfMemoryError: CUDA out of memory. ...",
                "torch's allocator (any engine)",
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 26.00 MiB.",
                ("reason",)),
    ), infixes=("emory", "graph failed")),
)
