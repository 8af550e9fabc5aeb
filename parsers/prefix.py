"""Timestamp/rank prefix of an SGLang log line.

SGLang's own formatter prints `[<asctime>[.ms][ ranks]] message`; pasted logs lose the leading
`[`, users trim the date, and `SGLANG_LOGGING_CONFIG_PATH` setups print
`YYYY-MM-DD HH:MM:SS LEVEL PID [ranks file.py:N] message`.

Splitting is two-phase on purpose: `message_start` only uses `str.find`, so the (common)
unrecognised line costs almost nothing, and `parse_prefix` validates the head only once a
message was recognised. Heads repeat (same second, same rank) so validated heads are
memoised; the cache is bounded and holds immutable values, so sharing it is harmless.
"""

from __future__ import annotations

import regex

_RANK = r"(?:DP|PP|ATTN_CP|MOE_DP|TP|EP)\d+"
_TS = r"(?:\d{4}-\d{2}-\d{2}[ T])?\d{2}:\d{2}:\d{2}(?:[.,]\d{1,6})?"

# `[ts ranks` or, for pastes that lost the bracket, `ts ranks` (the `] ` is cut off already).
_NATIVE = regex.compile(rf"\[?({_TS})((?: {_RANK})*)")
# Logging-config form: `ts LEVEL PID [ranks file.py:N` (level and pid each optional).
_CONFIG = regex.compile(
    rf"\[?({_TS})(?: [A-Z]+)?(?: \d+)? \[((?:{_RANK}(?: {_RANK})*)?) ?(?:[\w.\-]+:\d+)?"
)
# `LEVEL file.py:N: ` that some builds put after the bracketed stamp.
_LEVEL_FILE = regex.compile(r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.\-]+:\d+: ")

# How far into the line a prefix may reach; the logging-config form with a long file name and
# four rank tags stays well under this.
MAX_PREFIX = 160

_NO_PREFIX: tuple[str | None, str | None] = (None, None)
PREFIX_CACHE: dict[str, tuple[str | None, str | None]] = {}
_CACHE_MAX = 4096


def message_start(text: str) -> int:
    """Index where the message starts (0 when no prefix-like head is seen).

    A guess is fine here: `parse_prefix` validates later, and a wrong guess only yields
    ts/rank None, never a wrong value.
    """
    first = text[:1]
    if first == "[" or "0" <= first <= "9":
        end = text.find("] ", 0, MAX_PREFIX)
        if end > 0:
            return end + 2
    return 0


def parse_prefix(text: str, start: int) -> tuple[str | None, str | None]:
    """(ts, rank) of the head `text[:start]` that `message_start` found, or (None, None)."""
    if start == 0:
        return _NO_PREFIX
    head = text[: start - 2]
    hit = PREFIX_CACHE.get(head)
    if hit is not None:
        return hit
    m = _NATIVE.fullmatch(head) or _CONFIG.fullmatch(head)
    value = _NO_PREFIX if m is None else (m.group(1), m.group(2).strip() or None)
    if len(PREFIX_CACHE) >= _CACHE_MAX:
        PREFIX_CACHE.clear()
    PREFIX_CACHE[head] = value
    return value


def strip_level_file(msg: str) -> str:
    """Drop a `LEVEL file.py:N: ` head (seen in 2026 builds) so the message dispatches."""
    m = _LEVEL_FILE.match(msg)
    return msg[m.end() :] if m is not None else msg
