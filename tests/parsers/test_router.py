"""The prefill/decode router's lines (parsers/router.py): the real pastes, both of tracing's
forms (format string, structured fields), and the lines that are no pair failing."""

from __future__ import annotations

import pytest

from parsers.router import RouterFailure, RouterWorkers, router_failure, router_workers

SPAN = 'http_request{method=POST uri=/v1/chat/completions version=HTTP/1.1 module="smg"}'
PD = "smg::routers::http::pd_router: /home/runner/work/sglang/sglang/src/routers/http/pd_router.rs"

FAILURES = [
    # sgl-project/sglang issue #10001, the router's log (sglang_router_rs, 2025-09)
    ("2025-09-04 07:15:26 ERROR http_request{method=POST uri=/v1/completions "
     "version=HTTP/1.1}: sglang_router_rs::routers::pd_router: src/routers/pd_router.rs:565: "
     "Decode server returned error status decode_url=http://10.160.1.22:50000 status=500 "
     "Internal Server Error", RouterFailure("decode", "http://10.160.1.22:50000", 500)),
    # devopsrustem/slurmv4's session notes (smg, with sglang 0.5.8.post1, 2026-02)
    ('2026-02-26 13:00:12 ERROR http_request{method=POST uri=/v1/chat/completions '
     'version=HTTP/1.1 module="smg" request_id="chatcmpl-Wly2zVLtUcyK1Vg13jmipvFZ"}: '
     f"{PD}:590: Decode server returned error status decode_url=http://10.99.91.49:30001 "
     "status=500 Internal Server Error",
     RouterFailure("decode", "http://10.99.91.49:30001", 500)),
    # the format-string form of pd_router.rs's prefill lines
    (f"2026-01-01 00:00:00 ERROR {SPAN}: {PD}:700: Prefill server returned error status "
     "prefill_url=http://10.0.0.1:30000 status=503 Service Unavailable body=overloaded",
     RouterFailure("prefill", "http://10.0.0.1:30000", 503)),
    (f"2026-01-01 00:00:00 ERROR {SPAN}: {PD}:710: Prefill server failed (CRITICAL) "
     "prefill_url=http://10.0.0.1:30000 error=error sending request for url "
     "(http://10.0.0.1:30000/generate). Decode will timeout without prefill KV cache.",
     RouterFailure("prefill", "http://10.0.0.1:30000", None)),
    # the structured forms: tracing prints the message, then the fields
    (f"2026-01-01 00:00:00 ERROR {SPAN}: {PD}:720: Prefill server failed (CRITICAL). Decode "
     "will fail without prefill KV cache prefill_url=http://p:30000 error=connection refused",
     RouterFailure("prefill", "http://p:30000", None)),
    (f"2026-01-01 00:00:00 ERROR {SPAN}: {PD}:730: Prefill server returned error status "
     "prefill_url=http://p:30000 status=500 Internal Server Error body=boom",
     RouterFailure("prefill", "http://p:30000", 500)),
    (f"2026-01-01 00:00:00 ERROR {SPAN}: {PD}:740: Decode request failed "
     "decode_url=http://d:30001 error=error sending request",
     RouterFailure("decode", "http://d:30001", None)),
]

NOT_FAILURES = [
    # a 4xx is the request refused (a prompt over the context length), not the pair failing
    f"2026-01-01 00:00:00 ERROR {SPAN}: {PD}:541: Prefill server returned error status "
    "prefill_url=http://p:30000 status=400 Bad Request body={}",
    "2025-09-04 07:15:26 ERROR http_request{method=POST uri=/v1/completions version=HTTP/1.1}:"
    "http_request{method=POST uri=/v1/completions version=HTTP/1.1 request_id=cmpl-x "
    "status=500 Internal Server Error latency=2.04s}: sglang_router_rs::response: "
    "src/middleware.rs:159: request failed with server error",  # names no server
    # sgl-project/sglang issue #12355: no pair was chosen, so no server failed
    '2025-10-29 21:49:19 ERROR http_request{method=POST uri=/generate version=HTTP/1.1 '
    'request_id="gnt-T1"}: sglang_router_rs::routers::http::pd_router: '
    "src/routers/http/pd_router.rs:142: Failed to select PD pair error=No available prefill "
    "workers (all circuits open or unhealthy)",
    "Decode server returned error status",  # no URL, no status
    "[2026-01-01 00:00:00 TP0] Decode transfer failed for request rank=0",  # an engine's line
]


@pytest.mark.parametrize("line,expected", FAILURES)
def test_router_failure_lines(line, expected):
    assert router_failure(line) == expected


@pytest.mark.parametrize("line", NOT_FAILURES)
def test_lines_that_are_no_failure_of_the_pair(line):
    assert router_failure(line) is None


def test_the_start_line_names_the_pairs_servers():
    # devopsrustem/slurmv4's session notes: smg's start line (src/server.rs:794)
    line = ("2026-02-26 13:55:38  INFO smg::server: /home/runner/work/sglang/sglang/src/"
            "server.rs:794: Starting router on 0.0.0.0:8000 | mode: PrefillDecode { "
            'prefill_urls: [("http://10.99.91.39:30000", Some(8998))], decode_urls: '
            '["http://10.99.91.49:30001"], prefill_policy: None, decode_policy: None } | '
            "policy: CacheAware { cache_threshold: 0.3 } | max_payload: 512MB")
    assert router_workers(line) == RouterWorkers(("http://10.99.91.39:30000",),
                                                 ("http://10.99.91.49:30001",))
    two = line.replace('Some(8998))]', 'Some(8998)), ("http://10.99.91.40:30000", None)]')
    assert router_workers(two).prefill == ("http://10.99.91.39:30000",
                                           "http://10.99.91.40:30000")
    assert router_workers(FAILURES[0][0]) is None
