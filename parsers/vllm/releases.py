"""vLLM's release line as the catalogue entries beside each parser write it.

A variant's releases are the ones `kvtui.engines.vllm.version` dates a log by (it reads them
from `parsers.vllm.catalog`); a variant whose releases were not read has none (`releases=None`).
"""

from __future__ import annotations

from parsers.catalogue import Releases

VLLM = Releases((0, 5, 0))  # the oldest release whose wheel was read
since = VLLM.since
until = VLLM.until
between = VLLM.between

# Heads of the sample lines (logger.py _FORMAT `[file.py:N]`, 0.8.5+; the process prefix 0.10.2+)
H = "INFO 05-01 16:27:56 [kv_cache_utils.py:1087] "
W = "WARNING 05-01 16:27:56 [kv_cache.py:166] "
E = "(EngineCore_DP0 pid=241) INFO 05-01 16:27:56 [gpu_worker.py:276] "
