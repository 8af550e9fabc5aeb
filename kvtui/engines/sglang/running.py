"""How many requests SGLang runs at once at a setting: the cap its capacity line prints
(`max_running_requests`), for the what-if row and for the inverse.

Why a module of its own: the what-if row (`scenario.build_row`) gives the cap among all its
figures, and the inverse (`inverse.inverse`) needs the cap alone at the setting it is asked
at; asking the row for it built the whole target row a second time on every key press of the
what-if pane (issue 41). Both read the same rule from here.
"""

from __future__ import annotations

from kvtui.engines.sglang.sizer import Sizer
from kvtui.engines.sglang.sizing import budget
from kvtui.engines.sglang.sizing.families import CannotModel


def calc_mrr_log_only(calc: Sizer, tokens: int) -> int | None:
    """Without a model spec the state shape is unknown: the logged slots cap as logged."""
    slots = (calc.mamba_logged or {}).get("slots")
    cap = None
    if slots is not None:
        cap = slots // (1 if calc.sargs.disable_radix_cache else 3)
    return budget.max_running_requests(tokens, calc.context_len, calc.rules_version,
                                       user=calc.mrr_user, attn_dp=calc.parallel.attn_dp,
                                       mamba_cap=cap)


def max_running(calc: Sizer, dtype: str, tp: int | None = None,
                mem_fraction_static: float | None = None) -> int | None:
    """The `max_running_requests` of the what-if row of `dtype` at this setting
    (`scenario.build_row`), without the rest of the row: the same branches in the same order
    (a model kvtui cannot size keeps the logged cap at the logged setting only; a TP SGLang
    refuses has none)."""
    if tp is not None and tp != calc.parallel.tp and calc.tp_refusal(tp) is not None:
        return None
    if calc.supported() or calc.cell_error(dtype, tp):
        mem = calc.memory
        current = dtype == calc.current_dtype and tp in (None, calc.parallel.tp) and (
            mem_fraction_static in (None, mem.mem_fraction_static if mem is not None else None))
        logged = current and calc.spec is None and bool(calc.tokens)
        return calc_mrr_log_only(calc, calc.tokens or 0) if logged else None
    if calc.spec is not None:
        try:
            alloc, _ = calc.allocation(dtype, tp, mem_fraction_static)
        except CannotModel:
            return None
        return alloc.max_running_requests if alloc is not None else None
    tokens, _ = calc.tokens_for(dtype, tp, mem_fraction_static)
    return calc_mrr_log_only(calc, tokens) if tokens is not None else None


__all__ = ["calc_mrr_log_only", "max_running"]
