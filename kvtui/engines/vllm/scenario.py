"""vLLM's what-if rows, current setting, explanation and report object, from its calculator.

Why a module apart from the calculator: the calculator is vLLM's sizer (blocks, budget, tokens
at a setting, the variant that reproduces the log); this module only arranges its answers into
the JSON shape the report, `kvtui whatif` and the what-if pane share (key order: the contract
tests/golden pins), as SGLang's `kvtui.engines.sglang.scenario` does. It reads the calculator
through `sizer.Rows`, so it does not import the calculator that calls it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kvtui.core.capacity.inverse import default_question
from kvtui.core.capacity.parallel import tp_refused
from kvtui.core.capacity.whatif import floor_fit, request_lengths
from kvtui.core.report_types import Current, Scenario, WhatIf
from kvtui.engines.vllm import kvbytes
from kvtui.engines.vllm.inverse import inverse
from kvtui.engines.vllm.sizer import DEFAULT_DTYPES, ROUNDING_GIB, VALUE_COST, Rows
from kvtui.engines.vllm.sizing import GIB, Layout, in_flight_batches


def _contexts(calc: Rows, context_lengths: list[int] | tuple[int, ...] | None) -> list[int]:
    return request_lengths(calc.context_len, context_lengths)


def build_row(calc: Rows, dtype: str, *, tp: int | None = None,
             mem_fraction_static: float | None = None,
             context_lengths: list[int] | tuple[int, ...] | None = None,
             target_concurrency: float | None = None) -> Scenario:
    """One what-if row: tokens, bytes/token, concurrency, max_running_requests, flag.

    Built as a dict first: its key order is vLLM's JSON contract (tests/golden), kept by
    `Scenario.of`."""
    tokens, _ = calc.tokens_for(dtype, tp, mem_fraction_static)
    budget, basis, estimate = calc.budget_bytes(tp, mem_fraction_static)
    lay = calc.layout(dtype, tp)
    if calc.unmodelled:
        basis = f"cannot model: {calc.unmodelled}"
    elif lay is None and calc.spec is None:
        estimate = True
        basis = basis or "log only: the logged tokens scaled by each dtype's bytes per value"
    ctxs = _contexts(calc, context_lengths)
    flag, advice = calc.flag(dtype)
    # Bytes per token belong to the layout at this TP, not to the memory: read them off the
    # logged budget (a whole number of blocks), so a changed utilization cannot round them.
    base_tokens, _ = (calc.tokens_for(dtype, tp, None) if mem_fraction_static is not None
                      else (tokens, None))
    base_budget = (calc.budget_bytes(tp, None)[0] if mem_fraction_static is not None
                   else budget)
    bpt = (round(base_budget / base_tokens, 1) if base_budget is not None and base_tokens
           else (round(c, 1) if (c := calc.cost_per_token(dtype, tp)) is not None else None))
    row: dict[str, Any] = {
        "dtype": dtype,
        "tokens": tokens,
        "bytes_per_token": bpt,
        "concurrency": calc.concurrency(dtype, ctxs, tp, mem_fraction_static),
        "max_running_requests": calc.max_num_seqs,
        "flag": flag,
        "flag_advice": advice,
        "vs_current": (round(tokens / calc.tokens, 4)
                       if tokens is not None and calc.tokens else None),
        "current": dtype == calc.current_dtype and tp in (None, calc.parallel.tp)
        and mem_fraction_static in (None, calc.knob_now()),
        "approximate": False,
        "estimate": estimate,
        "basis": basis,
    }
    ds_why = calc.ds_layout(dtype)[1]
    if ds_why is not None:
        row["approximate"] = True
        row["basis"] = f"{basis}; {ds_why}" if basis else ds_why
    quoted = row["current"] and calc.pool_bytes is None and bool(calc.tokens)
    if lay is not None and lay.swa_groups and _batched_from(calc) == "default" and \
            not quoted:
        # the windowed groups' share follows max_num_batched_tokens, which neither the log
        # nor the user gave (vLLM's default depends on the GPU)
        why = (f"max_num_batched_tokens {lay.batch_tokens:,} assumed (vLLM's API server "
               "default on a 70-160 GiB GPU; pass --max-num-batched-tokens)")
        row["approximate"] = True
        row["basis"] = f"{row['basis']}; {why}" if row["basis"] else why
    block_given = calc.user_block is not None or (
        calc.logged_block is not None and dtype == calc.current_dtype
        and tp in (None, calc.parallel.tp))
    if lay is not None and lay.swa_token_bytes and not block_given and not quoted:
        # pages of two shapes: the block sizes vLLM unifies them with follow the kernel
        # blocks of the GPU's attention backend, which neither the log nor the user gave
        why = (f"block size {lay.block_size} assumed (FLASH_ATTN / TRITON_ATTN on SM80-SM90 "
               "with BF16 KV); vLLM 0.34 takes 64-token blocks for FP8 KV with FA4 on SM90 "
               "(v1/attention/backends/flash_attn.py:300-326, :372-379) and 128-token "
               "sliding blocks with FA4's hd256 kernel on SM100 (:329-367): pass --page-size")
        row["approximate"] = True
        row["basis"] = f"{row['basis']}; {why}" if row["basis"] else why
    if lay is not None:
        row["block_size"] = lay.block_size
    if calc.unmodelled:
        row["cannot_model"] = calc.unmodelled
    if calc.max_num_seqs is None and calc.max_num_seqs_default:
        row["max_running_requests_default"] = list(calc.max_num_seqs_default)
    refused = (tp_refused(calc.spec.num_attention_heads,
                          None if calc.spec.is_mla else calc.spec.num_kv_heads, tp)
               if tp not in (None, calc.parallel.tp) and calc.spec is not None else None)
    if refused is not None:
        # vLLM would not start at this TP: no pool to size
        row["cannot_model"] = f"vLLM refuses TP {tp}: {refused}"
        row.update(tokens=None, vs_current=None,
                   concurrency=dict.fromkeys(row["concurrency"]))
    if tp is not None:
        row["tp"] = tp
        if refused is None and budget is not None and budget <= 0 and \
                tp != calc.parallel.tp:
            # the weights re-sharded to this TP take more than the KV budget they come out
            # of: no pool, not a pool of 0 tokens (as SGLang's row says it)
            row["does_not_fit"] = (f"does not fit: the weights per GPU at TP {tp} take "
                                   f"{-budget / GIB:.2f} GiB more than the KV budget "
                                   f"({basis})")
            row.update(tokens=None, vs_current=None,
                       concurrency=dict.fromkeys(row["concurrency"]))
    if mem_fraction_static is not None:
        knob = calc.memory_knob()
        row[knob.name] = (int(mem_fraction_static) if knob.bytes
                          else mem_fraction_static)
    if target_concurrency is not None and calc.context_len and tokens is not None:
        row["fits_target"] = tokens >= calc.context_len * target_concurrency
    return Scenario.of(**row)


def build_rows(calc: Rows, dtypes: list[str] | tuple[str, ...] | None = None,
              context_lengths: list[int] | tuple[int, ...] | None = None,
              **kw: Any) -> list[Scenario]:
    wanted = list(dtypes) if dtypes else list(DEFAULT_DTYPES)
    if calc.current_dtype not in wanted:
        wanted.insert(0, calc.current_dtype)
    return [build_row(calc, d, context_lengths=context_lengths, **kw) for d in wanted
            if d in VALUE_COST and d != "fp32"]


def current(calc: Rows) -> Current:
    lay = calc.layout(calc.current_dtype)
    cal = calc.calibration()
    measured = calc.measured_bytes_per_token()
    theory = (calc.available_gib * GIB / cal["computed_tokens"]
              if cal is not None and cal["computed_tokens"] and calc.available_gib
              else None)
    out: dict[str, Any] = {
        "dtype": calc.current_dtype,
        "tokens": calc.tokens,
        "bytes_per_token": round(measured, 1) if measured is not None else (
            round(c, 1) if (c := calc.cost_per_token(calc.current_dtype)) else None),
        "theoretical_bytes_per_token": round(theory, 1) if theory is not None else None,
        # computed / logged tokens: > 1 when the pool holds fewer tokens than the spec says
        "calibration_ratio": (round(cal["computed_tokens"] / calc.tokens, 4)
                              if cal is not None and calc.tokens else None),
        "context_len": calc.context_len,
        "page_size": lay.block_size if lay is not None else calc.logged_block,
        "parallel": {**calc.parallel.to_dict(), **(calc.parallel_origin or {})},
        "max_running_requests_logged": calc.max_num_seqs,
        "max_concurrency_logged": calc.concurrency_logged,
    }
    exact = calc.concurrency_exact()
    if exact is not None:
        out["max_concurrency_exact"] = exact
    if calc.unmodelled:
        out["cannot_model"] = calc.unmodelled
    if calc.context_len and calc.tokens:
        out["concurrency_at_context_len"] = (
            calc.concurrency_logged if calc.concurrency_logged is not None
            else floor_fit(calc.tokens, calc.context_len))
    if lay is not None:
        out["cell"] = lay.to_dict()
        if lay.swa_groups:
            out["cell"]["max_num_batched_tokens_from"] = _batched_from(calc)
    if cal is not None:
        out["calibration"] = cal
        if not cal["ok"]:
            out["calibration_note"] = (
                f"the spec and {cal['rules']} give {cal['computed_tokens']:,} tokens from "
                f"{calc.available_gib} GiB, the log {calc.tokens:,}")
    return Current.of(**out)


def explanation(calc: Rows) -> list[str]:
    """Show-your-work lines, in the order a reader checks them."""
    lines = list(calc.notes)
    if calc.extensible:
        w = calc.warmup or {}
        text = ("vLLM 0.34's extensible KV cache sized the pool after warmup and CUDA graph "
                "capture from the memory then free (\"Available KV cache memory\" is only "
                "the profiling estimate it reserved address space for)")
        if w.get("warmup_free_gib") is not None:
            text += (f": {w['warmup_free_gib']} GiB free, {w.get('kv_committed_gib')} GiB "
                     f"committed, {w.get('transient_kept_gib')} GiB kept for activations, "
                     f"within the requested {w.get('requested_gib')} GiB")
        if calc.utilization is not None:
            text += f"; gpu_memory_utilization {calc.utilization} caps it"
        lines.append(text)
    if calc.unmodelled:
        lines.append(f"not modelled: {calc.unmodelled}; no figure but the logged ones")
    if calc.sized_by_bytes:
        now = calc.knob_now()
        said = ("the run's arguments" if calc.kv_bytes is not None else
                "the worker's \"reserved ... as specified by kv_cache_memory_bytes\" line")
        lines.append(
            f"the KV cache is sized by {kvbytes.FLAG}"
            + (f" ({int(now):,} B = {now / GIB:.2f} GiB per GPU)" if now is not None else "")
            + f", from {said}: vLLM skips the memory profile and reserves that on every GPU "
            "whatever the TP; --gpu-memory-utilization does not size it")
    if calc.spec is not None and calc.unmodelled:
        lines.append(f"model: {calc.spec.name} ({calc.spec_reason})")
    elif calc.spec is not None:
        lines.append(f"model: {calc.spec.summary()} ({calc.spec_reason})")
        lay = calc.layout(calc.current_dtype)
        if lay is not None:
            lines.extend(lay.lines)
            lines.append(lay.rules.describe())
            lines.extend(_flight_lines(calc, lay))
    elif not calc.unmodelled:
        lines.append(f"no model spec ({calc.spec_reason}): log-only arithmetic, the logged "
                     "tokens scaled by each dtype's bytes per value (exact for dense "
                     "models up to block rounding)")
        if calc.tokens_below_concurrency():
            at = calc.concurrency_logged_at or calc.context_len or 0
            lines.append(
                f"the logged concurrency ({calc.concurrency_logged:.2f}x for {at:,} tokens) "
                f"is more than the logged tokens over that length "
                f"({floor_fit(calc.tokens or 0, at):.2f}): the pool is in several KV cache "
                "groups (a hybrid model), so no other length or dtype is computed without "
                "the model spec (pass --model)")
        elif calc.hybrid_unsized():
            lines.append(
                "the log sizes the attention page to a Mamba state (a hybrid model): a "
                "request's Mamba state does not follow the KV dtype or the length, so no "
                "other length or dtype is computed without the model spec (pass --model)")
    cal = calc.calibration()
    if cal is not None:
        lo, hi = cal["computed_interval"]
        lines.append(f"calibration: {calc.available_gib} GiB (+-{ROUNDING_GIB}) gives "
                     f"{lo:,} - {hi:,} tokens, the log says {cal['logged_tokens']:,}"
                     + (" (within the rounding)" if cal["within_rounding"] else
                        f" (ratio {cal['ratio']:.3f})"))
        if cal.get("note"):
            lines.append(f"  {cal['note']}")
    if calc.blocks_forced is not None:
        lines.append(f"num_gpu_blocks_override={calc.blocks_forced}: the pool is that many "
                     "blocks whatever the memory")
    budget, basis, est = calc.budget_bytes()
    if budget is not None:
        lines.append(f"KV budget held fixed: {budget:,} B = {budget / GIB:.2f} GiB per GPU "
                     f"({basis}{', estimate' if est else ''})")
    return lines


def _batched_from(calc: Rows) -> str:
    """Where the max_num_batched_tokens of the windowed groups came from: "given" (the
    what-if's flag), "logged", "fitted" (vLLM's default that alone reproduces the logged
    concurrency) or "default" (assumed)."""
    if calc.max_batched_given:
        return "given"
    if calc.max_batched:
        return "logged"
    if calc.flight_score > 0 and calc.concurrency_logged is not None and \
            not calc.flight_ties:
        return "fitted"
    return "default"


def _flight_lines(calc: Rows, lay: Layout) -> list[str]:
    """Where the tokens in flight of a windowed group came from, in the log's terms."""
    if not lay.swa_groups:
        if calc.spec is not None and calc.spec.attention_chunk_size and \
                calc.spec.swa_layer_ids and not calc.flight[2]:
            return ["chunked local attention turns vLLM's hybrid KV cache manager off by "
                    "default before 0.14 (VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE"
                    " defaults to 0 in 0.10.2-0.13.0, 1 from 0.14.0; with an EAGLE draft in "
                    "every release): every layer holds the whole request"]
        return []
    fitted = calc.flight_score > 0 and calc.concurrency_logged is not None
    source = _batched_from(calc)
    if source == "given":
        said = "given (--max-num-batched-tokens)"
    elif source == "logged":
        said = "logged"
    elif source == "fitted":
        said = ("not logged: the API server default that reproduces the logged "
                "concurrency")
    elif fitted:
        also = ", ".join(f"{b} x {t:,}" for b, t in calc.flight_ties)
        said = (f"not logged: assumed vLLM's API server default; {also} reproduce the "
                "logged concurrency as well, pass --max-num-batched-tokens")
    else:
        said = ("not logged: assumed vLLM's API server default (8192 on a 70-160 GiB "
                "GPU; 2048 below 70 GiB or on an A100, 16384 from 160 GiB on 0.28+), "
                "pass --max-num-batched-tokens")
    why = {1: "one batch (before 0.26, or without async scheduling)",
           2: "two batches (async scheduling, on by default from 0.26)"}.get(
        lay.batches, f"{lay.batches} batches (PP {calc.parallel.pp}"
        + (", async scheduling)" if lay.batches > calc.parallel.pp else ")"))
    batches = in_flight_batches(calc.version.lo, calc.version.hi, calc.parallel.pp,
                                calc.async_scheduling)
    if len(batches) > 1 and not (fitted and not calc.flight_ties):
        why += (f"; assumed: {' or '.join(map(str, batches))} batches on {calc.version.label()}"
                " (the release, and under PP the model runner, decide)")
    return [f"tokens in flight per windowed group: {why} x max_num_batched_tokens "
            f"{lay.batch_tokens:,} ({said}) = {lay.in_flight():,}"]


def knob_facts(calc: Rows) -> dict[str, Any]:
    """The memory knob for the report (`WhatIf.memory_knob`): what the alerts name, with
    the bytes one request of max_model_len takes in the current dtype (whole blocks: vLLM's
    blocks_per_request x the block's bytes), so a fix can say how many bytes N requests
    need."""
    out = calc.memory_knob().to_json()
    lay = calc.layout(calc.current_dtype)
    if lay is not None and calc.context_len:
        out["context_len"] = calc.context_len
        out["request_bytes"] = (lay.blocks_per_request(calc.context_len, calc.max_batched)
                                * lay.block_bytes)
    return out


def build_report(calc: Rows, dtypes: list[str] | tuple[str, ...] | None = None,
                 context_lengths: list[int] | tuple[int, ...] | None = None) -> WhatIf:
    """The report's what-if (`whatif` of `kvtui check --json`, `kvtui whatif --json`)."""
    out = WhatIf(engine="vllm", current=current(calc),
                 memory_knob=knob_facts(calc) if calc.sized_by_bytes else None,
                 scenarios=tuple(build_rows(calc, dtypes, context_lengths)),
                 model=calc.spec.to_dict() if calc.spec else None,
                 model_reason=calc.spec_reason, version=calc.version.to_dict(),
                 explanation=tuple(explanation(calc)))
    if not (calc.context_len and calc.tokens) or calc.unmodelled:
        return out  # (not modelled: no inverse, as SGLang's `scenario.inverse`)
    # the core's default question (`default_question`), at vLLM's own logged concurrency
    dtype, requests = default_question(
        calc.current_dtype, calc.concurrency_logged or calc.tokens / calc.context_len)
    return replace(out, inverse=inverse(calc, dtype, calc.context_len, requests))
