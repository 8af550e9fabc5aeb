"""The format features of an SGLang event that date the release a log came from.

Almost every line format changed at some release (sglang-log-lines.md sections 1-7). The parser
already knows which layout a line showed (`Event.variant`, a catalogue id whose release ranges
are in `parsers.sglang.catalog`), so an event's hints are its variant and the form of its
timestamp; no raw text is searched again. The fold asks for the hints of the first event of each
batch kind in a run (and of every other event) and keeps them as plain strings;
`kvtui.engines.sglang.version` maps each to the releases that print it.
"""

from __future__ import annotations

from parsers.event import Event
from parsers.sglang.catalog import DATING as _DATING


def ts_hint(ts: str) -> str:
    """The timestamp's form: `ts:ms` (0.5.6+), `ts:time_only` (<= 0.3.2) or `ts:date`; or
    `ts:envelope`, a stamp in microseconds, which SGLang never prints (`.%(msecs)03d`: 0.5.23
    utils/common.py:2629) but a wrapper that replaces its head does (NVIDIA Dynamo,
    parsers.envelope): it dates nothing, and says the rank tags are gone."""
    if "." in ts:
        return "ts:envelope" if len(ts) - ts.rindex(".") > 4 else "ts:ms"
    return "ts:time_only" if "-" not in ts else "ts:date"


def hints(ev: Event, text: str = "") -> list[str]:
    """The dating hints one event shows (`text`, the raw line, is not read): the form of its
    timestamp and its variant, when that variant dates anything."""
    h = [] if ev.ts is None else [ts_hint(ev.ts)]
    if ev.variant in _DATING:
        h.append(ev.variant)
    return h
