"""ToyLM's flags and its release option (read by the CLI without loading the engine)."""

from __future__ import annotations

from kvtui.core.engine import Flags, ReleaseOption

FLAGS = Flags(kv_cache_dtype="--toy-kv", mem_fraction="--toy-mem", context_length="--toy-ctx",
              tensor_parallel="--toy-tp", max_running_requests="--toy-seqs", scales_path=None)

RELEASE_OPTION = ReleaseOption(flag="--toyengine-version",
                               help="the ToyLM release whose sizing rules apply")
