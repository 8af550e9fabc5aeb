"""Turning one parsed SGLang run (kvtui.core.state.Run) into calculator inputs.

Why a separate step: the log states facts at different strengths (a resolved dtype line vs a
guess from the model dtype, tp_size from the dump vs counted rank tags). Each fallback used here
is written into the calculator's notes, so the report says what was assumed.

- ``calculator_from_run(run, model=None, checkpoint=None, **overrides) -> Calculator | None``:
  what `ENGINE.calculator` returns; None when the run has no KV pool and no capacity line.
- ``whatif_for_run(run, model=None, checkpoint=None) -> WhatIf | None``: its report.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from kvtui.core import dtypes
from kvtui.core.capacity.modelspec import ModelSpec
from kvtui.core.capacity.parallel import Parallel
from kvtui.core.capacity.presets import preset_spec, spec_for_run
from kvtui.core.deployment import layout
from kvtui.core.report_types import WhatIf
from kvtui.core.values import as_float as _float
from kvtui.core.values import as_int as _int
from kvtui.engines.sglang.calculator import Calculator, MemoryFacts
from kvtui.engines.sglang.ranks import tag_floors
from kvtui.engines.sglang.sizing.args import SizingArgs
from kvtui.engines.sglang.sizing.cells import TRTLLM_DEFAULT_SINCE
from kvtui.engines.sglang.sizing.families import (
    DSA_BY_CLASS,
    DSV4_ARCH,
    DSV4_AUTO_KV_DTYPE,
    DSV4_PAGE_SIZE,
    DSV4_RUNNING_DEFAULT,
)
from kvtui.engines.sglang.version import SGLANG_LINE, infer_version

if TYPE_CHECKING:
    from kvtui.core.checkpoint import CheckpointFacts


def _parallel(run: Any) -> tuple[Parallel, list[str]]:
    """The layout the report shows (`kvtui.core.deployment.layout`: one figure everywhere), as
    the calculator's Parallel."""
    lay = layout(run, tag_floors(run))
    notes = list(lay.notes)
    if lay.tp is None:
        notes.append("tp_size unknown: assumed 1 (pass --tp)")
    return Parallel(tp=lay.tp or 1, attn_dp=lay.attn_dp or 1, pp=lay.pp or 1), notes


def _page_size(run: Any, tokens: int | None) -> tuple[int, str | None]:
    ps = _int((run.server_args or {}).get("page_size"))
    if ps:
        return ps, None
    if _model_class(run) == DSV4_ARCH:
        return DSV4_PAGE_SIZE, (f"page_size not logged: {DSV4_PAGE_SIZE}, which SGLang sets for "
                                f"{DSV4_ARCH} (128 on NPU)")
    if tokens and tokens >= 100_000:
        # Large page sizes (Ascend NPU defaults to 128) leave the count a multiple of the page;
        # the guess only moves the pool's padding rows, at most 0.13% at this size.
        for cand in (128, 64):
            if tokens % cand == 0:
                return cand, (f"page_size not logged: {cand} inferred from the page-aligned "
                              f"token count {tokens}")
    return 1, None


def _model_spec(run: Any, model: Any, checkpoint: CheckpointFacts | None,
                notes: list[str]) -> tuple[ModelSpec | None, str]:
    """(spec, why): the core's order (`spec_for_run`), else why none, naming the model class
    SGLang's weight line printed."""
    sa = run.server_args or {}
    found = spec_for_run(model, checkpoint, sa, notes, args_name="server_args")
    if found is not None:
        return found
    path = sa.get("model_path")
    cls = _model_class(run)
    return None, ((f"model_path {path!r} matches no preset" if path else
                   "the log names no model path") + (f" (architecture {cls})" if cls else "")
                  + "; pass --model for the theory cross-check")


def _model_class(run: Any) -> str | None:
    """The served model's class as SGLang's weight line prints it (the draft's is kept apart,
    `run.draft_weights`): the architecture SGLang's own dtype checks key on."""
    return next((str(w["model_class"]) for w in run.weights.values() if w.get("model_class")),
                None)


model_class = _model_class  # the engine's advice reads it too


def _unmodelled_dtype(run: Any, pool: Any) -> bool:
    eff, _, _ = run.effective
    return any(d and d not in dtypes.CANONICAL for d in (eff, pool.dtype if pool else None))


def _current_dtype(run: Any, pool: Any, spec: ModelSpec | None,
                   checkpoint: CheckpointFacts | None,
                   notes: list[str]) -> tuple[str, str, bool | None, bool]:
    """(KV dtype in effect, model dtype, does the checkpoint declare an FP8 KV cache, was the
    KV dtype assumed: the log names none)."""
    eff, basis, _ = run.effective
    dtype = eff if eff in dtypes.CANONICAL and eff != "auto" else None
    if dtype is None and pool is not None and pool.dtype:
        dtype = pool.dtype
    model_dtype = run.logged_model_dtype or (spec.model_dtype if spec else None) or "bf16"
    assumed = dtype is None
    if dtype is None and _model_class(run) == DSV4_ARCH:
        dtype = DSV4_AUTO_KV_DTYPE
        notes.append(f"KV dtype not in the log: assumed {dtype}, which SGLang makes of `auto` "
                     f"for {DSV4_ARCH} (bfloat16 on NPU)")
    elif dtype is None:
        dtype = model_dtype
        notes.append(f"{_ASSUMED_MODEL_DTYPE} {dtype}")
    else:
        notes.append(f"current KV dtype {dtype} (from {basis})")
    kv_fp8: bool | None = None
    if spec is not None and spec.kv_cache_quant_algo:
        kv_fp8 = spec.kv_cache_quant_algo.upper() == "FP8"
    if run.configured_kv_dtype == "auto" and dtype == "fp8_e4m3" and kv_fp8 is None:
        kv_fp8 = True
        notes.append("`auto` resolved to FP8: from 0.5.3 SGLang does so when the checkpoint "
                     "declares kv_cache_quant_algo FP8, so the checkpoint most likely does (it "
                     "was not read)")
    elif run.configured_kv_dtype is None and dtype == "fp8_e4m3" and kv_fp8 is None \
            and not assumed:
        # no args dump: an explicit fp8_e4m3 and `auto` on an FP8-declaring checkpoint
        # (from 0.5.3) read the same in the pool's line
        # (0.5.23 srt/arg_groups/overrides.py:903 and :532: `auto` is FP8 for DeepSeek V4, and
        # for DeepSeek DSA on SM100+, whatever the checkpoint says; for DeepSeek V4 already in
        # 0.5.12 arg_groups/deepseek_v4_hook.py:27-28)
        notes.append("the KV dtype setting is not in the log: FP8 by --kv-cache-dtype "
                     "fp8_e4m3, or by `auto` (from 0.5.3 on a checkpoint that declares "
                     "kv_cache_quant_algo FP8; also by default for some models: DeepSeek V4 "
                     "from 0.5.12, its first release, and DeepSeek DSA on SM100+)")
    ckpt_algo = checkpoint.kv_cache_quant_algo if checkpoint is not None else None
    if isinstance(ckpt_algo, str):
        kv_fp8 = ckpt_algo.upper() == "FP8"
    return dtype, model_dtype, kv_fp8, assumed


def _memory(run: Any, sa: dict[str, Any], par: Parallel, notes: list[str]) -> MemoryFacts | None:
    """The memory lines the budget is computed from (weight load before/after, the fraction)."""
    mfs = _float(sa.get("mem_fraction_static"))
    avails = [w.get("avail_gib") for w in run.weights.values() if w.get("avail_gib") is not None]
    usages = [w.get("usage_gib") for w in run.weights.values() if w.get("usage_gib") is not None]
    if mfs is not None and not 0 < mfs < 1:
        notes.append(f"mem_fraction_static {mfs!r} in the dump makes no sense: memory lines unused")
        mfs = None
    pre_ok = run.weights_begin and min(run.weights_begin.values()) > 0
    reserved = max(run.kv_reserved.values()) if run.kv_reserved else 0.0
    if reserved:
        notes.append(f"SGLang reserved {reserved:g} GiB of the KV budget for multimodal memory "
                     "it allocates after sizing the pool: the rest memory is net of it")
    if pre_ok and avails and mfs is not None:
        return MemoryFacts(pre_gib=min(run.weights_begin.values()), avail_gib=min(avails),
                           mem_fraction_static=mfs, weights_gib=max(usages) if usages else None,
                           tp=par.tp, reserved_gib=reserved)
    return None


# Model classes that only one family's checkpoints name, all with the dims of one preset: a
# log that names such a class but no known checkpoint is sized with that preset when, and only
# when, its pool line is what the preset gives (a GLM-5.x config whose indexers are partly
# "shared", or a test model of the class, prints another size and stays log-only). Why not the
# logged bytes/token scaled whole: a DSA pool's indexer keys are uint8 whatever the KV dtype
# (`dsa_indexer_bytes`), so scaling them with the latent misses the bf16 row by ~20%.
CLASS_PRESETS: dict[str, str] = {"DeepseekV32ForCausalLM": "deepseek-v3.2",
                                 "GlmMoeDsaForCausalLM": "glm-5"}
assert set(CLASS_PRESETS) <= set(DSA_BY_CLASS)


def calculator_from_run(run: Any, model: Any = None,
                        checkpoint: CheckpointFacts | None = None, *,
                        tp: int | None = None, page_size: int | None = None,
                        attn_dp: int | None = None, context_len: int | None = None,
                        sglang_version: str | None = None) -> Calculator | None:
    """Calculator inputs from a run; None when the run has no KV pool and no capacity line.

    `checkpoint` (what was read of the checkpoint itself): its `model_config` is used
    as the model spec when no `model` is given, its `kv_cache_quant_algo` decides what `auto`
    means, and its `sglang_version` pins the version range. The keyword overrides replace what the
    log says (or fails to say) about the layout.
    """
    def build(class_preset: bool) -> Calculator | None:
        return _calculator(run, model, checkpoint, class_preset=class_preset, tp=tp,
                           page_size=page_size, attn_dp=attn_dp, context_len=context_len,
                           sglang_version=sglang_version)

    calc = build(True)
    if calc is not None and calc.spec is not None and calc.spec_reason.startswith(_BY_CLASS):
        cal = calc.calibration()
        if not (cal and cal["within_rounding"]):
            calc = build(False)
    if calc is not None and calc.current_dtype_assumed and calc.spec is not None:
        calc = _dtype_by_pool(calc)
    return calc


def _dtype_by_pool(calc: Calculator) -> Calculator:
    """The log names no KV dtype and the model dtype assumed in its place does not give the
    logged pool line: the one 16- or 8-bit dtype whose cell prints that line exactly (within
    the 0.01 GiB rounding) is the current one instead, still marked assumed. Why: a paste that
    kept the pool line but not the dtype line otherwise gets a what-if whose every row starts
    from the wrong dtype (an FP8 NSA pool read as BF16 showed its bf16 row at the FP8 tokens)."""
    cal = calc.calibration()
    if cal is None or cal["within_rounding"]:
        return calc
    fits = []
    for other in ("bf16", "fp8_e4m3"):
        if other == calc.current_dtype:
            continue
        alt = replace(calc, current_dtype=other, notes=list(calc.notes))
        _settle_dsa_layout(alt)
        alt_cal = alt.calibration()
        if alt_cal is not None and alt_cal["within_rounding"]:
            fits.append((alt, alt_cal))
    if len(fits) != 1:
        return calc
    alt, alt_cal = fits[0]
    same = " (fp8_e5m2 has the same size)" if alt.current_dtype == "fp8_e4m3" else ""
    alt.notes = [n for n in alt.notes if not n.startswith(_ASSUMED_MODEL_DTYPE)]
    alt.notes.insert(0, f"KV dtype not in the log: {alt.current_dtype}{same}, the dtype whose "
                        f"cell prints the logged pool line ({alt_cal['computed_bytes_per_token']:,}"
                        f" B per row; the model dtype {calc.current_dtype} would print "
                        f"{cal['computed_bytes_per_token']:,})")
    return alt


_BY_CLASS = "by the model class"
_ASSUMED_MODEL_DTYPE = "KV dtype not in the log: assumed the model dtype"


def _class_preset(run: Any, model: Any, pool: Any) -> tuple[ModelSpec, str] | None:
    """The preset `CLASS_PRESETS` gives the run's model class, to be confirmed by the pool."""
    cls = _model_class(run)
    pid = CLASS_PRESETS.get(cls or "")
    if pid is None or pool is None or model is not None:
        return None  # a checkpoint's own config was taken before (`spec_for_run`)
    spec = preset_spec(pid)
    return spec, (f"{_BY_CLASS} {cls} ({DSA_BY_CLASS[cls or '']}): the preset "
                  f"{spec.name}, whose pool size the logged pool line reproduces")


def _calculator(run: Any, model: Any, checkpoint: CheckpointFacts | None, *,
                class_preset: bool, tp: int | None, page_size: int | None,
                attn_dp: int | None, context_len: int | None,
                sglang_version: str | None) -> Calculator | None:
    pool = run.primary_kv_pool()
    cap = run.primary_capacity()
    if pool is None and cap is None:
        return None
    sa = run.server_args or {}
    notes: list[str] = []
    spec, reason = _model_spec(run, model, checkpoint, notes)
    by_class = _class_preset(run, model, pool) if spec is None and class_preset \
        else None
    if by_class is not None:
        spec, reason = by_class
    # -- pool facts -------------------------------------------------------------------------
    tokens = pool.tokens if pool is not None else None
    if cap and cap.get("max_total_num_tokens") and (tokens is None or pool is None):
        tokens = cap.get("max_total_num_tokens")
    swa_logged = dict(run.swa_split) if run.swa_split else None
    pool_is_swa = False
    # The log decides whether there is an SWA pool whenever it shows a pool line.
    swa_pool: bool | None = (bool(swa_logged) or any(p.label in ("Full", "SWA")
                                                     for p in run.kv_pools())) \
        if pool is not None else None
    if swa_logged and pool is not None and (pool.label == "SWA" or (
            pool.label is None and pool.tokens == swa_logged.get("swa_tokens")
            and pool.tokens != swa_logged.get("full_tokens"))):
        pool_is_swa = True
        tokens = swa_logged.get("full_tokens")
        notes.append("the pool line kept for this rank is the SWA sub-pool; the Full pool "
                     f"holds {tokens} tokens (from the sliding-window split line)")
    par, pnotes = _parallel(run)
    if tp is not None or attn_dp is not None:
        par = Parallel(tp=tp or par.tp, attn_dp=attn_dp or par.attn_dp, pp=par.pp)
        pnotes = [f"parallel layout given: tp {par.tp}, attention DP {par.attn_dp}"]
    notes.extend(pnotes)
    if page_size:
        page = page_size
    else:
        page, pnote = _page_size(run, tokens)
        if pnote:
            notes.append(pnote)
    if _unmodelled_dtype(run, pool):
        return None  # a KV dtype this calculator does not model (e.g. int8): no what-if
    dtype, model_dtype, kv_fp8, assumed = _current_dtype(run, pool, spec, checkpoint, notes)
    memory = _memory(run, sa, par, notes)
    mamba = run.mamba_pool()
    mamba_logged = None
    if mamba is not None:
        mamba_logged = {"slots": mamba.slots, "conv_gib": mamba.conv_gib,
                        "ssm_gib": mamba.ssm_gib}
    ctx = context_len or _int(sa.get("context_length")) or (
        cap.get("context_len") if cap else None)
    if not ctx and spec is not None and _int(spec.max_position_embeddings):
        ctx = _int(spec.max_position_embeddings)
        notes.append(f"context_len not logged: the model's max_position_embeddings {ctx}")
    pool_gib = None
    if pool is not None:
        pool_gib = {"k_gib": pool.k_gib, "v_gib": pool.v_gib, "kv_gib": pool.kv_gib}
    # What a line logged while the arguments were resolved stated (the DSA backends) holds
    # where no dump does.
    args = SizingArgs.from_server_args(
        {**run.early_args, **{k: v for k, v in sa.items() if v is not None}})
    swa_line = _swa_pool_line(run, pool)
    ratio = _logged_swa_ratio(swa_line, page)
    if swa_line is not None and ratio is not None and "swa_full_tokens_ratio" not in args.given \
            and ratio != args.swa_full_tokens_ratio:
        args = args.with_changes(swa_full_tokens_ratio=ratio)
        notes.append(f"swa_full_tokens_ratio not in an args dump: {ratio:g}, the split the "
                     f"SWAKVPool line shows (swa size {swa_line['swa_tokens']}, full size "
                     f"{swa_line['full_tokens']})")
    known = sglang_version or (checkpoint.engine_version("sglang") if checkpoint else None)
    version = infer_version(run, known)
    if sglang_version:
        version = SGLANG_LINE.between(version.lo, version.hi,
                                      (f"--sglang-version {sglang_version}",))
    calc = Calculator(
        architecture=_model_class(run),
        current_dtype=dtype, current_dtype_assumed=assumed, tokens=tokens, context_len=ctx,
        parallel=par, page_size=page,
        spec=spec, spec_reason=reason, pool_gib=pool_gib, version=version,
        memory=memory, mrr_user=args.max_running_requests,
        mrr_logged=cap.get("max_running_requests") if cap else None,
        disable_radix_cache=args.disable_radix_cache,
        mamba_logged=mamba_logged, swa_pool=swa_pool, swa_logged=swa_logged,
        pool_is_swa=pool_is_swa, checkpoint_kv_fp8=kv_fp8, model_dtype=model_dtype, notes=notes,
        args=args, draft_pools=_draft_pools(run), model_path=sa.get("model_path"),
        swa_pool_gib=_float(swa_line.get("gib")) if swa_line else None,
    )
    if "max_running_requests" not in sa:
        if calc.architecture == DSV4_ARCH:
            calc.mrr_user = DSV4_RUNNING_DEFAULT
            calc.notes.append(f"max_running_requests not in an args dump: {DSV4_RUNNING_DEFAULT}, "
                              f"which SGLang sets for {DSV4_ARCH} when the flag is not given")
        _operator_cap(calc, _draft_seen(run))
    _settle_dsa_layout(calc)
    return calc


def _settle_dsa_layout(calc: Calculator) -> None:
    """An FP8 DSA pool whose backends the log does not name: from 0.5.10 its latent is raw
    on SM100's default trtllm and scaled on Hopper's flashmla_kv (`dsa_fp8_layout`), and the
    pool line's size tells which, when exactly one of the two reproduces it."""
    a = calc.sargs
    if calc.spec is None or not calc.spec.is_dsa or calc.current_dtype != "fp8_e4m3" \
            or a.dsa_prefill_backend or a.dsa_decode_backend \
            or calc.rules_version < TRTLLM_DEFAULT_SINCE:
        return
    fits = []
    for raw in (True, False):
        calc.args = a.with_changes(dsa_layout_raw=raw)
        cal = calc.calibration()
        if cal is not None and cal.get("ok"):
            fits.append(raw)
    calc.args = a
    if len(fits) == 1:
        calc.args = a.with_changes(dsa_layout_raw=fits[0])
        calc.notes.append("DSA backends not in the log: the pool line's size is the "
                          + ("raw 576-B FP8 latent (trtllm, SM100's default)" if fits[0] else
                             "scaled 656-B FP8 latent (flashmla, Hopper's default)"))


def _swa_pool_line(run: Any, pool: Any) -> dict[str, Any] | None:
    """The SWAKVPool line of the pool's rank (both sub-pools' total and their token counts),
    unless it states a virtual-address bound (`post_capture`: 0.5.18+ "VA upper bound"), not
    the memory the pool holds."""
    line = run.swa_pools.get(pool.rank) if pool is not None else None
    if not line or line.get("post_capture"):
        return None
    return dict(line)


def _logged_swa_ratio(line: dict[str, Any] | None, page: int) -> float | None:
    """The swa_full_tokens_ratio the logged split was made with: SGLang sizes the SWA pool as
    align(int(full x ratio)) (0.5.9 model_runner_kv_cache_mixin.py:325-331), so swa / full
    gives it to within a page; the two-decimal value a flag takes when that reproduces the
    split (0.8, 1.0: 0.5.9 server_args.py:1418 resets it to 1.0 for MiMo-V2-Flash with the
    hierarchical cache)."""
    if not line:
        return None
    swa, full = _int(line.get("swa_tokens")), _int(line.get("full_tokens"))
    if not swa or not full or not 0 < swa <= full:
        return None
    ratio = swa / full
    near = round(ratio, 2)
    if 0 < near <= 1 and abs(full * near - swa) <= max(1, page):
        return near
    return ratio


# SGLang's own cap under speculative decoding: with a speculative algorithm and no
# --max-running-requests it sets max_running_requests = 48 (0.5.5 srt/server_args.py:1533-1537
# for EAGLE, EAGLE3 and STANDALONE, :1621-1625 for NGRAM; 0.5.23
# srt/arg_groups/speculative_hook.py:1086-1094 for the EAGLE family, :438-446 DFlash, :852-860
# DSpark, :992-1000 frozen-KV MTP, :1294-1302 NGRAM), which the scheduler logs per attention-DP
# rank as 48 // dp_size (0.5.5 srt/managers/tp_worker.py:281-289).
SPECULATIVE_RUNNING_DEFAULT = 48


def _draft_seen(run: Any) -> str | None:
    """What in the log shows a speculative draft model (None: nothing does; an NGRAM draft loads
    no model, so a log may run speculative decoding and show none)."""
    if run.draft_kv_pools():
        return "a draft model's KV pool"
    if run.draft_weights:
        return "a draft model's weight load"
    return None


def _operator_cap(calc: Calculator, draft: str | None = None) -> None:
    """A logged max_running_requests below what SGLang's own rule gives for the logged pool,
    in a log without the args dump: --max-running-requests lowers it so (the rule's other caps,
    the Mamba slots, are in the rule), and so does SGLang's speculative-decoding default of 48
    (`SPECULATIVE_RUNNING_DEFAULT`); either way the what-if keeps it for every row
    (guqiong96/Lsglang#9 logged max_running_requests=1 beside a pool SGLang gives 2,048; SGLang's
    docs notebooks run with --max-running-requests 128, sglang/test/doc_patch.py:18,52 in
    0.5.23, and print 128 beside a 20,480-token pool). The note names the speculative default
    when the logged figure is its figure: the only cause when `draft` (what shows a draft model)
    is given, one of the two otherwise."""
    from kvtui.engines.sglang.scenario import build_row

    logged = calc.mrr_logged
    if not isinstance(logged, int) or logged <= 0 or not calc.tokens:
        return
    own = build_row(calc, calc.current_dtype).max_running_requests
    if own is None or logged >= own:
        return
    dp = max(1, calc.parallel.attn_dp)
    dsv4 = calc.architecture == DSV4_ARCH  # its own default, which the speculative one never is
    rule = f"SGLang sets for {DSV4_ARCH}" if dsv4 else "SGLang's rule gives this pool"
    head = f"max_running_requests={logged:,} logged, below the {own:,} {rule}, and no args dump"
    default = SPECULATIVE_RUNNING_DEFAULT
    if dsv4 or logged != default // dp:
        calc.mrr_user = logged * dp
        calc.notes.append(f"{head}: read as --max-running-requests {logged * dp:,}, kept for "
                          "every row")
        return
    calc.mrr_user = default
    per_rank = f" ({logged:,} per attention-DP rank)" if dp > 1 else ""
    if draft is not None:
        calc.notes.append(f"{head}, with {draft} in the log: SGLang's speculative-decoding "
                          f"default {default}{per_rank}, which it sets when "
                          "--max-running-requests is not given, kept for every row")
    else:
        calc.notes.append(f"{head}: --max-running-requests {default}, or SGLang's "
                          f"speculative-decoding default {default}{per_rank}, which it sets "
                          "when speculative decoding is on and the flag is not given (no draft "
                          "model shows in the log; an NGRAM draft loads none), kept for every "
                          "row")


def _draft_pools(run: Any) -> list[dict[str, Any]]:
    """The draft model's pool lines, reported by role and never taken as the target's."""
    out = []
    for p in run.draft_kv_pools():
        out.append({"role": "draft", "rank": p.rank, "tokens": p.tokens, "k_gib": p.k_gib,
                    "v_gib": p.v_gib, "kv_gib": p.kv_gib})
    return out


def whatif_for_run(run: Any, model: Any = None, checkpoint: CheckpointFacts | None = None,
                   dtypes: list[str] | None = None,
                   context_lengths: list[int] | None = None,
                   **overrides: Any) -> WhatIf | None:
    """The `whatif` object of the report for one run, or None when the log has no KV pool."""
    calc = calculator_from_run(run, model, checkpoint, **overrides)
    if calc is None:
        return None
    return calc.report(dtypes, context_lengths)
