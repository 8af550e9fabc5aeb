"""Which checkpoint tensors each engine loads as an attention layer's KV-cache scale.

The engines do not read "any tensor called k_scale": each renames a checkpoint name to the
attention module's own parameter and loads it only when that parameter exists, and the parameter
exists only when the checkpoint's quantization config creates it. A scale under any other name,
or under a config that creates no KV-scale parameters, is skipped with at most one log warning
and the layer runs with a scale of 1.0. This module encodes those rules, read from the released
wheels (SGLang 0.5.23, vLLM 0.33.0; file:line below), so a verdict can say "present but ignored".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

ENGINES = ("sglang", "vllm")

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


def sglang_target(name: str) -> str | None:
    """The parameter SGLang loads `name` into, or None when it skips it.

    sglang 0.5.23 model_loader/weight_utils.py:1779-1857 `maybe_remap_kv_scale_name`, which the
    model classes in SGLANG_REMAP_ARCHITECTURES call for every name containing "scale"
    (e.g. models/llama.py:746-750). `str.replace` replaces every occurrence, as there.
    """
    if name.endswith(".kv_scale"):  # :1796-1814, deprecated, duplicated to v (kv_cache.py:64-71)
        target = name.replace(".kv_scale", ".attn.k_scale")
    elif name.endswith((".k_scale", ".v_scale")):  # :1816-1844
        suffix = name[-8:]
        for prefix in (".self_attn.", ".mixer."):  # `.mixer.` since 0.5.9
            modelopt = f"{prefix}{suffix[1]}_proj{suffix}"
            if modelopt in name:
                target = name.replace(modelopt, f"{prefix}attn{suffix}")
                break
        else:
            target = name.replace(suffix, f".attn{suffix}")
    elif name.endswith(".k_proj.output_scale"):  # :1846-1854, Quark / old compressed-tensors
        target = name.replace(".k_proj.output_scale", ".attn.k_scale")
    elif name.endswith(".v_proj.output_scale"):
        target = name.replace(".v_proj.output_scale", ".attn.v_scale")
    else:
        target = name  # :1856-1857 untouched: loaded only if it is the parameter's own name
    return target if _PARAM.search(target) else None


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


def vllm_target(name: str, family: str | None) -> str | None:
    """The parameter vLLM loads `name` into, or None (vllm 0.33.0, see _VLLM_REGEX).

    A name that already is the parameter is kept (model_loader/weight_utils.py:1743-1744).
    """
    if _PARAM.search(name):
        return name
    target = name
    for pattern, repl in _VLLM_REGEX:
        if pattern.search(target):
            target = pattern.sub(repl, target)
    if family in ("fp8", "quark"):
        for suffix, repl in _VLLM_OUTPUT_SCALE.items():
            if target.endswith(suffix):
                target = repl.join(target.rsplit(suffix, 1))
    return target if _PARAM.search(target) else None


def target(engine: str, name: str, family: str | None) -> str | None:
    return sglang_target(name) if engine == "sglang" else vllm_target(name, family)


# Model classes whose SGLang 0.5.23 loader calls maybe_remap_kv_scale_name (grep of models/*.py;
# the EntryClass of each file). Other classes have loaders of their own (e.g. qwen2.py:238-256
# loads only names that already are parameters), so for them the name rule is less certain.
SGLANG_REMAP_ARCHITECTURES = frozenset({
    "ApertusForCausalLM", "ArceeForCausalLM", "CohereForCausalLM", "Cohere2ForCausalLM",
    "DbrxForCausalLM", "Exaone4ForCausalLM", "Gemma2ForCausalLM", "Gemma3ForCausalLM",
    "EmbeddingGemmaModel", "Gemma3ForConditionalGeneration", "Gemma3nForCausalLM",
    "Gemma3nForConditionalGeneration", "Gemma4ForCausalLM", "DiffusionGemmaForBlockDiffusion",
    "Gemma4ForConditionalGeneration", "GPTJForCausalLM", "HunYuanMoEV1ForCausalLM",
    "HunYuanDenseV1ForCausalLM", "KimiK3ForConditionalGeneration", "KimiK3LinearForCausalLM",
    "KimiLinearForCausalLM", "KimiVLForConditionalGeneration", "LlamaForCausalLM",
    "Phi3ForCausalLM", "InternLM3ForCausalLM", "IQuestCoderForCausalLM", "MiniMaxM2ForCausalLM",
    "MiniMaxM3SparseForCausalLM", "MiniMaxM3SparseForConditionalGeneration",
    "Llama4ForConditionalGeneration", "MuseGlimmerForCausalLM",
    "MuseGlimmerForConditionalGeneration", "NemotronHForCausalLM", "NemotronHPuzzleForCausalLM",
    "DeciLMForCausalLM", "PhiMoEForCausalLM", "Qwen3ForCausalLM", "Qwen3Model",
    "SDARForCausalLM", "SDARMoeForCausalLM",
    "MistralForCausalLM",  # models/mistral.py:63 hands its renamed weights to Llama's loader
})


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


def creates_scale_params(engine: str, decl: QuantDecl) -> tuple[bool, str]:
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
        return _ct_creates(engine, decl.kv_cache_scheme)
    return False, f"quant_method {fam} creates no KV-scale parameters"


def _ct_creates(engine: str, scheme: dict[str, Any] | None) -> tuple[bool, str]:
    if engine == "vllm":  # vllm compressed_tensors.py:213-214 (always), 1157 (per head)
        return True, "compressed-tensors gives every attention layer k_scale/v_scale"
    # sglang compressed_tensors.py:212-225 with is_supported_scheme at :1276-1285
    if scheme is None:
        return False, "compressed-tensors without kv_cache_scheme gets no KV-scale parameters"
    ok = (scheme.get("type") == "float" and scheme.get("num_bits") == 8
          and scheme.get("strategy") == "tensor" and scheme.get("symmetric", True)
          and not scheme.get("dynamic", False))
    if not ok:
        return False, (f"SGLang ignores kv_cache_scheme {_scheme_text(scheme)}: only static "
                       "symmetric per-tensor FP8 is supported (compressed_tensors.py:215-224)")
    return True, "compressed-tensors kv_cache_scheme (static per-tensor FP8)"


def _scheme_text(scheme: dict[str, Any]) -> str:
    keys = ("type", "num_bits", "strategy", "symmetric", "dynamic")
    return "{" + ", ".join(f"{k}={scheme[k]}" for k in keys if k in scheme) + "}"


def accepts_vector(engine: str, decl: QuantDecl) -> bool:
    """Per-head (vector) scales: only vLLM's compressed-tensors `attn_head` strategy takes them
    (vllm compressed_tensors.py:1157,1183-1230); a scalar parameter refuses anything else
    (vllm kv_cache.py:36-42; sglang weight_utils.py:1576-1586 asserts equal sizes)."""
    return (engine == "vllm" and decl.family == "compressed-tensors"
            and decl.scheme_strategy == "attn_head")
