"""What the checkpoint itself says about KV-cache quantization, independent of how it was read.

The log can only say "scales were not found" or "FP8 KV cache requested"; the checkpoint settles
which KV quantization it was exported for, which per-layer K/V scale tensors it carries, what
their values are, and whether the engine would load them. Pure format logic and verdicts: the
bytes come through `CheckpointFiles` (a local directory in kvtui.sources.checkpoint_files, an
SFTP one in kvtui.sources.ssh.checkpoint). Alert rules read `CheckpointFacts` (its
`kv_scale_verdict()`, `has_k_scale`, `kv_cache_quant_algo`, `engine_version()`); the capacity
calculator reads `model_config`.

Modules: facts (the dataclasses), configs (config.json, hf_quant_config.json, the index),
safetensors (the file format), kvnames (which names each engine loads), verdict (values ->
verdict), access (the file-access protocol and the read budget), inspect (the reading order).
"""

from kvtui.core.checkpoint.access import CheckpointFiles, RandomAccessFile, ReadBudget
from kvtui.core.checkpoint.configs import (
    MODEL_CONFIG_KEYS,
    count_scale_tensors,
    parse_config_json,
    parse_hf_quant_config,
    parse_safetensors_index,
)
from kvtui.core.checkpoint.facts import (
    VERDICTS,
    CheckpointFacts,
    Finding,
    KVScaleFacts,
    KVScaleVerdict,
    ScaleTensor,
)
from kvtui.core.checkpoint.inspect import (
    choose_snapshot,
    hub_repo_dir,
    judge_all,
    read_checkpoint,
)

__all__ = [
    "MODEL_CONFIG_KEYS", "VERDICTS", "CheckpointFacts", "CheckpointFiles", "Finding",
    "KVScaleFacts", "KVScaleVerdict", "RandomAccessFile", "ReadBudget", "ScaleTensor",
    "choose_snapshot", "count_scale_tensors", "hub_repo_dir", "judge_all",
    "parse_config_json", "parse_hf_quant_config", "parse_safetensors_index", "read_checkpoint",
]
