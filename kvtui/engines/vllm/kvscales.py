"""Which checkpoint tensors vLLM loads as an attention layer's KV-cache scales (read from the
vllm 0.33.0 wheel; file:line below), behind `kvtui.core.engine.KVScaleRules`."""

from __future__ import annotations

import re
from collections.abc import Mapping

from kvtui.core.checkpoint.kvnames import QuantDecl, is_parameter

_VLLM_REGEX: tuple[tuple[re.Pattern[str], str], ...] = (
    # vllm 0.33.0 model_executor/layers/quantization/base_config.py:229-251, applied in order,
    # each to the result of the previous (model_executor/models/utils.py:111-116)
    (re.compile(r"\.kv_scale$"), r".attn.k_scale"),
    (re.compile(r"\.self_attn\.[kv]_proj\.([kv])_scale$"), r".self_attn.attn.\1_scale"),
    (re.compile(r"\.self_attn\.qk(?:qk)?v_proj\.([kv])_scale$"), r".self_attn.attn.\1_scale"),
    (re.compile(r"\.mixer\.[kv]_proj\.([kv])_scale$"), r".mixer.attn.\1_scale"),
    (re.compile(r"\.self_attn\.([kv])_cache\.scale$"), r".self_attn.attn.\1_scale"),
    (re.compile(r"(?<!\.attn)\.([qkv])_scale$"), r".attn.\1_scale"),
)
# fp8.py:211-222 and quark/quark.py:952-961 add the `output_scale` suffixes for their configs
_VLLM_OUTPUT_SCALE = {".k_proj.output_scale": ".attn.k_scale",
                      ".v_proj.output_scale": ".attn.v_scale"}


def target(name: str, family: str | None) -> str | None:
    """The parameter vLLM loads `name` into, or None (vllm 0.33.0, see _VLLM_REGEX).

    A name that already is the parameter is kept (model_loader/weight_utils.py:1743-1744).
    """
    if is_parameter(name):
        return name
    target = name
    for pattern, repl in _VLLM_REGEX:
        if pattern.search(target):
            target = pattern.sub(repl, target)
    if family in ("fp8", "quark"):
        for suffix, repl in _VLLM_OUTPUT_SCALE.items():
            if target.endswith(suffix):
                target = repl.join(target.rsplit(suffix, 1))
    return target if is_parameter(target) else None


class VLLMKVScales:
    def target(self, name: str, family: str | None) -> str | None:
        return target(name, family)

    def compressed_tensors_creates(self, scheme: Mapping[str, object] | None
                                   ) -> tuple[bool, str]:
        # vllm compressed_tensors.py:213-214 (always), 1157 (per head)
        return True, "compressed-tensors gives every attention layer k_scale/v_scale"

    def accepts_vector(self, decl: QuantDecl) -> bool:
        """Per-head (vector) scales: only the compressed-tensors `attn_head` strategy takes
        them (vllm compressed_tensors.py:1157,1183-1230); a scalar parameter refuses anything
        else (vllm kv_cache.py:36-42)."""
        return decl.family == "compressed-tensors" and decl.scheme_strategy == "attn_head"

    def remaps(self, architecture: str) -> bool:
        return True  # every model class's loader renames by `target` (weight_utils.py)


KV_SCALES = VLLMKVScales()
