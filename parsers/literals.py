"""Printed Python literals (a server-args dump's values) as JSON-able scalars.

Both engines print their configuration through Python's repr (SGLang's `ServerArgs(...)`, vLLM's
non-default args dict and engine config line), so one reading serves both: a quoted string, None,
a bool, an int, a finite float; anything else (a nested object, `inf`, `nan`) stays its text.
"""

from __future__ import annotations

from typing import Any


def literal_scalar(raw: str) -> Any:
    """`raw` as printed, to a JSON-able scalar; an empty value is None."""
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1]
    if raw in ("None", ""):
        return None
    if raw == "True":
        return True
    if raw == "False":
        return False
    try:
        return int(raw)
    except ValueError:
        pass
    try:
        value = float(raw)
    except ValueError:
        return raw
    return value if value == value and abs(value) != float("inf") else raw
