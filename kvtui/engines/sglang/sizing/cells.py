"""The release-dependent parts of SGLang's cell: FP4 / MXFP8 / DSA layouts and draft layers.

Two numbers per pool matter and they are not the same: the *budget* cell SGLang divides the rest
memory by, and what the pool line *prints* as K/V size. They differ for FP4 before 0.5.16 (the
scales are budgeted but not printed), for DSA (the printed KV size includes the indexer keys;
FP8 DSA stores 656 bytes per layer from 0.5.5 but budgets 576 until 0.5.16) and with a draft
model (its layers are budgeted from 0.5.14 but live in the draft's own pool). Calibration must
compare like with like, so every function here returns both.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtui.engines.sglang.sizing.args import SizingArgs
from kvtui.engines.sglang.sizing.families import CannotModel, Version

FP4_DTYPES = frozenset({"nvfp4", "fp4_mx_block16", "fp4_e2m1"})


@dataclass(frozen=True, slots=True)
class Parts:
    """Bytes per token of one pool on one GPU: what is budgeted and what is printed per row."""

    budget: int
    print_k: int
    print_v: int
    extra: int  # scales, workspace, indexer: budgeted beyond the plain K/V values
    approximate: bool
    lines: tuple[str, ...]


def uses_v_head_dim(version: Version) -> bool:
    """<= 0.5.6 the MHA cell is kv_heads x head_dim x layers x 2 (model_runner.py:1116-1122,
    0.5.3); from 0.5.7 it is kv_heads x (head_dim + v_head_dim) x layers
    (model_runner_kv_cache_mixin.py:82-88 in 0.5.8)."""
    return version >= (0, 5, 7)


def mha_parts(dtype: str, eb: int, h: int, d: int, dv: int, layers: int, version: Version,
              args: SizingArgs) -> Parts:
    """One MHA pool (`layers` layers of `h` local heads)."""
    if not uses_v_head_dim(version):
        dv = d
    k = h * d * layers * eb
    v = h * dv * layers * eb
    base_line = f"K + V = {h} x ({d} + {dv}) x {layers} x {eb} B = {k + v:,} B"
    if dtype == "mxfp8":
        # pool_configurator.py:278-283 (0.5.16) / :525-530 (0.5.23): one E8M0 byte per 32
        # values, and the MXFP8 pool's scale buffers are printed (memory_pool.py:3197-3290
        # MHATokenToKVPoolMXFP8 with get_kv_size_bytes :2118-2129, 0.5.16).
        extra = h * (d + dv) * layers // 32
        return Parts(k + v + extra, k + h * (d // 32) * layers, v + h * (dv // 32) * layers,
                     extra, False, (base_line, f"MXFP8 scales: {h} x ({d} + {dv}) x {layers} "
                                               f"// 32 = {extra:,} B"))
    if dtype not in FP4_DTYPES:
        return Parts(k + v, k, v, 0, False, (base_line,))
    return _fp4_mha(dtype, h, d, dv, layers, version, args)


def _fp4_mha(dtype: str, h: int, d: int, dv: int, layers: int, version: Version,
             args: SizingArgs) -> Parts:
    if version < (0, 5, 16):
        if dtype != "fp4_e2m1":
            raise CannotModel(f"--kv-cache-dtype {dtype} does not exist before SGLang 0.5.16")
        # The element size of float4_e2m1fn_x2 is 1 byte. 0.5.5 budgets an MHA FP4 cell like
        # FP8 (model_runner.py:1309-1316: no FP4 branch for MHA); from 0.5.6 it is
        # cell // 2 + scales n x head_dim x layers x 2 // 16 (model_runner.py:1425-1440 in
        # 0.5.6, mixin :104-113 in 0.5.9). The pool (MHATokenToKVPoolFP4,
        # memory_pool.py:2057-2100 in 0.5.15) prints only the packed K/V (m, n, head_dim // 2).
        cell = h * (d + dv) * layers
        scales = (h * d * layers * 2) // 16
        pk = h * (d // 2) * layers
        if version < (0, 5, 6):
            return Parts(cell, pk, pk, 0, True,
                         (f"FP4 on 0.5.5: budgeted like FP8, {cell:,} B (the pool packs two "
                          "values per byte; printed sizes not verified for 0.5.5-0.5.7)",))
        return Parts(cell // 2 + scales, pk, pk, scales, version < (0, 5, 8),
                     (f"FP4 (0.5.5-0.5.15): {cell:,} // 2 + {h} x {d} x {layers} x 2 // 16 "
                      f"= {cell // 2 + scales:,} B (printed K/V exclude the scales)",))
    if dtype == "fp4_e2m1":
        # fp4_kv_cache_quant_method.py:814-818 and mem_cache/kv_cache_dtype.py:57-61 (0.5.16)
        raise CannotModel("--kv-cache-dtype fp4_e2m1 is refused from SGLang 0.5.16 "
                          "(use fp4_mx_block16)")
    fp4 = h * (d // 2) * layers * 2  # head_dim for K and V alike (compute_cell_size)
    layout = h * (d // 16) * layers * 2
    if dtype == "fp4_mx_block16":
        # FP4MXBlock16KVCacheMethod.compute_cell_size (fp4_kv_cache_quant_method.py:682-699 in
        # 0.5.16, :897-915 in 0.5.23): values + one scale layout, no dequant workspace.
        half = fp4 // 2 + layout // 2
        return Parts(fp4 + layout, half, half, layout, False,
                     (f"FP4 values: {h} x ({d}/2) x {layers} x 2 = {fp4:,} B",
                      f"block-16 scales: {h} x {d}/16 x {layers} x 2 = {layout:,} B"))
    # nvfp4: NVFP4KVCacheMethod.compute_cell_size
    approx = False
    notes: list[str] = []
    if version < (0, 5, 21):
        # 0.5.16-0.5.20 (fp4_kv_cache_quant_method.py:536-555): one scale layout and the FP8
        # dequant workspace of the flashinfer prefill access, always allocated.
        layouts, dq = 1, True
    else:
        # 0.5.21+ (:744-768 in 0.5.23): the workspace and the linear scales only for a
        # flashinfer prefill; native (HND) scales for trtllm_mha on SM100.
        pre, dec = args.prefill_backend, args.decode_backend
        if pre is None or dec is None:
            approx = True
            pre, dec = pre or "trtllm_mha", dec or "trtllm_mha"
            notes.append("attention backend not in the log: trtllm_mha on SM100 assumed")
        dq = pre == "flashinfer"
        native = "trtllm_mha" in (pre, dec)
        layouts = int(dq) + int(native)
    workspace = h * d * 2 if dq else 0  # x kv_size 1 x fp8 element 1; not per layer
    scales = layout * layouts
    total = fp4 + scales + workspace
    half = (fp4 + scales + workspace) // 2
    return Parts(total, half, total - half, scales + workspace, approx,
                 (f"FP4 values: {h} x ({d}/2) x {layers} x 2 = {fp4:,} B",
                  f"NVFP4 block scales: {layouts} layout(s) x {h} x {d}/16 x {layers} x 2 = "
                  f"{scales:,} B",
                  f"dequant workspace: {h} x {d} x 2 = {workspace:,} B (not per layer)",
                  *notes))


@dataclass(frozen=True, slots=True)
class DsaLayout:
    """Which FP8 latent layout the DSA backends select: `raw` (512 + 64 FP8 values, no
    per-tile scales) or scaled (512 FP8 + 16 scale bytes + 64 bf16 rope), why, and what was
    assumed when the log does not settle it (None: the rule decides)."""

    raw: bool
    why: str
    assumed: str | None = None


# The DSA backends that keep the raw FP8 latent, with the first release that does
# (`calculate_mla_kv_cache_dim`): trtllm from 0.5.9, the release that adds it to the choices
# (server_args.py:169 and model_runner_kv_cache_mixin.py:223-230 in 0.5.9; :240-244 in 0.5.14;
# kv_cache_configurator.py:2005-2008 in 0.5.17, :3425-3440 in 0.5.23); tilelang from 0.5.10
# (ROCm: mixin :261-266 in 0.5.10; CUDA refuses an FP8 cache with it from 0.5.17,
# arg_groups/overrides.py:1554-1574, and keeps it raw with both phases on it in 0.5.23,
# kv_cache_configurator.py:3450-3456); aiter from 0.5.14 (ROCm, mixin :246-252);
# triton from 0.5.20 (ROCm only, kv_cache_configurator.py:2573-2578 in 0.5.20).
_RAW_SINCE: dict[str, Version] = {"trtllm": (0, 5, 9), "tilelang": (0, 5, 10),
                                  "aiter": (0, 5, 14), "triton": (0, 5, 20)}
# 0.5.10 sets trtllm for both phases of an FP8 cache on SM100 (server_args.py:1464-1467;
# 0.5.14 :3446-3450; 0.5.23 arg_groups/overrides.py:714-720, flashmla_kv on Hopper), where
# 0.5.9 sets flashmla_auto / flashmla_kv on every GPU (server_args.py:1157-1162). FP8 is the
# DSA default only on SM100 (0.5.23 overrides.py:532-538): the default's layout there.
TRTLLM_DEFAULT_SINCE: Version = (0, 5, 10)


def dsa_fp8_layout(args: SizingArgs, version: Version) -> DsaLayout:
    """The FP8 latent layout of a DSA pool on this release with these backends."""
    pre, dec = args.dsa_prefill_backend, args.dsa_decode_backend
    if pre is None and dec is None:
        if args.dsa_layout_raw is not None:
            return DsaLayout(args.dsa_layout_raw, ("raw" if args.dsa_layout_raw else "scaled")
                             + " FP8 latent, the layout the logged pool line's size shows")
        if version < TRTLLM_DEFAULT_SINCE:
            return DsaLayout(False, "flashmla DSA backends, the FP8 default before 0.5.10")
        return DsaLayout(True, "raw FP8 latent of trtllm, SM100's default DSA backend",
                         "DSA backends not in the log: the raw 576-B layout of SM100's default "
                         "trtllm backend assumed (FP8 is the DSA default only on SM100; "
                         "Hopper's flashmla_kv stores 656 B)")
    chosen = {b for b in (pre, dec) if b}
    raw = sorted(b for b in chosen if b in _RAW_SINCE and version >= _RAW_SINCE[b])
    if not raw:
        return DsaLayout(False, f"scaled FP8 latent of the {'/'.join(sorted(chosen))} DSA "
                                "backend(s)")
    why = f"raw FP8 latent ({'/'.join(raw)} DSA backend)"
    assumed = None
    if raw == ["tilelang"] and version < (0, 5, 17):
        assumed = ("tilelang with an FP8 cache: ROCm's raw layout assumed (CUDA stores the "
                   "scaled 656-B one before 0.5.17)")
    elif pre and dec and pre != dec and version >= (0, 5, 20):
        # 0.5.20+: a PD-disaggregated server keeps its own role's backend's layout
        # (kv_cache_configurator.py:2557-2568 in 0.5.20, :3425-3437 in 0.5.23).
        assumed = (f"prefill {pre} / decode {dec}: a colocated server assumed (a "
                   "disaggregated one keeps only its role's backend's layout)")
    return DsaLayout(True, why, assumed)


def dsa_raw_layout(args: SizingArgs, version: Version) -> bool:
    """Do these DSA backends keep the FP8 latent raw on this release?"""
    return dsa_fp8_layout(args, version).raw


def mla_store_dim(kv_lora: int, rope: int, dtype: str, version: Version, *, dsa: bool,
                  args: SizingArgs, budget: bool) -> tuple[int, str, str | None]:
    """(bytes per layer of the latent, why, what was assumed): DSA's FP8 layout stores 512
    FP8 + 16 scale bytes + 64 rope values in bf16 = 656 (NSATokenToKVPool,
    memory_pool.py:1565-1608 in 0.5.5; calculate_mla_kv_cache_dim, kv_cache_configurator.py:
    3412-3475 in 0.5.23), except on the raw layouts of `dsa_fp8_layout`. The pool stores it
    from 0.5.3, the first release with the NSA pool (MLATokenToKVPool's hard-coded
    `kv_cache_dim = 656` when use_nsa and fp8_e4m3, memory_pool.py:1052-1058 in 0.5.3,
    :1246-1251 in 0.5.4, which NSATokenToKVPool sets); the budget divides by it only from
    0.5.17 (pool_configurator.py:252-262 in 0.5.18; 576 in :124 of 0.5.11-0.5.16)."""
    raw = kv_lora + rope
    if not dsa or dtype != "fp8_e4m3":
        return raw, f"{kv_lora} + {rope}", None
    first = (0, 5, 17) if budget else (0, 5, 3)
    if version < first:
        return raw, f"{kv_lora} + {rope} (SGLang < {'.'.join(map(str, first))})", None
    layout = dsa_fp8_layout(args, version)
    if layout.raw:
        return raw, f"{kv_lora} + {rope}, {layout.why}", layout.assumed
    scaled = kv_lora + kv_lora // 128 * 4 + rope * 2
    return (scaled, f"{kv_lora} FP8 + {kv_lora // 128 * 4} scale B + {rope} x 2 B rope "
                    f"= {scaled}, {layout.why}", layout.assumed)


def dsa_indexer_bytes(index_head_dim: int, index_kpool: int, layers: int,
                      version: Version) -> int:
    """Indexer keys per token in the budget: (ih + ih // 128 x 4) x layers x 1 B (uint8
    buffer), from 0.5.4 (model_runner.py:1406-1418); 0.5.23 divides by index_kpool
    (pool_configurator.py:560-575). 0.5.3 counts none, in the budget or the printed size
    (model_runner.py:1274-1279, memory_pool.py:1096-1102 in 0.5.3)."""
    if version < (0, 5, 4):
        return 0
    per = index_head_dim + index_head_dim // 128 * 4
    if version >= (0, 5, 23):
        per = -(-per // max(1, index_kpool))
    return per * layers


def draft_layers_counted(version: Version, args: SizingArgs) -> bool:
    """From 0.5.14 the target budgets the EAGLE/MTP draft's KV layers in its own cell
    (pool_configurator.py:134-145 in 0.5.14 with model_runner.py:435-456; :260-320 in 0.5.23);
    before, the draft sizes its own pool afterwards (`draft_runner_cache_size`)."""
    algo = (args.speculative_algorithm or "").upper()
    return version >= (0, 5, 14) and algo in ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "MTP")


def add_draft(cell: int, layers: int, draft: int, version: Version) -> int:
    """cell x (1 + d / L): int(cell * (1 + d/L)) in 0.5.14-0.5.15 (pool_configurator.py:142-145
    in 0.5.14), cell + int(cell * d / L) from 0.5.16 (:311-316 in 0.5.23)."""
    if draft <= 0 or layers <= 0:
        return cell
    if version < (0, 5, 16):
        return int(cell * (1 + draft / layers))
    return cell + int(cell * draft / layers)
