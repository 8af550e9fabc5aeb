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

from parsers.catalogue import Format, Variant

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


# --- the catalogue: the kinds this module parses, their layouts and releases -----------------
FORMATS: tuple[Format, ...] = (
    Format("oom", (), None, (
        Variant("oom:needed", None,
                "To serve at least one request with the model's max seq len (%d), (%.2f GiB KV "
                "cache is needed, which is larger than the available KV cache memory (%.2f GiB).",
                "v1/core/kv_cache_utils.py:716 (0.11.0), kv_cache_planning.py:75 (0.33.0)",
                "ERROR 04-02 12:33:23 [core.py:380] ValueError: To serve at least one request "
                "with the models's max seq len (32768), (0.95 GiB KV cache is needed, which is "
                "larger than the available KV cache memory (0.93 GiB). Try increasing "
                "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the "
                "engine.", ("reason", "max_model_len", "needed_gib", "available_gib")),
        Variant("oom:no_cache_blocks", None,
                "No available memory for the cache blocks. Try increasing "
                "`gpu_memory_utilization` ...", "v1/core/kv_cache_utils.py:699 (0.11.0)",
                "ERROR 04-02 12:33:23 [core.py:380] ValueError: No available memory for the "
                "cache blocks. Try increasing `gpu_memory_utilization` when initializing the "
                "engine.", ("reason",)),
        Variant("oom:v0_max_seq_len", None,
                "The model's max seq len (%d) is larger than the maximum number of tokens that "
                "can be stored in KV cache (%d).",
                "V0 worker/worker.py raise_if_cache_size_invalid",
                "ValueError: The model's max seq len (131072) is larger than the maximum number "
                "of tokens that can be stored in KV cache (40960). Try increasing "
                "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the "
                "engine.", ("reason", "max_model_len", "available")),
        Variant("oom:mamba_blocks", None,
                "max_num_seqs (%d) exceeds available Mamba cache blocks (%d)",
                "hybrid models (the wording errors.py reads; its file not recorded)",
                "ValueError: max_num_seqs (512) exceeds available Mamba cache blocks (433).",
                ("reason", "requested", "available")),
        Variant("oom:torch", None, "torch.OutOfMemoryError: CUDA out of memory. ...",
                "torch's allocator (any engine)",
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 26.00 MiB.",
                ("reason",)),
    ), infixes=("max seq len", "cache blocks", "emory")),
)
