"""`parse_line`: one log line in, one `Event` (or None) out.

Dispatch is on the first four characters of the message (after the timestamp/rank prefix),
because every SGLang line of interest starts with a fixed phrase; a dict lookup there is what
keeps an unrecognised line (uvicorn access lines, tracebacks, progress bars) well under a
microsecond. Only two kinds can start anywhere: labelled pools ("Full KV Cache is
allocated", "MiniMax ... KV Cache ...") and OOM errors inside traceback text, which the
fallback catches with two substring tests.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from parsers.envelope import payload_start
from parsers.event import Event
from parsers.prefix import MAX_PREFIX, PREFIX_CACHE, parse_prefix, strip_level_file
from parsers.sglang.errors import parse_oom
from parsers.sglang.runtime import (
    decode_split,
    parse_bare_decode,
    parse_decode,
    parse_fill_batch,
    parse_prefill,
    parse_retraction,
)
from parsers.sglang.server_args import parse_server_args
from parsers.sglang.startup import (
    parse_capacity,
    parse_capped,
    parse_fp8_scales,
    parse_graph_end,
    parse_kv_dtype,
    parse_kv_pool,
    parse_load_weight,
    parse_mamba,
    parse_pool_end,
    parse_swa,
    parse_unbalanced,
)
from parsers.text import normalize

# A handler returns (kind, fields), None ("not mine, try the fallback") or False ("certainly
# nothing", which skips the fallback scan).
_Result = tuple[str, dict[str, Any]] | None | bool
_Handler = Callable[[str], _Result]

# First letters of journalctl's short heads: a month (`Nov 24 09:14:20`) or a weekday
# (`Tue 2026-11-24 09:14:20 UTC`).
_ENVELOPE_INITIALS = frozenset("JFMASONDTWS")


def _kind(kind: str, fields: dict[str, Any] | None) -> _Result:
    return None if fields is None else (kind, fields)


def _oom(msg: str) -> _Result:
    return _kind("oom", parse_oom(msg))


def _h_decode(msg: str) -> _Result:
    fields = parse_decode(msg)
    if fields is not None:
        return "decode_batch", fields
    fields = parse_retraction(msg)
    if fields is not None:
        return "retraction", fields
    return _oom(msg)


def _h_prefill(msg: str) -> _Result:
    fields = parse_prefill(msg)
    if fields is not None:
        return "prefill_batch", fields
    return _oom(msg)


def _h_bare_decode(msg: str) -> _Result:
    return _kind("decode_batch", parse_bare_decode(msg))


def _h_fill(msg: str) -> _Result:
    return _kind("prefill_batch", parse_fill_batch(msg))


def _h_server_args(msg: str) -> _Result:
    return _kind("server_args", parse_server_args(msg))


def _h_load(msg: str) -> _Result:
    hit = parse_load_weight(msg)
    if hit is not None:
        return hit
    hit = parse_fp8_scales(msg)
    if hit is not None:
        return hit
    return _oom(msg)


def _h_using(msg: str) -> _Result:
    fields = parse_kv_dtype(msg)
    if fields is not None:
        return "kv_dtype", fields
    return parse_fp8_scales(msg)


def _h_kv_dtype(msg: str) -> _Result:
    return _kind("kv_dtype", parse_kv_dtype(msg))


def _h_use(msg: str) -> _Result:
    fields = parse_swa(msg)
    if fields is not None:
        return "swa_split", fields
    return _kind("kv_dtype", parse_kv_dtype(msg))


def _h_default(msg: str) -> _Result:
    return parse_fp8_scales(msg)


def _h_kv(msg: str) -> _Result:
    fields = parse_kv_pool(msg)
    if fields is not None:
        return "kv_pool", fields
    fields = parse_retraction(msg)
    if fields is not None:
        return "retraction", fields
    return None


def _h_mamba(msg: str) -> _Result:
    return _kind("mamba_pool", parse_mamba(msg))


def _h_memory(msg: str) -> _Result:
    fields = parse_pool_end(msg)
    if fields is not None:
        return "memory_pool_end", fields
    return _oom(msg)


def _h_capture(msg: str) -> _Result:
    fields = parse_graph_end(msg)
    if fields is not None:
        return "cuda_graph_end", fields
    if msg.startswith("Capture cuda graph failed"):
        return _oom(msg)
    return False


def _h_max(msg: str) -> _Result:
    if msg.startswith("max_total_num_tokens="):
        return _kind("capacity", parse_capacity(msg))
    if msg.startswith("max_total_tokens="):
        return _kind("max_total_tokens_capped", parse_capped(msg))
    return None


def _h_the(msg: str) -> _Result:
    return _kind("mem_unbalanced", parse_unbalanced(msg))


def _h_post(msg: str) -> _Result:
    fields = parse_kv_pool(msg)
    if fields is not None:
        return "kv_pool", fields
    return _kind("swa_split", parse_swa(msg))


def _h_testing(msg: str) -> _Result:
    return _kind("retraction", parse_retraction(msg))


def _h_level(msg: str) -> _Result:
    if msg[4:5] == ":" or msg[7:8] == ":":
        return False  # uvicorn access log (`INFO:     127.0.0.1:...`) or `WARNING:` text
    stripped = strip_level_file(msg)
    if stripped is msg:
        return None
    return _dispatch(stripped)


_HANDLERS: dict[str, _Handler] = {
    "Deco": _h_decode,
    "Pref": _h_prefill,
    "#run": _h_bare_decode,
    "new ": _h_fill,
    "GPU:": _h_fill,
    "[gpu": _h_decode,
    "serv": _h_server_args,
    "Load": _h_load,
    "Usin": _h_using,
    "Sett": _h_kv_dtype,
    "Use ": _h_use,
    "Defa": _h_default,
    "KV C": _h_kv,
    "KV c": _h_kv,
    "Mamb": _h_mamba,
    "Memo": _h_memory,
    "Capt": _h_capture,
    "max_": _h_max,
    "The ": _h_the,
    "Post": _h_post,
    "Test": _h_testing,
    "INFO": _h_level,
    "WARN": _h_level,
    "ERRO": _h_level,
    "DEBU": _h_level,
    "CRIT": _h_level,
}


def _dispatch(msg: str) -> _Result:
    handler = _HANDLERS.get(msg[:4])
    if handler is not None:
        hit = handler(msg)
        if hit is not None:
            return hit
    return _fallback(msg)


def _fallback(msg: str) -> _Result:
    if "KV Cache " in msg:
        fields = parse_kv_pool(msg)
        if fields is not None:
            return "kv_pool", fields
    if "emory" in msg or "graph failed" in msg:
        return _oom(msg)
    return None


def parse_unchecked(text: str) -> Event | None:
    """`parse_line` without the safety net, so tests can see a would-be exception."""
    if "\x1b" in text or "\r" in text or "\t" in text:
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
            text = text[cut:]
            first = text[:1]
    start = 0
    if first == "[" or "0" <= first <= "9":
        end = text.find("] ", 0, MAX_PREFIX)
        if end > 0:
            start = end + 2
    key = text[start : start + 4]
    if key == "Deco":
        fields = decode_split(text, start)
        if fields is not None:
            prefix = PREFIX_CACHE.get(text[: start - 2]) if start else None
            if prefix is None:
                prefix = parse_prefix(text, start)
            return Event("decode_batch", prefix[1], prefix[0], fields)
    elif key == "INFO" and text[start + 4 : start + 5] == ":":
        return None  # uvicorn access line, the other bulk of a serving log
    if text[-1:] == "\n":
        text = text.rstrip("\n")
    handler = _HANDLERS.get(key)
    hit: _Result = None
    msg = text[start:] if start else text
    if handler is not None:
        hit = handler(msg)
    if hit is None:
        if text[1:2] == "p" if first == "[" else first in _ENVELOPE_INITIALS:
            cut = payload_start(text)  # `kubectl logs --prefix`, journalctl's short formats
            if cut:
                return parse_unchecked(text[cut:])
        hit = _fallback(msg)
    if not isinstance(hit, tuple):
        return None
    # A sliced head that is not a real prefix (`[gpu=0] Decode batch...`) gives ts/rank None.
    ts, rank = parse_prefix(text, start)
    return Event(hit[0], rank, ts, hit[1])


def parse_line(text: str) -> Event | None:
    """Parse one SGLang log line; never raises, returns None for anything unrecognised."""
    try:
        return parse_unchecked(text)
    except Exception:
        return None
