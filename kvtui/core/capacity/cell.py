"""Bytes per token per GPU, exactly as SGLang's pool configurator computes them.

Why this is the heart of the calculator: SGLang sizes the pool as `available_bytes // cell_size`
(sglang-log-lines.md 8.1), so any error in the cell is an error of the same factor in every token
count and concurrency figure. The rules here are SGLang's, not the textbook's: KV heads per GPU
are floored at 1 (replicated when TP exceeds the KV heads), MLA is not divided by TP, hybrid
linear-attention models count only their full-attention layers, SWA hybrids get a second pool.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kvtui.core.capacity.modelspec import ModelSpec

GIB = 1 << 30

# torch._utils._element_size of the KV storage dtype. FP4 packs two values per byte
# (float4_e2m1fn_x2 has element size 1) and is handled in `_fp4_cell`.
ELEM_BYTES: dict[str, int] = {"bf16": 2, "fp16": 2, "fp32": 4, "fp8_e4m3": 1, "fp8_e5m2": 1,
                              "mxfp8": 1, "nvfp4": 1, "fp4_mx_block16": 1, "fp4_e2m1": 1}
FP4_DTYPES = frozenset({"nvfp4", "fp4_mx_block16", "fp4_e2m1"})
DEFAULT_SWA_FULL_RATIO = 0.8  # --swa-full-tokens-ratio default


@dataclass(frozen=True, slots=True)
class Parallel:
    """The parallel layout that decides how many KV heads one GPU holds."""

    tp: int = 1
    attn_dp: int = 1
    attn_cp: int = 1
    pp: int = 1

    @property
    def attn_tp(self) -> int:
        return max(1, self.tp // max(1, self.attn_dp) // max(1, self.attn_cp))

    def to_dict(self) -> dict[str, int]:
        return {"tp": self.tp, "attn_dp": self.attn_dp, "attn_cp": self.attn_cp, "pp": self.pp,
                "attn_tp": self.attn_tp}


@dataclass(frozen=True, slots=True)
class Cell:
    """One pool's per-token cost on one GPU, with the arithmetic spelled out."""

    dtype: str
    bytes_per_token: int  # what SGLang divides the budget by
    k_bytes: int  # per token, the part printed as "K size" ("KV size" for MLA)
    v_bytes: int  # per token, the part printed as "V size" (0 for MLA)
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "dtype": self.dtype, "bytes_per_token": self.bytes_per_token, "kind": self.kind,
            "k_bytes": self.k_bytes, "v_bytes": self.v_bytes, "layers": self.layers,
            "heads_local": self.heads_local, "head_dim": self.head_dim,
            "v_head_dim": self.v_head_dim, "elem_bytes": self.elem_bytes,
            "extra_bytes": self.extra_bytes, "replicated": self.replicated,
            "swa": self.swa.to_dict() if self.swa else None, "approximate": self.approximate,
            "work": list(self.lines),
        }


@dataclass(frozen=True, slots=True)
class SwaSplit:
    """Hybrid-SWA pools: F per full-layer token, S per SWA-layer token, swa = full x ratio."""

    full_bytes: int  # F * n_full
    swa_bytes: int  # S * n_swa
    ratio: float
    full_layers: int
    swa_layers: int

    def tokens(self, available_bytes: int, page_size: int = 1) -> tuple[int, int]:
        """(full_tokens, swa_tokens) for a byte budget (0.5.11+ HybridSWAPoolConfigurator)."""
        denom = self.full_bytes + self.ratio * self.swa_bytes
        full = int(available_bytes // denom)
        swa = int(full * self.ratio)
        page = max(1, page_size)
        return full // page * page, swa // page * page

    def to_dict(self) -> dict[str, Any]:
        return {"full_bytes": self.full_bytes, "swa_bytes": self.swa_bytes, "ratio": self.ratio,
                "full_layers": self.full_layers, "swa_layers": self.swa_layers}


def kv_heads_per_gpu(total_kv_heads: int, attn_tp: int) -> int:
    """SGLang `ModelConfig.get_num_kv_heads`: floor division, at least one head (replication)."""
    return max(1, total_kv_heads // max(1, attn_tp))


def _layers_on_stage(ids: tuple[int, ...], n_layers: int, pp: int) -> int:
    """Layers of this kind on the largest PP stage (even split, like SGLang's default)."""
    if pp <= 1:
        return len(ids)
    per = -(-n_layers // pp)
    return max(sum(1 for i in ids if s * per <= i < (s + 1) * per) for s in range(pp))


def kv_cell(spec: ModelSpec, dtype: str, par: Parallel | None = None, *,
            swa_pool: bool = False, swa_ratio: float = DEFAULT_SWA_FULL_RATIO,
            fp4_recipe: str = "0.5.16+") -> Cell:
    """The cell of the primary (full-attention) KV pool for `dtype` on one GPU.

    `swa_pool`: the model runs with a separate sliding-window pool (the log shows a
    "Use sliding window memory pool" line or Full/SWA labels); otherwise sliding-window layers are
    counted at full size, as SGLang does for models outside its hybrid-SWA list.
    `fp4_recipe`: "0.5.16+" (nvfp4 / fp4_mx_block16) or "0.5.5" (fp4_e2m1, 0.5.5-0.5.15).
    """
    par = par or Parallel()
    if dtype not in ELEM_BYTES:
        raise ValueError(f"unknown KV dtype {dtype!r}")
    eb = ELEM_BYTES[dtype]
    if spec.is_mla:
        return _mla_cell(spec, dtype, eb, par)
    h_local = kv_heads_per_gpu(spec.num_kv_heads, par.attn_tp)
    replicated = spec.num_kv_heads < par.attn_tp
    d, dv = spec.head_dim, spec.v_head_dim
    full_ids = spec.full_layer_ids
    swa_ids = spec.swa_layer_ids
    if swa_pool and swa_ids:
        l_full = _layers_on_stage(full_ids, spec.num_layers, par.pp)
        l_swa = _layers_on_stage(swa_ids, spec.num_layers, par.pp)
    else:
        l_full = _layers_on_stage(full_ids + swa_ids, spec.num_layers, par.pp)
        l_swa = 0
    lines = [_heads_line(spec, par, h_local, replicated)]
    if spec.is_hybrid_linear:
        lines.append(f"KV layers: {len(full_ids)} full-attention of {spec.num_layers} "
                     f"({len(spec.linear_layer_ids)} linear-attention layers keep a per-request "
                     "state instead of KV)")
    elif swa_ids and not swa_pool:
        lines.append(f"KV layers: all {l_full} (the {len(swa_ids)} sliding-window layers are "
                     "sized like full ones: no separate SWA pool in this run)")
    elif swa_ids:
        lines.append(f"KV layers: {l_full} full in the Full pool, {l_swa} sliding-window in the "
                     f"SWA pool (swa tokens = full tokens x {swa_ratio})")
    else:
        lines.append(f"KV layers: {l_full}")
    k, v, extra, approx, more = _mha_bytes(dtype, eb, h_local, d, dv, l_full, fp4_recipe)
    lines.extend(more)
    total = k + v + extra
    lines.append(f"cell = {total:,} B/token per GPU ({dtype})")
    swa = None
    if l_swa:
        sk, sv, sextra, _, _ = _mha_bytes(dtype, eb, h_local, d, dv, l_swa, fp4_recipe)
        swa = SwaSplit(full_bytes=total, swa_bytes=sk + sv + sextra, ratio=swa_ratio,
                       full_layers=l_full, swa_layers=l_swa)
        lines.append(f"SWA pool: {sk + sv + sextra:,} B per SWA token")
    return Cell(dtype=dtype, bytes_per_token=total, k_bytes=k, v_bytes=v, kind="mha",
                layers=l_full, heads_local=h_local, head_dim=d, v_head_dim=dv, elem_bytes=eb,
                extra_bytes=extra, replicated=replicated, swa=swa, lines=tuple(lines),
                approximate=approx)


def _heads_line(spec: ModelSpec, par: Parallel, h_local: int, replicated: bool) -> str:
    if replicated:
        return (f"KV heads per GPU: max(1, {spec.num_kv_heads} // {par.attn_tp}) = {h_local} "
                f"(attention TP {par.attn_tp} > {spec.num_kv_heads} KV heads, so SGLang "
                f"replicates: every GPU stores one full head, not "
                f"{spec.num_kv_heads}/{par.attn_tp})")
    return f"KV heads per GPU: max(1, {spec.num_kv_heads} // {par.attn_tp}) = {h_local}"


def _mha_bytes(dtype: str, eb: int, h: int, d: int, dv: int, layers: int,
               fp4_recipe: str) -> tuple[int, int, int, bool, list[str]]:
    """(K bytes, V bytes, extra bytes, approximate?, work lines) per token."""
    if dtype in FP4_DTYPES:
        return _fp4_cell(dtype, h, d, dv, layers, fp4_recipe)
    k = h * d * layers * eb
    v = h * dv * layers * eb
    lines = [f"K + V = {h} x ({d} + {dv}) x {layers} x {eb} B = {k + v:,} B"]
    extra = 0
    if dtype == "mxfp8":
        extra = h * (d + dv) * layers // 32
        lines.append(f"MXFP8 scales: {h} x ({d} + {dv}) x {layers} // 32 = {extra:,} B "
                     "(one E8M0 byte per 32 values)")
    return k, v, extra, False, lines


def _fp4_cell(dtype: str, h: int, d: int, dv: int, layers: int,
              recipe: str) -> tuple[int, int, int, bool, list[str]]:
    """FP4 cells (sglang-log-lines.md 8.5). The 0.5.16+ recipe's scale-layout count and
    dequant-workspace dtype are not in the reference: one layout and a bf16 workspace are assumed,
    so the result is flagged approximate."""
    if recipe == "0.5.5" or dtype == "fp4_e2m1":
        base = h * (d + dv) * layers  # element size 1 byte per packed pair
        k = h * d * layers // 2
        v = base // 2 - k
        extra = (h * d * layers * 2) // 16
        return k, v, extra, False, [
            f"FP4 (0.5.5-0.5.15): cell//2 + H*D*L*2//16 = {base // 2:,} + {extra:,} B"]
    k = h * (d // 2) * layers
    v = h * (dv // 2) * layers
    scales = h * (d // 16) * layers * 2 * 1
    workspace = h * d * 2 * 2
    return k, v, scales + workspace, True, [
        f"FP4 values: {h} x ({d}/2) x {layers} x 2 = {k + v:,} B",
        f"FP4 block scales: {h} x ({d}/16) x {layers} x 2 = {scales:,} B (one layout assumed)",
        f"dequant workspace: {h} x {d} x 2 x 2 = {workspace:,} B (not per layer; bf16 assumed)"]


def _mla_cell(spec: ModelSpec, dtype: str, eb: int, par: Parallel) -> Cell:
    layers = _layers_on_stage(tuple(range(spec.num_layers)), spec.num_layers, par.pp)
    dim = spec.kv_dim
    lines = [f"MLA: one latent of {spec.kv_lora_rank} + {spec.qk_rope_head_dim} = {dim} per "
             f"layer, the same on every TP rank (not divided by TP {par.tp})"]
    if dtype in FP4_DTYPES:
        base = dim * layers * eb
        scale = (dim // 16) * layers * eb
        cell = base // 2 + scale
        lines.append(f"FP4 MLA: {base:,}//2 + ({dim}//16) x {layers} = {cell:,} B")
        k, extra = base // 2, scale
    else:
        k = dim * layers * eb
        extra = 0
        lines.append(f"cell = {dim} x {layers} x {eb} B = {k:,} B/token per GPU ({dtype})")
        if dtype == "mxfp8":
            extra = dim * layers // 32
    if spec.index_head_dim:
        ih = spec.index_head_dim
        idx = (ih + ih // 128 * 4) * layers * 1
        extra += idx
        lines.append(f"DSA indexer keys: ({ih} + {ih}//128 x 4) x {layers} x 1 = {idx:,} B")
    total = k + extra
    return Cell(dtype=dtype, bytes_per_token=total, k_bytes=k, v_bytes=0, kind="mla",
                layers=layers, elem_bytes=eb, extra_bytes=extra, lines=tuple(lines))


# -- Mamba / linear-attention state -------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class MambaState:
    """Per-request-slot state of the linear-attention layers (does not change with KV dtype)."""

    conv_bytes: int
    ssm_bytes: int
    layers: int
    lines: tuple[str, ...] = field(default=())

    @property
    def per_slot(self) -> int:
        return self.conv_bytes + self.ssm_bytes

    def to_dict(self) -> dict[str, Any]:
        return {"per_slot_bytes": self.per_slot, "per_slot_mib": round(self.per_slot / 2**20, 2),
                "conv_bytes": self.conv_bytes, "ssm_bytes": self.ssm_bytes,
                "layers": self.layers, "work": list(self.lines)}


def mamba_state(spec: ModelSpec, tp: int, ssm_dtype: str | None = None) -> MambaState | None:
    """`Mamba2CacheParams.mamba_cache_per_req` for GDN layers, per GPU (section 8.4)."""
    lin = spec.linear
    if lin is None or not spec.linear_layer_ids:
        return None
    tp = max(1, tp)
    ssm_dt = ssm_dtype or lin.ssm_dtype
    ssm_b = ELEM_BYTES.get(ssm_dt, 4)
    conv_b = ELEM_BYTES.get(lin.conv_dtype, 2)
    conv_dim = lin.value_head_dim * lin.num_value_heads + 2 * lin.num_key_heads * lin.key_head_dim
    conv = (conv_dim // tp) * (lin.conv_kernel - 1) * conv_b
    ssm = (lin.num_value_heads // tp) * lin.value_head_dim * lin.key_head_dim * ssm_b
    n = len(spec.linear_layer_ids)
    lines = (
        f"conv: ({conv_dim} // {tp}) x ({lin.conv_kernel} - 1) x {conv_b} B = {conv:,} B per layer",
        f"ssm: ({lin.num_value_heads} // {tp}) x {lin.value_head_dim} x {lin.key_head_dim} x "
        f"{ssm_b} B ({ssm_dt}) = {ssm:,} B per layer",
        f"per request slot: ({conv:,} + {ssm:,}) x {n} layers = {(conv + ssm) * n:,} B "
        f"= {(conv + ssm) * n / 2**20:.2f} MiB",
    )
    return MambaState(conv_bytes=conv * n, ssm_bytes=ssm * n, layers=n, lines=lines)


def pool_gib(tokens: int, cell: Cell, page_size: int = 1) -> tuple[float, float]:
    """(K GiB, V GiB) as the pool line prints them: the buffers hold tokens + page_size rows."""
    rows = tokens + max(1, page_size)
    return rows * cell.k_bytes / GIB, rows * cell.v_bytes / GIB


def pool_gib_line(tokens: int, cell: Cell, page_size: int = 1) -> str:
    """The size part of the pool line SGLang would print for `tokens` with this cell."""
    k, v = pool_gib(tokens, cell, page_size)
    if cell.kind == "mla":
        return f"KV size: {k:.2f} GB"
    return f"K size: {k:.2f} GB, V size: {v:.2f} GB"
