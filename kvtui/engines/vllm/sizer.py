"""What vLLM's inverse what-if (`inverse`) asks of the calculator: the sizer's answers at a
setting, and the run's facts.

Why a protocol apart from `calculator`: the calculator hands the inverse question to
`inverse`, which must not import it back (an import circle, issue 41).
`kvtui.engines.vllm.calculator.Calculator` satisfies it (mypy checks that at
`calculator._as_sizer`).
"""

from __future__ import annotations

from typing import Protocol

from kvtui.core.capacity.modelspec import ModelSpec
from kvtui.core.capacity.parallel import Parallel
from kvtui.core.capacity.whatif import MemoryKnob
from kvtui.engines.vllm.sizing import Layout


class Sizer(Protocol):
    """vLLM's calculator as its inverse reads it."""

    context_len: int | None
    parallel: Parallel
    spec: ModelSpec | None
    max_batched: int | None
    utilization: float | None
    total_gib: float | None
    total_basis: str
    weights_gib: float | None
    sized_by_bytes: bool
    extensible: bool
    unmodelled: str | None

    def memory_knob(self) -> MemoryKnob: ...

    def knob_now(self) -> float | None: ...

    def layout(self, dtype: str, tp: int | None = None) -> Layout | None: ...

    def tokens_for(self, dtype: str, tp: int | None = None,
                   mem_fraction_static: float | None = None) -> tuple[int | None, int | None]: ...

    def budget_bytes(self, tp: int | None = None,
                     mem_fraction_static: float | None = None) -> tuple[int | None, str, bool]: ...

    def concurrency(self, dtype: str, contexts: list[int], tp: int | None = None,
                    mem_fraction_static: float | None = None) -> dict[str, float | None]: ...

    def hybrid_unsized(self) -> bool: ...

    def tokens_below_concurrency(self) -> bool: ...

    def extensible_delta(self, util: float) -> tuple[int, str] | None: ...

    def shardable_tp(self, tp: int) -> bool: ...


__all__ = ["Sizer"]
