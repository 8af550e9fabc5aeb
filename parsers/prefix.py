"""Split an SGLang log line into (timestamp, rank tag, message).

SGLang's own formatter prints `[<asctime>[.ms][ ranks]] message`; pasted logs lose the leading
`[`, users trim the date, and `SGLANG_LOGGING_CONFIG_PATH` setups print
`YYYY-MM-DD HH:MM:SS LEVEL PID [ranks file.py:N] message`. The split is two-phase on purpose:
`cut_message` only slices with `str.find` so the (common) unrecognised line costs almost
nothing, and `parse_prefix` runs the validating regex only once a message was recognised.
"""

from __future__ import annotations

import regex

_RANK = r"(?:DP|PP|ATTN_CP|MOE_DP|TP|EP)\d+"
_TS = r"(?:\d{4}-\d{2}-\d{2}[ T])?\d{2}:\d{2}:\d{2}(?:[.,]\d{1,6})?"

# `[ts ranks] ` or, for pastes that lost the bracket, `ts ranks] `.
_NATIVE = regex.compile(rf"\[?(?P<ts>{_TS})(?P<ranks>(?: {_RANK})*)\] ")
# Logging-config form: `ts LEVEL PID [ranks file.py:N] ` (level and pid each optional).
_CONFIG = regex.compile(
    rf"(?P<ts>{_TS})(?: [A-Z]+)?(?: \d+)? "
    rf"\[(?P<ranks>(?:{_RANK}(?: {_RANK})*)?) ?(?:[\w.\-]+:\d+)?\] "
)
# `LEVEL file.py:N: ` that some builds put after the bracketed stamp.
_LEVEL_FILE = regex.compile(r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.\-]+:\d+: ")

# How far into the line a prefix may reach; the logging-config form with a long file name and
# four rank tags stays well under this.
_MAX_PREFIX = 160


def cut_message(text: str) -> tuple[int, str]:
    """Return (prefix_end, message) by slicing only; `prefix_end` 0 means "no prefix seen".

    Guessing is fine here because the caller validates with `parse_prefix` later; a wrong guess
    only costs a fallback, never a wrong timestamp.
    """
    first = text[:1]
    if first == "[" or "0" <= first <= "9":
        end = text.find("] ", 0, _MAX_PREFIX)
        if end > 0:
            return end + 2, text[end + 2 :]
    return 0, text


def parse_prefix(text: str, prefix_end: int) -> tuple[str | None, str | None]:
    """Validate the prefix that `cut_message` sliced off and return (ts, rank)."""
    if prefix_end == 0:
        return None, None
    m = _NATIVE.match(text, 0, prefix_end)
    if m is None or m.end() != prefix_end:
        m = _CONFIG.match(text, 0, prefix_end)
        if m is None or m.end() != prefix_end:
            return None, None
    ranks = m.group("ranks").strip()
    return m.group("ts"), (ranks or None)


def strip_level_file(msg: str) -> str:
    """Drop a `LEVEL file.py:N: ` head (seen in 2026 builds) so the message dispatches."""
    m = _LEVEL_FILE.match(msg)
    return msg[m.end() :] if m is not None else msg
