"""The one grammar of line heads: where a line's timestamp and rank tags are, for every reader.

SGLang's own formatter prints `[<asctime>[.ms][ ranks]] message`; pasted logs lose the leading
`[`, users trim the date, and `SGLANG_LOGGING_CONFIG_PATH` setups print
`YYYY-MM-DD HH:MM:SS LEVEL PID [ranks file.py:N] message`. Timestamps come with a space or a `T`
between date and time, and with `.ms` or `,ms`. The parsers take (ts, rank) from here, and the
replay times lines with `line_timestamp` and `ts_seconds` from here, so a log the parsers can
date is a log the replay can time and seek.

vLLM's heads (`vllm/logger.py`) are a second family, read by `vllm_head`: `LEVEL MM-DD HH:MM:SS
[file.py:N] message` (0.8+), `LEVEL MM-DD HH:MM:SS file.py:N] message` (0.5-0.7), a
`(EngineCore_DP0 pid=241) ` / `(Worker_TP1 pid=307) ` process prefix in front (multiprocess V1;
inside the format itself from 0.33), and whatever wraps a line on its way to the file (a
docker-compose `name  | ` column, a journald `Mon DD HH:MM:SS host vllm[pid]: ` head, a
`[YYYY-MM-DD HH:MM:SS] ` stamp). `line_timestamp` / `ts_seconds` read both families.

Splitting is two-phase on purpose: `message_start` only uses `str.find`, so the (common)
unrecognised line costs almost nothing, and `parse_prefix` validates the head only once a
message was recognised. Heads repeat (same second, same rank) so validated heads are
memoised; the cache is bounded and holds immutable values, so sharing it is harmless.
"""

from __future__ import annotations

from datetime import datetime

import regex

from parsers.envelope import dynamo_head, payload_start
from parsers.text import normalize

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
    """The timestamp a line's head carries (either family's), or None. Behind a log client's
    envelope (a saved `docker/kubectl logs --timestamps` or `journalctl`, `parsers.envelope`) it
    is the server's own timestamp, so such a file replays at the server's pace."""
    first = text[:1]
    if first == "\x1b":  # a coloured head (NVIDIA Dynamo's, parsers.envelope): its plain text
        text = normalize(text)
        first = text[:1]
    enveloped = (first == "[" and text[1:5] == "pod/") or (text[4:5] == "-"
                                                          and text[10:11] == "T")
    if (first == "[" or "0" <= first <= "9") and not enveloped:
        m = _LEADING_TS.match(text)
        if m is not None:
            return m.group(1)
    cut = payload_start(text)
    if cut:
        if enveloped:
            dynamo = dynamo_head(text)  # NVIDIA Dynamo's head: its time is the server's
            if dynamo is not None and dynamo[0] == cut and text[cut:cut + 1] != "[":
                return dynamo[1]
        text = text[cut:]
        first = text[:1]
    if first == "[" or "0" <= first <= "9":
        m = _LEADING_TS.match(text)
        if m is not None:
            return m.group(1)
    head = vllm_head(text)
    return (head[1] or None) if head is not None else None  # an UNTIMED head: no time

def ts_day(ts: str) -> str | None:
    """The date part of a timestamp of this grammar ("2026-01-01", or vLLM's "05-01"), or None
    for a time-only stamp: what a bare HH:MM:SS typed by a user is completed with."""
    if len(ts) >= 19 and ts[4] == "-":
        return ts[:10]
    if len(ts) >= 14 and ts[2] == "-" and ts[5] == " ":
        return ts[:5]
    return None


# vLLM prints the month and day without a year (`%m-%d %H:%M:%S`); a leap year keeps 02-29
# valid. Only differences between stamps matter (replay timing, seeking), and a log that runs
# over New Year goes back in time by a year: the replay then plays those lines without a pause.
_VLLM_YEAR = 2000


def ts_seconds(ts: str) -> float | None:
    """Seconds for a timestamp of this grammar (a time-only stamp: seconds of its day)."""
    try:
        if len(ts) >= 19 and ts[4] == "-":
            base = datetime(int(ts[0:4]), int(ts[5:7]), int(ts[8:10]), int(ts[11:13]),
                            int(ts[14:16]), int(ts[17:19])).timestamp()
            frac = ts[19:]
        elif len(ts) >= 14 and ts[2] == "-" and ts[5] == " ":
            base = datetime(_VLLM_YEAR, int(ts[0:2]), int(ts[3:5]), int(ts[6:8]),
                            int(ts[9:11]), int(ts[12:14])).timestamp()
            frac = ts[14:]
        else:
            base = int(ts[0:2]) * 3600 + int(ts[3:5]) * 60 + int(ts[6:8])
            frac = ts[8:]
        if frac[:1] in (".", ","):
            base += float("0." + frac[1:])
        return float(base)
    except (ValueError, IndexError):
        return None


# -- vLLM heads -----------------------------------------------------------------------------
_V_LEVEL = r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)"
_V_TS = r"(?:\d{4}-)?\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:[.,]\d{1,6})?"
# `[file.py:N]` (0.8+; a relative path under VLLM_LOGGING_LEVEL=DEBUG) or `file.py:N]` (<=0.7).
# Whatever wraps the line may stand before it (an envelope, a launcher's own head).
_V_HEAD = regex.compile(rf"({_V_LEVEL}) ({_V_TS}) \[?[\w.\-/]+:\d+\] ")
# The process prefix: `(EngineCore_DP0 pid=241)`, `(Worker_PP1_TP3 pid=9)`, `(APIServer pid=1)`,
# `(VllmWorkerProcess pid=6499)` (V0), `(VllmWorker rank=0 pid=12)` (V1 0.7-0.10.0).
# 0.10.1 alone names a worker `VllmWorker TP3` / `VllmWorker PP1_TP3` (a space; "VllmWorker" alone
# at TP 1 and PP 1: multiproc_executor.py:382-391 in 0.10.1).
_PROC = r"\(([\w.\-]+(?: (?:PP\d+_TP\d+|PP\d+|TP\d+))?)(?: rank=(\d+))? pid=\d+\) "
_V_PROC = regex.compile(_PROC)
_V_PROC_TAIL = regex.compile(_PROC + r"\Z")
# The process names only vLLM gives its processes: `VllmWorker rank=N` (V1 0.7-0.10.0,
# multiproc_executor.py:346 in 0.9.2; `VllmWorker TP3` in 0.10.1), V0's `VllmWorkerProcess`,
# `EngineCore_DPn` / `EngineCore` (v1/engine/core.py:1479 in 0.33.0; `EngineCore_0`
# 0.9-0.10.1), `Worker_DPn_PPn_TPn_EPn` (v1/executor/multiproc_executor.py:672-682 in 0.10.2,
# :1214-1220 in 0.33.0) and `APIServer` (entrypoints/launchers/api_server/entry.py:166 in
# 0.33.0). A bare `Worker` or another name (a Ray actor's `(RayWorkerWrapper pid=N)`) proves
# nothing.
_V_OWN_PROC = regex.compile(r"(?:VllmWorker(?:Process)?(?: [\w]+)?|EngineCore(?:_DP\d+|_\d+)?"
                            r"|APIServer|Worker(?:_(?:DP|PP|PCP|TP|DCP|EP)\d+)+)\Z")
# The same head with the time cut out, as pastes in threads often show it (`INFO
# [gpu_worker.py:462] Available KV cache memory: ...`, vllm-project/vllm#54623): vLLM itself
# always prints the time (0.33.0 vllm/logger.py:28 `%(levelname)s %(asctime)s [%(fileinfo)s`),
# so only a process prefix may stand before it (SGLang's logging-config form
# `ts LEVEL [file.py:N]` puts its stamp there).
_V_UNTIMED = regex.compile(rf"(?:{_PROC})?{_V_LEVEL} \[[\w.\-/]+\.py:\d+\] ")
# A bare `[file.py:N] ` head with neither level nor time (log fragments quoted in a thread).
_V_BARE = regex.compile(r"\[[\w.\-/]+\.py:\d+\] ")
_V_RANK_TOKEN = regex.compile(r"(?:DP|PP|PCP|TP|DCP|EP)\d+")
# How far into the line the vLLM head may end: envelopes (compose, journald, a stamp) and the
# process prefix come first, and a DEBUG relative path can be long.
MAX_VLLM_PREFIX = 260

VLLM_CACHE: dict[str, tuple[str | None, str | None]] = {}
# A head that has a level and a `[file.py:N]` but no time: memoised as (UNTIMED, rank).
UNTIMED = ""


def vllm_rank(name: str, rank: str | None = None) -> str | None:
    """The rank tags of a vLLM process name: `Worker_PP1_TP3` -> "PP1 TP3", `EngineCore_DP0` ->
    "DP0", `EngineCore_0` (0.9-0.10.1) -> "DP0", `VllmWorker PP1_TP3` (0.10.1) -> "PP1 TP3",
    `VllmWorker rank=2` (0.7-0.10.0) -> "rank2";
    processes that serve no single rank (`APIServer`, `EngineCore`, `Worker`, V0's
    `VllmWorkerProcess`) -> None.

    `rank=N` is the executor's rank over TP x PP, not a TP rank: MultiprocExecutor starts one
    worker per `rank in range(world_size)` with `world_size == tensor_parallel_size x
    pipeline_parallel_size`, PP outermost ("0-7, PP rank 0; 8-15, PP rank 1" at TP 8), and
    prefixes its output `VllmWorker rank={rank}` (v1/executor/multiproc_executor.py:52-58,
    :81-87, :277-286, :346 in 0.9.2). So it is tagged `rankN`, which proves TP x PP >= N+1
    (kvtui.core.deployment), never a TP size."""
    if rank is not None:
        return f"rank{rank}"
    parts = name.replace(" ", "_").split("_")
    tags = [p for p in parts[1:] if _V_RANK_TOKEN.fullmatch(p)]
    if not tags and parts[0] == "EngineCore" and len(parts) == 2 and parts[1].isdigit():
        tags = [f"DP{parts[1]}"]
    return " ".join(tags) or None


def vllm_process(text: str, end: int) -> str | None:
    """The name of the vLLM process whose prefix stands in `text[:end]` (a line's head), when
    it is one only vLLM gives (`_V_OWN_PROC`), else None."""
    at = text.find("(", 0, end)
    while at >= 0:
        p = _V_PROC.match(text, at, end)
        if p is not None:
            name = p.group(1)
            return name if _V_OWN_PROC.match(name) else None
        at = text.find("(", at + 1, end)
    return None


def _memo(head: str, value: tuple[str | None, str | None]) -> None:
    if len(VLLM_CACHE) >= _CACHE_MAX:
        VLLM_CACHE.clear()
    VLLM_CACHE[head] = value


def vllm_head(text: str) -> tuple[int, str | None, str | None] | None:
    """(message start, ts, rank) of a vLLM line head, or None when the line has none.

    A line with only a process prefix (a traceback line, a uvicorn access line of the API
    server) gives its rank and no ts; a bare `[file.py:N] ` head gives neither; a head whose
    time a paste cut out (`INFO [file.py:N] `) gives the empty string `UNTIMED` as its ts.

    The first timed head in the window is the one, wherever it stands: an untimed head in front
    of it is a launcher's or a supervisor's that re-logs vLLM's output (vLLM prints the time),
    so an untimed head is taken only when no timed one follows, and its process prefix gives
    the rank when vLLM's own head has none in front. One regex pass finds the timed head (the
    head window read once, however many `] ` it holds: trying each `] ` with a search of the
    whole head before it cost 400 us for a line of 45 of them); the usual line, whose first
    (or, behind an envelope's stamp, second) `] ` ends a head seen before, costs a dict lookup.
    """
    end = text.find("] ", 0, MAX_VLLM_PREFIX)
    if end > 0:
        first = text[: end + 1]
        hit = VLLM_CACHE.get(first)
        if hit is not None and hit[0] != UNTIMED:
            return end + 2, hit[0], hit[1]
        nxt = text.find("] ", end + 2, MAX_VLLM_PREFIX)
        if nxt > 0:
            # a head behind an envelope's stamp (`[2024-07-08 15:17:34] INFO ...`) or behind
            # an untimed wrapper head, seen before
            second = VLLM_CACHE.get(text[: nxt + 1])
            if second is not None and second[0] != UNTIMED:
                return nxt + 2, second[0], second[1]
        # (a head seen untimed before: only a later `] ` can end a timed head)
        m = _V_HEAD.search(text, 0, MAX_VLLM_PREFIX) if hit is None else (
            _V_HEAD.search(text, end + 2, MAX_VLLM_PREFIX) if nxt > 0 else None)
        if m is not None:
            at = m.start()
            p = _V_PROC_TAIL.search(text, 0, at) if text[at - 2: at] == ") " else None
            rank = vllm_rank(p.group(1), p.group(2)) if p is not None else None
            if rank is None and m.end() > end + 2:
                u = _V_UNTIMED.match(text, 0, MAX_VLLM_PREFIX)
                if u is not None and u.group(1) is not None:
                    rank = vllm_rank(u.group(1), u.group(2))
            _memo(text[: m.end() - 1], (m.group(2), rank))
            return m.end(), m.group(2), rank
        if hit is not None:
            return end + 2, UNTIMED, hit[1]
        u = _V_UNTIMED.match(text, 0, MAX_VLLM_PREFIX)
        if u is not None and u.end() == end + 2:
            rank = vllm_rank(u.group(1), u.group(2)) if u.group(1) is not None else None
            _memo(first, (UNTIMED, rank))
            return u.end(), UNTIMED, rank
    if text[:1] == "(":
        p = _V_PROC.match(text)
        if p is not None:
            start = p.end()
            b = _V_BARE.match(text, start)
            return (b.end() if b else start), None, vllm_rank(p.group(1), p.group(2))
    elif text[:1] == "[":
        b = _V_BARE.match(text)
        if b is not None:
            return b.end(), None, None
    return None


# -- lines a paste wrapped by hand ----------------------------------------------------------
def ends_in_comma(text: str) -> bool:
    """Does the line stop at a comma (a hand-wrapped paste breaks long lines at ", ")? Only
    the candidate half of a wrap: the next line, and what the two say together, decide
    (`kvtui.core.pipeline.fold.Fold`)."""
    return text.rstrip(" \t\r").endswith(",")


def unclosed(text: str) -> bool:
    """Does the line leave a bracket open (`ServerArgs(` with no `)`)? A line cut inside a
    structure is unfinished, whatever its parse says."""
    return any(text.count(a) > text.count(b) for a, b in ("()", "[]", "{}"))


def headless(text: str) -> bool:
    """Has the line no log head of either family (no timestamp, no `[` or `(` tag in front)?
    Only such a line can be the rest of the line above it."""
    t = text.lstrip(" \t")
    return bool(t) and t[:1] not in "[(" and line_timestamp(t) is None
