"""Which checkpoint tensors each engine loads as an attention layer's KV-cache scale.

The engines do not read "any tensor called k_scale": each renames a checkpoint name to the
attention module's own parameter and loads it only when that parameter exists, and the parameter
exists only when the checkpoint's quantization config creates it. A scale under any other name,
or under a config that creates no KV-scale parameters, is skipped with at most one log warning
and the layer runs with a scale of 1.0. This module holds what the engines share (which names
are KV scales, the parameter a renaming must reach, which configs create KV-scale parameters);
each engine's own renaming is its `KVScaleRules` (`Engine.kv_scales`,
`kvtui/engines/<name>/kvscales.py`), read from its released wheel, so a verdict can say
"present but ignored".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

# The attention layer's own scale parameter after renaming: `<layer>.<attention module>.attn.
# {k,v}_scale`, the RadixAttention / Attention submodule being called `attn` in every model
# class that loads KV scales (sglang 0.5.23 models/llama.py:233 `self.attn = RadixAttention(...)`,
# nemotron_h.py:737 `mixer.attn`, gpt_j.py:96 `attn.attn`). The module before `.attn` must sit right
# after the layer index: SGLang's remap of an already-final `self_attn.attn.k_scale` yields
# `self_attn.attn.attn.k_scale`, which is no parameter (weight_utils.py:1835-1844).
_PARAM = re.compile(r"\.\d+\.(?:self_attn|mixer|attn|attention)\.attn\.([kv])_scale$")

# Names that are KV-cache scales in some exporter's vocabulary (kind: k, v, or kv = one scale
# shared by K and V). q_scale / prob_scale / weight_scale / input_scale are not KV-cache scales.
_KIND_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\.kv_scale$"), "kv"),
    (re.compile(r"\.([kv])_scale$"), ""),
    (re.compile(r"\.([kv])_proj\.output_scale$"), ""),
    (re.compile(r"\.([kv])_cache\.scale$"), ""),
    # look-alikes no loader of either engine accepts (reported as unloadable)
    (re.compile(r"(?:^|\.|_)(k|v|kv|key|value)_cache_scales?$"), ""),
    (re.compile(r"(?:^|\.)(k|v|key|value)_scales$"), ""),
    (re.compile(r"(?:^|\.)(key|value)_scale$"), ""),
)
_LEAF = re.compile(r"(?:.*_)?(?:k|v|kv|key|value)(?:_cache)?_scales?|output_scale|scale")
_LAYER = re.compile(r"^(.*?(?:^|\.)(?:layers|h|layer|blocks))\.(\d+)\.")
# A tensor of an attention block (K/V projections or a fused QKV): the layers that have a KV
# cache and so should carry scales. Linear-attention / Mamba blocks (`linear_attn.`,
# `mixer.in_proj`) have none.
_ATTENTION = re.compile(r"\.(?:self_attn|attention|attn|mixer)\.(?:[kv]_proj|qkv_proj|qkqkv_proj"
                        r"|query_key_value|wqkv|Wqkv|c_attn|kv_a_proj_with_mqa|kv_b_proj"
                        r"|wk|wv)\.")


@dataclass(frozen=True)
class ScaleName:
    name: str
    kind: str  # "k" | "v" | "kv"
    stack: str  # the name up to the layer index ("model.layers"), "" if it has none
    layer: int | None


def layer_of(name: str) -> tuple[str, int] | None:
    m = _LAYER.match(name)
    return (m.group(1), int(m.group(2))) if m else None


def scale_name(name: str) -> ScaleName | None:
    """The name as a KV-cache scale candidate, or None when it is not one."""
    # a cheap look at the last component first: an index holds ~100k names, most of them
    # weights and weight scales (weight_scale, weight_scale_inv, input_scale)
    if not _LEAF.fullmatch(name[name.rfind(".") + 1:]):
        return None
    for pattern, kind in _KIND_PATTERNS:
        m = pattern.search(name)
        if m:
            k = kind or {"key": "k", "value": "v"}.get(m.group(1), m.group(1))
            where = layer_of(name)
            return ScaleName(name, k, where[0] if where else "", where[1] if where else None)
    return None


def is_attention_tensor(name: str) -> bool:
    return _ATTENTION.search(name) is not None and scale_name(name) is None


def is_parameter(name: str) -> bool:
    """Is `name` an attention layer's own k_scale/v_scale parameter (`_PARAM`)? What an
    engine's renaming must reach for the tensor to be loaded (`KVScaleRules.target`)."""
    return _PARAM.search(name) is not None


@dataclass(frozen=True)
class QuantDecl:
    """What the config files declare about quantization, as the engines' configs read it."""

    family: str | None = None  # fp8 | modelopt | compressed-tensors | quark | other name | None
    kv_cache_quant_algo: str | None = None  # ModelOpt's declaration ("FP8", "NVFP4")
    kv_cache_scheme: dict[str, Any] | None = None  # compressed-tensors' declaration
    known: bool = True  # False: config.json could not be read, so the family is a guess

    @property
    def scheme_strategy(self) -> str | None:
        s = (self.kv_cache_scheme or {}).get("strategy")
        return s if isinstance(s, str) else None


def family_of(quant_method: str | None) -> str | None:
    """The engine's config class a `quant_method` selects (names as in config.json)."""
    if not quant_method:
        return None
    m = quant_method.lower()
    if m.startswith("modelopt"):
        return "modelopt"
    if m in ("compressed-tensors", "compressed_tensors"):
        return "compressed-tensors"
    return m


def creates_scale_params(rules: KVScaleRules, decl: QuantDecl) -> tuple[bool, str]:
    """Whether the engine gives attention layers k_scale/v_scale parameters to load into.

    Without them every KV-scale tensor is skipped (the remap finds no parameter) and the cache
    runs with 1.0. The reason is said in words, for the verdict's evidence.
    """
    fam = decl.family
    if not decl.known:
        return True, ("config.json could not be read: assumed to be a config that loads KV "
                      "scales")
    if fam is None:
        return False, ("the checkpoint has no quantization config, so no attention layer gets "
                       "k_scale/v_scale parameters (unless the server is started with "
                       "--quantization fp8)")
    if fam == "fp8":  # sglang layers/quantization/fp8.py:474-475; vllm fp8.py:206-207
        return True, "quant_method fp8 gives every attention layer k_scale/v_scale"
    if fam == "quark":  # sglang quark/quark.py:486,525; vllm quark/quark.py:206
        return True, "quant_method quark gives every attention layer k_scale/v_scale"
    if fam == "modelopt":  # sglang modelopt_quant.py:347-348,1076-1077; vllm modelopt.py:1849-1852
        if decl.kv_cache_quant_algo:
            return True, f"ModelOpt kv_cache_quant_algo {decl.kv_cache_quant_algo}"
        return False, ("a ModelOpt checkpoint without kv_cache_quant_algo gets no KV-scale "
                       "parameters")
    if fam == "compressed-tensors":
        return rules.compressed_tensors_creates(decl.kv_cache_scheme)
    return False, f"quant_method {fam} creates no KV-scale parameters"


def scheme_text(scheme: Mapping[str, object]) -> str:
    keys = ("type", "num_bits", "strategy", "symmetric", "dynamic")
    return "{" + ", ".join(f"{k}={scheme[k]}" for k in keys if k in scheme) + "}"


class KVScaleRules(Protocol):
    """Which checkpoint tensors the engine loads as an attention layer's KV-cache scales
    (`kvtui.core.checkpoint`: the verdict on a checkpoint's scales is each engine's)."""

    def target(self, name: str, family: str | None) -> str | None:
        """The parameter the engine loads tensor `name` into under a config of quantization
        `family`, or None when it skips it (`kvtui.core.checkpoint.kvnames.is_parameter`)."""

    def compressed_tensors_creates(self, scheme: Mapping[str, object] | None
                                   ) -> tuple[bool, str]:
        """Does a compressed-tensors config with KV `scheme` give attention layers KV-scale
        parameters, and why (in words, for the verdict's evidence)?"""

    def accepts_vector(self, decl: QuantDecl) -> bool:
        """Does the engine load per-head (vector) scales under this declaration?"""

    def remaps(self, architecture: str) -> bool:
        """Does this model class's loader rename checkpoint names by `target`? (False: a
        loader of its own, so the name rule is less certain: the verdict says medium.)"""
