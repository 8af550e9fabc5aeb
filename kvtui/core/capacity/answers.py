"""The inverse's answer for one memory or parallel knob, whatever the engine calls it.

Why a type of its own: the inverse question ("what would N requests of L tokens take?") has the
same answer shape for every knob an engine sizes its pool by (SGLang's mem_fraction_static,
vLLM's gpu_memory_utilization or kv_cache_memory_bytes, either's TP): the value asked about, the
logged one, the one that fits, whether the engine accepts it and why not. The report's JSON keeps
one flat field per knob (`Inverse`, a contract pinned by tests/golden); the readers (the what-if
pane, the text rendering) take the answers through `knob_answers`, so neither spells a field name
out of a knob name.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtui.core.report_types import Inverse


@dataclass(frozen=True, slots=True)
class KnobAnswer:
    """One knob's part of an inverse answer (`name` is the knob as the report names it:
    `kvtui.core.capacity.whatif.MemoryKnob.name`, or "tp")."""

    name: str
    target: float | None = None  # the value asked about, when not the logged one
    current: float | None = None
    needed: float | None = None  # the value at which the requests fit
    feasible: bool | None = None  # does the engine accept `needed`
    note: str | None = None  # why there is no `needed`, or what it rests on


def knob_answers(inv: Inverse) -> tuple[KnobAnswer, ...]:
    """Every knob's answer of `inv`, memory knobs first (the order the text gives them in),
    TP last."""
    return (
        KnobAnswer("kv_cache_memory_bytes", inv.kv_cache_memory_bytes_target,
                   inv.kv_cache_memory_bytes_current, inv.kv_cache_memory_bytes_needed,
                   inv.kv_cache_memory_bytes_feasible, inv.kv_cache_memory_bytes_note),
        KnobAnswer("mem_fraction_static", inv.mem_fraction_static_target,
                   inv.mem_fraction_static_current, inv.mem_fraction_static_needed,
                   inv.mem_fraction_static_feasible, inv.mem_fraction_static_note),
        KnobAnswer("gpu_memory_utilization", inv.gpu_memory_utilization_target,
                   inv.gpu_memory_utilization_current, inv.gpu_memory_utilization_needed,
                   inv.gpu_memory_utilization_feasible, inv.gpu_memory_utilization_note),
        KnobAnswer("tp", inv.tp_target, None, inv.tp_needed, None, inv.tp_note),
    )


def knob_answer(inv: Inverse, name: str) -> KnobAnswer:
    """The answer for the knob `name` (an empty answer for a knob the inverse does not know)."""
    return next((a for a in knob_answers(inv) if a.name == name), KnobAnswer(name))


__all__ = ["KnobAnswer", "knob_answer", "knob_answers"]
