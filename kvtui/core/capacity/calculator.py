"""What the core, the commands and the UI may ask of an engine's KV calculator.

Why a protocol: `Engine.calculator` and `Engine.plan` hand back each engine's own class (SGLang's
`kvtui.engines.sglang.calculator.Calculator`, vLLM's `kvtui.engines.vllm.calculator.Calculator`);
the report, `kvtui whatif` and the what-if pane read both the same way, through these members
alone, so a third engine's calculator is typed by what it offers, not by its name. Everything
else on an engine's class (its sizer, its calibration, its private caches) stays the engine's.
"""

from __future__ import annotations

from typing import Protocol

from kvtui.core.capacity.modelspec import ModelSpec
from kvtui.core.capacity.parallel import Parallel
from kvtui.core.capacity.whatif import MemoryKnob
from kvtui.core.report_types import Current, Inverse, Scenario, WhatIf


class Calculator(Protocol):
    """One run's KV sizer at the logged settings, asked at others."""

    # the run as logged
    current_dtype: str
    current_dtype_assumed: bool  # the log names no KV dtype: assumed (the notes say how)
    tokens: int | None
    context_len: int | None
    parallel: Parallel
    spec: ModelSpec | None
    spec_reason: str
    # how the texts name the engine whose rules these are, and its TP flag
    engine_label: str
    tp_flag: str

    @property
    def engine(self) -> str:
        """The engine's name (`kvtui.core.engine.load`): its flags, its KV dtypes."""
        ...

    @property
    def tp_label(self) -> str | None:
        """TP in the header's words when the log does not state it; None when it does."""
        ...

    @property
    def rules_version(self) -> tuple[int, int, int]:
        """The release whose sizing rules the arithmetic follows."""
        ...

    def memory_knob(self) -> MemoryKnob: ...

    def current(self) -> Current: ...

    def scenario(self, dtype: str, *, tp: int | None = None,
                 mem_fraction_static: float | None = None,
                 context_lengths: list[int] | tuple[int, ...] | None = None,
                 target_concurrency: float | None = None) -> Scenario:
        """One what-if row at `dtype`, and at `tp` / the memory knob's value when given."""
        ...

    def report(self, dtypes: list[str] | tuple[str, ...] | None = None,
               context_lengths: list[int] | tuple[int, ...] | None = None) -> WhatIf: ...

    def inverse(self, dtype: str, context_len: int, concurrency: float, *,
                tp: int | None = None, mem_fraction_static: float | None = None) -> Inverse:
        """What `concurrency` requests of `context_len` tokens would take."""
        ...

    def tokens_for(self, dtype: str, tp: int | None = None,
                   mem_fraction_static: float | None = None) -> tuple[int | None, int | None]:
        """The pool's tokens (and the engine's own rounding of them) at `dtype`, `tp` and the
        memory knob's value: what compare's prediction asks of the earlier run."""
        ...

    def sized_by_kv_bytes(self) -> Calculator | None:
        """This run read as sized by a KV budget in bytes (`kvtui whatif
        --kv-cache-memory-bytes`); None where the engine has no such knob."""
        ...

    def with_max_batched(self, tokens: int) -> Calculator | None:
        """This run with another batched-token budget (`--max-num-batched-tokens`); None where
        the engine's pool does not follow one."""
        ...


__all__ = ["Calculator"]
