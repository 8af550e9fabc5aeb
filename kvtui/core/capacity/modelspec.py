"""The KV-relevant shape of a model, read the way SGLang reads it.

Why a separate spec instead of passing config dicts around: every capacity mistake in the wild
(kv-capacity.md section 2) comes from reading a config field the wrong way: heads instead of KV
heads, hidden/heads instead of an explicit head_dim, every layer instead of the full-attention ones,
the top level instead of `text_config`. This module applies SGLang's config rules once
(`ModelConfig.get_total_num_kv_heads`, the head_dim defaults, each hybrid family's layer layout,
the MLA latent, the DSA indexer), and everything downstream works on the result. The rules that
change between SGLang releases live behind the engine seam (`kvtui.engines.sglang.sizing`); what
is read here is the same in every release that supports the architecture (each rule cites 0.5.23
unless noted), and vLLM's sizing reads the same spec.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kvtui.core.checkpoint.facts import CheckpointFacts

# Layer kinds used in `ModelSpec.layer_kinds`.
FULL = "full"
SWA = "swa"
LINEAR = "linear"  # a recurrent-state layer without KV (GDN, Mamba2, KDA)
NONE = "none"  # neither KV nor state (NemotronH MLP / MoE layers)

_LINEAR_TYPES = {"linear_attention", "mamba", "mamba2", "gated_deltanet", "deltanet", "linear",
                 "conv", "short_conv", "ssm"}
_SWA_TYPES = {"sliding_attention", "sliding_window", "local_attention", "chunked_attention",
              "local"}

# Architectures SGLang serves with MLA, whatever the config says: model_config.py:1367-1395
# (0.5.23; the list only grows, so older releases are a subset). A config with kv_lora_rank and
# another architecture is read as MLA too (the MiniCPM3 / DeepSeek-VL2 / Kimi branches below it).
MLA_ARCHS = frozenset({
    "DeepseekV2ForCausalLM", "DeepseekV32ForCausalLM", "DeepseekV3ForCausalLM",
    "DeepseekV3ForCausalLMNextN", "Glm4MoeLiteForCausalLM", "GlmMoeDsaForCausalLM",
    "GlmMoeDsaForCausalLMNextN", "LongcatFlashForCausalLM", "MistralLarge3ForCausalLM",
    "KimiK25ForConditionalGeneration", "KimiVLForConditionalGeneration",
    "KimiLinearForCausalLM", "MiniCPM3ForCausalLM", "DeepseekVL2ForCausalLM",
})


@dataclass(frozen=True, slots=True)
class LinearAttention:
    """One recurrent-state layer's shape, as SGLang's `Mamba2StateShape.create` /
    `KimiLinearStateShape.create` take it (configs/mamba_utils.py:197-240, 322-360, 0.5.23).

    `kind` is "gdn" (Qwen3-Next / Qwen3.5), "mamba2" (NemotronH, Falcon-H1, Granite-4.0-H),
    "short_conv" (LFM2: a Mamba2 state of the conv alone), "mamba1" (Jamba), "lightning"
    (MiniMax-Text-01 / M1) or "kda" (Kimi-Linear). For GDN
    SGLang passes intermediate = value_dim x value_heads,
    n_groups = key heads, num_heads = value heads, head_dim = value_dim, state = key_dim
    (configs/qwen3_next.py:288-313, 0.5.23).
    """

    kind: str
    num_heads: int
    head_dim: int
    state_size: int
    n_groups: int
    intermediate_size: int
    conv_kernel: int
    ssm_dtype: str | None = None  # the config's mamba_ssm_dtype (read from SGLang 0.5.9)
    conv_dtype: str = "bf16"  # SGLANG_MAMBA_CONV_DTYPE default (configs/mamba_utils.py:68)
    # LFM2's config field conv_dim (0 when the config has none): vLLM's Lfm2ForCausalLM sizes
    # its conv state from it (models/lfm2.py:575, 0.33.0 and 0.34.0), SGLang from hidden_size
    conv_dim: int = 0

    # The GDN names the rest of kvtui used before the Mamba2 families arrived.
    @property
    def num_value_heads(self) -> int:
        return self.num_heads

    @property
    def num_key_heads(self) -> int:
        return self.n_groups

    @property
    def value_head_dim(self) -> int:
        return self.head_dim

    @property
    def key_head_dim(self) -> int:
        return self.state_size

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "num_heads": self.num_heads, "head_dim": self.head_dim,
                "state_size": self.state_size, "n_groups": self.n_groups,
                "intermediate_size": self.intermediate_size, "conv_kernel": self.conv_kernel,
                "ssm_dtype": self.ssm_dtype, "conv_dtype": self.conv_dtype,
                **({"conv_dim": self.conv_dim} if self.kind == "short_conv" else {})}


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
    index_head_dim: int | None = None  # DSA (DeepSeek-V3.2 / GLM-5) indexer key width
    index_topk: int | None = None  # DSA: SGLang only treats the model as DSA when it is set
    index_kpool: int = 1  # DSA: get_dsa_index_kpool (model_config.py:530, 0.5.23)
    indexer_types: tuple[str, ...] = ()  # DSA: "shared" layers reuse the previous top-k
    layer_kinds: tuple[str, ...] = ()  # per layer: "full" | "swa" | "linear" | "none"
    state_layers: tuple[int, ...] | None = None  # recurrent-state layers when not `linear` kinds
    sliding_window: int | None = None
    swa_num_kv_heads: int | None = None  # MiMo-V2: the SWA layers' own KV heads
    swa_head_dim: int | None = None
    swa_v_head_dim: int | None = None
    attention_chunk_size: int | None = None  # Llama-4 chunked attention
    linear: LinearAttention | None = None
    max_position_embeddings: int | None = None
    model_dtype: str | None = None
    quant_method: str | None = None
    kv_cache_quant_algo: str | None = None
    nextn_layers: int = 0
    # Gemma-3n / Gemma-4: the last `kv_shared_layers` layers read the KV of the last earlier
    # layer of their type and write none (num_kv_shared_layers); each engine says whether its
    # pool still counts them (vLLM gives them no cache spec, SGLang sizes every layer)
    kv_shared_layers: int = 0
    # the top-level model_type of a config whose text fields sit under text_config (Gemma-4's
    # "gemma4" wrapper); `model_type` is the text config's. SGLang maps Gemma-4's per-layer-type
    # shapes only for the wrapper's types (utils/hf_transformers/config.py:66-73, :311-312)
    wrapper_model_type: str | None = None
    kv_heads_from: str = ""  # which config attribute gave num_kv_heads (show-your-work)
    source: str = ""
    notes: tuple[str, ...] = ()
    field_sources: dict[str, str] = field(default_factory=dict)
    unsupported: str | None = None  # set when kvtui cannot size this family (said plainly)

    # -- derived layer sets ---------------------------------------------------------------
    def _kinds(self) -> tuple[str, ...]:
        return self.layer_kinds or (FULL,) * self.num_layers

    @property
    def arch(self) -> str:
        return self.architectures[0] if self.architectures else ""

    @property
    def full_layer_ids(self) -> tuple[int, ...]:
        return tuple(i for i, k in enumerate(self._kinds()) if k == FULL)

    @property
    def swa_layer_ids(self) -> tuple[int, ...]:
        return tuple(i for i, k in enumerate(self._kinds()) if k == SWA)

    @property
    def attention_layer_ids(self) -> tuple[int, ...]:
        """Every layer that holds KV of any kind (full or sliding-window)."""
        return tuple(i for i, k in enumerate(self._kinds()) if k in (FULL, SWA))

    @property
    def first_kv_shared_layer(self) -> int:
        """The first layer that reads another layer's KV (num_hidden_layers -
        num_kv_shared_layers); num_layers when none does."""
        return self.num_layers - self.kv_shared_layers

    @property
    def linear_layer_ids(self) -> tuple[int, ...]:
        if self.state_layers is not None:
            return self.state_layers
        return tuple(i for i, k in enumerate(self._kinds()) if k == LINEAR)

    @property
    def is_hybrid_linear(self) -> bool:
        return bool(self.linear_layer_ids) and self.linear is not None

    @property
    def has_swa(self) -> bool:
        return bool(self.swa_layer_ids)

    @property
    def is_mla(self) -> bool:
        return self.attention == "mla"

    @property
    def is_dsa(self) -> bool:
        """SGLang's `is_deepseek_dsa`: an MLA model with an indexer (index_topk set)."""
        return self.is_mla and self.index_topk is not None and bool(self.index_head_dim)

    @property
    def kv_dim(self) -> int:
        """MLA latent width per layer (kv_lora_rank + qk_rope_head_dim)."""
        return (self.kv_lora_rank or 0) + (self.qk_rope_head_dim or 0)

    def summary(self) -> str:
        if self.unsupported:
            return f"{self.name}: cannot model ({self.unsupported})"
        if self.is_mla:
            shape = (f"MLA latent {self.kv_lora_rank}+{self.qk_rope_head_dim}, "
                     f"{len(self.full_layer_ids)} KV layers of {self.num_layers}")
            if self.is_dsa:
                shape += f", DSA indexer {self.index_head_dim}"
        else:
            shape = (f"{self.num_kv_heads} KV heads x ({self.head_dim}+{self.v_head_dim}), "
                     f"{len(self.full_layer_ids)} full-attention layers of {self.num_layers}")
            if self.has_swa:
                shape += f", {len(self.swa_layer_ids)} sliding-window"
                if self.swa_num_kv_heads is not None:
                    shape += (f" ({self.swa_num_kv_heads} KV heads x ({self.swa_head_dim}+"
                              f"{self.swa_v_head_dim}))")
        if self.linear is not None and self.linear_layer_ids:
            shape += f", {len(self.linear_layer_ids)} {self.linear.kind.upper()} state layers"
        if self.kv_shared_layers:
            shape += (f", the last {self.kv_shared_layers} reuse an earlier layer's KV "
                      "(num_kv_shared_layers)")
        return f"{self.name}: {shape}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "hf_id": self.hf_id, "architectures": list(self.architectures),
            "model_type": self.model_type, "attention": self.attention,
            "num_layers": self.num_layers, "num_attention_heads": self.num_attention_heads,
            "num_kv_heads": self.num_kv_heads, "kv_heads_from": self.kv_heads_from,
            "head_dim": self.head_dim,
            "v_head_dim": self.v_head_dim, "kv_lora_rank": self.kv_lora_rank,
            "qk_rope_head_dim": self.qk_rope_head_dim, "index_head_dim": self.index_head_dim,
            "full_attention_layers": len(self.full_layer_ids),
            "swa_layers": len(self.swa_layer_ids), "linear_layers": len(self.linear_layer_ids),
            "sliding_window": self.sliding_window,
            "swa_num_kv_heads": self.swa_num_kv_heads, "swa_head_dim": self.swa_head_dim,
            "swa_v_head_dim": self.swa_v_head_dim,
            "linear": self.linear.to_dict() if self.linear else None,
            **({"kv_shared_layers": self.kv_shared_layers} if self.kv_shared_layers else {}),
            "max_position_embeddings": self.max_position_embeddings,
            "kv_cache_quant_algo": self.kv_cache_quant_algo, "quant_method": self.quant_method,
            "unsupported": self.unsupported,
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


def total_kv_heads(cfg: dict[str, Any], text: dict[str, Any], heads: int) -> tuple[int, str]:
    """(total KV heads, which attribute said so): `ModelConfig.get_total_num_kv_heads`,
    sglang 0.5.23 configs/model_config.py:1626-1690, in its order.

    1. `multi_query` means one KV head, unless a Falcon config sets new_decoder_architecture;
    2. MPT reads attn_config.kv_n_heads, DBRX attn_config.kv_n_heads (else all heads);
    3. nemotron-nas: heads // n_heads_in_group of the attention blocks (one value only);
    4. the first of n_head_kv, num_kv_heads, num_key_value_heads, multi_query_group_num,
       num_attention_groups (the last from 0.5.2; absent in 0.4.6 model_config.py:200-246);
    5. otherwise every attention head has its own KV.
    A key holding null counts as absent, as getattr(config, key, None) does.
    """
    model_type = str(cfg.get("model_type") or "")
    new_falcon = model_type in ("falcon", "RefinedWeb", "RefinedWebModel") and bool(
        cfg.get("new_decoder_architecture"))
    if not new_falcon and text.get("multi_query"):
        return 1, "multi_query"
    attn_cfg = cfg.get("attn_config")
    if model_type in ("mpt", "dbrx"):
        if isinstance(attn_cfg, dict) and attn_cfg.get("kv_n_heads") is not None:
            return int(attn_cfg["kv_n_heads"]), "attn_config.kv_n_heads"
        return int(cfg.get("num_attention_heads") or heads), "num_attention_heads"
    if model_type == "nemotron-nas":
        blocks = cfg.get("block_configs") or []
        groups = {int(b["attention"]["n_heads_in_group"]) for b in blocks
                  if isinstance(b, dict) and isinstance(b.get("attention"), dict)
                  and not b["attention"].get("no_op") and b["attention"].get("n_heads_in_group")}
        if len(groups) != 1:
            raise ValueError("nemotron-nas: variable GQA is not supported by SGLang")
        return heads // next(iter(groups)), "block_configs.attention.n_heads_in_group"
    for key in ("n_head_kv", "num_kv_heads", "num_key_value_heads", "multi_query_group_num",
                "num_attention_groups"):
        v = text.get(key)
        if v is not None:
            return int(v), key
    return heads, "num_attention_heads (no KV-head key)"


def _pattern_kinds(text: dict[str, Any], n: int, model_type: str,
                   arch: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[int, ...] | None]:
    """(layer kinds, explicit state-layer ids) following SGLang's per-family layout rules."""
    # Qwen3-Next / Qwen3.5: derived from full_attention_interval, layer_types ignored
    # (configs/qwen3_next.py:257-282 in 0.5.2, unchanged to 0.5.23).
    interval = text.get("full_attention_interval")
    if interval is None and model_type.startswith(("qwen3_next", "qwen3_5")):
        interval = 4
    if interval:
        return tuple(FULL if (i + 1) % int(interval) == 0 else LINEAR for i in range(n)), None
    # NemotronH: 'M' Mamba2, '*' attention, anything else (MLP '-', MoE 'E') neither
    # (configs/nemotron_h.py:409-422, 0.5.23).
    pattern = text.get("hybrid_override_pattern")
    if isinstance(pattern, str) and pattern:
        return tuple(LINEAR if c == "M" else FULL if c == "*" else NONE for c in pattern), None
    # Bailing MoE V2.5 (Ling/Ring 2.5, Ling-2.6): linear (lightning) attention unless
    # (i + 1) % layer_group_size == 0, all full when it is 0 (is_linear_layer,
    # models/bailing_moe_linear.py:68-74 in vLLM 0.33.0 and 0.34.0; default 1: none linear, :463)
    if "BailingMoeV2_5ForCausalLM" in arch:
        g = text.get("layer_group_size", 1)
        g = g if isinstance(g, int) else 0  # a per-layer list: not sized (`_bailing_why`)
        return tuple(LINEAR if g > 0 and (i + 1) % g else FULL for i in range(n)), None
    # Falcon-H1: attention and Mamba2 in every layer (configs/falcon_h1.py:288-299).
    if model_type == "falcon_h1" or any(a.startswith("FalconH1") for a in arch):
        return (FULL,) * n, tuple(range(n))
    # Kimi-Linear: 1-based kda_layers are KDA, the others MLA (configs/kimi_linear.py:158-170).
    lac = text.get("linear_attn_config")
    if isinstance(lac, dict) and isinstance(lac.get("kda_layers"), list):
        kda = {int(x) for x in lac["kda_layers"]}
        return tuple(LINEAR if (i + 1) in kda else FULL for i in range(n)), None
    # MiMo-V2: hybrid_layer_pattern, 1 = sliding window (configs/model_config.py
    # get_hybrid_layer_ids, 0.5.7+).
    hlp = text.get("hybrid_layer_pattern")
    if isinstance(hlp, list) and len(hlp) == n:
        return tuple(SWA if int(x) == 1 else FULL for x in hlp), None
    # MiniMax-Text-01 / M1: attn_type_list, 0 = lightning (linear) attention, 1 = softmax
    # (vLLM 0.22.0 model_executor/models/minimax_text_01.py:509); read so that no engine takes
    # the lightning layers for KV layers (neither sizes the family: engines' `coverage`).
    atl = text.get("attn_type_list")
    if isinstance(atl, list) and len(atl) == n:
        return tuple(FULL if int(x) == 1 else LINEAR for x in atl), None
    # Jamba: attention iff i % attn_layer_period == attn_layer_offset, the rest Mamba1
    # (transformers JambaConfig.layers_block_type, defaults 8 and 4, which vLLM's
    # models/jamba.py:322 reads; vLLM 0.34.0)
    if model_type == "jamba" or any(a.startswith("Jamba") for a in arch):
        period = int(text.get("attn_layer_period") or 8)
        offset = int(text.get("attn_layer_offset") or 4)
        return tuple(FULL if i % period == offset else LINEAR for i in range(n)), None
    # Llama-4: full attention iff (i + 1) % 4 == 0, the rest chunked (get_hybrid_layer_ids).
    if any(a.startswith("Llama4") for a in arch) or model_type.startswith("llama4"):
        return tuple(FULL if (i + 1) % 4 == 0 else SWA for i in range(n)), None
    # LFM2: full_attn_idxs when the config has no layer_types (the rest short-conv layers):
    # SGLang reads layer_types (configs/lfm2.py:42-50 in 0.5.23), which transformers' Lfm2Config
    # derives so when absent (configuration_lfm2.py: "full_attention" if i in full_attn_idxs)
    fai = text.get("full_attn_idxs")
    if model_type.startswith("lfm2") and isinstance(fai, list) and not text.get("layer_types"):
        full = {int(i) for i in fai}
        return tuple(FULL if i in full else LINEAR for i in range(n)), None
    types = text.get("layer_types")
    if isinstance(types, list) and len(types) == n:
        out = []
        for t in types:
            t = str(t).lower()
            out.append(LINEAR if t in _LINEAR_TYPES else SWA if t in _SWA_TYPES else FULL)
        return tuple(out), None
    if model_type.startswith("gemma3"):
        pattern_n = int(text.get("sliding_window_pattern") or 6)
        return tuple(SWA if (i + 1) % pattern_n else FULL for i in range(n)), None
    if model_type.startswith("gemma2") or model_type == "gpt_oss":
        return tuple(SWA if i % 2 == 0 else FULL for i in range(n)), None
    return (FULL,) * n, None


def _linear_state(text: dict[str, Any], kinds: tuple[str, ...], state_layers: Any,
                  model_type: str) -> LinearAttention | None:
    """The recurrent-state shape of the family's linear layers, or None when there are none."""
    if LINEAR not in kinds and not state_layers:
        return None
    ssm = _dtype_name(text.get("mamba_ssm_dtype"))
    if text.get("linear_num_value_heads") is not None:  # GDN
        nv, nk = int(text["linear_num_value_heads"]), int(text["linear_num_key_heads"])
        dv = int(text.get("linear_value_head_dim") or 128)
        dk = int(text.get("linear_key_head_dim") or 128)
        return LinearAttention("gdn", num_heads=nv, head_dim=dv, state_size=dk, n_groups=nk,
                               intermediate_size=dv * nv,
                               conv_kernel=int(text.get("linear_conv_kernel_dim") or 4),
                               ssm_dtype=ssm)
    lac = text.get("linear_attn_config")
    if isinstance(lac, dict) and lac.get("num_heads"):  # KDA
        h, d = int(lac["num_heads"]), int(lac["head_dim"])
        return LinearAttention("kda", num_heads=h, head_dim=d, state_size=d, n_groups=0,
                               intermediate_size=h * d,
                               conv_kernel=int(lac.get("short_conv_kernel_size") or 4),
                               ssm_dtype=ssm)
    if text.get("mamba_num_heads") is not None:  # NemotronH
        h, d = int(text["mamba_num_heads"]), int(text["mamba_head_dim"])
        return LinearAttention("mamba2", num_heads=h, head_dim=d,
                               state_size=int(text["ssm_state_size"]),
                               n_groups=int(_first(text, "n_groups", "mamba_n_groups") or 1),
                               intermediate_size=h * d,
                               conv_kernel=int(text.get("conv_kernel") or 4), ssm_dtype=ssm)
    bailing = "BailingMoeV2_5ForCausalLM" in (text.get("architectures") or ())
    if (isinstance(text.get("attn_type_list"), list) or bailing) and \
            text.get("num_attention_heads"):  # MiniMax / Bailing V2.5 lightning
        # MiniMaxText01ForCausalLM.get_mamba_state_shape_from_config (vLLM 0.22.0
        # models/minimax_text_01.py:993-1009; BailingMoeV25ForCausalLM the same, models/
        # bailing_moe_linear.py:768-786 in 0.34.0): one (heads, head_dim, head_dim) state
        h = int(text["num_attention_heads"])
        d = int(text.get("head_dim") or int(text.get("hidden_size") or 0) // h)
        return LinearAttention("lightning", num_heads=h, head_dim=d, state_size=d, n_groups=0,
                               intermediate_size=0, conv_kernel=1, ssm_dtype=ssm)
    if model_type == "jamba":  # Mamba1: intermediate = mamba_expand x hidden_size
        hidden = int(text.get("hidden_size") or 0)
        return LinearAttention("mamba1", num_heads=0, head_dim=0,
                               state_size=int(text.get("mamba_d_state") or 16), n_groups=0,
                               intermediate_size=int(text.get("mamba_expand") or 2) * hidden,
                               conv_kernel=int(text.get("mamba_d_conv") or 4), ssm_dtype=ssm)
    if model_type.startswith("lfm2") and text.get("conv_L_cache"):  # LFM2 short conv
        # Lfm2Config.mamba2_cache_params (configs/lfm2.py:59-96, 0.5.23): a Mamba2 state of
        # the conv alone, intermediate = head_dim = hidden_size, n_groups 1, state_size 0
        hidden = int(text.get("hidden_size") or 0)
        return LinearAttention("short_conv", num_heads=1, head_dim=hidden, state_size=0,
                               n_groups=1, intermediate_size=hidden,
                               conv_kernel=int(text["conv_L_cache"]), ssm_dtype=ssm,
                               conv_dim=int(text.get("conv_dim") or 0))
    if text.get("mamba_n_heads") is not None:  # Falcon-H1, Granite-4.0-H
        h = int(text["mamba_n_heads"])
        hidden = int(text.get("hidden_size") or 0)
        d_ssm = text.get("mamba_d_ssm") if model_type == "falcon_h1" else None
        inter = int(d_ssm) if d_ssm else int(text.get("mamba_expand") or 2) * hidden
        d_head = text.get("mamba_d_head")
        d = inter // h if d_head in (None, "auto") else int(d_head)
        return LinearAttention("mamba2", num_heads=h, head_dim=d,
                               state_size=int(text.get("mamba_d_state") or 128),
                               n_groups=int(text.get("mamba_n_groups") or 1),
                               intermediate_size=inter,
                               conv_kernel=int(text.get("mamba_d_conv") or 4), ssm_dtype=ssm)
    return None


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


def _head_dims(text: dict[str, Any], heads: int, hidden: Any, source: str) -> tuple[int, int]:
    """(head_dim, v_head_dim): the config's head_dim, else hidden // heads; v_head_dim 0 or absent
    means head_dim (model_config.py:1341-1355, 0.5.23). NemotronH spells it attention_head_dim."""
    head_dim = _first(text, "head_dim", "attention_head_dim")
    if head_dim is None:
        if hidden is None:
            raise ValueError(f"{source}: neither head_dim nor hidden_size")
        head_dim = int(hidden) // heads
    head_dim = int(head_dim)
    if head_dim <= 0:
        raise ValueError(f"{source}: head_dim must be positive")
    return head_dim, int(text.get("v_head_dim") or head_dim)


def _bailing_why(text: dict[str, Any]) -> str | None:
    """Why a Bailing V2.5 config is not the MLA + lightning form both engines' rules were read
    for: short_conv_kernel_size makes it a KDA hybrid to SGLang (use_kda, configs/
    bailing_hybrid.py:158, 0.5.23) and not to vLLM (models/bailing_moe_linear.py reads no such
    key, 0.34.0); a per-layer layer_group_size list is SGLang's schedule (:184-193), which
    vLLM's `(i + 1) % layer_group_size` cannot take; without kv_lora_rank no MLA layer."""
    if text.get("short_conv_kernel_size") is not None:
        return ("Bailing V2.5 with short_conv_kernel_size: a KDA hybrid to SGLang, a lightning "
                "one to vLLM; kvtui does not pick one")
    if not isinstance(text.get("layer_group_size", 1), int):
        return ("Bailing V2.5 with a per-layer layer_group_size: SGLang reads it as a "
                "schedule, vLLM as a period; kvtui does not pick one")
    if text.get("kv_lora_rank") is None:
        return "Bailing V2.5 without kv_lora_rank: no MLA layer shape to size"
    return None


# Gemma-4's text config (transformers Gemma4TextConfig): the defaults of the fields kvtui reads,
# configuration_gemma4.py:155-183 in transformers 5.19.0 (the release SGLang 0.5.23 pins; vLLM
# 0.34.0 takes >= 5.16.1, < 5.23), global_head_dim's default 512 at :210.
_GEMMA4_DEFAULTS = {"num_key_value_heads": 4, "head_dim": 256, "sliding_window": 512,
                    "global_head_dim": 512, "num_hidden_layers": 30}
_GEMMA4_LAYER_KEYS = frozenset({"head_dim", "num_key_value_heads"})


@dataclass(frozen=True, slots=True)
class _Gemma4:
    """Gemma-4's two attention shapes, as both engines read them (`_gemma4_attention`)."""

    kinds: tuple[str, ...]
    full_kv: int
    full_dim: int
    swa_kv: int
    swa_dim: int
    window: int
    shared: int
    kv_from: str
    why: str | None = None


def _gemma4_attention(tc: dict[str, Any], n: int) -> _Gemma4:
    """Gemma-4's full and sliding shapes from its text config, as transformers' Gemma4TextConfig
    derives them (5.19.0 configuration_gemma4.py:185-225) and both engines read them.

    - layer_types: the config's, else sliding unless (i + 1) % 6 == 0, and the last layer
      forced to full attention (:190-201);
    - use_bidirectional_attention "all" halves the window: sliding_window // 2 + 1 (:186-188);
    - full layers: head_dim global_head_dim (default 512), KV heads num_global_key_value_heads
      when attention_k_eq_v (else num_key_value_heads) (:210-222), or a per_layer_config the
      config carries instead; sliding layers: head_dim and num_key_value_heads.
    vLLM reads the same: gemma4_layer_config (transformers_utils/configs/gemma4.py:10-34 in
    0.30.0; models/gemma4.py:441-460 in 0.19.0, per_layer_config at :599-602 in 0.34.0);
    SGLang turns it into head_dim / num_key_value_heads (full) and swa_head_dim /
    swa_num_key_value_heads (sliding): utils/hf_transformers/config.py:115-148 (0.5.23),
    :176-199 (0.5.11)."""
    d = {k: tc.get(k, v) for k, v in _GEMMA4_DEFAULTS.items()}
    d = {k: (v if v is not None else _GEMMA4_DEFAULTS[k]) for k, v in d.items()}
    types = tc.get("layer_types")
    if not isinstance(types, list) or len(types) != n:
        types = ["sliding_attention" if (i + 1) % 6 else "full_attention" for i in range(n)]
    types = [str(t) for t in types]
    if types and types[-1] != "full_attention":
        types[-1] = "full_attention"  # "Forcing last layer to `full_attention`" (:197-201)
    kinds = tuple(SWA if t == "sliding_attention" else FULL for t in types)
    window = int(d["sliding_window"])
    if tc.get("use_bidirectional_attention") == "all":
        window = window // 2 + 1
    swa_kv, swa_dim = int(d["num_key_value_heads"]), int(d["head_dim"])
    shared = int(tc.get("num_kv_shared_layers") or 0)
    why = None
    k_eq_v = bool(tc.get("attention_k_eq_v"))
    glob_kv = tc.get("num_global_key_value_heads")
    per_layer = tc.get("per_layer_config")
    if isinstance(per_layer, dict) and per_layer:
        # transformers uses a config's own per_layer_config and ignores global_* (:212)
        overrides = {int(k): v for k, v in per_layer.items()}
        full_over = [overrides.get(i) or {} for i, k in enumerate(kinds) if k == FULL]
        bad = [i for i, v in overrides.items()
               if not isinstance(v, dict) or set(v) - _GEMMA4_LAYER_KEYS
               or (0 <= i < n and kinds[i] != FULL and v)]
        shapes = {(int(v.get("head_dim", swa_dim)), int(v.get("num_key_value_heads", swa_kv)))
                  for v in full_over if isinstance(v, dict)}
        if bad or len(shapes) != 1:
            why = ("Gemma-4 with a per_layer_config that gives sliding layers, or full layers "
                   "unlike each other, their own shape: SGLang carries one shape per layer "
                   "type (utils/hf_transformers/config.py:79-112, 0.5.23)")
            shapes = {(swa_dim, swa_kv)}
        full_dim, full_kv = shapes.pop()
        kv_from = "per_layer_config.num_key_value_heads (full layers)"
    else:
        full_dim = int(tc.get("global_head_dim") or d["global_head_dim"])
        if k_eq_v and glob_kv is not None:
            full_kv, kv_from = int(glob_kv), "num_global_key_value_heads (attention_k_eq_v)"
        else:
            full_kv, kv_from = swa_kv, "num_key_value_heads"
        if not k_eq_v and glob_kv is not None and int(glob_kv) != swa_kv:
            why = ("Gemma-4 with num_global_key_value_heads but not attention_k_eq_v: vLLM and "
                   "SGLang 0.5.23 (transformers 5.19's per_layer_config) give the full layers "
                   "num_key_value_heads, SGLang 0.5.11-0.5.19 num_global_key_value_heads "
                   "(utils/hf_transformers/config.py:181-193 in 0.5.11, :171-183 in 0.5.19): "
                   "kvtui does not pick one")
    if shared:
        producers = set(kinds[:n - shared])
        if shared >= n or not set(kinds) <= producers:
            why = ("Gemma-4 whose KV-shared layers have no earlier layer of their type to read "
                   "from (transformers refuses it, configuration_gemma4.py kv_sharing_modes)")
    return _Gemma4(kinds, full_kv, full_dim, swa_kv, swa_dim, window, shared, kv_from, why)


def from_hf_config(cfg: dict[str, Any], *, quant_cfg: dict[str, Any] | None = None,
                   name: str | None = None, source: str = "config.json") -> ModelSpec:
    """Build a spec from a Hugging Face config dict (fields may sit under `text_config`)."""
    if not isinstance(cfg, dict):
        raise ValueError(f"{source}: a model config must be a JSON object")
    text = dict(cfg)
    if isinstance(cfg.get("text_config"), dict):
        text.update(cfg["text_config"])
    arch = tuple(str(a) for a in (cfg.get("architectures") or text.get("architectures") or ()))
    model_type = str(text.get("model_type") or cfg.get("model_type") or "")
    heads = _first(text, "num_attention_heads", "n_head", "n_heads")
    n = _first(text, "num_hidden_layers", "n_layer", "num_layers", "n_layers")
    pattern = text.get("hybrid_override_pattern")
    if isinstance(pattern, str) and pattern:
        n = len(pattern)  # NemotronH: num_hidden_layers is len(layers_block_type)
    if n is None or heads is None:
        raise ValueError(f"{source}: no num_hidden_layers / num_attention_heads")
    n, heads = int(n), int(heads)
    if n <= 0 or heads <= 0:
        raise ValueError(f"{source}: num_hidden_layers and num_attention_heads must be positive")
    why_not = None
    if "LongcatFlashForCausalLM" in arch:
        # Two MLA attentions per decoder layer: SGLang counts num_hidden_layers (else
        # num_layers, configs/longcat_flash.py:81-83) x 2 attention layers (configs/
        # model_config.py:1583-1584, 0.5.23); vLLM builds num_layers decoder layers of two
        # (models/longcat_flash.py:267-286, 396, vLLM 0.34.0). The same count when the config
        # gives num_layers alone (or both equal); else the engines differ and neither is taken.
        hidden_n, decoder_n = text.get("num_hidden_layers"), text.get("num_layers")
        if hidden_n is not None and decoder_n is not None and int(hidden_n) != int(decoder_n):
            why_not = (f"LongCat-Flash: the config gives num_hidden_layers {hidden_n} and "
                           f"num_layers {decoder_n}: SGLang counts 2 x {hidden_n} KV layers, "
                           f"vLLM 2 x {decoder_n}; kvtui does not pick one")
        n *= 2
    if "BailingMoeV2_5ForCausalLM" in arch:
        why_not = _bailing_why(text)
    kv, kv_from = total_kv_heads(cfg, text, heads)
    hidden = _first(text, "hidden_size", "n_embd", "d_model")
    gemma4 = None
    if model_type == "gemma4_text":
        # the text fields of the wrapper's text_config alone: transformers builds
        # Gemma4TextConfig from text_config, whatever the wrapper's own keys say
        tc = cfg["text_config"] if isinstance(cfg.get("text_config"), dict) else cfg
        gemma4 = _gemma4_attention(tc, n)
        kv, kv_from = gemma4.full_kv, gemma4.kv_from
        text = {**text, "head_dim": gemma4.full_dim, "v_head_dim": gemma4.full_dim}
        why_not = why_not or gemma4.why
    head_dim, v_head_dim = _head_dims(text, heads, hidden, source)
    # SGLang picks MLA by architecture (MLA_ARCHS); every one of them declares kv_lora_rank, and
    # no MHA family does, so the key decides for architectures the list does not know yet.
    mla = text.get("kv_lora_rank") is not None
    kinds, state_layers = _pattern_kinds(text, n, model_type, arch)
    if gemma4 is not None:
        kinds = gemma4.kinds
    linear = _linear_state(text, kinds, state_layers, model_type)
    method, algo = _kv_quant_algo(cfg, quant_cfg)
    hf_id = cfg.get("_name_or_path") or None
    swa_kv = text.get("swa_num_key_value_heads")
    swa_dims = (int(text["swa_head_dim"]) if text.get("swa_head_dim") else None,
                int(text["swa_v_head_dim"]) if text.get("swa_v_head_dim") else None)
    window = _first(text, "sliding_window", "sliding_window_size",
                    "attention_chunk_size") if SWA in kinds else None
    if gemma4 is not None:
        swa_kv, swa_dims = gemma4.swa_kv, (gemma4.swa_dim, gemma4.swa_dim)
        window = gemma4.window if SWA in kinds else None
    indexer_types = text.get("indexer_types")
    return ModelSpec(
        name=name or (hf_id or (arch[0] if arch else model_type) or "model"),
        hf_id=hf_id,
        num_layers=n, num_attention_heads=heads, num_kv_heads=kv, head_dim=head_dim,
        v_head_dim=head_dim if mla else v_head_dim,
        hidden_size=int(hidden) if hidden is not None else None,
        architectures=arch, model_type=model_type or None,
        attention="mla" if mla else "mha",
        kv_lora_rank=int(text["kv_lora_rank"]) if mla else None,
        qk_rope_head_dim=int(text.get("qk_rope_head_dim") or 0) if mla else None,
        index_head_dim=int(text["index_head_dim"]) if text.get("index_head_dim") else None,
        index_topk=int(text["index_topk"]) if text.get("index_topk") is not None else None,
        index_kpool=int(text.get("index_kpool") or 1),
        indexer_types=tuple(str(t) for t in indexer_types) if isinstance(
            indexer_types, list) else (),
        layer_kinds=kinds, state_layers=state_layers,
        sliding_window=window,
        swa_num_kv_heads=int(swa_kv) if swa_kv is not None else None,
        swa_head_dim=swa_dims[0],
        swa_v_head_dim=swa_dims[1],
        attention_chunk_size=text.get("attention_chunk_size"),
        linear=linear,
        max_position_embeddings=_first(text, "max_position_embeddings", "max_seq_len",
                                       "seq_length"),
        model_dtype=_dtype_name(_first(text, "torch_dtype", "dtype")),
        quant_method=method, kv_cache_quant_algo=algo,
        nextn_layers=int(_first(text, "num_nextn_predict_layers", "mtp_num_hidden_layers") or 0),
        kv_shared_layers=gemma4.shared if gemma4 is not None else 0,
        wrapper_model_type=str(cfg["model_type"]) if isinstance(cfg.get("text_config"), dict)
        and cfg.get("model_type") else None,
        kv_heads_from=kv_from,
        source=source,
        unsupported=why_not,
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
    try:
        return from_hf_config(cfg, quant_cfg=quant, name=str(name), source=str(cfg_path))
    except (TypeError, KeyError, ZeroDivisionError) as exc:
        raise ValueError(f"{cfg_path}: not a model config SGLang could read ({exc})") from None


def from_checkpoint(checkpoint: CheckpointFacts | None,
                    notes: list[str]) -> tuple[ModelSpec, str] | None:
    """The spec of the checkpoint's own config.json and why, for either engine's calculator;
    None when none was read, or when it is not usable (a note then says why)."""
    if checkpoint is None or not checkpoint.model_config:
        return None
    try:
        spec = from_hf_config(checkpoint.model_config,
                              name=str(checkpoint.model_path or "checkpoint"),
                              source=f"config.json on {checkpoint.source or '?'}")
    except (ValueError, TypeError, ZeroDivisionError) as exc:
        notes.append(f"checkpoint config.json not usable: {exc}")
        return None
    return spec, f"read from the checkpoint's config.json ({spec.source})"
