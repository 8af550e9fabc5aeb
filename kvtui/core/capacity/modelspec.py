"""The KV-relevant shape of a model, read the way SGLang reads it.

Why a separate spec instead of passing config dicts around: every capacity mistake in the wild
(kv-capacity.md section 2) comes from reading a config field the wrong way: heads instead of KV
heads, hidden/heads instead of an explicit head_dim, every layer instead of the full-attention ones,
the top level instead of `text_config`. This module applies SGLang's rules once
(`ModelConfig.get_total_num_kv_heads`, `get_head_dim`, the Qwen3-Next layer rule, the MLA latent),
and everything downstream works on the result.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Layer kinds used in `ModelSpec.layer_kinds`.
FULL = "full"
SWA = "swa"
LINEAR = "linear"

_LINEAR_TYPES = {"linear_attention", "mamba", "mamba2", "gated_deltanet", "deltanet", "linear",
                 "conv", "short_conv", "ssm"}
_SWA_TYPES = {"sliding_attention", "sliding_window", "local_attention", "chunked_attention",
              "local"}
_FULL_TYPES = {"full_attention", "attention", "global_attention", "global", "full"}


@dataclass(frozen=True, slots=True)
class LinearAttention:
    """Gated-DeltaNet / Mamba2 state shape, as `Mamba2CacheParams` sizes it per request slot."""

    num_key_heads: int
    num_value_heads: int
    key_head_dim: int
    value_head_dim: int
    conv_kernel: int
    ssm_dtype: str = "fp32"   # SGLang default; config `mamba_ssm_dtype` or --mamba-ssm-dtype
    conv_dtype: str = "bf16"  # SGLang default (env SGLANG_MAMBA_CONV_DTYPE)


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """Everything the cell-size arithmetic needs, with where each value came from."""

    name: str
    num_layers: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    v_head_dim: int
    hidden_size: int | None = None
    hf_id: str | None = None
    architectures: tuple[str, ...] = ()
    model_type: str | None = None
    attention: str = "mha"  # "mha" (MHA/GQA/MQA) | "mla"
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    index_head_dim: int | None = None  # DSA (DeepSeek-V3.2 NSA) indexer key width
    layer_kinds: tuple[str, ...] = ()  # per layer: "full" | "swa" | "linear"
    sliding_window: int | None = None
    linear: LinearAttention | None = None
    max_position_embeddings: int | None = None
    model_dtype: str | None = None
    quant_method: str | None = None
    kv_cache_quant_algo: str | None = None
    nextn_layers: int = 0
    source: str = ""
    notes: tuple[str, ...] = ()
    field_sources: dict[str, str] = field(default_factory=dict)

    # -- derived layer sets ---------------------------------------------------------------
    def _kinds(self) -> tuple[str, ...]:
        return self.layer_kinds or (FULL,) * self.num_layers

    @property
    def full_layer_ids(self) -> tuple[int, ...]:
        return tuple(i for i, k in enumerate(self._kinds()) if k == FULL)

    @property
    def swa_layer_ids(self) -> tuple[int, ...]:
        return tuple(i for i, k in enumerate(self._kinds()) if k == SWA)

    @property
    def linear_layer_ids(self) -> tuple[int, ...]:
        return tuple(i for i, k in enumerate(self._kinds()) if k == LINEAR)

    @property
    def is_hybrid_linear(self) -> bool:
        return bool(self.linear_layer_ids)

    @property
    def has_swa(self) -> bool:
        return bool(self.swa_layer_ids)

    @property
    def is_mla(self) -> bool:
        return self.attention == "mla"

    @property
    def kv_dim(self) -> int:
        """MLA latent width per layer (kv_lora_rank + qk_rope_head_dim)."""
        return (self.kv_lora_rank or 0) + (self.qk_rope_head_dim or 0)

    def summary(self) -> str:
        if self.is_mla:
            shape = (f"MLA latent {self.kv_lora_rank}+{self.qk_rope_head_dim}, "
                     f"{self.num_layers} layers")
        else:
            shape = (f"{self.num_kv_heads} KV heads x ({self.head_dim}+{self.v_head_dim}), "
                     f"{len(self.full_layer_ids)} full-attention layers of {self.num_layers}")
            if self.has_swa:
                shape += f", {len(self.swa_layer_ids)} sliding-window"
            if self.is_hybrid_linear:
                shape += f", {len(self.linear_layer_ids)} linear-attention"
        return f"{self.name}: {shape}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "hf_id": self.hf_id, "architectures": list(self.architectures),
            "model_type": self.model_type, "attention": self.attention,
            "num_layers": self.num_layers, "num_attention_heads": self.num_attention_heads,
            "num_kv_heads": self.num_kv_heads, "head_dim": self.head_dim,
            "v_head_dim": self.v_head_dim, "kv_lora_rank": self.kv_lora_rank,
            "qk_rope_head_dim": self.qk_rope_head_dim, "index_head_dim": self.index_head_dim,
            "full_attention_layers": len(self.full_layer_ids),
            "swa_layers": len(self.swa_layer_ids), "linear_layers": len(self.linear_layer_ids),
            "sliding_window": self.sliding_window,
            "max_position_embeddings": self.max_position_embeddings,
            "kv_cache_quant_algo": self.kv_cache_quant_algo, "quant_method": self.quant_method,
            "source": self.source, "summary": self.summary(),
        }


# -- reading config.json ----------------------------------------------------------------------
def _first(d: dict[str, Any], *keys: str) -> Any:
    for k in keys:
        v = d.get(k)
        if v is not None:
            return v
    return None


def _dtype_name(raw: Any) -> str | None:
    if raw is None:
        return None
    text = str(raw).lower().replace("torch.", "")
    return {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32",
            "float": "fp32", "bf16": "bf16", "fp16": "fp16", "fp32": "fp32"}.get(text, text)


def _layer_kinds(text: dict[str, Any], n: int, model_type: str) -> tuple[str, ...]:
    """Which layers hold which cache, following SGLang rather than the `layer_types` list.

    Qwen3-Next/Qwen3.5 derive the layout from `full_attention_interval` and ignore `layer_types`
    (sglang configs/qwen3_next.py), so the interval wins whenever it is present.
    """
    interval = text.get("full_attention_interval")
    if interval is None and model_type.startswith(("qwen3_next", "qwen3_5")):
        interval = 4
    if interval:
        return tuple(FULL if (i + 1) % int(interval) == 0 else LINEAR for i in range(n))
    types = text.get("layer_types")
    if isinstance(types, list) and len(types) == n:
        out = []
        for t in types:
            t = str(t).lower()
            out.append(LINEAR if t in _LINEAR_TYPES else SWA if t in _SWA_TYPES else FULL)
        return tuple(out)
    if model_type.startswith("gemma3"):
        pattern = int(text.get("sliding_window_pattern") or 6)
        return tuple(SWA if (i + 1) % pattern else FULL for i in range(n))
    if model_type.startswith("gemma2") or model_type == "gpt_oss":
        return tuple(SWA if i % 2 == 0 else FULL for i in range(n))
    return (FULL,) * n


def _kv_quant_algo(cfg: dict[str, Any], quant_cfg: dict[str, Any] | None) -> tuple[
        str | None, str | None]:
    """(quant_method, kv_cache_quant_algo) as SGLang's quant configs see them (section 2.3)."""
    qc = cfg.get("quantization_config") or cfg.get("compression_config")
    method = None
    algo = None
    if isinstance(qc, dict):
        method = qc.get("quant_method") or qc.get("quant_algo")
        algo = qc.get("kv_cache_quant_algo")
        scheme = qc.get("kv_cache_scheme")
        if algo is None and isinstance(scheme, dict) and scheme.get("type") == "float" \
                and scheme.get("num_bits") == 8:
            algo = "FP8"
    if quant_cfg and not isinstance(qc, dict):
        section = quant_cfg.get("quantization", quant_cfg)
        if isinstance(section, dict):
            method = method or ("modelopt_" + str(section.get("quant_algo", "")).lower()
                                if section.get("quant_algo") else "modelopt")
            algo = algo or section.get("kv_cache_quant_algo")
    return (str(method) if method else None), (str(algo) if algo else None)


def from_hf_config(cfg: dict[str, Any], *, quant_cfg: dict[str, Any] | None = None,
                   name: str | None = None, source: str = "config.json") -> ModelSpec:
    """Build a spec from a Hugging Face config dict (fields may sit under `text_config`)."""
    text = dict(cfg)
    if isinstance(cfg.get("text_config"), dict):
        text.update(cfg["text_config"])
    arch = tuple(cfg.get("architectures") or text.get("architectures") or ())
    model_type = str(text.get("model_type") or cfg.get("model_type") or "")
    n = _first(text, "num_hidden_layers", "n_layer", "num_layers", "n_layers")
    heads = _first(text, "num_attention_heads", "n_head", "n_heads")
    if n is None or heads is None:
        raise ValueError(f"{source}: no num_hidden_layers / num_attention_heads")
    n, heads = int(n), int(heads)
    if n <= 0 or heads <= 0:
        raise ValueError(f"{source}: num_hidden_layers and num_attention_heads must be positive")
    # SGLang get_total_num_kv_heads: the first of these keys, multi_query -> 1, else all heads.
    kv = _first(text, "n_head_kv", "num_kv_heads", "num_key_value_heads",
                "multi_query_group_num")
    if kv is None:
        kv = 1 if text.get("multi_query") else heads
    hidden = _first(text, "hidden_size", "n_embd", "d_model")
    head_dim = text.get("head_dim")
    if head_dim is None:
        if hidden is None:
            raise ValueError(f"{source}: neither head_dim nor hidden_size")
        head_dim = int(hidden) // heads
    head_dim = int(head_dim)
    if head_dim <= 0:
        raise ValueError(f"{source}: head_dim must be positive")
    mla = text.get("kv_lora_rank") is not None
    v_head_dim = int(text.get("v_head_dim") or head_dim) if not mla else head_dim
    kinds = _layer_kinds(text, n, model_type)
    linear = None
    if LINEAR in kinds and text.get("linear_num_value_heads") is not None:
        linear = LinearAttention(
            num_key_heads=int(text["linear_num_key_heads"]),
            num_value_heads=int(text["linear_num_value_heads"]),
            key_head_dim=int(text.get("linear_key_head_dim") or 128),
            value_head_dim=int(text.get("linear_value_head_dim") or 128),
            conv_kernel=int(text.get("linear_conv_kernel_dim") or 4),
            ssm_dtype=_dtype_name(text.get("mamba_ssm_dtype")) or "fp32",
        )
    method, algo = _kv_quant_algo(cfg, quant_cfg)
    hf_id = cfg.get("_name_or_path") or None
    return ModelSpec(
        name=name or (hf_id or (arch[0] if arch else model_type) or "model"),
        hf_id=hf_id,
        num_layers=n, num_attention_heads=heads, num_kv_heads=int(kv), head_dim=head_dim,
        v_head_dim=v_head_dim, hidden_size=int(hidden) if hidden is not None else None,
        architectures=arch, model_type=model_type or None,
        attention="mla" if mla else "mha",
        kv_lora_rank=int(text["kv_lora_rank"]) if mla else None,
        qk_rope_head_dim=int(text.get("qk_rope_head_dim") or 0) if mla else None,
        index_head_dim=int(text["index_head_dim"]) if text.get("index_head_dim") else None,
        layer_kinds=kinds,
        sliding_window=text.get("sliding_window") if SWA in kinds else None,
        linear=linear,
        max_position_embeddings=_first(text, "max_position_embeddings", "max_seq_len",
                                       "seq_length"),
        model_dtype=_dtype_name(_first(text, "torch_dtype", "dtype")),
        quant_method=method, kv_cache_quant_algo=algo,
        nextn_layers=int(_first(text, "num_nextn_predict_layers", "mtp_num_hidden_layers") or 0),
        source=source,
    )


def from_path(path: str | os.PathLike[str]) -> ModelSpec:
    """A config.json file, or a model directory holding config.json (+ hf_quant_config.json)."""
    p = Path(path)
    cfg_path = p / "config.json" if p.is_dir() else p
    try:
        cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{cfg_path}: cannot read a model config ({exc})") from None
    quant = None
    qpath = cfg_path.parent / "hf_quant_config.json"
    if qpath.is_file():
        try:
            quant = json.loads(qpath.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            quant = None
    name = p.name if p.is_dir() else (cfg.get("_name_or_path") or cfg_path.parent.name)
    return from_hf_config(cfg, quant_cfg=quant, name=str(name), source=str(cfg_path))
