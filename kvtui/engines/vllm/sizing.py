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
MLA_HYBRID_ALIGN = 128  # an MLA + Mamba hybrid's block alignment (0.33.0+, `layout`)
KERNEL_ALIGN = 16  # the smallest kernel block of FlashInfer/FlashAttention (interface.py 0.33)
# max_num_batched_tokens of the API server on a 70-160 GiB GPU other than an A100
# (`EngineArgs.get_batch_defaults`, engine/arg_utils.py:2462-2465 in 0.26.0, :2989-2992 in
# 0.33.0, :3026-3029 in 0.34.0); 2048 on smaller GPUs and A100s, 16384 on >= 160 GiB from 0.28
# (0.33.0 :2973-2977). `batch_token_defaults` orders them by the GPU when its memory is known.
DEFAULT_BATCHED = 8192
# Tokens in flight, per request, that a sliding-window or chunked-local group reserves for:
# one max_num_batched_tokens up to 0.25 (SlidingWindowSpec.max_memory_usage_bytes,
# v1/kv_cache_interface.py:200-214 in 0.11.0, :464 in 0.22.0, 0.25.0); from 0.26
# `VllmConfig.max_in_flight_tokens` = max_concurrent_batches x max_num_batched_tokens
# (config/vllm.py:512-530 in 0.26.0, :588-609 in 0.33.0, :560-575 in 0.34.0;
# kv_cache_interface.py:503 in 0.26.0, :919-955 in 0.33.0).
IN_FLIGHT_SINCE = (0, 26, 0)
# Async scheduling overlaps pp + 1 batches on every runner from 0.34 (config/vllm.py:560-566);
# in 0.26-0.33 the V1 model runner keeps 2 at PP 1 and PP batches beyond (:588-598 in 0.33.0).
ASYNC_PP_PLUS_ONE = (0, 34, 0)
# Chunked local attention (Llama-4) turns the hybrid KV cache manager off by default ("There is
# a latency regression when using chunked local attention with the hybrid KV cache manager.
# Disabling it, by default.", config/__init__.py:3542-3556 in 0.10.2, :513-528 in 0.11.0,
# config/vllm.py:920-925 in 0.12.0) while VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE
# defaults to "0" (envs.py:1205 in 0.10.2, :1391 in 0.11.0, :1425 in 0.12.0, :1433 in
# 0.13.0; 0.9 was not read and is taken to do the same); its default is
# "1" from 0.14.0 (envs.py:1469; :1717 in 0.22.0, :1932 in 0.33.0, :2041 in 0.34.0). Turned
# off, every chunked layer is sized as a full-attention one (`unify_hybrid_kv_cache_specs`,
# v1/core/kv_cache_utils.py:1100-1140 in 0.11.0).
CHUNKED_HYBRID_SINCE = (0, 14, 0)
# A sliding-window layer's own block size before its page is unified with the others: the
# cache's block size up to 0.25 (model_executor/layers/attention/attention.py:539-547 in
# 0.19.0), the backend's smallest kernel block in 0.26-0.29 (`_largest_kernel_block_within`
# with no page budget, :95-121 and :638-666 in 0.26.0, :634 in 0.29.0; 16 for FLASH_ATTN and
# TRITON_ATTN on CUDA, MultipleOf(16)), the largest kernel block within the cache block's page
# that divides it from 0.30 (:648-649 in 0.30.0; :101-145, :668-693 in 0.34.0): the cache's
# block size for a multiple of 16.
SW_SMALLEST_KERNEL = ((0, 26, 0), (0, 29, 99))
# Pages that do not divide the largest one are padded to it from 0.26 (non-MLA attention,
# `unify_kv_cache_spec_page_size`, v1/core/kv_cache_utils.py:1067-1125 in 0.26.0,
# kv_cache_planning.py:392-452 in 0.34.0); 0.19-0.25 raise NotImplementedError (:914-950 in
# 0.19.0).
PAGE_PADDING_SINCE = (0, 26, 0)


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


# The architectures whose sliding layers' own shape was read in vLLM (another family's swa_*
# config fields are not taken: MiMo-V2 is not modelled, coverage.py)
OWN_SWA_SHAPE = frozenset({"Gemma4ForCausalLM", "Gemma4ForConditionalGeneration"})


def swa_token_bytes(spec: ModelSpec, dtype: str, tp: int) -> int:
    """Bytes of one token in one sliding-window layer's page on one GPU: Gemma-4's sliding
    layers have their own KV heads and head_dim (num_key_value_heads x head_dim,
    per_layer_config / gemma4_layer_config, models/gemma4.py:599-602 in 0.34.0, :441-460 in
    0.19.0); every other model's are a full layer's (`attn_token_bytes`)."""
    if spec.is_mla or spec.arch not in OWN_SWA_SHAPE or (
            spec.swa_num_kv_heads is None and spec.swa_head_dim is None):
        return attn_token_bytes(spec, dtype, tp)
    heads = spec.swa_num_kv_heads if spec.swa_num_kv_heads is not None else spec.num_kv_heads
    h = max(1, heads // max(1, tp))
    d = spec.swa_head_dim or spec.head_dim
    dv = spec.swa_v_head_dim or d
    if dtype == "nvfp4":
        return h * (nvfp4_dim(d) + nvfp4_dim(dv))
    return h * (d + dv) * ELEM_BYTES[dtype]


def indexer_token_bytes(spec: ModelSpec) -> int:
    """Bytes of one token in a DSA layer's indexer key cache (DeepSeek-V3.2), the same on every
    GPU: `DeepseekV32IndexerCache(head_dim=index_head_dim + index_head_dim // 128 * 4,
    dtype=uint8)`, an MLAAttentionSpec of one head and max_tp_shards=1 (fp8 keys and an fp32
    scale per 128 values; model_executor/models/deepseek_v2.py:770-775 in 0.11.0, :638-668 and
    :731-736 in 0.33.0). vLLM builds one for every layer of a config with `index_topk`
    (`is_v32`, :1138-1169 in 0.33.0; index_topk_freq / index_topk_pattern, which kvtui does not
    read, can leave layers without one); absent from the 0.10.2 wheel."""
    if not spec.is_dsa or not spec.index_head_dim:
        return 0
    d = int(spec.index_head_dim)
    return d + d // 128 * 4


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
    # Tokens in flight a sliding-window / chunked group reserves for: `batches` scheduler
    # batches of `batch_tokens` (max_num_batched_tokens) each (IN_FLIGHT_SINCE).
    batches: int = 1
    batch_tokens: int = DEFAULT_BATCHED
    chunk: int | None = None  # the windowed groups are chunked local attention of this size
    indexer_bytes: int = 0  # one token of one layer's DSA indexer cache, inside `page_bytes`
    # Sliding layers of their own page shape (Gemma-4): one token of one sliding layer, and
    # the block sizes vLLM gives the full and the sliding groups once it has unified their
    # pages (0: `token_bytes`, `block_size`)
    swa_token_bytes: int = 0
    full_block: int = 0
    swa_block: int = 0
    shared_layers: int = 0  # KV-shared layers, which hold no cache of their own

    @property
    def groups(self) -> int:
        return self.full_groups + self.swa_groups + self.mamba_groups

    @property
    def full_block_size(self) -> int:
        """Tokens per block of a full-attention group."""
        return self.full_block or self.block_size

    @property
    def swa_block_size(self) -> int:
        """Tokens per block of a sliding-window (or chunked) group."""
        return self.swa_block or self.block_size

    @property
    def report_block(self) -> int:
        """The block size 0.9-0.21 multiply the blocks per group by ("GPU KV cache size" =
        num_blocks // groups x the smallest group block size, `_report_kv_cache_config`,
        v1/core/kv_cache_utils.py:1287-1306 in 0.19.0)."""
        if self.swa_groups:
            return min(self.full_block_size, self.swa_block_size) if self.full_groups \
                else self.swa_block_size
        return self.block_size

    @property
    def block_bytes(self) -> int:
        """Bytes one block takes across the layers of a group: what `available` is divided by."""
        return self.page_bytes * self.group_size

    def blocks(self, available: int) -> int:
        return max(0, int(available // self.block_bytes))

    def in_flight(self, max_batched: int | None = None) -> int:
        """Tokens scheduled but not settled that a windowed group keeps blocks for
        (`max_in_flight_tokens`, config/vllm.py:601-609 in 0.33.0): `batches` batches of
        `max_batched` (the layout's own `batch_tokens` when None)."""
        return self.batches * (max_batched or self.batch_tokens)

    def blocks_per_request(self, max_model_len: int, max_batched: int | None = None) -> int:
        """Blocks one `max_model_len`-token request takes over every group (FullAttentionSpec,
        MambaSpec max_memory_usage_bytes; kv_cache_interface.py 0.11.0). Sliding window:
        cdiv(min(window - 1 + in flight, len), block) + 1; chunked local attention:
        cdiv(min(chunk + in flight, len), block) (`max_admission_blocks_per_request`,
        v1/kv_cache_interface.py:865-955 in 0.33.0; :175-214 in 0.11.0 with one batch)."""
        full = cdiv(max_model_len, self.full_block_size)
        swa = 0
        if self.swa_groups and self.chunk:
            n = min(self.chunk + self.in_flight(max_batched), max_model_len)
            swa = cdiv(n, self.swa_block_size)
        elif self.swa_groups and self.sliding_window:
            n = min(self.sliding_window - 1 + self.in_flight(max_batched), max_model_len)
            swa = cdiv(n, self.swa_block_size) + 1
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
            return num_blocks // max(1, self.groups) * self.report_block
        return num_blocks * self.block_size

    def to_dict(self) -> dict[str, Any]:
        return {"dtype": self.dtype, "block_size": self.block_size,
                "token_bytes": self.token_bytes, "page_bytes": self.page_bytes,
                **({"indexer_token_bytes": self.indexer_bytes} if self.indexer_bytes else {}),
                **({"swa_token_bytes": self.swa_token_bytes,
                    "block_sizes": {"full": self.full_block_size,
                                    "sliding_window": self.swa_block_size}}
                   if self.swa_token_bytes else {}),
                **({"kv_shared_layers": self.shared_layers} if self.shared_layers else {}),
                "group_size": self.group_size, "groups": {"full": self.full_groups,
                                                          "sliding_window": self.swa_groups,
                                                          "mamba": self.mamba_groups},
                "block_bytes": self.block_bytes, "mamba_state_bytes": self.mamba_bytes,
                "mamba_blocks_per_request": self.mamba_blocks if self.mamba_groups else None,
                "padding_layers": self.padding_layers, "rules": self.rules.name,
                **({"in_flight_tokens": self.in_flight(), "batches": self.batches,
                    "max_num_batched_tokens": self.batch_tokens}
                   if self.swa_groups else {}),
                **({"attention_chunk_size": self.chunk} if self.chunk and self.swa_groups
                   else {}),
                "work": list(self.lines)}


def in_flight_batches(lo: tuple[int, int, int], hi: tuple[int, int, int], pp: int,
                      async_scheduling: bool | None) -> list[int]:
    """The scheduler batches in flight (`max_concurrent_batches`) the releases lo..hi may
    reserve windowed blocks for, the newest release's first. Async scheduling is on unless the
    log says otherwise: `async_scheduling: bool | None = None` resolved to True unless a pooling
    model, an executor without it or an incompatible option turns it off (config/scheduler.py
    :158 and config/vllm.py:1107 in 0.26.0; :211 and :1685-1719 in 0.33.0; :1637 in 0.34.0);
    PP with the V1 model runner is one such option (0.33.0 :1651-1664)."""
    pp = max(1, pp)
    out: list[int] = []
    if hi >= IN_FLIGHT_SINCE:
        if async_scheduling is False:
            out.append(pp)
        elif lo >= ASYNC_PP_PLUS_ONE:
            out.append(pp + 1)
        elif pp == 1:
            out.append(2)
        else:
            # the V1 model runner turns async off under PP (pp); the V2 one keeps pp + 1
            out.extend([pp + 1, pp] if hi >= ASYNC_PP_PLUS_ONE else [pp, pp + 1])
    if lo < IN_FLIGHT_SINCE:
        out.append(1)
    return list(dict.fromkeys(out))


def chunked_hybrid(lo: tuple[int, int, int], hi: tuple[int, int, int]) -> list[bool]:
    """Whether the hybrid KV cache manager covers chunked local attention by default in lo..hi
    (CHUNKED_HYBRID_SINCE), the newest release's answer first."""
    return ([True] if hi >= CHUNKED_HYBRID_SINCE else []) + \
        ([False] if lo < CHUNKED_HYBRID_SINCE else [])


def batch_token_defaults(hi: tuple[int, int, int], total_gib: float | None) -> list[int]:
    """vLLM's API-server max_num_batched_tokens by GPU tier (DEFAULT_BATCHED), the one the
    GPU's memory points to first (an A100's 80 GiB takes 2048: the name is not logged)."""
    tiers = [DEFAULT_BATCHED, 2048] + ([16384] if hi >= (0, 28, 0) else [])
    if total_gib is not None:
        if total_gib >= 160 and hi >= (0, 28, 0):
            first = 16384
        elif total_gib >= 70:
            first = DEFAULT_BATCHED
        else:
            first = 2048
        tiers.remove(first)
        tiers.insert(0, first)
    return tiers


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
    # an MLA model's every layer is an MLA layer (LongCat's num_layers counts its two per
    # decoder layer), but an MLA hybrid's (Bailing V2.5) are its full layers only
    full = set(range(spec.num_layers)) if spec.is_mla and not spec.linear_layer_ids else \
        set(spec.full_layer_ids)
    swa, lin = set(spec.swa_layer_ids), set(spec.linear_layer_ids)
    if spec.kv_shared_layers:
        # a layer with kv_sharing_target_layer_name gets no KV cache spec (v1/worker/
        # gpu_model_runner.py:6912-6924 in 0.19.0, v1/worker/gpu/attn_utils.py:140-147 in
        # 0.34.0): only the earlier layers hold KV
        owners = set(range(spec.first_kv_shared_layer))
        full, swa = full & owners, swa & owners
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
           mamba_blocks: int = 1, pp_partition: tuple[int, ...] | None = None,
           batches: int = 1, batch_tokens: int = DEFAULT_BATCHED,
           release: tuple[int, int, int] | None = None) -> Layout:
    """The layout vLLM builds for `dtype` (`block_size`: the user's or the logged one, a floor
    for hybrids, which raise it to fit a Mamba state; `draft_layers`: full-attention layers a
    speculative draft (MTP) adds to the same cache, as the "Add N padding layers" count of a
    Qwen3.5 with MTP shows: 16 + 1 full against 48 linear; `hybrid_allocator` False: the hybrid
    KV cache manager is off, every windowed layer sized as a full one; `batches` x
    `batch_tokens`: the tokens in flight a windowed group reserves for, `in_flight_batches`;
    `release`: the release whose rules for sliding pages of their own shape apply, the newest
    when None)."""
    if dtype not in ELEM_BYTES:
        raise ValueError(f"no vLLM page size for KV dtype {dtype!r}")
    tp = max(1, tp)
    token = attn_token_bytes(spec, dtype, tp)
    swa_token = swa_token_bytes(spec, dtype, tp)
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
                     f"token of one {'full-attention ' if swa_token != token else ''}layer = "
                     f"{h} x {unit} = {token:,} B")
        if swa_token != token and n_swa:
            sh = spec.swa_num_kv_heads if spec.swa_num_kv_heads is not None else \
                spec.num_kv_heads
            sd = spec.swa_head_dim or spec.head_dim
            sunit = (f"({sd}/2 + {sd}/16) x 2" if dtype == "nvfp4" else
                     f"({sd} + {spec.swa_v_head_dim or sd}) x {ELEM_BYTES[dtype]} B")
            lines.append(f"sliding-window layers: max(1, {sh} // {tp}) = {max(1, sh // tp)} KV "
                         f"heads x {sunit} = {swa_token:,} B per token and layer")
    if spec.kv_shared_layers:
        lines.append(f"the last {spec.kv_shared_layers} layers read an earlier layer's KV "
                     "(kv_sharing_target_layer_name) and hold none: layers "
                     f"0-{spec.first_kv_shared_layer - 1} hold the cache")
    mamba = None
    if n_lin and rules.hybrid:
        ssm = ssm_dtype or model_dtype
        mamba = mamba_state_bytes(spec, tp, model_dtype, ssm)
    if rules.v0 or not rules.hybrid or not (n_swa or mamba) or not hybrid_allocator:
        # One group of every KV layer (sliding-window layers sized like full ones).
        bs = block_size or (MLA_BLOCK if spec.is_mla and not rules.v0 else DEFAULT_BLOCK)
        layers = n_full + n_swa
        kind = "chunked local attention" if spec.attention_chunk_size else "sliding-window"
        off = (" (the hybrid KV cache manager is off: vLLM sizes them like full ones)"
               if not hybrid_allocator and rules.hybrid and not rules.v0 else
               " sized like full ones")
        lines.append(f"one group of {layers} KV layers" + (
            f" ({n_swa} {kind} layers{off})" if n_swa else "")
            + (f"; {n_lin} linear-attention layers keep their state outside the KV cache"
               if n_lin else ""))
        idx = indexer_token_bytes(spec) if spec.is_mla and not rules.v0 else 0
        page = bs * (token + idx)
        if n_swa and swa_token != token:
            # the sliding specs promoted to full ones keep their own pages, in one group of
            # per-layer page sizes (unify_hybrid_kv_cache_specs, _promote_local_kv_cache_specs,
            # UniformTypeKVCacheSpecs: v1/core/kv_cache_planning.py:783-856, :897-920 in
            # 0.34.0; kv_cache_interface.py:1354-1365): a block is every layer's page
            per_token = n_full * token + n_swa * swa_token
            lines.append(f"block = {bs} tokens x ({n_full} x {token:,} + {n_swa} x "
                         f"{swa_token:,}) B = {bs * per_token:,} B")
            return Layout(dtype, bs, token, bs * per_token, 1, 1, 0, 0, None, None, rules,
                          tuple(lines), swa_token_bytes=swa_token,
                          shared_layers=spec.kv_shared_layers)
        if idx:
            # the indexer's pages join the latent's in one group of per-layer page sizes:
            # num_blocks = available // their sum (UniformTypeKVCacheSpecs,
            # v1/core/kv_cache_utils.py:1030-1037 in 0.11.0, kv_cache_planning.py:1143-1147 and
            # kv_cache_interface.py:1319-1320 in 0.33.0)
            lines.append(f"DSA indexer keys: {spec.index_head_dim} fp8 + "
                         f"{int(spec.index_head_dim or 0) // 128} x 4 B scales = {idx} B per "
                         "token and layer, on every GPU, in the same block")
            lines.append(f"block = {bs} tokens x ({token:,} + {idx}) B x {layers} layers = "
                         f"{page * layers:,} B")
        else:
            lines.append(f"block = {bs} tokens x {token:,} B x {layers} layers = "
                         f"{page * layers:,} B")
        return Layout(dtype, bs, token, page, layers, 1, 0, 0, None, None, rules, tuple(lines),
                      indexer_bytes=idx)
    # (draft layers and Mamba blocks only matter to a hybrid's groups)
    bs = block_size or DEFAULT_BLOCK
    if mamba is not None:
        # HybridAttentionMambaModelConfig (models/config.py:367, 0.11.0; interface.py:1098,
        # 0.33.0): attention block = align x cdiv(mamba page, align x attention token bytes).
        align = max(KERNEL_ALIGN, block_size or DEFAULT_BLOCK)
        if spec.is_mla:
            # an MLA hybrid's manager block is a multiple of 128 (TRTLLM / FlashInfer MLA
            # decode alignment: platforms/interface.py:1083-1088 in 0.33.0, :1095-1100 in
            # 0.34.0), which every MLA backend's smallest kernel block divides
            align = max(align, MLA_HYBRID_ALIGN)
        need = align * cdiv(mamba, align * token)
        if bs < need:
            bs = need
        lines.append(f"Mamba state per request and layer: {mamba:,} B; attention block raised "
                     f"to {bs} tokens so one page ({bs} x {token:,} = {bs * token:,} B) holds it")
    page = bs * token
    full_block = swa_block = 0
    if n_swa and swa_token != token:
        if mamba is not None:
            raise ValueError("sliding-window pages of their own shape beside a Mamba state: "
                             "not read")
        page, full_block, swa_block = _unified_pages(bs, token, swa_token, n_full, release,
                                                     lines)
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
    if full_block or swa_block:
        lines.append(f"block = one {page:,} B page x {gsize} layers = {page * gsize:,} B")
    else:
        lines.append(f"block = {bs} tokens x {token:,} B x {gsize} layers = "
                     f"{page * gsize:,} B")
    if mg:
        lines.append(f"a request holds {mamba_blocks} block(s) in each linear-attention group"
                     + (" (mamba_cache_mode align: prefix caching)" if mamba_blocks == 2 else ""))
    window = spec.sliding_window if n_swa else None
    chunk = int(spec.attention_chunk_size) if n_swa and spec.attention_chunk_size else None
    if sg:
        held = (f"cdiv(min({chunk:,} chunk" if chunk else f"cdiv(min({window} - 1 window")
        lines.append(
            f"a request holds {held} + {batches} x {batch_tokens:,} tokens in flight, "
            f"max_model_len), {swa_block or bs}){'' if chunk else ' + 1'} blocks in each "
            + ("chunked local attention" if chunk else "sliding-window") + " group"
            + (" (async scheduling: two batches in flight)" if batches == 2 else ""))
    if full_block:
        lines.append(f"a request holds cdiv(max_model_len, {full_block}) blocks in each "
                     "full-attention group")
    return Layout(dtype, bs, token, page, gsize, fg, sg, mg, window, mamba, rules, tuple(lines),
                  mamba_blocks=mamba_blocks, padding_layers=pad, batches=batches,
                  batch_tokens=batch_tokens, chunk=chunk,
                  swa_token_bytes=swa_token if (full_block or swa_block) else 0,
                  full_block=full_block, swa_block=swa_block,
                  shared_layers=spec.kv_shared_layers)


def _unified_pages(bs: int, token: int, swa_token: int, n_full: int,
                   release: tuple[int, int, int] | None,
                   lines: list[str]) -> tuple[int, int, int]:
    """(page, full block, sliding block) when sliding layers have pages of their own shape
    (Gemma-4): each layer's page holds its block of tokens (FullAttentionSpec: the cache's
    block size; SlidingWindowSpec: `SW_SMALLEST_KERNEL`), and vLLM makes every page the
    largest one: a smaller page that divides it has its block size multiplied by the ratio,
    one that does not is padded to it (0.26+) or refused (`unify_kv_cache_spec_page_size`,
    v1/core/kv_cache_utils.py:914-950 in 0.19.0, :1067-1125 in 0.26.0; v1/core/
    kv_cache_planning.py:392-452 in 0.34.0). The groups then split as usual, each layer one
    page of a block (`_get_kv_cache_groups_uniform_page_size`, :462-602 in 0.34.0)."""
    rel = release or (99, 0, 0)
    sw0 = KERNEL_ALIGN if SW_SMALLEST_KERNEL[0] <= rel <= SW_SMALLEST_KERNEL[1] else bs
    pages = {"full": (bs, token), "sliding": (sw0, swa_token)} if n_full else \
        {"sliding": (sw0, swa_token)}
    top = max(b * t for b, t in pages.values())
    blocks: dict[str, int] = {}
    for kind, (b, t) in pages.items():
        own = b * t
        if own == top:
            blocks[kind] = b
        elif top % own == 0:
            blocks[kind] = b * (top // own)
        elif rel >= PAGE_PADDING_SINCE:
            blocks[kind] = b  # its page padded to the largest
        else:
            raise ValueError(f"{kind} pages of {own:,} B do not divide {top:,} B: vLLM "
                             f"{'.'.join(map(str, rel))} refuses to unify them")
    desc = ", ".join(f"{kind} {b} x {t:,} = {b * t:,} B" for kind, (b, t) in pages.items())
    lines.append(f"pages of their own block: {desc}; vLLM makes every page the largest, "
                 f"{top:,} B (unify_kv_cache_spec_page_size): "
                 + ", ".join(f"{kind} blocks of {blocks[kind]} tokens"
                             + (" (page padded)" if blocks[kind] * pages[kind][1] != top
                                else "") for kind in pages))
    return top, blocks.get("full", bs), blocks["sliding"]


def v0_cache_block(spec: ModelSpec, dtype: str, tp: int, block_size: int) -> int:
    """CacheEngine.get_cache_block_size (worker/cache_engine.py:102 in 0.6.3)."""
    layers = len(spec.full_layer_ids) + len(spec.swa_layer_ids)
    return block_size * attn_token_bytes(spec, dtype, tp) * layers
