"""The inverse what-if's question and searches, written once for every engine: the question
the report asks by default, the smallest TP that holds the requests, and the smallest value of a
memory knob that does.

Why in the core: the question "what would N requests of L tokens take?" is searched the same
way whatever engine sizes the pool; only whether a setting holds them is the engine's
(its sizer, passed in as `holds`). SGLang's inverse (`kvtui.engines.sglang.inverse`) and
vLLM's (`kvtui.engines.vllm.calculator.Calculator.inverse`) both search through here.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from kvtui.core.capacity.parallel import TP_CHOICES


def default_question(current_dtype: str, concurrency: float) -> tuple[str, int]:
    """The question people ask after a precision alert, as (dtype, requests): what would it
    take to keep today's full-context `concurrency` in BF16 (or, when already BF16, to double
    it)? The report's `inverse` answers it on every engine."""
    if current_dtype != "bf16":
        return "bf16", max(1, math.floor(concurrency))
    return "bf16", max(1, math.ceil(concurrency)) * 2


def smallest_tp(current: int, shardable: Callable[[int], bool],
                holds: Callable[[int], bool]) -> int | None:
    """The smallest TP from `current` up (`TP_CHOICES`) that the engine shards the model to
    and whose pool `holds` the requests; None when none does."""
    for tp in TP_CHOICES:
        if tp < current or not shardable(tp):
            continue
        if holds(tp):
            return tp
    return None


def least_step(holds: Callable[[int], bool], lo: int, hi: int) -> int | None:
    """The smallest step in [lo, hi] at which `holds` (which grows with the step: more memory,
    more tokens); None when not even `hi` holds. Bisection: log2(hi - lo) sizings."""
    if not holds(hi):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if holds(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


__all__ = ["default_question", "least_step", "smallest_tp"]
