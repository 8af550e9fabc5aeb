"""The analysis as one JSON-able dict, and its human (terminal) and Markdown renderings.

`kvtui check --json`, the TUI's export and `kvtui ssh --check` all print this object, so its keys
are a contract: engine, model, parallel, kv_cache, pools, capacity, weights, runtime, runs,
alerts, whatif.
"""

from __future__ import annotations

from typing import Any

from kvtui import __version__
from kvtui.core.deployment import layout
from kvtui.core.state import Run, State, _rank_sort_key


def _int_or_none(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def run_facts(run: Run, engine: Any = None) -> dict[str, Any]:
    sa = run.server_args
    weights = None
    if run.weights:
        rank = sorted(run.weights, key=_rank_sort_key)[0]
        w = run.weights[rank]
        usages: list[float] = [v["usage_gib"] for v in run.weights.values()
                               if v.get("usage_gib") is not None]
        avails: list[float] = [v["avail_gib"] for v in run.weights.values()
                               if v.get("avail_gib") is not None]
        weights = {
            "rank": rank,
            "model_class": w.get("model_class") or sa.get("architecture"),
            "dtype": w.get("dtype"),
            "quant": w.get("quant"),
            "usage_gib": w.get("usage_gib"),
            "avail_gib": w.get("avail_gib"),
            "avail_before_gib": run.weights_begin.get(rank),
            "max_usage_gib": max(usages) if usages else None,
            "min_avail_gib": min(avails) if avails else None,
            "min_avail_before_gib": min(run.weights_begin.values()) if run.weights_begin else None,
            "ranks": len(run.weights),
            "elapsed_s": w.get("elapsed_s"),
        }
    cap = run.primary_capacity()
    capacity = None
    if cap is not None:
        capacity = {k: cap.get(k) for k in (
            "max_total_num_tokens", "chunked_prefill_size", "max_prefill_tokens",
            "max_running_requests", "context_len", "available_gpu_mem_gib")}
        if cap.get("max_concurrency") is not None:  # an engine that prints its own (vLLM)
            capacity["max_concurrency"] = cap["max_concurrency"]
        capacity["rank"] = run.capacity_evidence.rank if run.capacity_evidence else None
        capacity["memory_pool_end_avail_gib"] = (
            min(run.memory_pool_end.values()) if run.memory_pool_end else None)
        if run.swa_split:
            capacity["swa_split"] = run.swa_split
    eff, basis, eff_ev = run.effective
    scales_ev = run.scales_loaded or run.scales_missing
    model_class = (weights["model_class"] if weights else None) or sa.get("architecture")
    par = layout(run)
    pools = sorted(run.pools.values(), key=lambda p: (_rank_sort_key(p.rank), p.kind != "mha",
                                                       p.label or ""))
    pool_dicts = []
    for p in pools:
        d = p.to_dict()
        # Pool lines print their dtype only from 0.5.13; before that the run's effective dtype
        # is the pool's dtype, and the report says where it came from.
        d["dtype_basis"] = "pool_line" if p.dtype else None
        if p.kind != "mamba" and not p.dtype and eff:
            d["dtype"], d["dtype_basis"] = eff, basis
        pool_dicts.append(d)
    return {
        "engine": engine.name if engine is not None else None,
        "model": {
            "path": sa.get("model_path"),
            "served_name": sa.get("served_model_name"),
            "model_class": model_class,
            "quantization": sa.get("quantization"),
        },
        "parallel": {
            "tp": par.tp,
            "dp": par.dp,
            "pp": par.pp,
            "ep": par.ep,
            "attn_dp": par.attn_dp,
            "enable_dp_attention": par.enable_dp_attention,
            "ranks_seen": sorted(run.ranks, key=_rank_sort_key),
            **({"basis": par.basis} if any(b != "server_args" for b in par.basis.values())
               else {}),
        },
        "kv_cache": {
            "configured_dtype": run.configured_kv_dtype,
            "effective_dtype": eff,
            "effective_basis": basis,
            "effective_evidence": eff_ev.to_dict() if eff_ev else None,
            "scales": run.scales,
            "scales_evidence": scales_ev.to_dict() if scales_ev is not None else None,
            "quantization_param_path": sa.get("quantization_param_path"),
            "page_size": sa.get("page_size"),
        },
        "pools": pool_dicts,
        "capacity": capacity,
        "weights": weights,
        "runtime": run.runtime.to_dict(),
        "server_args": dict(sa) if sa else None,
        "errors": [e.to_dict() for e in run.ooms],
    }


def run_summary(run: Run) -> dict[str, Any]:
    eff, _, _ = run.effective
    pool = run.primary_kv_pool()
    cap = run.primary_capacity()
    return {
        "index": run.index,
        "start": run.start.to_dict() if run.start else None,
        "model_path": run.server_args.get("model_path"),
        "configured_dtype": run.configured_kv_dtype,
        "effective_dtype": eff,
        "scales": run.scales,
        "pool_tokens": pool.tokens if pool else None,
        "max_total_num_tokens": cap.get("max_total_num_tokens") if cap else None,
        "decode_batches": run.runtime.decode_batches,
    }


def build_report(state: State, *, engine: Any = None, model: Any = None,
                 alert_options: Any = None, checkpoint: Any = None,
                 release: str | None = None) -> dict[str, Any]:
    from kvtui.core import alerts as alerts_mod

    run = state.current
    report: dict[str, Any] = {"kvtui_version": __version__}
    report["sources"] = [{"name": n, "lines": c} for n, c in state.sources.items()]
    report.update(run_facts(run, engine))
    report["runs"] = [run_summary(r) for r in state.runs]
    calc = (engine.calculator(run, model, checkpoint, release=release)
            if engine is not None else None)
    whatif = calc.report() if calc is not None else None
    report["whatif"] = whatif
    found = alerts_mod.evaluate(state, whatif=whatif, options=alert_options,
                                checkpoint=checkpoint, engine=engine, release=release)
    report["alerts"] = [a.to_dict() for a in found]
    if checkpoint is not None and hasattr(checkpoint, "to_dict"):  # tests pass bare stand-ins
        report["checkpoint"] = checkpoint.to_dict()
    return report
