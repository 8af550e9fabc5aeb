"""The inverse what-if's searches, written once for every engine: the smallest TP that holds
the requests, and the smallest value of a memory knob that does.

Why in the core: the question "what would N requests of L tokens take?" is searched the same
way whatever engine sizes the pool; only whether a setting holds them is the engine's
(its sizer, passed in as `holds`). SGLang's inverse (`kvtui.engines.sglang.inverse`) and
vLLM's (`kvtui.engines.vllm.calculator.Calculator.inverse`) both search through here.
"""

from __future__ import annotations

from collections.abc import Callable

from kvtui.core.capacity.parallel import TP_CHOICES


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


__all__ = ["least_step", "smallest_tp"]
