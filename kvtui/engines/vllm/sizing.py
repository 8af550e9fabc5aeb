"""vLLM's KV cache arithmetic: pages per layer kind, groups, blocks, and the figures it logs.

Read from the wheels: v1/kv_cache_interface.py (page sizes), v1/core/kv_cache_utils.py
(0.8.5-0.28.0) and v1/core/kv_cache_planning.py (0.33.0) for grouping and block counts,
model_executor/models/config.py (0.11.0) and platforms/interface.py (0.33.0) for the hybrid
block size, worker/cache_engine.py and worker/worker.py (0.6.3) for V0.

The shape of it, in V1:
- every KV layer's page holds `block_size` tokens: full and sliding-window attention
  `block_size x kv_heads_per_gpu x (head_dim + v_head_dim) x dtype bytes` (NVFP4: `d/2 + d/16`
  bytes per head dimension), MLA `block_size x (kv_lora_rank + qk_rope_head_dim) x dtype`
  (`fp8_ds_mla`: 656 bytes per token), KV heads per GPU `max(1, kv_heads // tp)`;
- a model with one layer kind is one group of all its layers; a hybrid model (sliding-window
  or Mamba/linear-attention layers) is cut into groups of `group_size` layers (the smallest
  kind's count; the largest when it is under 1.25x (0.14) / 1.5x (0.22+) the smallest), the
  last group of a kind padded ("Add N padding layers"); Mamba pages are padded to the
  attention page, whose block size is raised until one page holds a Mamba state;
- `num_blocks = available // (page x group_size)`; the log's "GPU KV cache size" is
  `num_blocks x block_size` (0.8-0.10 one group), `num_blocks // groups x block_size`
  (0.9-0.19), `int(concurrency x max_model_len)` (0.22+), with `concurrency = num_blocks /
  blocks one max_model_len request takes in every group` (0.10+; `tokens / max_model_len` in
  0.7-0.8).
V0: `num_gpu_blocks = kv_bytes // (block_size x attention layers x 2 x kv_heads x head_dim x
dtype)`, tokens `num_gpu_blocks x block_size`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kvtui.core.capacity import ModelSpec
from kvtui.engines.vllm.states import STATE_BYTES

GIB = 1 << 30
ELEM_BYTES: dict[str, int] = {"bf16": 2, "fp16": 2, "fp32": 4, "fp8_e4m3": 1, "fp8_e5m2": 1,
                              "fp8_ds_mla": 1, "nvfp4": 1}
DEFAULT_BLOCK = 16  # CacheConfig.DEFAULT_BLOCK_SIZE / platforms/cuda.py:127 (0.11.0)
MLA_BLOCK = 64  # "Forcing kv cache block size to 64 for FlashMLA backend." (cuda.py:167, 0.11)
KERNEL_ALIGN = 16  # the smallest kernel block of FlashInfer/FlashAttention (interface.py 0.33)


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def nvfp4_dim(d: int) -> int:
    """Packed bytes of one NVFP4 head vector: fp4 data + fp8 block scales
    (`nvfp4_kv_cache_full_dim`, utils/torch_utils.py:542 in 0.33.0)."""
    return d // 2 + d // 16


# -- rules by release -------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Rules:
    """How one vLLM era sizes and reports its pool."""

    name: str
    v0: bool = False
    tokens: str = "blocks"  # "blocks" | "per_group" | "concurrency"
    concurrency: str = "blocks"  # "tokens" (tokens / max_model_len) | "blocks"
    group_ratio: float | None = None  # use the largest kind's count under this x the smallest
    hybrid: bool = True  # groups by layer kind (the hybrid allocator; V1 0.9+)
    ssm_from_config: bool = False  # Qwen3.5's hf mamba_ssm_dtype honoured (0.22+)

    def describe(self) -> str:
        how = {"blocks": "num_blocks x block_size",
               "per_group": "num_blocks // groups x block_size",
               "concurrency": "int(concurrency x max_model_len)"}[self.tokens]
        return f"{self.name}: GPU KV cache size = {how}"


RULES: dict[str, Rules] = {
    "v0": Rules("V0 engine (0.5-0.10)", v0=True, tokens="blocks", concurrency="tokens",
                hybrid=False),
    "v1-0.7": Rules("V1 0.7-0.8", tokens="blocks", concurrency="tokens", hybrid=False),
    "v1-0.9": Rules("V1 0.9-0.13", tokens="per_group"),
    "v1-0.14": Rules("V1 0.14-0.21", tokens="per_group", group_ratio=1.25),
    "v1-0.22": Rules("V1 0.22+", tokens="concurrency", group_ratio=1.5, ssm_from_config=True),
}


def rules_for(lo: tuple[int, int, int], hi: tuple[int, int, int], v0: bool) -> list[Rules]:
    """The eras a release range may fall in, newest first."""
    if v0:
        return [RULES["v0"]]
    spans = [("v1-0.22", (0, 20, 0), (99, 0, 0)), ("v1-0.14", (0, 14, 0), (0, 21, 99)),
             ("v1-0.9", (0, 9, 0), (0, 13, 99)), ("v1-0.7", (0, 7, 0), (0, 8, 99))]
    out = [RULES[n] for n, a, b in spans if not (hi < a or lo > b)]
    return out or [RULES["v1-0.22"]]


# -- pages ------------------------------------------------------------------------------------
def kv_heads_per_gpu(spec: ModelSpec, tp: int) -> int:
    """ModelConfig.get_num_kv_heads (config/model.py:1179 in 0.11.0): 1 for MLA, else
    max(1, kv_heads // tp): GPUs beyond the KV heads hold a replica of one."""
    if spec.is_mla:
        return 1
    return max(1, spec.num_kv_heads // max(1, tp))


def attn_token_bytes(spec: ModelSpec, dtype: str, tp: int) -> int:
    """Bytes of one token in one attention layer's page on one GPU."""
    if spec.is_mla:
        if dtype == "fp8_ds_mla":
            return 656  # MLAAttentionSpec.page_size_bytes (kv_cache_interface.py, 0.11.0)
        return spec.kv_dim * ELEM_BYTES[dtype]
    h = kv_heads_per_gpu(spec, tp)
    if dtype == "nvfp4":
        return h * (nvfp4_dim(spec.head_dim) + nvfp4_dim(spec.v_head_dim))
    return h * (spec.head_dim + spec.v_head_dim) * ELEM_BYTES[dtype]


def mamba_state_bytes(spec: ModelSpec, tp: int, conv_dtype: str, ssm_dtype: str) -> int | None:
    """One request's state in one linear-attention layer (a Mamba page before padding):
    `MambaStateShapeCalculator.gated_delta_net_state_shape` (mamba_utils.py:272 in 0.33.0),
    conv `(k_dim*nk*2 + v_dim*nv) // tp x (kernel - 1)` and temporal `nv // tp x v_dim x k_dim`,
    each in its dtype (`mamba_cache_dtype`, `mamba_ssm_cache_dtype`; auto = the model dtype)."""
    lin = spec.linear
    if lin is None or not spec.linear_layer_ids:
        return None
    other = STATE_BYTES.get(lin.kind)
    if other is not None:  # another shape (states.py; coverage says where it applies)
        return other(spec, tp, conv_dtype, ssm_dtype)
    tp = max(1, tp)
    conv_dim = lin.key_head_dim * lin.num_key_heads * 2 + lin.value_head_dim * lin.num_value_heads
    conv = (conv_dim // tp) * (lin.conv_kernel - 1) * ELEM_BYTES.get(conv_dtype, 2)
    ssm = (lin.num_value_heads // tp) * lin.value_head_dim * lin.key_head_dim * \
        ELEM_BYTES.get(ssm_dtype, 2)
    return conv + ssm


# -- the layout -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Layout:
    """vLLM's KV cache layout for one dtype on one GPU, and the arithmetic behind it."""

    dtype: str
    block_size: int
    token_bytes: int  # one token, one attention layer
    page_bytes: int  # one block of one layer (Mamba pages padded to it)
    group_size: int  # layers per group = layers sharing one block table
    full_groups: int
    swa_groups: int
    mamba_groups: int
    sliding_window: int | None
    mamba_bytes: int | None  # one request's state in one linear layer, before padding
    rules: Rules
    lines: tuple[str, ...] = ()
    # Blocks one request holds in a Mamba group: 1 (mamba_cache_mode "none"), 2 ("align",
    # prefix caching on), plus one per speculative token (MambaSpec.max_memory_usage_bytes,
    # v1/kv_cache_interface.py:582 in 0.22.0).
    mamba_blocks: int = 1
    padding_layers: int = 0

    @property
    def groups(self) -> int:
        return self.full_groups + self.swa_groups + self.mamba_groups

    @property
    def block_bytes(self) -> int:
        """Bytes one block takes across the layers of a group: what `available` is divided by."""
        return self.page_bytes * self.group_size

    def blocks(self, available: int) -> int:
        return max(0, int(available // self.block_bytes))

    def blocks_per_request(self, max_model_len: int, max_batched: int | None = None) -> int:
        """Blocks one `max_model_len`-token request takes over every group (FullAttentionSpec,
        SlidingWindowSpec, MambaSpec max_memory_usage_bytes; kv_cache_interface.py 0.11.0)."""
        full = cdiv(max_model_len, self.block_size)
        swa = 0
        if self.swa_groups and self.sliding_window:
            n = min(self.sliding_window - 1 + (max_batched or 8192), max_model_len)
            swa = cdiv(n, self.block_size) + 1
        return self.full_groups * full + self.swa_groups * swa + \
            self.mamba_groups * self.mamba_blocks

    def concurrency(self, num_blocks: int, max_model_len: int,
                    max_batched: int | None = None) -> float:
        """vLLM's float, as it prints it and multiplies it (`tokens`)."""
        num, den = self.concurrency_ratio(num_blocks, max_model_len, max_batched)
        return num / den

    def concurrency_ratio(self, num_blocks: int, max_model_len: int,
                          max_batched: int | None = None) -> tuple[int, int]:
        """The concurrency as a ratio of integers, so a what-if cuts it exactly (`floor_fit`)."""
        if self.rules.concurrency == "tokens":
            return num_blocks * self.block_size, max_model_len
        return num_blocks, self.blocks_per_request(max_model_len, max_batched)

    def tokens(self, num_blocks: int, max_model_len: int | None,
               max_batched: int | None = None) -> int:
        """The "GPU KV cache size" vLLM of this era prints for `num_blocks`."""
        rule = self.rules.tokens
        if rule == "concurrency" and max_model_len:
            return int(self.concurrency(num_blocks, max_model_len, max_batched) * max_model_len)
        if rule == "per_group" or (rule == "concurrency" and not max_model_len):
            return num_blocks // max(1, self.groups) * self.block_size
        return num_blocks * self.block_size

    def to_dict(self) -> dict[str, Any]:
        return {"dtype": self.dtype, "block_size": self.block_size,
                "token_bytes": self.token_bytes, "page_bytes": self.page_bytes,
                "group_size": self.group_size, "groups": {"full": self.full_groups,
                                                          "sliding_window": self.swa_groups,
                                                          "mamba": self.mamba_groups},
                "block_bytes": self.block_bytes, "mamba_state_bytes": self.mamba_bytes,
                "mamba_blocks_per_request": self.mamba_blocks if self.mamba_groups else None,
                "padding_layers": self.padding_layers, "rules": self.rules.name,
                "work": list(self.lines)}


def _group_size(counts: list[int], ratio: float | None) -> int:
    small, large = min(counts), max(counts)
    if ratio is not None and large < small * ratio:
        return large
    return small


def default_partition(num_layers: int, pp: int) -> list[int]:
    """get_pp_indices' default split (distributed/utils.py:118-124 in 0.9.2 and 0.10.2,
    :123-129 in 0.14.0, :224-230 in 0.33.0): `layers // pp` each, and one more for each of the
    `layers % pp` stages before the last, counted back from the second-to-last (Llama's 32
    over PP 3: 11, 11, 10). VLLM_PP_LAYER_PARTITION replaces it, unlogged."""
    parts = [num_layers // pp] * pp
    for i in range(2, num_layers % pp + 2):
        parts[-i] += 1
    return parts


def stage_layers(spec: ModelSpec, pp: int,
                 partition: tuple[int, ...] | None = None) -> tuple[int, int, int]:
    """(full, sliding-window, linear) layers of the PP stage with the most KV layers: its layer
    range `[sum(parts[:r]), + parts[r])` (get_pp_indices) holds the kinds it holds. `partition`:
    the logged split ("Hidden layers were unevenly partitioned"), else the default one."""
    full = set(range(spec.num_layers)) if spec.is_mla else set(spec.full_layer_ids)
    swa, lin = set(spec.swa_layer_ids), set(spec.linear_layer_ids)
    if pp <= 1:
        return len(full), len(swa), len(lin)
    parts = list(partition) if partition and len(partition) == pp and \
        sum(partition) == spec.num_layers else default_partition(spec.num_layers, pp)
    best, start = (0, 0, 0), 0
    for n in parts:
        ids = set(range(start, start + n))
        counts = (len(full & ids), len(swa & ids), len(lin & ids))
        if sum(counts) > sum(best):
            best = counts
        start += n
    return best


def layout(spec: ModelSpec, dtype: str, tp: int, rules: Rules, *, block_size: int | None = None,
           model_dtype: str = "bf16", ssm_dtype: str | None = None, pp: int = 1,
           hybrid_allocator: bool = True, draft_layers: int = 0,
           mamba_blocks: int = 1, pp_partition: tuple[int, ...] | None = None) -> Layout:
    """The layout vLLM builds for `dtype` (`block_size`: the user's or the logged one, a floor
    for hybrids, which raise it to fit a Mamba state; `draft_layers`: full-attention layers a
    speculative draft (MTP) adds to the same cache, as the "Add N padding layers" count of a
    Qwen3.5 with MTP shows: 16 + 1 full against 48 linear)."""
    if dtype not in ELEM_BYTES:
        raise ValueError(f"no vLLM page size for KV dtype {dtype!r}")
    tp = max(1, tp)
    token = attn_token_bytes(spec, dtype, tp)
    # PP: a GPU holds one stage's layers, and every worker keeps the smallest num_blocks of all
    # (kv_cache_planning.py:1583 in 0.33.0): on GPUs of the same memory, the stage with the
    # most KV layers (`stage_layers`).
    n_full, n_swa, n_lin = stage_layers(spec, pp, pp_partition)
    n_full += draft_layers
    h = kv_heads_per_gpu(spec, tp)
    lines: list[str] = []
    if spec.is_mla:
        lines.append(f"MLA: one latent of {spec.kv_lora_rank} + {spec.qk_rope_head_dim} = "
                     f"{spec.kv_dim} per token and layer, the same on every GPU (not divided "
                     f"by TP {tp}): {token:,} B ({dtype})")
    else:
        rep = (f" (TP {tp} > {spec.num_kv_heads} KV heads: every GPU keeps a replica of one "
               "head)" if spec.num_kv_heads < tp else "")
        unit = (f"({spec.head_dim}/2 + {spec.head_dim}/16) x 2 (NVFP4 data + fp8 block scales)"
                if dtype == "nvfp4" else
                f"({spec.head_dim} + {spec.v_head_dim}) x {ELEM_BYTES[dtype]} B")
        lines.append(f"KV heads per GPU: max(1, {spec.num_kv_heads} // {tp}) = {h}{rep}; one "
                     f"token of one layer = {h} x {unit} = {token:,} B")
    mamba = None
    if n_lin and rules.hybrid:
        ssm = ssm_dtype or model_dtype
        mamba = mamba_state_bytes(spec, tp, model_dtype, ssm)
    if rules.v0 or not rules.hybrid or not (n_swa or mamba) or not hybrid_allocator:
        # One group of every KV layer (sliding-window layers sized like full ones).
        bs = block_size or (MLA_BLOCK if spec.is_mla and not rules.v0 else DEFAULT_BLOCK)
        layers = n_full + n_swa
        lines.append(f"one group of {layers} KV layers" + (
            f" ({n_swa} sliding-window layers sized like full ones)" if n_swa else "")
            + (f"; {n_lin} linear-attention layers keep their state outside the KV cache"
               if n_lin else ""))
        page = bs * token
        lines.append(f"block = {bs} tokens x {token:,} B x {layers} layers = "
                     f"{page * layers:,} B")
        return Layout(dtype, bs, token, page, layers, 1, 0, 0, None, None, rules, tuple(lines))
    # (draft layers and Mamba blocks only matter to a hybrid's groups)
    bs = block_size or DEFAULT_BLOCK
    if mamba is not None:
        # HybridAttentionMambaModelConfig (models/config.py:367, 0.11.0; interface.py:1098,
        # 0.33.0): attention block = align x cdiv(mamba page, align x attention token bytes).
        align = max(KERNEL_ALIGN, block_size or DEFAULT_BLOCK)
        need = align * cdiv(mamba, align * token)
        if bs < need:
            bs = need
        lines.append(f"Mamba state per request and layer: {mamba:,} B; attention block raised "
                     f"to {bs} tokens so one page ({bs} x {token:,} = {bs * token:,} B) holds it")
    page = bs * token
    kinds = [c for c in (n_full, n_swa, n_lin if mamba is not None else 0) if c]
    gsize = _group_size(kinds, rules.group_ratio)
    fg, sg, mg = (cdiv(n_full, gsize), cdiv(n_swa, gsize) if n_swa else 0,
                  cdiv(n_lin, gsize) if mamba is not None else 0)
    pad = sum(g * gsize - c for g, c in ((fg, n_full), (sg, n_swa), (mg, n_lin)) if g)
    if draft_layers:
        lines.append(f"{draft_layers} draft (MTP) attention layer(s) share the full-attention "
                     "groups")
    lines.append(f"groups of {gsize} layers: {fg} full-attention" + (
        f", {sg} sliding-window" if sg else "") + (f", {mg} linear-attention" if mg else "")
        + (f" ({pad} padding layers)" if pad else ""))
    lines.append(f"block = {bs} tokens x {token:,} B x {gsize} layers = {page * gsize:,} B")
    if mg:
        lines.append(f"a request holds {mamba_blocks} block(s) in each linear-attention group"
                     + (" (mamba_cache_mode align: prefix caching)" if mamba_blocks == 2 else ""))
    window = spec.sliding_window if n_swa else None
    return Layout(dtype, bs, token, page, gsize, fg, sg, mg, window, mamba, rules, tuple(lines),
                  mamba_blocks=mamba_blocks, padding_layers=pad)


def v0_cache_block(spec: ModelSpec, dtype: str, tp: int, block_size: int) -> int:
    """CacheEngine.get_cache_block_size (worker/cache_engine.py:102 in 0.6.3)."""
    layers = len(spec.full_layer_ids) + len(spec.swa_layer_ids)
    return block_size * attn_token_bytes(spec, dtype, tp) * layers
