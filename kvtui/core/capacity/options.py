"""The what-if's inputs checked once, for `kvtui whatif` and the TUI's what-if form alike.

Why here: the same value must be refused the same way, with the same one-line message, whether it
was typed as `--target-tp 0` or into the form's TP field (issue 39). Each check returns the typed
value or raises ValueError whose text is that message; `name` is what the user typed it into (a
flag on the command line, a field label in the form).
"""

from __future__ import annotations

from kvtui.core.capacity.whatif import MemoryKnob
from kvtui.core.units import parse_length, split_lengths


def positive_int(name: str, raw: str | None) -> int | None:
    if raw is None:
        return None
    try:
        v = int(str(raw).strip())
    except ValueError:
        raise ValueError(f"{name} {raw!r}: not a whole number") from None
    if v <= 0:
        raise ValueError(f"{name} must be a positive whole number (got {v})")
    return v


def positive_float(name: str, raw: str | None, *, below_one: bool = False) -> float | None:
    if raw is None:
        return None
    try:
        v = float(str(raw).strip())
    except ValueError:
        raise ValueError(f"{name} {raw!r}: not a number") from None
    if not v == v or v in (float("inf"), float("-inf")):
        raise ValueError(f"{name} {raw!r}: not a finite number")
    if below_one and not 0 < v < 1:
        raise ValueError(f"{name} must be between 0 and 1, exclusive (got {v:g})")
    if v <= 0:
        raise ValueError(f"{name} must be positive (got {v:g})")
    return v


def length(name: str, raw: str) -> int:
    """A request length: whole tokens ("131072", "131,072") or with K / M = x1024 ("128K")."""
    text = str(raw).strip()
    if text.lstrip("+-").isdigit():
        v = positive_int(name, text)
        assert v is not None
        return v
    v = parse_length(text)
    if v is None:
        raise ValueError(f"{name} {raw!r}: not a length (whole tokens, or K / M = x1024: "
                         "128K)")
    return v


def lengths(name: str, raw: str) -> list[int]:
    """Several lengths, separated by spaces or commas, as the form's lengths field takes them
    (a comma between groups of three digits is a thousands separator: `units.parse_lengths`)."""
    words = split_lengths(raw)
    if not words:
        raise ValueError(f"{name}: give at least one length (128K 32K)")
    return [length(name, w) for w in words]


def memory_value(knob: MemoryKnob, name: str, raw: str) -> float:
    """A value of the engine's memory knob in its own unit: a fraction in (0, 1), or vLLM's
    --kv-cache-memory-bytes syntax (`knob.parse`)."""
    if not knob.bytes:
        v = positive_float(name, raw, below_one=True)
        assert v is not None
        return v
    value = knob.parse(str(raw))
    if value is None:
        raise ValueError(f"{name} {raw!r}: not a size vLLM takes (whole bytes, or a number "
                         "with k/m/g/t = x1000 or K/M/G/T = x1024, no decimals with K/M/G/T)")
    return value


__all__ = ["length", "lengths", "memory_value", "positive_float", "positive_int"]
