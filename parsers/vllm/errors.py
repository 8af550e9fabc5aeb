"""The errors that say the KV cache cannot hold what vLLM was asked to serve, and CUDA OOMs.

They arrive as a log line, as the `ValueError:` tail of an EngineCore traceback, or pasted
inline, so they are searched for anywhere in the message:
- "To serve at least one request with the models's max seq len (%d), (%.2f GiB KV cache is
  needed, which is larger than the available KV cache memory (%.2f GiB). [Based on the
  available memory, the estimated maximum model length is %d.] Try increasing
  `gpu_memory_utilization` or decreasing `max_model_len` ..." (v1/core/kv_cache_utils.py:716 in
  0.11.0; "model's" and format_gib from 0.1x, kv_cache_planning.py:75 in 0.33.0);
- "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` ..."
  (kv_cache_utils.py:699 in 0.11.0);
- V0: "The model's max seq len (%d) is larger than the maximum number of tokens that can be
  stored in KV cache (%d). Try increasing `gpu_memory_utilization` or decreasing
  `max_model_len` when initializing the engine." (worker/worker.py raise_if_cache_size_invalid);
- hybrid models: "max_num_seqs (%d) exceeds available Mamba cache blocks (%d)";
- the CUDA allocator's "CUDA out of memory" / torch.OutOfMemoryError, which any engine prints.
"""

from __future__ import annotations

from typing import Any

import regex

_NUM = r"\d+(?:\.\d+)?"
_NEEDED = regex.compile(
    rf"To serve at least one request with the models?'s? max seq len \((\d+)\)"
    rf"(?:, \(({_NUM}) GiB(?: KV cache is needed, which is larger than the available KV cache "
    rf"memory \(({_NUM}) GiB\)\.(?: Based on the available memory, the estimated maximum "
    rf"model length is (\d+)\.)?)?)?")
_V0_MAX_LEN = regex.compile(
    r"The model's max seq len \((\d+)\) is larger than the maximum number of tokens that can "
    r"be stored in KV cache \((\d+)\)")
_MAMBA = regex.compile(r"max_num_seqs \((\d+)\) exceeds available Mamba cache blocks \((\d+)\)")


def _int(s: str | None) -> int | None:
    return None if s is None else int(s)


def parse_error(msg: str) -> dict[str, Any] | None:
    """An `oom` event's fields, or None."""
    if "max seq len" in msg:
        m = _NEEDED.search(msg)
        if m is not None:
            return {"message": msg.strip(), "reason": "kv_cache_too_small",
                    "max_model_len": int(m.group(1)),
                    "needed_gib": float(m.group(2)) if m.group(2) else None,
                    "available_gib": float(m.group(3)) if m.group(3) else None,
                    "estimated_max_model_len": _int(m.group(4))}
        m = _V0_MAX_LEN.search(msg)
        if m is not None:
            return {"message": msg.strip(), "reason": "kv_cache_too_small",
                    "max_model_len": int(m.group(1)), "available": int(m.group(2))}
    if "No available memory for the cache blocks" in msg:
        return {"message": msg.strip(), "reason": "no_kv_memory"}
    if "Mamba cache blocks" in msg:
        m = _MAMBA.search(msg)
        if m is not None:
            return {"message": msg.strip(), "reason": "mamba_blocks",
                    "requested": int(m.group(1)), "available": int(m.group(2))}
    if "CUDA out of memory" in msg or "OutOfMemoryError" in msg:
        return {"message": msg.strip(), "reason": "torch"}
    return None
