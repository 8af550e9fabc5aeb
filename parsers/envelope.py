"""The prefixes log clients put in front of a server's own line, and their timestamps.

A server in a container or a systemd unit is read through a client that wraps every line:

    docker logs --timestamps   2026-11-24T09:14:20.123456789Z <line>      (RFC 3339, 9 digits)
    kubectl logs --timestamps  2026-11-24T09:14:20.123456789Z <line>      (RFC 3339, 0-9 digits)
    kubectl logs --prefix      [pod/NAME/CONTAINER] <line>                (either form after it)
    journalctl -o short-iso    2026-11-24T09:14:20+0000 HOST IDENT[PID]: <line>
    journalctl (-o short)      Nov 24 09:14:20 HOST IDENT[PID]: <line>
    journalctl -o short-full   Mon 2026-11-24 09:14:20 UTC HOST IDENT[PID]: <line>
    (and the -precise variants, with microseconds)

journalctl also prints lines of its own ("-- Boot 3f... --", "-- No entries --") and indents
the continuation lines of a multi-line message to the width of the envelope.

A server run by NVIDIA Dynamo logs through Dynamo's own logging, which replaces the engine's head:

    Dynamo (SGLang, Rust)      2026-11-24T09:14:20.123456Z  INFO scheduler.event_loop_normal: <msg>
    Dynamo (vLLM, Python)      2026-11-24T09:14:20.123456Z WARNING gpu_worker.load_model: <msg>

Dynamo's `configure_sglang_logging` points SGLANG_LOGGING_CONFIG_PATH at a config whose format is
`%(message)s` and whose handler hands each record to the Rust runtime (`LogHandler.emit`: target
`{record.module}.{record.funcName}`, or the module alone at module level); the runtime prints it
with tracing-subscriber's compact format and its `TimeFormatter` (`%Y-%m-%dT%H:%M:%S%.6fZ`, or the
local offset `%:z` under DYN_LOG_USE_LOCAL_TZ), the level right-aligned in 5 (` INFO`, ` WARN`),
ANSI colours unless disabled (ai-dynamo/dynamo components/src/dynamo/runtime/logging.py,
lib/runtime/src/logging.rs `setup_logging`, `TimeFormatter::format_now`). vLLM's loggers go through
its `VllmColorFormatter` instead: the same layout with Python's level name (`WARNING`). So the
engine's own head (SGLang's `[ts TPn]`, vLLM's `LEVEL MM-DD ... [file.py:N]`) is gone, its rank tags
with it: `dynamo_head` reads the timestamp, and the message is the engine's.

One module holds that grammar so the live sources (which strip the envelope and resume a client
at the last timestamp seen), the saved-file parser and the SSH follower agree on it. Pure: no IO.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import regex

# The envelope grammars a source can name when it knows its client.
TIMESTAMPS = "timestamps"  # docker logs / kubectl logs --timestamps
JOURNAL = "journal"  # journalctl's short formats
CLIENTS = (TIMESTAMPS, JOURNAL)

_RFC3339 = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d)"
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_WEEKDAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_JOURNAL_TS = (
    # short-iso[-precise]: systemd prints a numeric offset, never "Z" (which marks RFC 3339)
    r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?[+-]\d\d:?\d\d"
    rf"|{_MONTH} [ \d]\d \d\d:\d\d:\d\d(?:\.\d{{1,6}})?"  # short[-precise]
    rf"|{_WEEKDAY} \d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{{1,6}})? [A-Za-z][\w+\-/]*"  # short-full
)
# HOST IDENT[PID]: (the identifier may lack a pid; neither holds a space)
_JOURNAL = regex.compile(rf"({_JOURNAL_TS}) (\S+ [^\s\[\]]+(?:\[\d+\])?): ")
_STAMP = regex.compile(rf"({_RFC3339}) ")
_POD = regex.compile(r"\[(pod/[^\s/\]]+/[^\s\]]+)\] ")
_MARKER = regex.compile(r"-- (?:Boot [0-9a-f]{32}|Reboot|No entries|(?:Logs|Journal) begins? "
                        r"at [^\n]*) --")
# NVIDIA Dynamo's head (see above): its timestamp (date, time; the zone dropped), a level, the
# record's target and ": ".
_DYNAMO = regex.compile(r"(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d(?:\.\d{1,9})?)(?:Z|[+-]\d\d:\d\d) +"
                        r"(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL) [\w.<>:\-]+: ")
_ISO = regex.compile(r"(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?"
                     r"(?: ?(Z|UTC|GMT|[+-]\d\d:?\d\d))")


@dataclass(frozen=True, slots=True)
class Envelope:
    """What a client wrapped around one line: its timestamp text and where the payload starts.

    `origin` names who logged the line when the envelope says ("pod/NAME/CONTAINER" or
    "HOST IDENT[PID]"); `marker` is a line the client printed itself, with no payload.
    """

    client: str
    ts: str | None
    start: int
    origin: str | None = None
    marker: bool = False


def split(text: str, client: str | None = None) -> Envelope | None:
    """The envelope of `text`, or None. With `client`, only that client's grammar is tried (a
    live source knows its client); without, journalctl's (the more specific) comes first."""
    if client is None or client == JOURNAL:
        m = _JOURNAL.match(text)
        if m is not None:
            return Envelope(JOURNAL, m.group(1), m.end(), m.group(2))
        if text[:3] == "-- " and _MARKER.fullmatch(text.rstrip()):
            return Envelope(JOURNAL, None, len(text), None, marker=True)
        if client == JOURNAL:
            return None
    origin = None
    start = 0
    if text[:5] == "[pod/":
        m = _POD.match(text)
        if m is None:
            return None
        origin, start = m.group(1), m.end()
    m = _STAMP.match(text, start)
    if m is not None:
        return Envelope(TIMESTAMPS, m.group(1), m.end(), origin)
    if origin is not None:
        return Envelope(TIMESTAMPS, None, start, origin)
    return None


def payload_start(text: str) -> int:
    """Where the server's own line starts (0: no envelope); the parser's hook. Behind NVIDIA
    Dynamo's head (`dynamo_head`) that is the engine's message."""
    m = _DYNAMO.match(text)
    if m is not None:
        return m.end()
    env = split(text)
    if env is None:
        return 0
    m = _DYNAMO.match(text, env.start)
    return env.start if m is None else m.end()


def dynamo_head(text: str) -> tuple[int, str] | None:
    """(where the message starts, the head's time as `YYYY-MM-DD HH:MM:SS.ffffff`) of a line
    NVIDIA Dynamo's logging printed, also behind a client's envelope (a saved `docker logs
    --timestamps`); None for any other line. The time keeps at most 6 decimals and no zone (the
    engines' own stamps carry none either)."""
    m = _DYNAMO.match(text)
    if m is None:
        env = split(text)
        if env is None or not env.start:
            return None
        m = _DYNAMO.match(text, env.start)
        if m is None:
            return None
    time = m.group(2)
    return m.end(), f"{m.group(1)} {time[:15]}"


def strip(text: str) -> str:
    """The line without its client envelope (a client's own marker line gives "")."""
    env = split(text)
    return text if env is None else text[env.start :]


def instant(ts: str | None) -> tuple[int, int] | None:
    """(Unix seconds, nanoseconds) of an envelope timestamp that carries a date and a zone,
    so that timestamps in any offset or precision compare; None for one without (journalctl's
    default short format has no year)."""
    if not ts:
        return None
    m = _ISO.search(ts)
    if m is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    zone = m.group(8)
    offset = 0
    if zone not in ("Z", "UTC", "GMT"):
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        offset = sign * (int(digits[:2]) * 3600 + int(digits[2:]) * 60)
    try:
        moment = datetime(year, month, day, hour, minute, second,
                          tzinfo=timezone(timedelta(seconds=offset)))
    except ValueError:
        return None
    nanos = int((m.group(7) or "0").ljust(9, "0"))
    return int(moment.timestamp()), nanos
