"""Bytes per token per GPU, exactly as SGLang's pool configurator computes them.

Why this is the heart of the calculator: SGLang sizes the pool as `available_bytes // cell_size`
(sglang-log-lines.md 8.1), so any error in the cell is an error of the same factor in every token
count and concurrency figure. The rules here are SGLang's, not the textbook's: KV heads per GPU
are floored at 1 (replicated when TP exceeds the KV heads), MLA is not divided by TP, hybrid
linear-attention models count only their full-attention layers, SWA hybrids get a second pool.
What changes between releases (FP4/MXFP8/DSA layouts, draft layers, v_head_dim) is asked of
`kvtui.engines.sglang.sizing.cells`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kvtui.core.capacity.modelspec import ModelSpec
from kvtui.core.capacity.parallel import Parallel
from kvtui.engines.sglang.sizing import cells as rules
from kvtui.engines.sglang.sizing import swa as swa_rules
from kvtui.engines.sglang.sizing.args import SizingArgs
from kvtui.engines.sglang.sizing.families import Version, is_dsa, linear_kind
from kvtui.engines.sglang.sizing.mamba import StateSlot, state_per_slot
from kvtui.engines.sglang.version import NEWEST

GIB = 1 << 30

# torch._utils._element_size of the KV storage dtype. FP4 packs two values per byte
# (float4_e2m1fn_x2 has element size 1); its layout is `sizing.cells`.
ELEM_BYTES: dict[str, int] = {"bf16": 2, "fp16": 2, "fp32": 4, "fp8_e4m3": 1, "fp8_e5m2": 1,
                              "mxfp8": 1, "nvfp4": 1, "fp4_mx_block16": 1, "fp4_e2m1": 1}
FP4_DTYPES = rules.FP4_DTYPES
DEFAULT_SWA_FULL_RATIO = 0.8  # --swa-full-tokens-ratio default


@dataclass(frozen=True, slots=True)
class SwaSplit:
    """Hybrid-SWA pools: F per full-layer token, S per SWA-layer token, swa = full x ratio."""

    full_bytes: int  # F x n_full (+ draft full layers): budget per full-pool token
    swa_bytes: int  # S x n_swa: budget per SWA-pool token
    ratio: float
    full_layers: int
    swa_layers: int
    f_layer: int = 0
    s_layer: int = 0
    total_layers: int = 0
    full_k: int = 0  # printed per row
    full_v: int = 0
    swa_k: int = 0
    swa_v: int = 0
    all_layer_cell: int | None = None  # what 0.4.10-0.5.8 divide by
    version: Version = NEWEST
    chunk: tuple[int, int] | None = None  # Llama-4 (attention_chunk_size, context_len), <= 0.5.7

    def tokens(self, available_bytes: int, page_size: int = 1) -> tuple[int, int]:
        """(full_tokens, swa_tokens) SGLang allocates from a byte budget (`sizing.swa`)."""
        full, swa, _ = swa_rules.split_tokens(
            int(available_bytes), self.f_layer or self.full_bytes // max(1, self.full_layers),
            self.s_layer or self.swa_bytes // max(1, self.swa_layers), self.full_layers,
            self.swa_layers, self.total_layers or self.full_layers + self.swa_layers,
            self.ratio, page_size, self.version, all_layer_cell=self.all_layer_cell,
            chunk=self.chunk)
        return full, swa

    @property
    def cost(self) -> float:
        """Bytes per full-pool token including the SWA tokens that come with it."""
        return self.full_bytes + self.ratio * self.swa_bytes

    def to_dict(self) -> dict[str, Any]:
        return {"full_bytes": self.full_bytes, "swa_bytes": self.swa_bytes, "ratio": self.ratio,
                "full_layers": self.full_layers, "swa_layers": self.swa_layers,
                "printed_full": [self.full_k, self.full_v],
                "printed_swa": [self.swa_k, self.swa_v]}


@dataclass(frozen=True, slots=True)
class Cell:
    """One pool's per-token cost on one GPU, with the arithmetic spelled out."""

    dtype: str
    bytes_per_token: int  # what SGLang divides the budget by (draft layers included)
    k_bytes: int  # printed per pool row as "K size" ("KV size" for MLA)
    v_bytes: int  # printed per pool row as "V size" (0 for MLA)
    kind: str  # "mha" | "mla"
    layers: int
    heads_local: int | None = None
    head_dim: int | None = None
    v_head_dim: int | None = None
    elem_bytes: int = 2
    extra_bytes: int = 0  # FP4/MXFP8 scales, FP4 dequant workspace, DSA indexer
    replicated: bool = False
    swa: SwaSplit | None = None
    lines: tuple[str, ...] = ()
    approximate: bool = False
    draft_bytes: int = 0  # the draft's layers, budgeted here but printed by the draft's pool
    index_bytes: int = 0  # DSA indexer per indexer row (printed inside "KV size")
    version: Version = NEWEST

    @property
    def cost(self) -> float:
        return self.swa.cost if self.swa is not None else float(self.bytes_per_token)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dtype": self.dtype, "bytes_per_token": self.bytes_per_token, "kind": self.kind,
            "k_bytes": self.k_bytes, "v_bytes": self.v_bytes, "layers": self.layers,
            "heads_local": self.heads_local, "head_dim": self.head_dim,
            "v_head_dim": self.v_head_dim, "elem_bytes": self.elem_bytes,
            "extra_bytes": self.extra_bytes, "draft_bytes": self.draft_bytes,
            "index_bytes": self.index_bytes, "replicated": self.replicated,
            "swa": self.swa.to_dict() if self.swa else None, "approximate": self.approximate,
            "work": list(self.lines),
        }


def kv_heads_per_gpu(total_kv_heads: int, attn_tp: int) -> int:
    """SGLang `ModelConfig.get_num_kv_heads`: floor division, at least one head (replication);
    configs/model_config.py:400-407 (0.5.2) to :1700-1711 (0.5.23, dcp_size 1)."""
    return max(1, total_kv_heads // max(1, attn_tp))


def _layers_on_stage(ids: tuple[int, ...], n_layers: int, pp: int) -> int:
    """Layers of this kind on the largest PP stage (even split, like SGLang's default)."""
    if pp <= 1:
        return len(ids)
    per = -(-n_layers // pp)
    return max(sum(1 for i in ids if s * per <= i < (s + 1) * per) for s in range(pp))


def kv_cell(spec: ModelSpec, dtype: str, par: Parallel | None = None, *,
            swa_pool: bool = False, swa_ratio: float = DEFAULT_SWA_FULL_RATIO,
            version: Version = NEWEST, args: SizingArgs | None = None,
            draft_layers: int = 0) -> Cell:
    """The cell of the primary (full-attention) KV pool for `dtype` on one GPU.

    `swa_pool`: the model runs with a separate sliding-window pool (the log shows it, or
    `sizing.swa.pool_applies` says the release gives it one); otherwise sliding-window layers
    are counted at full size, as SGLang does for models outside its hybrid-SWA list.
    `draft_layers`: the EAGLE/MTP draft's KV layers, counted where the release does.
    """
    par = par or Parallel()
    args = args or SizingArgs()
    if dtype not in ELEM_BYTES:
        raise ValueError(f"unknown KV dtype {dtype!r}")
    eb = ELEM_BYTES[dtype]
    draft = draft_layers if rules.draft_layers_counted(version, args) else 0
    if spec.is_mla:
        return _mla_cell(spec, dtype, eb, par, version, args, draft)
    h_local = kv_heads_per_gpu(spec.num_kv_heads, par.attn_tp)
    replicated = spec.num_kv_heads < par.attn_tp
    d, dv = spec.head_dim, spec.v_head_dim
    hybrid = linear_kind(spec, version) is not None
    full_ids = spec.full_layer_ids
    swa_ids = spec.swa_layer_ids
    lines = [_heads_line(spec, par, h_local, replicated)]
    if swa_pool and swa_ids:
        return _swa_cell(spec, dtype, eb, par, version, args, draft, h_local, replicated, lines,
                         swa_ratio)
    if hybrid:
        l_full = _layers_on_stage(full_ids, spec.num_layers, par.pp)
        kind = spec.linear.kind.upper() if spec.linear else ""
        lines.append(f"KV layers: {len(full_ids)} full-attention of {spec.num_layers} "
                     f"({len(spec.linear_layer_ids)} {kind} layers keep a per-request state "
                     "instead of KV)")
    else:
        # num_effective_layers: every layer of the stage (model_runner.py:1276, 0.5.5)
        l_full = _layers_on_stage(tuple(range(spec.num_layers)), spec.num_layers, par.pp)
        if swa_ids:
            lines.append(f"KV layers: all {l_full} (the {len(swa_ids)} sliding-window layers "
                         "are sized like full ones: no separate SWA pool)")
        else:
            lines.append(f"KV layers: {l_full}")
    if not rules.uses_v_head_dim(version) and dv != d:
        lines.append(f"SGLang {'.'.join(map(str, version))} sizes V like K (head_dim {d}, not "
                     f"v_head_dim {dv}): the cell's V part is kv_heads x head_dim (<= 0.5.6)")
    parts = rules.mha_parts(dtype, eb, h_local, d, dv, l_full, version, args)
    lines.extend(parts.lines)
    total = rules.add_draft(parts.budget, l_full, draft, version)
    if total != parts.budget:
        lines.append(f"draft layers: + {total - parts.budget:,} B ({draft} draft layer(s) "
                     f"budgeted in the target's cell, SGLang 0.5.14+)")
    lines.append(f"cell = {total:,} B/token per GPU ({dtype})")
    return Cell(dtype=dtype, bytes_per_token=total, k_bytes=parts.print_k,
                v_bytes=parts.print_v, kind="mha", layers=l_full, heads_local=h_local,
                head_dim=d, v_head_dim=dv if rules.uses_v_head_dim(version) else d,
                elem_bytes=eb, extra_bytes=parts.extra, replicated=replicated,
                lines=tuple(lines), approximate=parts.approximate,
                draft_bytes=total - parts.budget, version=version)


def _swa_cell(spec: ModelSpec, dtype: str, eb: int, par: Parallel, version: Version,
              args: SizingArgs, draft: int, h_local: int, replicated: bool, lines: list[str],
              ratio: float) -> Cell:
    """Full + SWA pools. F and S per layer: configs get_num_kv_heads / get_swa_num_kv_heads and
    head_dim / swa_head_dim (pool_configurator.py:191-229 in 0.5.11, :656-735 in 0.5.23)."""
    d, dv = spec.head_dim, spec.v_head_dim
    sh = kv_heads_per_gpu(spec.swa_num_kv_heads, par.attn_tp) \
        if spec.swa_num_kv_heads is not None else h_local
    sd = spec.swa_head_dim or d
    sdv = spec.swa_v_head_dim or sd
    nf = _layers_on_stage(spec.full_layer_ids, spec.num_layers, par.pp)
    ns = _layers_on_stage(spec.swa_layer_ids, spec.num_layers, par.pp)
    # HybridSWAPoolConfigurator has no FP4 branch: an FP4 cell is budgeted at the element size
    # of float4_e2m1fn_x2 (1 byte per K/V pair), like FP8; MXFP8 adds its scales from 0.5.16.
    cell_dtype = "fp8_e4m3" if dtype in FP4_DTYPES else dtype
    fp = rules.mha_parts(cell_dtype, eb, h_local, d, dv, 1, version, args)
    sp = rules.mha_parts(cell_dtype, eb, sh, sd, sdv, 1, version, args)
    f_layer, s_layer = fp.budget, sp.budget
    # Draft full layers join the full side from 0.5.15 (pool_configurator.py:323-327).
    draft_full = draft if version >= (0, 5, 15) else 0
    full_bytes = f_layer * (nf + draft_full)
    all_layer = None
    if version <= (0, 5, 8):
        all_layer = f_layer * spec.num_layers
        if spec.arch == "MiMoV2FlashForCausalLM" and version >= (0, 5, 7):
            # get_cell_size_per_token adds the SWA part on top (mixin :101-110, 0.5.7)
            all_layer += s_layer * ns
    chunk = None
    if spec.arch.startswith("Llama4") and version <= (0, 5, 7) and args.hybrid_kvcache_ratio:
        # 0.4.9-0.5.7: --hybrid-kvcache-ratio and the chunk/context formula of
        # set_num_token_hybrid (model_runner.py:986-1014 in 0.4.10) instead of r.
        ratio = args.hybrid_kvcache_ratio
        ctx = args.context_length or spec.max_position_embeddings or 0
        chunk = (int(spec.attention_chunk_size or spec.sliding_window or 0), int(ctx))
        if not chunk[0] or not chunk[1]:
            raise ValueError("Llama-4 --hybrid-kvcache-ratio needs attention_chunk_size and "
                             "context_len")
    lines.append(f"KV layers: {nf} full in the Full pool, {ns} sliding-window in the SWA pool "
                 f"(swa tokens = full tokens x {ratio:g})")
    if spec.swa_num_kv_heads is not None:
        lines.append(f"SWA KV heads per GPU: max(1, {spec.swa_num_kv_heads} // {par.attn_tp}) "
                     f"= {sh}, head dims {sd} + {sdv}")
    lines.append(f"F = {f_layer:,} B per full layer, S = {s_layer:,} B per SWA layer; "
                 f"cost per full token = F x {nf} + {ratio:g} x S x {ns} = "
                 f"{full_bytes + ratio * s_layer * ns:,.1f} B")
    split = SwaSplit(full_bytes=full_bytes, swa_bytes=s_layer * ns, ratio=ratio,
                     full_layers=nf, swa_layers=ns, f_layer=f_layer, s_layer=s_layer,
                     total_layers=spec.num_layers, full_k=fp.print_k * nf,
                     full_v=fp.print_v * nf, swa_k=sp.print_k * ns, swa_v=sp.print_v * ns,
                     all_layer_cell=all_layer, version=version, chunk=chunk)
    return Cell(dtype=dtype, bytes_per_token=full_bytes, k_bytes=fp.print_k * nf,
                v_bytes=fp.print_v * nf, kind="mha", layers=nf, heads_local=h_local,
                head_dim=d, v_head_dim=dv, elem_bytes=eb, extra_bytes=fp.extra * nf,
                replicated=replicated, swa=split, lines=tuple(lines),
                approximate=fp.approximate or dtype in FP4_DTYPES,
                draft_bytes=f_layer * draft_full, version=version)


def _heads_line(spec: ModelSpec, par: Parallel, h_local: int, replicated: bool) -> str:
    src = f" ({spec.kv_heads_from})" if spec.kv_heads_from else ""
    if replicated:
        return (f"KV heads per GPU: max(1, {spec.num_kv_heads}{src} // {par.attn_tp}) = "
                f"{h_local} (attention TP {par.attn_tp} > {spec.num_kv_heads} KV heads, so "
                f"SGLang replicates: every GPU stores one full head, not "
                f"{spec.num_kv_heads}/{par.attn_tp})")
    return f"KV heads per GPU: max(1, {spec.num_kv_heads}{src} // {par.attn_tp}) = {h_local}"


def _mla_cell(spec: ModelSpec, dtype: str, eb: int, par: Parallel, version: Version,
              args: SizingArgs, draft: int) -> Cell:
    hybrid = linear_kind(spec, version) is not None
    ids = spec.full_layer_ids if hybrid else tuple(range(spec.num_layers))
    layers = _layers_on_stage(ids, spec.num_layers, par.pp)
    dsa = is_dsa(spec, version)
    kvl, rope = spec.kv_lora_rank or 0, spec.qk_rope_head_dim or 0
    approx = False
    lines = [f"MLA: one latent of {kvl} + {rope} per layer over {layers} layers, the same on "
             f"every TP rank (not divided by TP {par.tp})"]
    if dtype in FP4_DTYPES:
        if version < (0, 5, 5) or (dtype == "fp4_e2m1" and version >= (0, 5, 16)):
            raise ValueError(f"--kv-cache-dtype {dtype} is not accepted by SGLang "
                             f"{'.'.join(map(str, version))}")
        # MLA FP4: cell // 2 + (kv_lora + rope) // 16 x layers (model_runner.py:1283-1295 in
        # 0.5.5, pool_configurator.py:386-396 in 0.5.23); the pool prints the packed latent.
        base = spec.kv_dim * layers * eb
        scale = (spec.kv_dim // 16) * layers * eb
        k, extra, printed = base // 2 + scale, scale, base // 2
        lines.append(f"FP4 MLA: {base:,} // 2 + ({spec.kv_dim} // 16) x {layers} = {k:,} B")
    else:
        bdim, why, assumed = rules.mla_store_dim(kvl, rope, dtype, version, dsa=dsa,
                                                 args=args, budget=True)
        pdim, pwhy, p_assumed = rules.mla_store_dim(kvl, rope, dtype, version, dsa=dsa,
                                                    args=args, budget=False)
        # the budget's layout assumed: the tokens are not exact; the printed one only: the
        # calibration says which it held the pool line against
        approx = assumed is not None
        if assumed or p_assumed:
            lines.append(str(assumed or p_assumed))
        k = bdim * layers * eb
        extra = 0
        printed = pdim * layers * eb
        lines.append(f"cell = {bdim} ({why}) x {layers} x {eb} B = {k:,} B/token per GPU "
                     f"({dtype})")
        if pdim != bdim:
            lines.append(f"the pool stores {pdim} B per layer ({pwhy}): the printed KV size is "
                         "larger than the budget cell")
    idx = 0
    if dsa and spec.index_head_dim:
        skip = sum(1 for t in spec.indexer_types if t == "shared") if version >= (0, 5, 23) \
            else 0
        idx = rules.dsa_indexer_bytes(spec.index_head_dim, spec.index_kpool, layers - skip,
                                      version)
        if dtype not in FP4_DTYPES:
            extra += idx
        if idx:
            lines.append(f"DSA indexer keys: ({spec.index_head_dim} + "
                         f"{spec.index_head_dim}//128 x 4) x {layers - skip} x 1 B = {idx:,} B")
    # FP4: k already holds its scales; otherwise the extras (MXFP8 scales, indexer) add on.
    total = k + idx if dtype in FP4_DTYPES else k + extra
    if dtype in FP4_DTYPES:
        extra += idx
    budget = total
    if draft and layers:
        if dsa:
            kv_part = budget - idx
            budget += int(kv_part * draft / layers) + rules.dsa_indexer_bytes(
                spec.index_head_dim or 0, spec.index_kpool, draft, version)
        else:
            budget = rules.add_draft(budget, layers, draft, version)
        lines.append(f"draft layers: + {budget - total:,} B ({draft} draft layer(s), 0.5.14+)")
    return Cell(dtype=dtype, bytes_per_token=budget, k_bytes=printed, v_bytes=0, kind="mla",
                layers=layers, elem_bytes=eb, extra_bytes=extra, lines=tuple(lines),
                approximate=approx,
                draft_bytes=budget - total,
                index_bytes=(spec.index_head_dim + spec.index_head_dim // 128 * 4) * layers
                if idx and spec.index_head_dim else 0,  # 0.5.3 prints no indexer either
                version=version)


# -- Mamba / linear-attention state -------------------------------------------------------------
MambaState = StateSlot


def mamba_state(spec: ModelSpec, tp: int, ssm_dtype: str | None = None, *,
                version: Version = NEWEST, args: SizingArgs | None = None) -> StateSlot | None:
    """`mamba_cache_per_req` per GPU for the release (see `sizing.mamba.state_per_slot`)."""
    kind = linear_kind(spec, version)
    if kind is None or spec.linear is None:
        return None
    a = args or SizingArgs()
    if ssm_dtype:
        a = a.with_changes(mamba_ssm_dtype=ssm_dtype)
    return state_per_slot(spec, tp, a, version, kind)


def pool_rows(tokens: int, page_size: int) -> int:
    """Pool buffers hold tokens + page_size rows (the padded slot 0 page)."""
    return tokens + max(1, page_size)


def printed_bytes(tokens: int, cell: Cell, page_size: int = 1, *,
                  swa_pool: bool = False) -> tuple[int, int]:
    """(K bytes, V bytes) the pool line reports for `tokens` ("KV size" is K for MLA)."""
    rows = pool_rows(tokens, page_size)
    if swa_pool and cell.swa is not None:
        return rows * cell.swa.swa_k, rows * cell.swa.swa_v
    k = rows * cell.k_bytes
    if cell.index_bytes:
        # DSA index_k_with_scale_buffer: (size + page + 1) // page pages of page rows per layer
        # (memory_pool.py:1784-1800 in 0.5.9).
        page = max(1, page_size)
        k += (tokens + page + 1) // page * page * cell.index_bytes
    return k, rows * cell.v_bytes


def pool_gib(tokens: int, cell: Cell, page_size: int = 1, *,
             swa_pool: bool = False) -> tuple[float, float]:
    """(K GiB, V GiB) as the pool line prints them."""
    k, v = printed_bytes(tokens, cell, page_size, swa_pool=swa_pool)
    return k / GIB, v / GIB


def pool_gib_line(tokens: int, cell: Cell, page_size: int = 1, *, swa_pool: bool = False) -> str:
    """The size part of the pool line SGLang would print for `tokens` with this cell."""
    k, v = pool_gib(tokens, cell, page_size, swa_pool=swa_pool)
    if cell.kind == "mla":
        return f"KV size: {k:.2f} GB"
    return f"K size: {k:.2f} GB, V size: {v:.2f} GB"


__all__ = ["ELEM_BYTES", "FP4_DTYPES", "GIB", "Cell", "MambaState", "SwaSplit",
           "kv_cell", "kv_heads_per_gpu", "mamba_state", "pool_gib", "pool_gib_line",
           "printed_bytes"]
