"""The analysis of one stream as a typed `Report` (kvtui.core.report_types), built from the fold.

`kvtui check --json`, the TUI's export and `kvtui ssh --check` all print `Report.to_json()`, so
its keys are a contract: engine, model, parallel, kv_cache, pools, capacity, weights, runtime,
runs, alerts, whatif.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kvtui import __version__
from kvtui.core import runs as runs_mod
from kvtui.core.deployment import layout
from kvtui.core.engine import Engine, retraction_groups, tag_floors
from kvtui.core.report_types import (
    CapacityFacts,
    KVCacheFacts,
    ModelFacts,
    ParallelFacts,
    PoolFacts,
    Report,
    RunningLimit,
    RuntimeFacts,
    Source,
    WeightFacts,
    snapshot,
)
from kvtui.core.state import Run, State, _rank_sort_key

if TYPE_CHECKING:  # the package reads checkpoints; a report only prints their facts
    from kvtui.core.checkpoint.facts import CheckpointFacts


def _int_or_none(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def quant_text(weights: dict[str, Any]) -> str | None:
    """The checkpoint's quantization as the weight-load line printed it (`quant=fp8, fmt=e4m3`),
    from the parts the parser splits it into."""
    method = weights.get("quant")
    if not method:
        return None
    parts = [f"quant={method}"]
    for name, key in (("bits", "quant_bits"), ("quant_algo", "quant_algo"), ("fmt", "quant_fmt"),
                      ("requantization_method", "requant_method")):
        if weights.get(key) is not None:
            parts.append(f"{name}={weights[key]}")
    return ", ".join(parts)


def _weights(run: Run) -> WeightFacts | None:
    if not run.weights and not run.draft_weights:
        return None
    sa = run.server_args
    # Only a draft's loads (a paste of the draft worker's lines): the target stays unknown.
    rank = sorted(run.weights, key=_rank_sort_key)[0] if run.weights else None
    w = run.weights[rank] if run.weights else {}
    usages: list[float] = [v["usage_gib"] for v in run.weights.values()
                           if v.get("usage_gib") is not None]
    avails: list[float] = [v["avail_gib"] for v in run.weights.values()
                           if v.get("avail_gib") is not None]
    d = (run.draft_weights[sorted(run.draft_weights, key=_rank_sort_key)[0]]
         if run.draft_weights else {})
    return WeightFacts(
        rank=rank,
        model_class=w.get("model_class") or (sa.get("architecture") if w else None),
        dtype=w.get("dtype"),
        quant=quant_text(w),
        usage_gib=w.get("usage_gib"),
        avail_gib=w.get("avail_gib"),
        avail_before_gib=run.weights_begin.get(rank) if w else None,
        max_usage_gib=max(usages) if usages else None,
        min_avail_gib=min(avails) if avails else None,
        min_avail_before_gib=min(run.weights_begin.values()) if run.weights_begin else None,
        ranks=len(run.weights),
        elapsed_s=w.get("elapsed_s"),
        draft_model_class=d.get("model_class"),
        draft_quant=quant_text(d),
        draft_usage_gib=d.get("usage_gib"),
        draft_ranks=len(run.draft_weights),
    )


def _capacity(run: Run, limit: RunningLimit | None) -> CapacityFacts | None:
    cap = run.primary_capacity()
    if cap is None:
        return None
    return CapacityFacts(
        max_total_num_tokens=cap.get("max_total_num_tokens"),
        chunked_prefill_size=cap.get("chunked_prefill_size"),
        max_prefill_tokens=cap.get("max_prefill_tokens"),
        max_running_requests=cap.get("max_running_requests"),
        context_len=cap.get("context_len"),
        available_gpu_mem_gib=cap.get("available_gpu_mem_gib"),
        max_concurrency=cap.get("max_concurrency"),  # an engine that prints its own (vLLM)
        rank=run.capacity_evidence.rank if run.capacity_evidence else None,
        memory_pool_end_avail_gib=(min(run.memory_pool_end.values())
                                   if run.memory_pool_end else None),
        swa_split=run.swa_split or None,
        running_limit=limit,
        kv_budget_reserved_gib=max(run.kv_reserved.values()) if run.kv_reserved else None,
    )


def _pools(run: Run) -> tuple[PoolFacts, ...]:
    eff, basis, _ = run.effective
    pools = sorted(run.pools.values(), key=lambda p: (_rank_sort_key(p.rank), p.kind != "mha",
                                                       p.label or ""))
    out = []
    for p in pools:
        # Pool lines print their dtype only from 0.5.13; before that the run's effective dtype
        # is the pool's dtype, and the report says where it came from.
        dtype, dtype_basis = p.dtype, ("pool_line" if p.dtype else None)
        if p.kind != "mamba" and not p.dtype and eff:
            dtype, dtype_basis = eff, basis
        bpt = p.bytes_per_token
        out.append(PoolFacts(
            rank=p.rank, label=p.label, kind=p.kind, dtype=dtype, dtype_raw=p.dtype_raw,
            tokens=p.tokens, k_gib=p.k_gib, v_gib=p.v_gib, kv_gib=p.kv_gib, slots=p.slots,
            conv_gib=p.conv_gib, ssm_gib=p.ssm_gib, role=p.role,
            bytes_per_token=round(bpt, 1) if bpt is not None else None,
            evidence=snapshot(p.evidence), dtype_basis=dtype_basis, configured=p.configured))
    out.extend(_subpools(run))
    return tuple(out)


# A DeepSeek-V4 pool line's sub-pool fields, as the report names them (SGLang's own names).
_SUBPOOLS = (("swa", "swa_tokens"), ("c4", "c4_entries"), ("c128", "c128_entries"),
             ("c4_state", "c4_state_rows"), ("c128_state", "c128_state_rows"))


def _subpools(run: Run) -> list[PoolFacts]:
    """DeepSeek-V4's pools per rank: the budget line (bytes per full-attention token, the GiB
    it divides, in GiB though printed "GB", the full tokens that buys) and the sub-pool sizes,
    which SGLang prints apart (0.5.12 model_executor/pool_configurator.py:447-450 and :421):
    swa in tokens, c4 and c128 in compressed entries (one per 4 / 128 tokens), the two state
    pools in ring rows (swa pages x ring size, :404-413). No KV pool line stands for them, so
    without these rows a DeepSeek-V4 log showed no pool at all."""
    eff, basis, _ = run.effective
    out = []
    for rank in sorted(run.dsv4_memory.keys() | run.dsv4_pools.keys(), key=_rank_sort_key):
        memory = run.dsv4_memory.get(rank, {})
        sizes = run.dsv4_pools.get(rank, {})
        tokens = memory.get("full_tokens") or sizes.get("full_tokens")
        subpools = {name: sizes[key] for name, key in _SUBPOOLS
                    if isinstance(sizes.get(key), int)}
        bpft = memory.get("bytes_per_full_token")
        out.append(PoolFacts(
            rank=rank, label=None, kind="subpools", dtype=eff, dtype_raw=None,
            tokens=tokens, k_gib=None, v_gib=None, kv_gib=memory.get("available_gib"),
            slots=None, conv_gib=None, ssm_gib=None, role="target", bytes_per_token=None,
            evidence=snapshot(memory.get("evidence")), dtype_basis=basis if eff else None,
            bytes_per_full_token=float(bpft) if isinstance(bpft, (int, float)) else None,
            subpools=subpools or None))
    return out


def _parallel(run: Run, engine: Engine | None = None) -> ParallelFacts:
    par = layout(run, tag_floors(engine, run))
    return ParallelFacts(
        tp=par.tp, dp=par.dp, pp=par.pp, ep=par.ep, attn_dp=par.attn_dp,
        enable_dp_attention=par.enable_dp_attention,
        ranks_seen=tuple(sorted(run.ranks, key=_rank_sort_key)),
        basis=(dict(par.basis) if any(b != "server_args" for b in par.basis.values())
               else None), world=par.world, world_size=par.world_size,
        least=dict(par.least) or None)


def _kv_cache(run: Run) -> KVCacheFacts:
    sa = run.server_args
    eff, basis, eff_ev = run.effective
    return KVCacheFacts(
        configured_dtype=run.configured_kv_dtype,
        effective_dtype=eff,
        effective_basis=basis,
        effective_evidence=snapshot(eff_ev),
        scales=run.scales,
        scales_evidence=snapshot(run.scales_loaded or run.scales_missing),
        quantization_param_path=sa.get("quantization_param_path"),
        page_size=sa.get("page_size"),
    )


def whatif_unmodelled(pools: tuple[PoolFacts, ...]) -> str | None:
    """Why a run whose pools the log gives has no what-if, when that is the reason: its budget
    is split among sub-pools (DeepSeek-V4's SWA, C4, C128 and state rows), which no calculator
    models yet. The report carries it (`whatif_unmodelled`, in `check --json` too), so `check`,
    `whatif --from-log` and the TUI's pane say the same, where a generic "no pool line yet"
    would contradict the pools the report shows."""
    split = next((p for p in pools if p.kind == "subpools"), None)
    if split is None:
        return None
    names = ", ".join(split.subpools or {})
    return (f"not modelled: this run's KV budget is split among sub-pools"
            f"{f' ({names})' if names else ''}: kvtui does not size it yet (the what-if sizes "
            f"one KV pool per GPU)")


def analyse_run(state: State, *, engine: Engine | None = None, model: Any = None,
                alert_options: Any = None, checkpoint: CheckpointFacts | None = None,
                release: str | None = None) -> runs_mod.Analysis:
    """The what-if and the alerts of the state's current run."""
    from kvtui.core import alerts as alerts_mod

    calc = (engine.calculator(state.current, model, checkpoint, release=release)
            if engine is not None else None)
    whatif = calc.report() if calc is not None else None
    found = alerts_mod.evaluate(state, whatif=whatif, options=alert_options,
                                checkpoint=checkpoint, engine=engine, release=release)
    return whatif, tuple(a.frozen() for a in found)


def build_report(state: State, *, engine: Engine | None = None, model: Any = None,
                 alert_options: Any = None, checkpoint: CheckpointFacts | None = None,
                 release: str | None = None, partial: bool = False,
                 memo: dict[int, Any] | None = None) -> Report:
    """The report of the state's last run; `runs` holds every run's facts and alerts (each
    earlier run's analysis read from `memo` while that run is unchanged, `runs.analyses`)."""
    from kvtui.core import accuracy

    run = state.current
    sa = run.server_args
    weights = _weights(run)
    pools = _pools(run)

    def analyse(view: State) -> runs_mod.Analysis:
        return analyse_run(view, engine=engine, model=model, alert_options=alert_options,
                           checkpoint=checkpoint, release=release)

    whatif, found = analyse(state)
    every = runs_mod.analyses(state, (whatif, found), analyse, memo)
    return Report(
        kvtui_version=__version__,
        sources=tuple(Source(n, c) for n, c in state.sources.items()),
        engine=engine.name if engine is not None else None,
        model=ModelFacts(
            path=sa.get("model_path"),
            served_name=sa.get("served_model_name"),
            model_class=(weights.model_class if weights else None) or sa.get("architecture"),
            quantization=sa.get("quantization")),
        parallel=_parallel(run, engine),
        kv_cache=_kv_cache(run),
        pools=pools,
        capacity=_capacity(run, engine.running_limit(run, checkpoint, release=release)
                           if engine is not None else None),
        weights=weights,
        runtime=RuntimeFacts(**run.runtime.to_dict(retraction_groups(engine))),
        server_args=dict(sa) if sa else None,
        errors=tuple(e.to_dict() for e in run.ooms),
        runs=runs_mod.summaries(state, every, lambda r: _parallel(r, engine).tp, engine,
                                lambda r, a: accuracy.checklist(r, a, engine, checkpoint)),
        whatif=whatif,
        whatif_unmodelled=whatif_unmodelled(pools) if whatif is None else None,
        alerts=tuple(found),
        checkpoint=checkpoint.to_dict() if checkpoint is not None else None,
        partial=partial,
        accuracy=accuracy.checklist(run, found, engine, checkpoint),
    )
