"""Out-of-memory errors, wherever they sit in the line.

They arrive as a scheduler log line, as the `RuntimeError:`/`ValueError:`/`Exception:` tail of
a traceback, or pasted inline, so they are searched for anywhere in the message rather than
anchored. "Decode out of memory happened." is a retraction (`runtime.py`), not an OOM, and is
dispatched there before this module is asked.

`torch.OutOfMemoryError` / "CUDA out of memory" is engine-agnostic: a vLLM traceback line with
it is reported as `oom` too, since the allocator failure means the same thing for capacity.
"""

from __future__ import annotations

from typing import Any

# (needle, reason); first hit wins, so the specific SGLang wordings come before the generic
# CUDA allocator text they may wrap.
_NEEDLES: tuple[tuple[str, str], ...] = (
    ("Out of memory even after retracting", "after_retract"),
    ("Prefill out of memory", "prefill"),
    ("Decode out of memory. Try", "decode"),
    ("Out of memory. Try to lower", "alloc"),
    ("runs out of memory", "alloc"),
    ("Capture cuda graph failed", "cuda_graph"),
    ("Not enough memory. Please try to increase --mem-fraction-static", "not_enough_memory"),
    ("Loaded weights leave no GPU memory for the KV cache", "weights_leave_no_kv"),
    ("Not enough GPU memory for hybrid", "mamba_state"),
    ("Memory pool size is too small", "pool_too_small"),
    ("OutOfMemoryError", "torch"),
    ("CUDA out of memory", "torch"),
)


def parse_oom(msg: str) -> dict[str, Any] | None:
    for needle, reason in _NEEDLES:
        if needle in msg:
            return {"message": msg.strip(), "reason": reason}
    return None
