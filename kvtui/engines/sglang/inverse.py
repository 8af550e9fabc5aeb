"""Inverse what-if: what would a target (dtype, context length, concurrency) take?

Why answer in mem_fraction_static, TP and missing GiB: those are the three knobs an operator can
turn without touching the model. The answer searches the forward what-if itself (the same
`Calculator.allocation`), so "fits" means SGLang would allocate at least that many tokens, with
the hybrid state split and the slot cap included: on Qwen3.5 only 1/(1 + r) of any extra memory
reaches the KV pool, and a closed-form "need / cell" answer would fall short.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from kvtui.core.report_types import Inverse
from kvtui.engines.sglang.cell import GIB
from kvtui.engines.sglang.sizing.families import CannotModel

if TYPE_CHECKING:
    from kvtui.engines.sglang.calculator import Calculator

MAX_MEM_FRACTION = 0.95  # beyond this CUDA graphs and activations rarely fit
TP_CHOICES = (1, 2, 4, 8, 16, 32, 64)
_STEP = 10_000  # mem_fraction_static resolution: 4 decimals, rounded up


def _tokens(calc: Calculator, dtype: str, *, tp: int | None = None,
            mf: float | None = None) -> int | None:
    try:
        n, _ = calc.tokens_for(dtype, tp=tp, mem_fraction_static=mf)
    except (CannotModel, ValueError):
        return None
    return n


def _fraction_needed(calc: Calculator, dtype: str, need: int) -> float | None:
    """The smallest mem_fraction_static (4 decimals) at which SGLang allocates `need` tokens."""
    lo, hi = 1, _STEP - 1
    top = _tokens(calc, dtype, mf=hi / _STEP)
    if top is None or top < need:
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        n = _tokens(calc, dtype, mf=mid / _STEP)
        if n is not None and n >= need:
            hi = mid
        else:
            lo = mid + 1
    return lo / _STEP


def inverse(calc: Calculator, dtype: str, context_len: int, concurrency: float) -> Inverse:
    """Tokens, bytes, missing GiB per GPU, and the mem_fraction_static / TP that would fit
    (`Calculator.inverse`: every engine's calculator answers the question with its own)."""
    page = max(1, calc.page_size)
    need_tokens = math.ceil(context_len * concurrency / page) * page
    out: dict[str, Any] = {"dtype": dtype, "context_len": context_len,
                           "concurrency": concurrency, "tokens_needed": need_tokens}
    have_tokens = _tokens(calc, dtype)
    out["tokens_available"] = have_tokens
    cost = calc._cost_per_token(dtype)
    out["fits_now"] = have_tokens is not None and have_tokens >= need_tokens
    if cost is None:
        out["note"] = "no pool sizes and no model spec: bytes per token unknown, tokens only"
        return Inverse.of(**out)
    need_bytes = int(need_tokens * cost)
    kv_now, _, estimate = calc.budget_bytes()
    out["bytes_per_token"] = round(cost, 1)
    out["kv_gib_needed"] = round(need_bytes / GIB, 2)
    if kv_now is not None:
        out["kv_gib_available"] = round(kv_now / GIB, 2)
        out["missing_gib_per_gpu"] = round(max(0, need_bytes - kv_now) / GIB, 2)
    out["estimate"] = estimate
    mem = calc.memory
    if mem is not None and kv_now is not None:
        m = None if out["fits_now"] else _fraction_needed(calc, dtype, need_tokens)
        out["mem_fraction_static_current"] = mem.mem_fraction_static
        if out["fits_now"]:
            out["mem_fraction_static_needed"] = mem.mem_fraction_static
            out["mem_fraction_static_feasible"] = True
        elif m is None:
            out["mem_fraction_static_needed"] = None
            out["mem_fraction_static_note"] = "no mem_fraction_static below 1 fits it"
            out["mem_fraction_static_feasible"] = False
        else:
            out["mem_fraction_static_needed"] = m
            out["mem_fraction_static_feasible"] = m <= MAX_MEM_FRACTION
            rest_now, rest_then = calc.rest_for(), calc.rest_for(mem_fraction_static=m)
            if rest_now.bytes is not None and rest_then.bytes is not None:
                out["missing_rest_gib_per_gpu"] = round(
                    (rest_then.bytes - rest_now.bytes) / GIB, 2)
    else:
        out["mem_fraction_static_needed"] = None
        out["mem_fraction_static_note"] = ("needs the Load weight begin/end lines and "
                                           "mem_fraction_static from the server_args dump")
    tp_fit = None
    if calc.spec is not None:
        for tp in TP_CHOICES:
            if tp < calc.parallel.tp:
                continue
            n = _tokens(calc, dtype, tp=tp)
            if n is not None and n >= need_tokens:
                tp_fit = tp
                break
    out["tp_needed"] = tp_fit
    if tp_fit is not None and tp_fit != calc.parallel.tp:
        out["tp_note"] = ("estimate: weights per GPU rescaled by TP" if mem is not None else
                          "estimate: assumes the same rest memory per GPU (no memory lines)")
    return Inverse.of(**out)
