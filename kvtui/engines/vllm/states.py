"""vLLM's recurrent states other than GDN's: one request's state in one layer, per family.

Why a module of its own: `sizing.mamba_state_bytes` is GDN's shape (Qwen3-Next / Qwen3.5), and
each other family asks `MambaStateShapeCalculator` for another shape; a family gets a formula
here only when it was read in the releases its verdict (`coverage`) allows.

Mamba2 (Nemotron-H), read in vLLM 0.33.0 and 0.34.0 (identical there):
`NemotronHForCausalLM.get_mamba_state_shape_from_config` (models/nemotron_h.py:780-810 in both)
passes intermediate = mamba_num_heads x mamba_head_dim, n_groups, ssm_state_size, conv_kernel to
`mamba2_state_shape` (layers/mamba/mamba_utils.py:186 in 0.33.0, :194 in 0.34.0): the groups
extended to TP when they do not divide (`extra_groups_for_head_shards`, :261 / :269), conv
`(intermediate + 2 x groups x state) // TP x (conv_kernel - 1)` in the conv dtype, temporal
`heads // TP x head_dim x state` in the SSM dtype. The SSM dtype `auto` becomes the config's
mamba_ssm_cache_dtype, else float32, for Nemotron-H (models/config.py:812 in 0.33.0, :1143-1163
in 0.34.0). The page is their sum (MambaSpec.page_size_bytes, state_alignment 1 without
ReplaySSM, v1/kv_cache_interface.py:1146-1162 in 0.34.0).

Mamba1 (Jamba), read in vLLM 0.33.0 and 0.34.0 (identical there):
`JambaForCausalLM.get_mamba_state_shape_from_config` (models/jamba.py) passes intermediate =
mamba_expand x hidden_size, mamba_d_state, mamba_d_conv to `mamba1_state_shape`
(layers/mamba/mamba_utils.py:179 in 0.34.0): conv (intermediate // TP) x (d_conv - 1),
temporal (intermediate // TP) x d_state; both in the model dtype unless
--mamba-cache-dtype / --mamba-ssm-cache-dtype say otherwise (`mamba1_state_dtype`, :72-81).

Lightning attention (MiniMax-Text-01 / M1), read in vLLM 0.22.0 (vLLM serves the family until
0.23.0 and refuses it after, registry.py `_PREVIOUSLY_SUPPORTED_MODELS` of 0.34.0):
`get_mamba_state_shape_from_config` (models/minimax_text_01.py:993-1009) passes
num_attention_heads and head_dim to `linear_attention_state_shape` (layers/mamba/
mamba_utils.py:130-137): one state of (heads // TP) x head_dim x head_dim in the model dtype
(`linear_attention_state_dtype`, :53-59, --mamba-cache-dtype auto).

Short convolution (LFM2), read in vLLM 0.33.0 and 0.34.0 (identical there):
`get_mamba_state_shape_from_config` passes intermediate = hf_config.conv_dim for
Lfm2ForCausalLM (models/lfm2.py:573-577 in both) and hf_config.hidden_size for
Lfm2MoeForCausalLM (models/lfm2_moe.py:563-567 in both) with conv_L_cache to
`short_conv_state_shape` (layers/mamba/mamba_utils.py:249-258 in 0.33.0, :257-266 in 0.34.0):
one conv state of divide(dim, TP) x (conv_L_cache - 1 + num_spec) in the mamba cache dtype,
auto = the model dtype (`short_conv_state_dtype`, :113-119 / :121-127). transformers'
Lfm2Config defines no conv_dim: vLLM reads the key the checkpoint's config.json carries.
"""

from __future__ import annotations

from kvtui.core.capacity import ModelSpec

ELEM = {"bf16": 2, "fp16": 2, "fp32": 4, "fp8_e4m3": 1, "fp8_e5m2": 1}
NEMOTRON_H_SSM_DEFAULT = "fp32"  # NemotronHForCausalLMConfig.DEFAULT_MAMBA_SSM_CACHE_DTYPE


def mamba2_state_bytes(spec: ModelSpec, tp: int, conv_dtype: str, ssm_dtype: str) -> int | None:
    """One request's Mamba2 state in one layer on one GPU, or None without a Mamba2 shape."""
    lin = spec.linear
    if lin is None or lin.kind != "mamba2":
        return None
    tp = max(1, tp)
    groups = lin.n_groups
    if groups % tp:
        groups += tp - groups  # extra_groups_for_head_shards
    conv_dim = lin.intermediate_size + 2 * groups * lin.state_size
    if conv_dim % tp or lin.num_heads % tp:
        return None  # vLLM's divide() asserts: it would refuse this TP
    conv = conv_dim // tp * (lin.conv_kernel - 1) * ELEM.get(conv_dtype, 2)
    ssm = lin.num_heads // tp * lin.head_dim * lin.state_size * ELEM.get(ssm_dtype, 4)
    return conv + ssm


def mamba1_state_bytes(spec: ModelSpec, tp: int, conv_dtype: str, ssm_dtype: str) -> int | None:
    """One request's Mamba1 state in one layer on one GPU, or None without a Mamba1 shape."""
    lin = spec.linear
    if lin is None or lin.kind != "mamba1":
        return None
    tp = max(1, tp)
    if lin.intermediate_size % tp:
        return None  # vLLM's divide() asserts
    local = lin.intermediate_size // tp
    return (local * (lin.conv_kernel - 1) * ELEM.get(conv_dtype, 2)
            + local * lin.state_size * ELEM.get(ssm_dtype, 2))


def lightning_state_bytes(spec: ModelSpec, tp: int, conv_dtype: str,
                          ssm_dtype: str) -> int | None:
    """One request's lightning-attention state in one layer on one GPU (the state is in the
    mamba cache dtype, `conv_dtype` here; `ssm_dtype` does not apply)."""
    lin = spec.linear
    if lin is None or lin.kind != "lightning":
        return None
    tp = max(1, tp)
    if lin.num_heads % tp:
        return None
    return lin.num_heads // tp * lin.head_dim * lin.head_dim * ELEM.get(conv_dtype, 2)


def short_conv_state_bytes(spec: ModelSpec, tp: int, conv_dtype: str,
                           ssm_dtype: str) -> int | None:
    """One request's short-conv state in one layer on one GPU (the conv alone, in the mamba
    cache dtype `conv_dtype`), or None when the config lacks the width vLLM reads."""
    lin = spec.linear
    if lin is None or lin.kind != "short_conv":
        return None
    tp = max(1, tp)
    dim = lin.head_dim if spec.arch.startswith("Lfm2Moe") else lin.conv_dim
    if not dim or dim % tp:
        return None  # no conv_dim (vLLM would fail on it) or divide() asserts
    return dim // tp * (lin.conv_kernel - 1) * ELEM.get(conv_dtype, 2)


# The state formula of each kind that is not GDN's (sizing.mamba_state_bytes asks here).
STATE_BYTES = {"mamba2": mamba2_state_bytes, "mamba1": mamba1_state_bytes,
               "lightning": lightning_state_bytes, "short_conv": short_conv_state_bytes}
