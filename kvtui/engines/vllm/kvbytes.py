"""`--kv-cache-memory-bytes` (vLLM 0.10.2+): a KV budget per GPU the operator sets.

What vLLM does with it, read from the wheels:

- `CacheConfig.kv_cache_memory_bytes`: "Size of KV Cache per GPU in bytes. ... Note that
  kv_cache_memory_bytes (when not-None) ignores gpu_memory_utilization" (vllm/config/cache.py:116
  in 0.10.2, :143 in 0.14.0, :374 in 0.33.0).
- `Worker.determine_available_memory` runs the profile pass (to compile), logs "Initial free
  memory X GiB, reserved Y GiB memory for KV Cache as specified by kv_cache_memory_bytes config
  and skipped memory profiling ..." and returns the value itself (v1/worker/gpu_worker.py:235-252
  in 0.10.2, :295-313 in 0.14.0); 0.33.0 returns it through `reserve_mm_ipc_gpu_memory`
  (gpu_worker.py:656-682), which takes out a multimodal frontend reservation only when
  `mm_ipc_gpu_memory_gb` > 0 or a GPU video decoder is configured (multimodal/gpu_ipc_memory.py:
  155-265; it then logs "KV cache memory reduced to X GiB"), so by default the value is returned
  unchanged.
- Every worker returns that value: `Executor.determine_available_memory` is a `collective_rpc`
  (v1/executor/abstract.py:83 in 0.10.2, :125 in 0.14.0, :156 in 0.33.0), one figure per
  worker, and `EngineCore._initialize_kv_caches` sizes each worker's pool from its own figure
  and its own spec (v1/engine/core.py:182-196 in 0.10.2, :243-255 in 0.14.0, :310-322 in 0.33.0)
  as `available // page_size // num_layers` (v1/core/kv_cache_utils.py:797 in 0.10.2). A
  worker's spec holds its own KV heads (`max(1, kv_heads // tp)`: ModelConfig.get_num_kv_heads,
  config/model.py:1153 in 0.14.0), so at any TP the budget per
  GPU is the flag's value: a TP what-if moves the bytes per token, never the budget. Nothing
  is profiled: the weights that TP sheds do not reach the KV cache.
- The value is read by `human_readable_int` (engine/arg_utils.py:1819 in 0.10.2, :2075 in
  0.14.0, utils/argparse_utils.py:30 in 0.33.0): "1k" is 1,000 and "1K" 1,024 (k/m/g and
  K/M/G; t/T from 0.14), no decimals with a binary suffix.
- A profiled run (no flag) prints what the flag would be, at INFO: "... Replace
  gpu_memory_utilization config with `--kv-cache-memory=N` to fit into requested memory ..."
  (gpu_worker.py:372-389 in 0.10.2).
"""

from __future__ import annotations

import re

NAME = "kv_cache_memory_bytes"
FLAG = "--kv-cache-memory-bytes"
SHORT = "kv bytes"
_HUMAN = re.compile(r"(\d+(?:\.\d+)?)([kKmMgGtT])")
_DECIMAL = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def parse_bytes(text: str) -> int | None:
    """vLLM's `human_readable_int` for the flag ("49G", "52.6g", "52613349376"); None when vLLM
    would refuse it or it is not a positive size."""
    value = str(text).strip().replace(",", "").replace("_", "")
    m = _HUMAN.fullmatch(value)
    if m:
        number, suffix = m.groups()
        if suffix in _DECIMAL:
            n = int(float(number) * _DECIMAL[suffix])
        elif "." in number:
            return None  # "Decimals are not allowed with binary suffixes"
        else:
            n = int(number) * _BINARY[suffix]
    else:
        try:
            n = int(value)
        except ValueError:
            return None
    return n if n > 0 else None


def parse_knob(text: str) -> float | None:
    """`parse_bytes` as the what-if pane's memory field reads it."""
    n = parse_bytes(text)
    return float(n) if n is not None else None
