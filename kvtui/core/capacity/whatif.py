"""The what-if frame every engine's calculator shares: the memory knob it moves, how a user types
a memory fraction, the request lengths the concurrency columns default to, how many requests a
pool fits (`floor_fit`).

Why here and not in an engine: the report, `kvtui whatif` and the TUI's what-if pane read every
engine's calculator the same way (`report`, `scenario`, `current`, `inverse`, `tokens_for`,
`budget_bytes`, `memory_knob`), so the pieces they read through are the core's. Each engine's
arithmetic is its own: SGLang's in `kvtui.engines.sglang.calculator`, vLLM's in
`kvtui.engines.vllm.calculator`, reached through the engine seam (`Engine.calculator`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

from kvtui.core.units import fmt_bytes_gib

DEFAULT_CONTEXTS: tuple[int, ...] = (32768, 131072)


def floor_fit(num: float, den: float = 1, digits: int = 2) -> float:
    """How many requests fit, `num / den`, cut (never rounded) to `digits` decimals: a pool of
    0.996 requests is 0.99, not 1.0, since not one full request fits, and every reader
    (a table, a 1-decimal cell, `int()` for what can run) then cuts it further. Integers
    (tokens, lengths, blocks) are divided exactly; a float is read as the decimal it prints
    (0.29 stays 0.29, where `math.floor(0.29 * 100)` is 28).

    This is for kvtui's own answer to a fit question. A figure an engine printed (vLLM's
    "Maximum concurrency ...: %.2fx", rounded) is quoted as printed where the what-if shows the
    setting it was printed for (`kvtui.engines.vllm.calculator.Calculator.concurrency`)."""
    scale: int = 10 ** digits  # int ** int is typed Any (a negative power gives a float)
    if isinstance(num, int) and isinstance(den, int):
        return (num * scale // den) / scale
    if not (math.isfinite(num) and math.isfinite(den)):
        return num / den
    exact = Fraction(Decimal(repr(float(num)))) / Fraction(Decimal(repr(float(den))))
    return math.floor(exact * scale) / scale


def parse_fraction(text: str) -> float | None:
    """A memory fraction as a user types it (0.05 to below 1), None otherwise."""
    try:
        v = float(text.strip())
    except ValueError:
        return None
    return v if 0.05 <= v < 1.0 else None


@dataclass(frozen=True, slots=True)
class MemoryKnob:
    """The engine's one memory setting a what-if moves: its name as the log and the report say
    it, the flag that sets it, and the logged value (None when the log did not show it).

    `unit` is "fraction" (a share of the GPU's memory: SGLang's mem_fraction_static, vLLM's
    gpu_memory_utilization) or "bytes" (a KV budget per GPU: vLLM's kv_cache_memory_bytes).
    `parse` reads what a user types for it (the engine's own syntax), None when it makes no
    sense."""

    name: str
    flag: str
    value: float | None
    short: str  # an 8-column label for a form field
    unit: str = "fraction"
    parse: Callable[[str], float | None] = parse_fraction

    @property
    def bytes(self) -> bool:
        return self.unit == "bytes"

    def show(self, value: float | None) -> str:
        """A value as the what-if pane shows it (17 columns at most)."""
        if value is None:
            return "—"
        if self.bytes:
            return fmt_bytes_gib(value)
        return f"{value:.3f}"

    def arg(self, value: float) -> str:
        """A value as the flag takes it."""
        return str(int(value)) if self.bytes else f"{value:g}"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "flag": self.flag, "unit": self.unit,
                "value": int(self.value) if self.bytes and self.value is not None
                else self.value}


def request_lengths(context_len: int | None,
                    lengths: list[int] | tuple[int, ...] | None) -> list[int]:
    """The request lengths a what-if sizes for: the server's context length first, then the
    asked ones (the defaults when none were asked), each once."""
    out: list[int] = []
    for c in ([context_len] if context_len else []) + list(
            lengths if lengths is not None else DEFAULT_CONTEXTS):
        if c and c not in out:
            out.append(int(c))
    return out


__all__ = ["DEFAULT_CONTEXTS", "MemoryKnob", "parse_fraction", "request_lengths"]
