"""vLLM's spelling of the server flags the fixes and the what-if name (its own module so the
calculator can name them without importing the engine package that imports it)."""

from __future__ import annotations

from kvtui.core.engine import Flags, ReleaseOption

FLAGS = Flags(
    kv_cache_dtype="--kv-cache-dtype",
    mem_fraction="--gpu-memory-utilization",
    context_length="--max-model-len",
    # -tp is --tensor-parallel-size (engine/arg_utils.py:1209 in 0.33.0, :602 in 0.9.0)
    tensor_parallel="-tp",
    max_running_requests="--max-num-seqs",
    scales_path=None,  # V1 reads k/v scales from the checkpoint only
)

# How the user pins the release whose sizing rules apply (`kvtui check`, `kvtui whatif`).
RELEASE_OPTION = ReleaseOption(
    flag="--vllm-version",
    help="the vLLM release whose sizing rules the what-if applies on a vLLM log (default: "
         "the newest the log allows)")
