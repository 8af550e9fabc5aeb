"""The what-if rows and the `whatif` report object, from a Calculator.

Why a module apart from `whatif`: the Calculator holds the facts and SGLang's arithmetic; this
module only arranges its answers into the JSON shape the report, the CLI and the TUI share, so
one code path feeds all three and they cannot disagree.
"""

from __future__ import annotations

from typing import Any

from kvtui.core.capacity.inverse import default_question
from kvtui.core.capacity.whatif import floor_fit
from kvtui.core.report_types import Current, Inverse, Scenario, WhatIf
from kvtui.engines.sglang.cell import GIB
from kvtui.engines.sglang.inverse import inverse
from kvtui.engines.sglang.running import calc_mrr_log_only
from kvtui.engines.sglang.sizer import Sizer
from kvtui.engines.sglang.sizing.families import CannotModel

APPROX_DTYPES = frozenset({"mxfp8", "nvfp4", "fp4_mx_block16", "fp4_e2m1"})


def build_row(calc: Sizer, dtype: str, *, tp: int | None = None,
              mem_fraction_static: float | None = None,
              context_lengths: list[int] | tuple[int, ...] | None = None,
              target_concurrency: float | None = None) -> Scenario:
    """One what-if row: tokens, bytes/token, concurrency, max_running_requests, flag.

    Built as a dict first: its key order is the JSON contract (tests/golden), kept by
    `Scenario.of`."""
    mem = calc.memory
    cur_mf = mem.mem_fraction_static if mem is not None else None
    current = dtype == calc.current_dtype and tp in (None, calc.parallel.tp) and (
        mem_fraction_static in (None, cur_mf))
    flag, advice = calc.flag(dtype)
    ctxs = calc.contexts(context_lengths)
    row: dict[str, Any] = {"dtype": dtype, "flag": flag, "flag_advice": advice,
                           "current": current}
    unsupported = calc.supported() or calc.cell_error(dtype, tp)
    cell = calc.cell(dtype, tp)
    if unsupported:
        # Without a spec (a log naming a class kvtui does not model) the logged setting keeps
        # what the log printed, its pool and the running cap SGLang derived from it; no other
        # figure is given.
        logged = current and calc.spec is None and bool(calc.tokens)
        row.update(tokens=calc.tokens if logged else None, bytes_per_token=None,
                   max_running_requests=(calc_mrr_log_only(calc, calc.tokens or 0) if logged
                                         else None),
                   concurrency={str(c): None for c in ctxs}, estimate=False, approximate=False,
                   basis=f"cannot model: {unsupported}", cannot_model=unsupported,
                   vs_current=1.0 if logged else None)
        return Scenario.of(**row)
    swa_tokens = None
    mrr: int | None = None
    slots = None
    if calc.spec is not None:
        try:
            alloc, rest = calc.allocation(dtype, tp, mem_fraction_static)
        except CannotModel as exc:
            alloc, rest = None, None
            row["cannot_model"] = str(exc)
        tokens = alloc.tokens if alloc is not None else None
        swa_tokens = alloc.swa_tokens if alloc is not None else None
        mrr = alloc.max_running_requests if alloc is not None else None
        slots = alloc.mamba.slots if (alloc is not None and alloc.mamba is not None) else None
        basis = (rest.does_not_fit or rest.basis) if rest is not None else row["cannot_model"]
        estimate = rest.estimate if rest is not None else False
        if rest is not None and rest.does_not_fit:
            row["does_not_fit"] = rest.does_not_fit
        elif alloc is not None and alloc.does_not_fit:
            row["does_not_fit"] = alloc.does_not_fit
        cost: float | None = cell.cost if cell is not None else None
    else:
        tokens, swa_tokens = calc.tokens_for(dtype, tp, mem_fraction_static)
        _, basis, estimate = calc.budget_bytes(tp, mem_fraction_static)
        cost = calc.cost_per_token(dtype)
        if tokens is not None:
            mrr = calc_mrr_log_only(calc, tokens)
    row.update({
        "tokens": tokens,
        "bytes_per_token": (cell.bytes_per_token if cell is not None else
                            (round(cost, 1) if cost is not None else None)),
        "concurrency": {str(c): (floor_fit(tokens, c) if tokens is not None else None)
                        for c in ctxs},
        "max_running_requests": mrr,
        "vs_current": (round(tokens / calc.tokens, 4)
                       if tokens is not None and calc.tokens else None),
        "approximate": dtype in APPROX_DTYPES or bool(cell and cell.approximate),
        "estimate": estimate,
        "basis": basis,
    })
    refused = (calc.tp_refusal(tp) if tp is not None and tp != calc.parallel.tp else None)
    if refused is not None:
        # SGLang would not start at this TP (`Calculator.tp_refusal`): no pool to size, and the
        # row says so as any target that would not start does (no flag is offered for it)
        row.update(tokens=None, max_running_requests=None, vs_current=None,
                   concurrency={str(c): None for c in ctxs})
        swa_tokens = slots = None
        # A sharding refusal kvtui already found (a hybrid's conv state, raised by the model's
        # first layers) stays the one shown; a memory reason does not: SGLang refuses the TP
        # when it builds the model, before it loads any weight.
        if "shard" not in str(row.get("does_not_fit") or ""):
            row["does_not_fit"] = f"does not fit: SGLang refuses TP {tp}: {refused}"
            row["basis"] = row["does_not_fit"]
    if swa_tokens is not None:
        row["swa_tokens"] = swa_tokens
    if slots is not None:
        row["mamba_slots"] = slots
    if tp is not None:
        row["tp"] = tp
    if mem_fraction_static is not None:
        row["mem_fraction_static"] = mem_fraction_static
    if target_concurrency is not None and calc.context_len and tokens is not None:
        row["fits_target"] = tokens >= calc.context_len * target_concurrency
    return Scenario.of(**row)


def current(calc: Sizer) -> Current:
    cell = calc.cell(calc.current_dtype)
    meas = calc.measured()
    cal = calc.calibration() if cell is not None else None
    now = build_row(calc, calc.current_dtype)
    out: dict[str, Any] = {
        "dtype": calc.current_dtype,
        "tokens": calc.tokens,
        "bytes_per_token": (round(meas["bytes_per_token"], 1) if meas
                            else (cell.bytes_per_token if cell else None)),
        "theoretical_bytes_per_token": cell.bytes_per_token if cell else None,
        "calibration_ratio": cal["ratio"] if cal else None,
        "context_len": calc.context_len,
        "page_size": calc.page_size,
        "parallel": calc.parallel.to_dict(),
        "max_running_requests_logged": calc.mrr_logged,
        "max_running_requests_sglang": now.max_running_requests if calc.tokens else None,
        "sglang_rules": ".".join(map(str, calc.rules_version)),
    }
    if calc.context_len and calc.tokens:
        out["concurrency_at_context_len"] = floor_fit(calc.tokens, calc.context_len)
    if cell is not None:
        out["cell"] = cell.to_dict()
    if cal is not None:
        out["calibration"] = cal
    if calc.swa_logged:
        out["swa_split"] = calc.swa_logged
    why = calc.supported() or calc.cell_error(calc.current_dtype)
    if why:
        out["cannot_model"] = why
    rows = calc.measured_rows()
    if rows is not None:  # the measure is per pool row, the padding page's rows included
        out["measured_rows"] = rows
    return Current.of(**out)


def mamba_budget(calc: Sizer) -> dict[str, Any] | None:
    try:
        st = calc.mamba()
    except CannotModel as exc:
        return {"cannot_model": str(exc), "logged": calc.mamba_logged}
    if st is None and not calc.mamba_logged:
        return None
    out: dict[str, Any] = {
        "held_fixed": True,
        "note": "the Mamba/linear-attention state does not follow --kv-cache-dtype: a dtype "
                "what-if keeps it as logged; a mem_fraction_static or TP what-if re-splits the "
                "rest memory the way this SGLang release does"}
    if calc.mamba_logged:
        out["logged"] = calc.mamba_logged
    if st is not None:
        out["theory"] = st.to_dict()
        slots = calc.logged_slots()
        if slots is not None:
            out["theory_gib"] = round(calc.state_bytes_now() / GIB, 2)
        kind = calc.kind
        if kind is not None:
            from kvtui.engines.sglang.sizing import mamba as sgl_mamba

            ratio, why = sgl_mamba.slots_per_request(calc.sargs, calc.rules_version,
                                                     calc.spec.arch if calc.spec else "", kind,
                                                     calc.page_size)
            out["slots_per_request"] = ratio
            out["slots_per_request_rule"] = why
    return out


def explanation(calc: Sizer) -> list[str]:
    """Show-your-work lines, in the order a reader checks them."""
    lines = list(calc.notes)
    lines.extend(calc.rule_notes())
    if calc.spec is not None:
        lines.append(f"model: {calc.spec.summary()} ({calc.spec_reason})")
        why = calc.supported() or calc.cell_error(calc.current_dtype)
        if why:
            lines.append(f"cannot model: {why}")
            return lines
        cell = calc.cell(calc.current_dtype)
        if cell is not None:
            lines.extend(cell.lines)
        if calc.spec.is_dsa and calc.current_dtype != "fp8_e4m3":
            # the FP8 row's layout is the backends', which a BF16 run's log may not settle
            fp8 = calc.cell("fp8_e4m3")
            if fp8 is not None and fp8.approximate:
                lines.extend(f"fp8_e4m3 row: {ln}" for ln in fp8.lines if "assumed" in ln)
    elif (why := calc.supported()) is not None:
        lines.append(f"no model spec ({calc.spec_reason}); cannot model: {why}: no figure but "
                     "the logged ones")
    else:
        lines.append(f"no model spec ({calc.spec_reason}): log-only arithmetic, the logged "
                     "bytes/token scaled by the value size of each dtype")
    meas = calc.measured()
    if meas is not None and meas.get("from_memory_lines"):
        reserved = " - reserved" if calc.memory is not None and calc.memory.reserved_gib else ""
        lines.append(f"no pool line: {meas['bytes_per_token']:,.0f} B/token estimated as the "
                     f"memory budget (avail - pre x (1 - mem_fraction_static){reserved}) / tokens")
    cal = calc.calibration()
    if cal is not None:
        lines.append(f"logged pool: {cal['measured_bytes_per_token']:,} B/token vs printed "
                     f"{cal['computed_bytes_per_token']:,}: ratio {cal['ratio']:.3f}"
                     + (" (within the 0.01 GiB rounding)" if cal["within_rounding"] else ""))
        if cal.get("likely_cause"):
            lines.append(f"mismatch > 2%: {cal['likely_cause']}")
    try:
        st = calc.mamba()
    except CannotModel:
        st = None
    if st is not None:
        lines.extend(st.lines)
    rest = calc.rest_now()
    if rest.bytes is not None:
        kv, basis, est = calc.kv_now()
        if kv is not None:
            lines.append(f"KV budget held fixed: {kv:,} B = {kv / GIB:.2f} GiB per GPU "
                         f"({basis}{', estimate' if est else ''})")
        if rest.bytes != kv:
            lines.append(f"rest memory: {rest.bytes:,} B = {rest.bytes / GIB:.3f} GiB per GPU "
                         "(KV + the state SGLang took)")
    return lines


def build_report(calc: Sizer, dtypes: list[str] | tuple[str, ...] | None,
                 context_lengths: list[int] | tuple[int, ...] | None) -> WhatIf:
    """The report's what-if (`kvtui check --json`'s `whatif`, `kvtui whatif --json`)."""
    pools = [{"role": "target", "tokens": calc.tokens, **(calc.pool_gib or {})}] \
        if calc.pool_gib else []
    pools.extend(calc.draft_pools)
    return WhatIf(
        current=current(calc),
        scenarios=tuple(calc.scenarios(dtypes, context_lengths)),
        model=calc.spec.to_dict() if calc.spec else None,
        model_reason=calc.spec_reason,
        version=calc.version.to_dict(),
        explanation=tuple(explanation(calc)),
        sizing_args=calc.sargs.to_dict(),
        pools=tuple(pools) or None,
        mamba=mamba_budget(calc),
        memory_budget=calc.memory_check(),
        inverse=_inverse(calc),
    )


def _inverse(calc: Sizer) -> Inverse | None:
    """The report's inverse: the core's default question (`default_question`), where the
    current setting is modelled."""
    if not (calc.context_len and calc.tokens) or calc.supported() \
            or calc.cell_error(calc.current_dtype):
        return None
    dtype, requests = default_question(calc.current_dtype, calc.tokens / calc.context_len)
    return inverse(calc, dtype, calc.context_len, requests)
