"""`parse_line`: one log line in, one `Event` (or None) out.

The order is chosen for speed on a long log, where nearly every line is a decode line or an
access line and most of the rest is noise:

1. the message start: a client envelope (`2026-11-24T...`) is cut off, then SGLang's own
   `[ts ranks] ` head is found with one `str.find`;
2. the dominant decode layouts take a split-based fast path (`runtime.decode_split_variant`),
   uvicorn access lines leave at once;
3. the dispatch table, built from the catalogue (`parsers.sglang.catalog`), maps the first four
   characters of the message to the formats whose head phrases start that way: a dict lookup and
   a `startswith` or two keep an unrecognised line well under a microsecond;
4. only a line that failed all that is looked at again, and only where a cheap test says it is
   worth it: the short journalctl / `kubectl --prefix` envelopes, a Ray actor prefix
   (`(SchedulerActor pid=123, ip=...) `), a recognisable SGLang head further into the line
   (a line glued to streamed model output that had no newline), and the formats that may sit
   anywhere in a message (errors inside traceback text, labelled pools), each behind a substring
   test (`Format.infixes`).

Inside the message, three wrappers are dropped before dispatch: `LEVEL file.py:N: ` (2026
builds), `LEVEL:logger:` (Python's default logging format, e.g. `INFO:root:`) and the 0.2.x
`[gpu=N] ` tag.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import regex

from parsers.envelope import dynamo_head, payload_start
from parsers.event import Event
from parsers.prefix import MAX_PREFIX, PREFIX_CACHE, parse_prefix, strip_level_file
from parsers.sglang.catalog import CATALOG
from parsers.sglang.runtime import decode_split_variant
from parsers.text import CARET, normalize

_Parse = Callable[[str], tuple[dict[str, Any], str | None] | None]
# (kind, fields, variant)
_Hit = tuple[str, dict[str, Any], str | None]


def _build() -> tuple[dict[str, tuple[tuple[str, tuple[str, ...], _Parse], ...]],
                      tuple[tuple[str, str, _Parse], ...]]:
    table: dict[str, list[tuple[str, tuple[str, ...], _Parse]]] = {}
    infixes: list[tuple[str, str, _Parse]] = []
    for fmt in CATALOG:
        parse = fmt.parse
        if parse is None:
            raise TypeError(f"{fmt.kind}: an SGLang format without its parser")
        by_key: dict[str, list[str]] = {}
        for head in fmt.heads:
            by_key.setdefault(head[:4], []).append(head)
        for key, heads in by_key.items():
            table.setdefault(key, []).append((fmt.kind, tuple(heads), parse))
        infixes.extend((needle, fmt.kind, parse) for needle in fmt.infixes)
    return {k: tuple(v) for k, v in table.items()}, tuple(infixes)


DISPATCH, INFIXES = _build()

# First letters of journalctl's short heads: a month (`Nov 24 09:14:20`) or a weekday
# (`Tue 2026-11-24 09:14:20 UTC`).
_ENVELOPE_INITIALS = frozenset("JFMASONDTWS")
_LEVELS = frozenset({"INFO", "WARN", "ERRO", "DEBU", "CRIT"})
_WRAPPED = _LEVELS | {"[gpu"}  # the message starts with a wrapper `_unwrap` drops
# Python's default `%(levelname)s:%(name)s:%(message)s` (a server started without SGLang's own
# logging setup, e.g. the engine inside a notebook).
_LEVEL_LOGGER = regex.compile(r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.\-]+:")
_GPU_TAG = regex.compile(r"\[gpu=\d+\] ")
# Ray's prefix on an actor's or task's output, and its dedup suffix.
_ACTOR = regex.compile(r"\((?:[\w.\-]+ )?pid=\d+(?:, ip=[\w.:\-]+)?\) ")
_REPEATED = regex.compile(r" \[repeated \d+x across cluster\]\s*$")
# SGLang's own head, found further into a line than its start.
_HEAD_AT = regex.compile(
    r"\[(?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d(?:[.,]\d{1,6})?"
    r"(?: (?:DP|PP|ATTN_CP|MOE_DP|TP|EP)\d+)*\] ")
_MAX_DEPTH = 3
# tmux's copy-mode position, `[line/history]`, right-aligned on the first line a copy took
# (sgl-project/sglang#7055: "... KV size: 80.53 GB      [386/1830]"): pasted with the line, it
# would end the last column's value ("#queue-req: 0      [386/1830]" read no queue).
_TMUX_POSITION = regex.compile(r"\s{2,}\[\d+/\d+\]\s*$")


def _dispatch(msg: str) -> _Hit | Literal[False] | None:
    """The message's event by its start; False when a format's head phrase starts it but no
    parser took it (a `Capture cuda graph begin` line: certainly no event, anywhere in it);
    None when no head starts it (worth a second look)."""
    entries = DISPATCH.get(msg[:4])
    if entries is not None:
        headed = False
        for kind, heads, parse in entries:
            if msg.startswith(heads):
                headed = True
                hit = parse(msg)
                if hit is not None:
                    return kind, hit[0], hit[1]
        if headed:
            return False
    if msg[:4] in _WRAPPED:
        inner = _unwrap(msg)
        if inner is not msg:
            return _dispatch(inner)
    return None


def _unwrap(msg: str) -> str:
    """The message inside `LEVEL file.py:N: `, `LEVEL:logger:` or `[gpu=N] ` (else `msg`
    itself); never uvicorn's `INFO:     ...` access line."""
    key = msg[:4]
    if key in _LEVELS:
        colon = msg.find(":", 4, 10)
        if colon > 0:
            if msg[colon + 1 : colon + 2] == " ":
                return msg  # uvicorn's access log (`INFO:     127.0.0.1:...`), `WARNING:  ...`
            m = _LEVEL_LOGGER.match(msg)
            return msg if m is None else msg[m.end() :]
        return strip_level_file(msg)
    if key == "[gpu":
        m = _GPU_TAG.match(msg)
        if m is not None:
            return msg[m.end() :]
    return msg


def parse_unchecked(text: str) -> Event | None:
    """`parse_line` without the safety net, so tests can see a would-be exception."""
    return _parse(text, 0)


def _parse(text: str, depth: int) -> Event | None:
    if "\x1b" in text or CARET in text or "\r" in text or "\t" in text:
        text = normalize(text)
    elif text[:1] == " ":
        text = text.lstrip(" ")
    # A trailing "\n" is left on for the decode fast path (int()/float() ignore it) and only
    # stripped below, so the bulk of a file read line by line skips one string copy.
    # message_start(), inlined: this function runs once per line of a multi-GB log.
    first = text[:1]
    # A saved `docker/kubectl logs --timestamps` or `journalctl -o short-iso` line: parse what
    # the server wrote behind the client's envelope. Only a `2026-11-24T` head gets this far;
    # the other envelopes (`Nov 24 ...`, `[pod/...]`) are looked at when nothing matched (below).
    if first != "[" and "0" <= first <= "9" and text[10:11] == "T":
        cut = payload_start(text)
        if cut:
            # (a head that ends in ": " may be NVIDIA Dynamo's, which prints the message in
            # place of SGLang's head, parsers.envelope: read it under a head of Dynamo's time,
            # with no rank, as Dynamo drops SGLang's tags; its microseconds tell it from
            # SGLang's own stamp, `ts_hint`)
            dynamo = dynamo_head(text) if text[cut - 2:cut] == ": " else None
            rest = text[cut:]
            text = rest if dynamo is None or rest[:1] == "[" else f"[{dynamo[1]}] {rest}"
            first = text[:1]
    start = 0
    if first == "[" or "0" <= first <= "9":
        end = text.find("] ", 0, MAX_PREFIX)
        if end > 0:
            start = end + 2
    key = text[start : start + 4]
    if key == "Deco":
        fast = decode_split_variant(text, start)
        if fast is not None:
            prefix = PREFIX_CACHE.get(text[: start - 2]) if start else None
            if prefix is None or prefix[0] is None:
                prefix = _head(text, start)
            return Event("decode_batch", prefix[1], prefix[0], fast[0], fast[1])
    elif key == "INFO" and text[start + 4 : start + 6] == ": ":
        return None  # uvicorn access line, the other bulk of a serving log
    if text[-1:] == "\n":
        text = text.rstrip("\n")
    if text[-1:] == "]":  # after the decode fast path, which declines such a line
        tail = _TMUX_POSITION.search(text)
        if tail is not None:
            text = text[: tail.start()]
    msg = text[start:] if start else text
    hit = _dispatch(msg)
    if hit is None:
        return _retry(text, msg, first, depth)
    if hit is False:
        return None
    # A sliced head that is not a real prefix (`[gpu=0] Decode batch...`) gives ts/rank None.
    ts, rank = _head(text, start)
    return Event(hit[0], rank, ts, hit[1], hit[2])


def _head(text: str, start: int) -> tuple[str | None, str | None]:
    """(ts, rank) of the head before `start`; when the line begins with other text glued to
    the head (streamed output that started with a digit, so `message_start` took it for a bare
    head), the head where it really starts. Such a glued head is memoised as no head at all
    (`PREFIX_CACHE`), so a cached (None, None) is looked at again here too."""
    head = parse_prefix(text, start)
    if head[0] is None and start > 2:
        at = text.rfind("[", 1, start - 2)
        if at > 0 and _HEAD_AT.match(text, at) is not None:
            return parse_prefix(text[at:], start - at)
    return head


def _retry(text: str, msg: str, first: str, depth: int) -> Event | None:
    """A line the start-of-message route did not recognise: look behind what may wrap it."""
    if depth < _MAX_DEPTH:
        if text[1:2] == "p" if first == "[" else first in _ENVELOPE_INITIALS:
            cut = payload_start(text)  # `kubectl logs --prefix`, journalctl's short formats
            if cut:
                return _parse(text[cut:], depth + 1)
        if first == "(":
            m = _ACTOR.match(text)
            if m is not None:
                rest = text[m.end() :]
                if rest.endswith("]"):
                    rest = _REPEATED.sub("", rest)
                return _parse(rest, depth + 1)
        # A head further in (after streamed output, or behind an unknown wrapper): only a line
        # with a second "] " can hold one.
        at = text.find("[", 1) if "] " in msg else -1
        while 0 < at < len(text) - 20:
            # `[2026-03-01 ...` or `[16:43:29 ...`: only a head like that is matched
            if (text[at + 5 : at + 6] == "-" or text[at + 3 : at + 4] == ":") \
                    and _HEAD_AT.match(text, at) is not None:
                ev = _parse(text[at:], depth + 1)
                if ev is not None:
                    return ev
            at = text.find("[", at + 1)
    while msg[:4] in _WRAPPED:
        inner = _unwrap(msg)
        if inner is msg:
            break
        msg = inner
    for needle, kind, parse in INFIXES:  # the formats that may sit anywhere in a message
        if needle in msg:
            found = parse(msg)
            if found is not None:
                ts, rank = _head(text, len(text) - len(msg))
                return Event(kind, rank, ts, found[0], found[1])
    return None


def parse_line(text: str) -> Event | None:
    """Parse one SGLang log line; never raises, returns None for anything unrecognised."""
    try:
        return _parse(text, 0)
    except Exception:
        return None
