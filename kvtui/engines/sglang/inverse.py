"""Inverse what-if: what would a target (dtype, context length, concurrency) take?

Why answer in mem_fraction_static, TP and missing GiB: those are the three knobs an operator can
turn without touching the model. The answer searches the forward what-if itself (the same
`Calculator.allocation`), so "fits" means SGLang would allocate at least that many tokens, with
the hybrid state split and the slot cap included: on Qwen3.5 only 1/(1 + r) of any extra memory
reaches the KV pool, and a closed-form "need / cell" answer would fall short.

The question is asked at a setting (the logged one, or the TP and mem_fraction_static the
what-if pane or `kvtui whatif --target-tp / --mem-fraction-static` name): whether it fits, what
is missing per GPU and the fraction that would fit are that setting's, so they move with the
target the budget what-if shows beside them; the TP search keeps its memory fraction.
"""

from __future__ import annotations

import math
from typing import Any

from kvtui.core.capacity.inverse import least_step, smallest_tp
from kvtui.core.report_types import Inverse
from kvtui.engines.sglang.cell import GIB
from kvtui.engines.sglang.running import max_running
from kvtui.engines.sglang.sizer import Sizer
from kvtui.engines.sglang.sizing.families import CannotModel

MAX_MEM_FRACTION = 0.95  # beyond this CUDA graphs and activations rarely fit
_STEP = 10_000  # mem_fraction_static resolution: 4 decimals, rounded up


def _tokens(calc: Sizer, dtype: str, *, tp: int | None = None,
            mf: float | None = None) -> int | None:
    try:
        n, _ = calc.tokens_for(dtype, tp=tp, mem_fraction_static=mf)
    except (CannotModel, ValueError):
        return None
    return n


def _fraction_needed(calc: Sizer, dtype: str, need: int, tp: int | None) -> float | None:
    """The smallest mem_fraction_static (4 decimals) at which SGLang allocates `need` tokens."""
    def holds(step: int) -> bool:
        n = _tokens(calc, dtype, tp=tp, mf=step / _STEP)
        return n is not None and n >= need

    step = least_step(holds, 1, _STEP - 1)
    return step / _STEP if step is not None else None


def shardable_tp(calc: Sizer, tp: int) -> bool:
    """Would SGLang shard this model over `tp` GPUs with the logged attention DP / CP?"""
    return calc.spec is not None and calc.tp_refusal(tp) is None


def _kv_bytes(calc: Sizer, dtype: str, tp: int | None, mf: float | None) -> int | None:
    """The KV bytes per GPU SGLang would give `dtype` at this setting (the budget what-if's)."""
    if calc.spec is None:
        kv, _, _ = calc.budget_bytes(tp, mf)
        return kv
    alloc, _ = calc.allocation(dtype, tp, mf)
    return alloc.kv_bytes if alloc is not None else None


def inverse(calc: Sizer, dtype: str, context_len: int, concurrency: float, *,
            tp: int | None = None, mem_fraction_static: float | None = None) -> Inverse:
    """Tokens, bytes, missing GiB per GPU, and the mem_fraction_static / TP that would fit
    (`Calculator.inverse`: every engine's calculator answers the question with its own), at
    the logged setting or at `tp` / `mem_fraction_static`."""
    mem = calc.memory
    tp = tp if tp not in (None, calc.parallel.tp) else None
    mf = mem_fraction_static
    if mf is not None and mem is not None and mf == mem.mem_fraction_static:
        mf = None
    page = max(1, calc.page_size)
    # the table's arithmetic: concurrency = pool tokens / context (`floor_fit`)
    need_tokens = math.ceil(context_len * concurrency / page) * page
    out: dict[str, Any] = {"dtype": dtype, "context_len": context_len,
                           "concurrency": concurrency, "tokens_needed": need_tokens}
    if tp is not None:
        out["tp_target"] = tp
    if mf is not None:
        out["mem_fraction_static_target"] = mf
    refused = calc.tp_refusal(tp) if tp is not None else None
    if refused is not None:
        # SGLang would not start at this TP: nothing to fit them in (`Calculator.tp_refusal`)
        out["tokens_available"] = None
        out["fits_now"] = False
        out["note"] = f"SGLang refuses TP {tp}: {refused}"
        return Inverse.of(**out)
    have_tokens = _tokens(calc, dtype, tp=tp, mf=mf)
    out["tokens_available"] = have_tokens
    cost = calc.cost_per_token(dtype, tp)
    out["fits_now"] = have_tokens is not None and have_tokens >= need_tokens
    if cost is None:
        out["note"] = "no pool sizes and no model spec: bytes per token unknown, tokens only"
        return Inverse.of(**out)
    need_bytes = int(need_tokens * cost)
    kv_now = _kv_bytes(calc, dtype, tp, mf)
    _, _, estimate = calc.budget_bytes(tp, mf)
    out["bytes_per_token"] = round(cost, 1)
    out["kv_gib_needed"] = round(need_bytes / GIB, 2)
    if kv_now is not None:
        out["kv_gib_available"] = round(kv_now / GIB, 2)
        out["missing_gib_per_gpu"] = round(max(0, need_bytes - kv_now) / GIB, 2)
    out["estimate"] = estimate
    if mem is not None and kv_now is not None:
        base = mem.mem_fraction_static if mf is None else mf
        m = None if out["fits_now"] else _fraction_needed(calc, dtype, need_tokens, tp)
        out["mem_fraction_static_current"] = mem.mem_fraction_static
        if out["fits_now"]:
            out["mem_fraction_static_needed"] = base
            # the logged setting ran; a target beyond the usual ceiling is said so
            out["mem_fraction_static_feasible"] = mf is None or base <= MAX_MEM_FRACTION
        elif m is None:
            out["mem_fraction_static_needed"] = None
            out["mem_fraction_static_note"] = "no mem_fraction_static below 1 fits it"
            out["mem_fraction_static_feasible"] = False
        else:
            out["mem_fraction_static_needed"] = m
            out["mem_fraction_static_feasible"] = m <= MAX_MEM_FRACTION
            rest_now, rest_then = calc.rest_for(tp, mf), calc.rest_for(tp, m)
            if rest_now.bytes is not None and rest_then.bytes is not None:
                out["missing_rest_gib_per_gpu"] = round(
                    (rest_then.bytes - rest_now.bytes) / GIB, 2)
    else:
        out["mem_fraction_static_needed"] = None
        # with the memory lines, no pool here is the setting's own verdict (weights that do
        # not fit at a target TP, a model not modelled): say it, as the budget row does
        _, rest = calc.allocation(dtype, tp, mf)
        out["mem_fraction_static_note"] = (
            rest.does_not_fit if mem is not None and rest.does_not_fit else
            "needs the Load weight begin/end lines and mem_fraction_static from the "
            "server_args dump")
    def holds_at(t: int) -> bool:
        n = _tokens(calc, dtype, tp=t, mf=mf)
        return n is not None and n >= need_tokens

    tp_fit = (smallest_tp(calc.parallel.tp, lambda t: shardable_tp(calc, t), holds_at)
              if calc.spec is not None else None)
    out["tp_needed"] = tp_fit
    if tp_fit is not None and tp_fit != calc.parallel.tp:
        out["tp_note"] = ("estimate: weights per GPU rescaled by TP" if mem is not None else
                          "estimate: assumes the same rest memory per GPU (no memory lines)")
    mrr = max_running(calc, dtype, tp, mf)
    if mrr is not None and mrr < concurrency:
        out["max_running_requests"] = mrr  # the table's max_run column at this setting
    return Inverse.of(**out)
