"""The one grammar of line heads: where a line's timestamp and rank tags are, for every reader.

SGLang's own formatter prints `[<asctime>[.ms][ ranks]] message`; pasted logs lose the leading
`[`, users trim the date, and `SGLANG_LOGGING_CONFIG_PATH` setups print
`YYYY-MM-DD HH:MM:SS LEVEL PID [ranks file.py:N] message`. Timestamps come with a space or a `T`
between date and time, and with `.ms` or `,ms`. The parsers take (ts, rank) from here, and the
replay times lines with `line_timestamp` and `ts_seconds` from here, so a log the parsers can
date is a log the replay can time and seek.

Splitting is two-phase on purpose: `message_start` only uses `str.find`, so the (common)
unrecognised line costs almost nothing, and `parse_prefix` validates the head only once a
message was recognised. Heads repeat (same second, same rank) so validated heads are
memoised; the cache is bounded and holds immutable values, so sharing it is harmless.
"""

from __future__ import annotations

from datetime import datetime

import regex

from parsers.envelope import payload_start

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


# A timestamp at the very start of a line, in any head form above (the bracket optional).
_LEADING_TS = regex.compile(rf"\[?({_TS})(?=[\] ]|$)")


def line_timestamp(text: str) -> str | None:
    """The timestamp a line's head carries, or None. Behind a log client's envelope (a saved
    `docker/kubectl logs --timestamps` or `journalctl`, `parsers.envelope`) it is the server's
    own timestamp, so such a file replays at the server's pace."""
    first = text[:1]
    if (first != "[" and not "0" <= first <= "9") or (first == "[" and text[1:5] == "pod/") \
            or (text[4:5] == "-" and text[10:11] == "T"):
        cut = payload_start(text)
        if cut:
            text = text[cut:]
            first = text[:1]
    if first != "[" and not "0" <= first <= "9":
        return None
    m = _LEADING_TS.match(text)
    return m.group(1) if m is not None else None


def ts_seconds(ts: str) -> float | None:
    """Seconds for a timestamp of this grammar (a time-only stamp: seconds of its day)."""
    try:
        if len(ts) >= 19 and ts[4] == "-":
            base = datetime(int(ts[0:4]), int(ts[5:7]), int(ts[8:10]), int(ts[11:13]),
                            int(ts[14:16]), int(ts[17:19])).timestamp()
            frac = ts[19:]
        else:
            base = int(ts[0:2]) * 3600 + int(ts[3:5]) * 60 + int(ts[6:8])
            frac = ts[8:]
        if frac[:1] in (".", ","):
            base += float("0." + frac[1:])
        return float(base)
    except (ValueError, IndexError):
        return None
