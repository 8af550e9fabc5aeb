"""Turning one parsed vLLM run (kvtui.core.state.Run) into calculator inputs.

Each fallback is written into the calculator's notes, so the what-if says what it assumed: a TP
or PP the worker prefixes imply (the report's layout, `kvtui.core.deployment`: one figure for
the header and the what-if), a block size inferred from the printed concurrency, the
model dtype read from the engine's config line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kvtui.core import dtypes
from kvtui.core.capacity import ModelSpec, Parallel, spec_for_run
from kvtui.core.deployment import layout, proven, sized_label, world_label
from kvtui.core.values import as_float as _float
from kvtui.core.values import as_int as _int
from kvtui.engines.vllm import coverage, kvbytes
from kvtui.engines.vllm.calculator import VALUE_COST, Calculator
from kvtui.engines.vllm.sizing import rules_for
from kvtui.engines.vllm.version import default_utilization, infer_version

if TYPE_CHECKING:
    from kvtui.core.checkpoint import CheckpointFacts

_V0_HINTS = frozenset({"engine:v0", "capacity:cpu_blocks", "stats:v0"})


def v0_engine(run: Any) -> bool:
    """Does the run show vLLM's V0 engine (its config, block or stats lines, or the total GPU
    memory V0's profiler prints; V1's start-up summary prints it too, with the free memory
    beside it: parsers/vllm/startup.py `_FREE`)?"""
    return bool(run.hints & _V0_HINTS) or any(p.get("total_gib") and p.get("free_gib") is None
                                              for p in run.memory_profile.values())


def _model_dtype(run: Any, spec: ModelSpec | None) -> str:
    """The model dtype vLLM's `auto` KV cache follows: the config line's `dtype=torch.bfloat16`,
    else the checkpoint's torch_dtype, else bf16."""
    raw = (run.server_args or {}).get("dtype")
    d = dtypes.normalize(raw)
    if d in ("bf16", "fp16", "fp32"):
        return d
    if spec is not None and spec.model_dtype in ("bf16", "fp16", "fp32"):
        return spec.model_dtype
    return "bf16"


def _spec(run: Any, model: Any, checkpoint: CheckpointFacts | None,
          notes: list[str]) -> tuple[ModelSpec | None, str]:
    """(spec, why): the core's order (`spec_for_run`), else why none, naming the architecture
    vLLM's config line printed."""
    sa = run.server_args or {}
    found = spec_for_run(model, checkpoint, sa, notes, args_name="vLLM's")
    if found is not None:
        return found
    path = sa.get("model_path")
    arch = sa.get("architecture")
    return None, ((f"model {path!r} matches no preset" if path else "the log names no model")
                  + (f" (architecture {arch})" if arch else "")
                  + "; pass --model for the arithmetic")


def _rank_key(rank: str) -> tuple[tuple[int, ...], str]:
    return tuple(int("".join(c for c in t if c.isdigit()) or 0) for t in rank.split()), rank


def _pow2(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


def _parallel(run: Any, tp: int | None,
              notes: list[str]) -> tuple[Parallel, dict[str, Any] | None]:
    """TP and PP as the report's header has them (`kvtui.core.deployment.layout`: the
    arguments' sizes, else what the rank tags prove), and, when a size came from rank tags, where
    it came from (the what-if JSON's `basis`, `ranks_seen` and `label`; None otherwise).

    vLLM tags a worker's log prefix with each degree above 1 (`Worker_PP1_TP3`:
    setup_proc_title_and_log_prefix, v1/executor/multiproc_executor.py:672-679 in 0.10.2,
    :1214-1227 in 0.33.0), which parsers/vllm reads as the rank tags "PP1 TP3"."""
    lay = layout(run)
    ranks = run.ranks or ()
    basis: dict[str, str] = {k: lay.basis[k] for k in ("tp", "pp") if k in lay.basis}
    pp = lay.pp or 1
    if lay.basis.get("pp") == "rank tags":
        notes.append(f"pipeline_parallel_size not in the log: "
                     f"{sized_label('PP', lay.pp, 'rank tags', ranks)} from the worker "
                     f"prefixes (Worker_PP{pp - 1}); each GPU holds the KV cache of about "
                     f"1/{pp} of the layers")
    if tp is not None:
        notes.append(f"parallel layout given: TP {tp}")
        basis["tp"] = "given"
        par = Parallel(tp=tp, pp=pp)
    elif lay.tp is None and lay.world is not None:
        # 0.7-0.10.0's `VllmWorker rank=N` numbers workers over TP x PP (parsers/prefix.py
        # `vllm_rank`, multiproc_executor.py:81-87 in 0.9.2): the product is proven, not the
        # split. A GPU's KV bytes per token are about the same for any TP x PP of one product
        # (KV heads / TP, layers / PP) while TP <= the KV heads, so size as TP = the product.
        assumed = _pow2(lay.world) // pp if lay.pp else _pow2(lay.world)
        notes.append(f"tensor_parallel_size not in the log: the worker tags (VllmWorker "
                     f"rank=N, vLLM 0.7-0.10.0) count TP and PP together and prove "
                     f"{world_label(lay.world)}; sized as TP {max(1, assumed)}, PP {pp} "
                     "(pass --tp)")
        basis["world"] = "rank tags"
        par = Parallel(tp=max(1, assumed), pp=pp)
    elif lay.tp is None:
        why = ""
        if proven(ranks, "PP") is not None:
            # a worker's prefix names TP only when tensor_parallel_size > 1 (the same lines)
            why = "; the Worker_PPn prefixes name no TP rank, as vLLM's do when TP is 1"
        notes.append(f"tensor_parallel_size not in the log: {sized_label('TP', None, None, ())}"
                     f"{why} (pass --tp)")
        par = Parallel(tp=1, pp=pp)
    else:
        if lay.basis.get("tp") == "rank tags":
            seen = proven(ranks, "TP") or lay.tp
            notes.append(f"tensor_parallel_size not in the log: "
                         f"{sized_label('TP', lay.tp, 'rank tags', ranks)} from the worker "
                         f"prefixes (Worker_TP{seen - 1} proves TP >= {seen}"
                         + (f"; sized as {lay.tp}, the next power of two" if lay.tp != seen
                            else "") + "); pass --tp to override")
        par = Parallel(tp=lay.tp, pp=pp)
    if "rank tags" not in basis.values():
        return par, None
    labels = {name: sized_label(name.upper(), value, basis.get(name), ranks)
              for name, value in (("tp", par.tp), ("pp", par.pp))
              if basis.get(name) == "rank tags"}
    if lay.world is not None and "tp" not in basis:
        labels["tp"] = sized_label("TP", None, None, (), assumed=par.tp)
        labels["world"] = world_label(lay.world)
    return par, {"basis": basis, "ranks_seen": sorted(ranks, key=_rank_key), "label": labels}


def _partition(run: Any) -> tuple[int, ...] | None:
    """The PP split vLLM logged ("Hidden layers were unevenly partitioned: [11,11,10]":
    get_pp_indices' default, which it prints only when the layers do not divide)."""
    raw = run.kv_layout.get("pp_partition")
    if not isinstance(raw, str):
        return None
    try:
        return tuple(int(p) for p in raw.split(","))
    except ValueError:
        return None


def _total_memory(run: Any, util: float | None) -> tuple[float | None, str]:
    """The GPU's memory: V0 prints it, and so does V1's start-up summary ("Free memory on
    device (F/T GiB)", INFO in 0.10.2 and 0.33.0, DEBUG in 0.14.0); else V1 only implies it,
    as the CUDA graph estimate over the utilization it is worth (gpu_worker.py:
    `cg_util_delta = estimate / total`)."""
    for prof in run.memory_profile.values():
        if prof.get("total_gib"):
            return float(prof["total_gib"]), ("the GPU's memory (logged: \"Free memory on "
                                              "device\")" if prof.get("free_gib") is not None
                                              else "total_gpu_memory (logged)")
    est = next((p["cuda_graph_gib"] for p in run.memory_profile.values()
                if p.get("cuda_graph_gib")), None)
    for prof in run.memory_profile.values():
        cur = prof.get("gpu_memory_utilization") or util
        other = prof.get("equivalent_gpu_memory_utilization") or \
            prof.get("suggested_gpu_memory_utilization")
        if est and cur and other and abs(cur - other) > 1e-4:
            total = est / abs(cur - other)
            return total, (f"estimate: CUDA graph memory {est} GiB is worth "
                           f"{abs(cur - other):.4f} of the utilization")
    return None, ""


def _extensible(run: Any) -> tuple[bool, dict[str, float] | None, float | None]:
    """(the pool was sized by 0.34's extensible KV cache, the "Memory after warmup" figures of
    the rank with the fewest blocks, the final pool's GiB per GPU): its lines are logged and no
    "Disabling the extensible KV cache" says it fell back to the profiling estimate. The final
    pool is the "Extended KV cache to N blocks (X GiB)" post-capture pool (the same N on every
    rank: the minimum over ranks, v1/worker/gpu_worker.py:1231-1238 in 0.34.0), else the
    warmup line's blocks."""
    profiles = list(run.memory_profile.values())
    extended = [p.kv_gib for p in run.pools.values()
                if p.kind == "kv" and p.post_capture and p.kv_gib is not None]
    if any(p.get("extensible") is False for p in profiles) or \
            not (extended or any(p.get("extensible") for p in profiles)):
        return False, None, None
    warm = [p for p in profiles if p.get("warmup_blocks") is not None]
    best = min(warm, key=lambda p: p["warmup_blocks"]) if warm else {}
    keys = ("warmup_free_gib", "kv_committed_gib", "transient_kept_gib", "transient_peak_gib",
            "requested_gib", "warmup_kv_gib")
    warmup = {k: float(best[k]) for k in keys if best.get(k) is not None}
    if "requested_gib" not in warmup:  # the utilization-cap warning states it too
        asked = [float(p["requested_gib"]) for p in profiles if p.get("requested_gib")]
        if asked:
            warmup["requested_gib"] = min(asked)
    gib = min(extended) if extended else warmup.get("warmup_kv_gib")
    return True, warmup or None, gib


def _extensible_total(warmup: dict[str, float] | None, util: float | None,
                      total: float | None, basis: str,
                      notes: list[str]) -> tuple[float | None, float | None, str]:
    """(utilization, the GPU's memory, its basis) under the extensible KV cache: the "Memory
    after warmup" line's requested GiB is ceil(total x utilization) (v1/worker/utils.py:742-743
    in 0.34.0), so one gives the other."""
    requested = (warmup or {}).get("requested_gib")
    if not requested:
        return util, total, basis
    if total is not None and util is None:
        util = round(requested / total, 4)
        notes.append(f"gpu_memory_utilization {util:g}: the requested {requested} GiB of the "
                     f"GPU's {total:.2f} GiB (\"Memory after warmup\")")
    elif total is None and util:
        total = requested / util
        basis = (f"the requested {requested} GiB over gpu_memory_utilization {util:g} "
                 "(\"Memory after warmup\")")
    return util, total, basis


def calculator_from_run(run: Any, model: Any = None,
                        checkpoint: CheckpointFacts | None = None, *,
                        tp: int | None = None, page_size: int | None = None,
                        attn_dp: int | None = None, context_len: int | None = None,
                        release: str | None = None) -> Calculator | None:
    """Calculator inputs from a vLLM run; None when it has neither a pool size nor a capacity
    line. `checkpoint` is duck-typed (kvtui.core.checkpoint.CheckpointFacts): its config.json is
    the model spec when no `model` is given; its installed vLLM pins the release."""
    cap = run.primary_capacity() or {}
    # (GiB, the line's words: None for V1's "Available KV cache memory", else the memory
    # profile's `kv_said`), the pools' first so that they win a tie
    budgets: list[tuple[float, str | None]] = [
        (p.kv_gib, None) for p in run.pools.values() if p.kind == "kv" and p.kv_gib is not None]
    budgets += [(p["kv_gib"], p.get("kv_said")) for p in run.memory_profile.values()
                if p.get("kv_gib") is not None]
    avails = [gib for gib, _ in budgets]
    said = min(budgets, key=lambda b: b[0])[1] if budgets else None
    if not cap and not avails:
        return None
    # 0.33 takes its multimodal frontend reservation out after printing "Available KV cache
    # memory" and logs what is left ("KV cache memory reduced to X GiB": parsers/vllm/startup.py
    # `parse_mm_reserved`): that is the budget the pool is sized by.
    # 0.34's extensible KV cache sizes the pool after warmup ("Extended KV cache to N blocks
    # (X GiB)", the same N on every rank: the minimum over ranks, v1/worker/gpu_worker.py:
    # 1231-1238 in 0.34.0): that, not the profiling estimate, is the budget (`_extensible`).
    ext, warmup, ext_gib = _extensible(run)
    # the profiling estimates that survive (a rank whose pool the post-capture line did not
    # replace, or the start-up summary's "kv cache memory in use")
    estimates = [p.kv_gib for p in run.pools.values() if p.kind == "kv" and not p.post_capture
                 and p.kv_gib is not None] + [gib for gib, how in budgets if how == "in_use"]
    if ext and estimates:
        # the profiling estimate ("Available KV cache memory") is the reserved capacity the
        # post-warmup pool cannot exceed (finalize_extensible_kv_cache,
        # v1/core/kv_cache_planning.py:1883-1884 in 0.34.0)
        warmup = {**(warmup or {}), "estimate_gib": min(estimates)}
    if ext_gib is not None:
        budgets = [(ext_gib, "extended")]
        avails, said = [ext_gib], "extended"
    left = [v for v in run.kv_budget_left.values() if v is not None]
    reserved = max(run.kv_reserved.values()) if run.kv_reserved else None
    if left:
        avails, said = [min(left)], None
    sa = run.server_args or {}
    notes: list[str] = []
    spec, reason = _spec(run, model, checkpoint, notes)
    par, par_origin = _parallel(run, tp, notes)
    model_dtype = _model_dtype(run, spec)
    eff, basis, _ = run.effective
    dtype = eff if eff and eff != "auto" else None
    if dtype is not None and dtype not in VALUE_COST:
        return None  # a KV dtype this calculator does not size (int8, turboquant, ...)
    assumed = dtype is None
    if dtype is None:
        dtype = model_dtype
        notes.append(f"KV dtype not in the log: `auto`, the model dtype {dtype}")
    else:
        notes.append(f"current KV dtype {dtype} (from {basis})")
    tokens = _int(cap.get("max_total_num_tokens"))
    blocks = _int(cap.get("gpu_blocks"))
    logged_block = _int(run.kv_layout.get("block_size")) or _int(cap.get("page_size"))
    if logged_block is None and tokens and blocks and tokens % blocks == 0:
        logged_block = tokens // blocks
    if cap.get("page_size_default"):
        notes.append(f"block size {cap['page_size']} not in the log: the release's default on "
                     "the device the pool line names")
    elif cap.get("page_size") and not run.kv_layout.get("block_size") and \
            not sa.get("page_size"):
        notes.append(f"block size {cap['page_size']} inferred from the printed concurrency "
                     "(concurrency = blocks x block size / max_model_len)")
    ctx = context_len or _int(sa.get("context_length")) or _int(cap.get("context_len"))
    if not ctx and spec is not None and _int(spec.max_position_embeddings):
        ctx = _int(spec.max_position_embeddings)
        notes.append(f"max_model_len not logged: the model's max_position_embeddings {ctx}")
    known = release or (checkpoint.engine_version("vllm") if checkpoint else None)
    vr = infer_version(run.hints, known or run.engine_version)
    v0 = v0_engine(run)
    util = _float(sa.get("gpu_memory_utilization")) or next(
        (p["gpu_memory_utilization"] for p in run.memory_profile.values()
         if p.get("gpu_memory_utilization")), None)
    if util is None and run.args_complete:
        # absent from a complete dump: the release's default (the parser does not fill it)
        util, why = default_utilization(vr, ext)
        notes.append(f"gpu_memory_utilization {util} not in the arguments: {why}")
    total, total_basis = _total_memory(run, util)
    initial_free = next((float(p["free_gib"]) for p in run.memory_profile.values()
                         if p.get("free_gib") is not None), None)
    if ext:
        util, total, total_basis = _extensible_total(warmup, util, total, total_basis, notes)
    usages = [w["usage_gib"] for w in run.weights.values() if w.get("usage_gib") is not None]
    algo = checkpoint.kv_cache_quant_algo if checkpoint is not None else None
    kv_fp8 = (str(algo).upper() == "FP8") if isinstance(algo, str) else (
        (spec.kv_cache_quant_algo or "").upper() == "FP8" if spec is not None
        and spec.kv_cache_quant_algo else None)
    workers = len({p.rank for p in run.pools.values() if p.kind == "kv"}) or 1
    mode = run.kv_layout.get("mamba_cache_mode")
    prefix = sa.get("enable_prefix_caching")
    # --kv-cache-memory-bytes (0.10.2+): in the arguments, or said by the worker's "reserved ...
    # as specified by kv_cache_memory_bytes config" line (kvbytes.py)
    raw_bytes = sa.get("kv_cache_memory_bytes")
    kv_bytes = (kvbytes.parse_bytes(raw_bytes) if isinstance(raw_bytes, str)
                else _int(raw_bytes))
    if kv_bytes is not None and kv_bytes <= 0:
        kv_bytes = None
    configured = any(p.configured for p in run.pools.values() if p.kind == "kv")
    asched = sa.get("async_scheduling")
    return Calculator(
        ds_mla_fp8=ds if isinstance(ds := run.kv_layout.get("ds_mla_fp8"), bool) else None,
        extensible=ext, warmup=warmup, initial_free_gib=initial_free if ext else None,
        async_scheduling=asched if isinstance(asched, bool) else None,
        chunked_hybrid_logged=False if run.kv_layout.get("hybrid_manager_off") else None,
        unmodelled=coverage.for_run(spec, sa.get("architecture"), par.pp, vr.lo,
                                    _int(sa.get("num_speculative_tokens")) or 0, vr.hi),
        kv_bytes=kv_bytes, sized_by_bytes=kv_bytes is not None or configured,
        reserved_gib=reserved, budget_reduced=bool(left), pp_partition=_partition(run),
        padding_logged=_int(run.kv_layout.get("padding_layers")),
        speculative_method=sa.get("speculative_method") if isinstance(
            sa.get("speculative_method"), str) else None,
        speculative_tokens=_int(sa.get("num_speculative_tokens")),
        prefix_caching=prefix if isinstance(prefix, bool) else None,
        mamba_mode=mode if isinstance(mode, str) else None, workers_logged=workers,
        mamba_logged=bool(run.kv_layout.get("mamba_page_aligned")),
        current_dtype=dtype, current_dtype_assumed=assumed, spec=spec, spec_reason=reason,
        tokens=tokens, blocks_logged=blocks,
        blocks_forced=_int(cap.get("gpu_blocks_override")),
        concurrency_logged=_float(cap.get("max_concurrency")),
        concurrency_logged_at=_int(cap.get("context_len")), context_len=ctx,
        available_gib=min(avails) if avails else None, available_said=said, parallel=par,
        parallel_origin=par_origin, tp_unknown=tp is None and layout(run).tp is None,
        user_block=page_size or _int(sa.get("page_size")), logged_block=logged_block,
        max_batched=_int(sa.get("max_num_batched_tokens")),
        max_num_seqs=_int(sa.get("max_running_requests")), model_dtype=model_dtype,
        ssm_dtype=dtypes.normalize(sa.get("mamba_ssm_cache_dtype"))
        if sa.get("mamba_ssm_cache_dtype") not in (None, "auto") else None,
        weights_gib=max(usages) if usages else None, utilization=util, total_gib=total,
        total_basis=total_basis, version=vr, candidates=rules_for(vr.lo, vr.hi, v0),
        checkpoint_kv_fp8=kv_fp8, notes=notes,
    )
