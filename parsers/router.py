"""The prefill/decode router's lines (issue 38): which prefill or decode server failed a request,
and which servers the router pairs. A router's log is no engine's (it folds into no run), so
this is not an engine grammar: the fleet reads it for an entry with `role = "router"`
(`kvtui.core.fleet.router`).

Read from SGLang's router (sgl-router, `sglang_router_rs`; later the model gateway, `smg`):
sgl-project/sglang sgl-router/src/routers/pd_router.rs and, after the move,
sgl-router/src/routers/http/pd_router.rs (the copies in the search tool's index):
- error!("Decode server returned error status decode_url={} status={}", ...)
- error!("Prefill server returned error status prefill_url={} status={} body={}", ...), later
  error!(prefill_url = %.., status = %.., body = %.., "Prefill server returned error status")
- error!("Prefill server failed (CRITICAL) prefill_url={} error={}. Decode will timeout without
  prefill KV cache.", ...), later error!(prefill_url = %.., error = %.., "Prefill server failed
  (CRITICAL). Decode will fail without prefill KV cache")
- error!(decode_url = %.., error = %.., "Decode request failed") (a transport error: no status)
tracing's formatter prints a structured call's message first and its fields after it
(`message prefill_url=... status=...`), so both forms read alike here. The status prints as
`500 Internal Server Error`.

Real lines: sgl-project/sglang issue #10001 (sglang_router_rs, 2025-09):
`2025-09-04 07:15:26 ERROR http_request{method=POST uri=/v1/completions version=HTTP/1.1}:
sglang_router_rs::routers::pd_router: src/routers/pd_router.rs:565: Decode server returned error
status decode_url=http://10.160.1.22:50000 status=500 Internal Server Error`; a user's session
notes in devopsrustem/slurmv4 (smg with sglang 0.5.8.post1, 2026-02): the same line from
`smg::routers::http::pd_router: .../src/routers/http/pd_router.rs:590:` with a request_id in the
span, and the start line `smg::server: .../src/server.rs:794: Starting router on 0.0.0.0:8000 |
mode: PrefillDecode { prefill_urls: [("http://10.99.91.39:30000", Some(8998))], decode_urls:
["http://10.99.91.49:30001"], ... }`, which names the servers the router pairs.

Only a 5xx (or no answer at all) counts: a 4xx is the request refused (a prompt over the
context length answers 400: sglang PR #24159), not the pair failing.
"""

from __future__ import annotations

from typing import NamedTuple

import regex

_FAILED = regex.compile(
    r"(?P<side>Decode|Prefill) (?:server returned error status|server failed \(CRITICAL\)"
    r"|request failed)")
_URL = regex.compile(r"\b(?P<side>prefill|decode)_url=\"?(?P<url>[^\s\"]+?)\"?(?=[\s,]|$)")
_STATUS = regex.compile(r"\bstatus=\"?(?P<code>\d{3})\b")
_MODE = regex.compile(r"mode: PrefillDecode \{ prefill_urls: \[(?P<p>.*?)\], "
                      r"decode_urls: \[(?P<d>.*?)\]")
_QUOTED = regex.compile(r"\"([^\"]+)\"")


class RouterFailure(NamedTuple):
    """One request the router saw fail on a server: the side it names, the URL as printed,
    and the status the server answered (None: no answer, a transport error)."""

    side: str  # prefill | decode
    url: str
    status: int | None


class RouterWorkers(NamedTuple):
    """The servers a router pairs, as its start line names them."""

    prefill: tuple[str, ...]
    decode: tuple[str, ...]


def router_failure(text: str) -> RouterFailure | None:
    """The failure a router line reports, or None (a 4xx, or any other line)."""
    if "failed" not in text and "error status" not in text:
        return None
    m = _FAILED.search(text)
    if m is None:
        return None
    side = m.group("side").lower()
    url = next((u.group("url") for u in _URL.finditer(text, m.end())
                if u.group("side") == side), None)
    if url is None:
        return None
    if "error status" in m.group(0):
        s = _STATUS.search(text, m.end())
        if s is None:
            return None
        status = int(s.group("code"))
        if status < 500:
            return None
        return RouterFailure(side, url, status)
    return RouterFailure(side, url, None)


def router_workers(text: str) -> RouterWorkers | None:
    """The prefill and decode URLs a router's start line names, or None."""
    if "PrefillDecode" not in text:
        return None
    m = _MODE.search(text)
    if m is None:
        return None
    return RouterWorkers(tuple(_QUOTED.findall(m.group("p"))),
                         tuple(_QUOTED.findall(m.group("d"))))
