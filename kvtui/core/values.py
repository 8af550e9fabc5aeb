"""Reading numbers out of parsed server arguments, whose values come as the log printed them:
an int, a float, a digit string, a bool (never a number here) or None."""

from __future__ import annotations

from typing import Any


def as_int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip().isdigit():
        return int(v)
    return None


def as_float(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None
