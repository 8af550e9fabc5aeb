"""A fleet with a router entry (role "router") and a prefill/decode pair, read from local files
through the same folds `kvtui fleet --check` runs (tests/fleet/fleetlogs.py), then the same
gate and JSON (`kvtui.core.fleet.result`): the router's failures name the pair, the alert
carries each side's evidence, and a router is never an unrecognised log."""

from __future__ import annotations

import dataclasses
import json
import sys

import pytest

from kvtui.core.fleet import evaluate
from kvtui.core.fleet.config import FleetConfigError, parse
from kvtui.core.fleet.result import Outcome, exit_code, render_text, to_json
from kvtui.core.fleet.urls import match
from kvtui.core.report_types import Alert
from tests.fleet.fleetlogs import FLEET, server, text

RULE = "fleet-kv-transfer-failing"


def transfer(alerts: list[Alert]) -> list[Alert]:
    return [a for a in alerts if a.rule == RULE]


def sides(alert: Alert) -> dict[str, dict]:
    return {s["server"]: s for s in alert.extra["servers"]}


@pytest.fixture(scope="module")
def fleet() -> list:
    return [server("pd-prefill-fp8.log", "prefill", host="gpu-p"),
            server("pd-decode-bf16.log", "decode", host="gpu-d"),
            server("pd-router.log", "router", host="router-1")]


def test_a_router_log_is_read_for_its_failures_not_as_an_engines(fleet):
    r = fleet[2]
    assert r.is_router and r.report.engine is None and not r.report.unrecognised
    assert r.router is not None
    assert r.router.prefill_urls == ("http://gpu-p:30000",)
    assert r.router.decode_urls == ("http://gpu-d:30000",)
    # two decode 500s; the prefill's 400 (a prompt over the context length) is not counted
    assert r.router.failures == 2
    (t,) = r.router.targets
    assert (t.side, t.url, t.answers) == ("decode", "http://gpu-d:30000", (("500", 2),))
    assert [e.line for e in t.evidence] == [5, 7]


def test_the_routers_failures_name_the_pair_with_both_sides_evidence(fleet):
    (a,) = transfer(evaluate(fleet))
    assert a.severity == "critical"
    assert a.title == ("KV transfer between prefill and decode failing: gpu-p -> gpu-d "
                       "(router: 2 failed request line(s))")
    assert a.extra["pair"] == {"prefill": "gpu-p", "decode": "gpu-d"}
    s = sides(a)
    assert list(s) == ["gpu-p", "gpu-d", "router-1"]
    assert s["router-1"]["role"] == "router"
    assert s["router-1"]["value"] == "decode http://gpu-d:30000: 2 x 500"
    assert "Decode server returned error status" in s["router-1"]["evidence"]["text"]
    assert s["router-1"]["evidence"]["source"] == "pd-router.log"
    # the decode's own log shows the failed transfers; the prefill's shows none: one-sided
    assert "Decode transfer failed" in s["gpu-d"]["evidence"]["text"]
    assert s["gpu-p"]["evidence"] is None
    assert a.extra["failing_sides"] == ["decode"]
    assert "Only the decode side's log shows transfer failures (one-sided" in a.detail
    assert a.evidence is not None and a.evidence.source == "pd-decode-bf16.log"


def test_both_sides_failing_is_said_with_both_lines(fleet):
    failing = text("pd-prefill-fp8.log") + (
        "[2026-11-30 10:01:21 TP0] Prefill transfer failed for request rank=0 "
        "req.rid='req-4139' req.bootstrap_room=4139 with exception KVTransferError(...)\n")
    p = server("pd-prefill-fp8.log", "prefill", host="gpu-p", log=failing)
    (a,) = transfer(evaluate([p, *fleet[1:]]))
    assert a.extra["failing_sides"] == ["prefill", "decode"]
    assert "Both sides' logs show transfer failures." in a.detail
    s = sides(a)
    assert "Prefill transfer failed" in s["gpu-p"]["evidence"]["text"]
    assert "Decode transfer failed" in s["gpu-d"]["evidence"]["text"]


def test_a_url_that_names_no_entry_is_named_as_given(fleet):
    """The fleet names its servers by other hosts: the router's alert names the URLs, and the
    decode's own failure lines keep their own alert."""
    p = dataclasses.replace(fleet[0], name="10.0.0.1")
    d = dataclasses.replace(fleet[1], name="10.0.0.2")
    alerts = transfer(evaluate([p, d, fleet[2]]))
    assert len(alerts) == 2
    routed = next(a for a in alerts if "router" in a.title)
    assert routed.extra["pair"] == {"prefill": "http://gpu-p:30000",
                                    "decode": "http://gpu-d:30000"}
    s = sides(routed)
    assert s["http://gpu-d:30000"]["value"] == "not in the fleet"
    assert "is not in the fleet: its log was not read" in routed.detail
    assert routed.extra["failing_sides"] == []
    own = next(a for a in alerts if a is not routed)
    assert own.title == "KV transfer between prefill and decode failing: 10.0.0.2 (2)"


def test_a_decode_url_with_no_start_line_pairs_with_the_fleets_one_prefill(fleet):
    log = "".join(line + "\n" for line in text("pd-router.log").splitlines()[1:])
    r = server("pd-router.log", "router", host="router-1", log=log)
    assert r.router is not None and r.router.prefill_urls == ()
    (a,) = transfer(evaluate([*fleet[:2], r]))
    assert a.extra["pair"] == {"prefill": "gpu-p", "decode": "gpu-d"}


def test_host_and_host_port_match():
    a = server("pd-decode-bf16.log", "decode", host="gpu-d:30000")
    b = server("pd-decode-bf16.log", "prefill", host="gpu-d:30001")
    c = server("pd-decode-bf16.log", "decode", host="admin@GPU-X")
    assert match("http://gpu-d:30000", "decode", [a, b, c]) is a
    assert match("http://gpu-d:30001/", "prefill", [a, b, c]) is b
    assert match("http://gpu-x:8000", "decode", [a, b, c]) is c  # user@ and case dropped
    assert match("http://gpu-y:30000", "decode", [a, b, c]) is None
    # two entries on one host: the side's role chooses; two of that role: no choice
    p = server("pd-decode-bf16.log", "prefill", host="10.0.0.5")
    d = dataclasses.replace(p, name="10.0.0.5", role="decode")
    assert match("http://10.0.0.5:30000", "decode", [p, d]) is d
    assert match("http://10.0.0.5:30000", "decode", [d, dataclasses.replace(d)]) is None


def test_an_alias_is_matched_by_its_address_and_its_servers_port(fleet):
    """A router names servers by address; the fleet file by ssh_config alias. The entry's
    `addresses` (its HostName, what that resolves to) match the URL's host, and two servers
    on one address are told apart by the port each one's logged arguments give (SGLang's
    --port: `Server.http_port`, the engine seam's `metrics_endpoint`)."""
    p, d = fleet[0], fleet[1]
    assert p.http_port == 30000  # the sample's dump: port=30000
    p = dataclasses.replace(p, name="gpu-p", addresses=("node-7", "10.0.0.7"))
    log = text("pd-decode-bf16.log").replace("port=30000", "port=30001", 1)
    assert log != text("pd-decode-bf16.log")
    d = dataclasses.replace(server("pd-decode-bf16.log", "decode", host="gpu-d", log=log),
                            addresses=("node-7", "10.0.0.7"))
    assert d.http_port == 30001
    assert match("http://10.0.0.7:30000", "prefill", [p, d]) is p
    assert match("http://10.0.0.7:30001", "prefill", [p, d]) is d  # the port outranks the side
    assert match("http://NODE-7:30001", "decode", [p, d]) is d
    assert match("http://10.0.0.8:30000", "decode", [p, d]) is None
    # the router's own log names the pair by address: the alert names the aliases
    routed = text("pd-router.log").replace("gpu-p:30000", "10.0.0.7:30000").replace(
        "gpu-d:30000", "10.0.0.7:30001")
    r = server("pd-router.log", "router", host="router-1", log=routed)
    (a,) = [x for x in transfer(evaluate([p, d, r])) if "router" in x.title]
    assert a.extra["pair"] == {"prefill": "gpu-p", "decode": "gpu-d"}


def test_a_vllm_pair_reads_nixl_failures_on_both_sides():
    sys.path.insert(0, str(FLEET.parent))
    try:
        import vllm_samples
    finally:
        sys.path.pop(0)
    base = vllm_samples.llama70b_bf16()
    head = "vllm-70b  | (EngineCore_DP0 pid=241)"
    # 0.34.0 nixl/base_worker.py:3440 (prefill) and :1455 (decode)
    pre = base + (f"{head} WARNING 07-20 18:17:30 [base_worker.py:3439] Releasing expired KV "
                  "blocks for request cmpl-1 which were retrieved by 0 remote worker(s) "
                  "before lease expired.\n")
    dec = base + (f"{head} ERROR 07-20 18:17:29 [base_worker.py:1454] NIXL transfer failure: "
                  "handshake_failed | Context: {'failure_type': 'handshake_failed'}\n")
    p = server("p.log", "prefill", host="vp", log=pre)
    d = server("d.log", "decode", host="vd", log=dec)
    assert p.report.engine == d.report.engine == "vllm"
    assert (p.transfer_failures, d.transfer_failures) == (1, 1)
    (a,) = transfer(evaluate([p, d]))
    assert a.extra["failing_sides"] == ["decode", "prefill"]
    assert "Both sides' logs show transfer failures." in a.detail
    s = sides(a)
    assert "Releasing expired KV blocks" in s["vp"]["evidence"]["text"]
    assert "NIXL transfer failure" in s["vd"]["evidence"]["text"]


def _outcomes(servers: list) -> list[Outcome]:
    return [Outcome(s.name, s.role, s, source=f"file {s.name}") for s in servers]


def test_check_json_and_exit_code_with_a_router(fleet):
    outcomes = _outcomes(fleet)
    alerts = evaluate(fleet)
    code = exit_code(outcomes, alerts, "critical")
    doc = json.loads(json.dumps(to_json(outcomes, alerts, code), default=str))
    assert code == doc["exit_code"] == 1  # the critical transfer alert
    router = doc["servers"][2]
    assert router["role"] == "router" and router["report"] is None
    assert router["router"]["failures"] == 2
    assert router["router"]["targets"][0]["answers"] == {"500": 2}
    assert doc["servers"][0]["router"] is None and doc["servers"][0]["report"]["engine"]
    (a,) = [x for x in doc["alerts"] if x["rule"] == RULE]
    assert a["extra"]["pair"] == {"prefill": "gpu-p", "decode": "gpu-d"}
    out = render_text(outcomes, alerts, code, "critical")
    assert "Router     (no engine's log" in out
    assert "decode http://gpu-d:30000: 2 x 500" in out
    assert "router-1: router: 2 failed request line(s)" in out
    assert "none recognised" not in out


def test_a_router_alone_is_no_unrecognised_log():
    """A router's log holds no engine's line: it must not gate as "not an LLM-server log"
    (exit 3), whatever it says."""
    quiet = server("pd-router.log", "router", host="router-1",
                   log=text("pd-router.log").splitlines()[0] + "\n")
    assert quiet.router is not None and quiet.router.failures == 0
    outcomes = _outcomes([quiet])
    assert evaluate([quiet]) == []
    assert exit_code(outcomes, [], "critical") == 0
    # the same log read as an engine's entry is unrecognised: exit 3 (without the 400, whose
    # body quotes SGLang's own "longer than the model's context length" and so reads as
    # SGLang's: one more reason a router is read as a router)
    lines = text("pd-router.log").splitlines()
    as_engine = server("pd-router.log", None, host="router-1",
                       log="".join(x + "\n" for x in lines if "status=400" not in x))
    assert as_engine.report.unrecognised
    assert exit_code(_outcomes([as_engine]), [], "critical") == 3


def test_router_role_in_the_fleet_file():
    (e,) = parse('[[server]]\nhost = "router-1"\nrole = "router"\nlog = "/var/log/r.log"\n')
    assert e.role == "router" and e.source == ("file", "/var/log/r.log")
    with pytest.raises(FleetConfigError, match="a router must name its log"):
        parse('[[server]]\nhost = "router-1"\nrole = "router"\n')
