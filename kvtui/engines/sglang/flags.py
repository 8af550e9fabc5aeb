"""SGLang's spelling of the server flags the fixes and the what-if name (its own module so the
calculator can name them without importing the engine package that imports it)."""

from __future__ import annotations

from kvtui.core.engine import Flags, ReleaseOption

# --tp-size is --tensor-parallel-size (0.5.5 srt/server_args.py:2213-2214; still so in 0.5.23):
# the docs' --tp only works as argparse's unique prefix of it, which a new --tp... flag breaks
FLAGS = Flags(
    kv_cache_dtype="--kv-cache-dtype",
    mem_fraction="--mem-fraction-static",
    context_length="--context-length",
    tensor_parallel="--tp-size",
    max_running_requests="--max-running-requests",
    scales_path="--quantization-param-path",
)

# How the user pins the release whose sizing rules apply (`kvtui check`, `kvtui whatif`).
RELEASE_OPTION = ReleaseOption(
    flag="--sglang-version",
    help="the SGLang release whose sizing rules the what-if applies (default: "
         "the newest the log allows)")
