"""Inverse what-if: what would a target (dtype, context length, concurrency) take?

Why answer in mem_fraction_static, TP and missing GiB: those are the three knobs an operator can
turn without touching the model. The answer uses the same budget arithmetic as the forward
what-if, so "fits" here means SGLang would allocate at least that many tokens.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from kvtui.core.capacity.cell import GIB

if TYPE_CHECKING:
    from kvtui.core.capacity.whatif import Calculator

MAX_MEM_FRACTION = 0.95  # beyond this CUDA graphs and activations rarely fit
TP_CHOICES = (1, 2, 4, 8, 16, 32, 64)


def inverse(calc: Calculator, dtype: str, context_len: int, concurrency: float) -> dict[str, Any]:
    """Tokens, bytes, missing GiB per GPU, and the mem_fraction_static / TP that would fit."""
    page = max(1, calc.page_size)
    need_tokens = math.ceil(context_len * concurrency / page) * page
    out: dict[str, Any] = {"dtype": dtype, "context_len": context_len,
                           "concurrency": concurrency, "tokens_needed": need_tokens}
    have_tokens, _ = calc.tokens_for(dtype)
    out["tokens_available"] = have_tokens
    cost = calc._cost_per_token(dtype)
    if cost is None:
        out["fits_now"] = have_tokens is not None and have_tokens >= need_tokens
        out["note"] = "no pool sizes and no model spec: bytes per token unknown, tokens only"
        return out
    need_bytes = int(need_tokens * cost)
    budget, _, estimate = calc.budget_bytes()
    out["bytes_per_token"] = round(cost, 1)
    out["kv_gib_needed"] = round(need_bytes / GIB, 2)
    out["fits_now"] = have_tokens is not None and have_tokens >= need_tokens
    if budget is not None:
        out["kv_gib_available"] = round(budget / GIB, 2)
        out["missing_gib_per_gpu"] = round(max(0, need_bytes - budget) / GIB, 2)
    out["estimate"] = estimate
    mem = calc.memory
    if mem is not None and budget is not None:
        offset_gib = (budget - (int(mem.rest_gib() * GIB) - calc._mamba_bytes())) / GIB
        mamba_gib = calc._mamba_bytes() / GIB
        # rest(m) = avail - pre (1 - m) must reach need + mamba - offset.
        m = 1 - (mem.avail_gib - (need_bytes / GIB + mamba_gib - offset_gib)) / mem.pre_gib
        out["mem_fraction_static_needed"] = math.ceil(m * 10_000) / 10_000  # round up: fit
        out["mem_fraction_static_current"] = mem.mem_fraction_static
        out["mem_fraction_static_feasible"] = m <= MAX_MEM_FRACTION
    else:
        out["mem_fraction_static_needed"] = None
        out["mem_fraction_static_note"] = ("needs the Load weight begin/end lines and "
                                           "mem_fraction_static from the server_args dump")
    tp_fit = None
    if calc.spec is not None:
        for tp in TP_CHOICES:
            if tp < calc.parallel.tp:
                continue
            n, _ = calc.tokens_for(dtype, tp=tp)
            if n is not None and n >= need_tokens:
                tp_fit = tp
                break
    out["tp_needed"] = tp_fit
    if tp_fit is not None and tp_fit != calc.parallel.tp:
        out["tp_note"] = ("estimate: weights per GPU rescaled by TP" if mem is not None else
                          "estimate: assumes the same KV bytes per GPU (no memory lines)")
    return out
