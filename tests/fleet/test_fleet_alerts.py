"""Cross-server alerts (kvtui.core.fleet) over fleets of generated sample logs."""

from __future__ import annotations

import dataclasses

import pytest

from kvtui.core import severity
from kvtui.core.engine import load
from kvtui.core.fleet import RULES, FleetOptions, evaluate, groups
from kvtui.core.report_types import Alert
from tests.fleet.fleetlogs import FLEET, server, text


def by_rule(alerts: list[Alert], rule: str) -> list[Alert]:
    return [a for a in alerts if a.rule == rule]


def sides(alert: Alert) -> dict[str, dict]:
    return {s["server"]: s for s in alert.extra["servers"]}


def test_fleet_samples_are_reproducible():
    from tests.fleet.fleetlogs import generator
    made = dict(generator().render_all())
    assert set(made) == {p.name for p in FLEET.glob("*.log")}
    for name, body in made.items():
        assert (FLEET / name).read_text(encoding="utf-8") == body, name


@pytest.fixture(scope="module")
def pd() -> list:
    return [server("pd-prefill-fp8.log", "prefill", host="gpu-p"),
            server("pd-decode-bf16.log", "decode", host="gpu-d")]


def test_pd_pair_with_different_kv_dtypes_is_critical_with_both_sides(pd):
    alerts = evaluate(pd)
    (a,) = by_rule(alerts, "fleet-kv-dtype-mismatch")
    assert a.severity == "critical"
    s = sides(a)
    assert s["gpu-p"]["value"] == "fp8_e4m3" and s["gpu-p"]["role"] == "prefill"
    assert s["gpu-d"]["value"] == "bf16" and s["gpu-d"]["role"] == "decode"
    # each side's evidence is its own log's line
    assert s["gpu-p"]["evidence"]["source"] == "pd-prefill-fp8.log"
    assert s["gpu-d"]["evidence"]["source"] == "pd-decode-bf16.log"
    assert "float8" in s["gpu-p"]["evidence"]["text"]
    assert "gpu-p (prefill): fp8_e4m3" in a.detail and "gpu-d (decode): bf16" in a.detail
    assert "19398" in a.detail
    (page,) = by_rule(alerts, "fleet-page-size-mismatch")
    assert {v["value"] for v in page.extra["servers"]} == {16, 1}


def test_pd_transfer_failures_are_read_with_their_lines(pd):
    (a,) = by_rule(evaluate(pd), "fleet-kv-transfer-failing")
    assert a.severity == "critical"
    assert a.evidence is not None and "Decode transfer failed" in a.evidence.text
    assert a.evidence.source == "pd-decode-bf16.log"
    assert sides(a)["gpu-d"]["value"].startswith("2 failure line(s)")
    assert sides(a)["gpu-p"]["evidence"] is None  # the prefill side printed none


def test_matching_pair_raises_nothing():
    same = [server("replica-a-bf16.log", "prefill", host="p"),
            server("replica-b-bf16.log", "decode", host="d")]
    assert evaluate(same) == []


def test_a_pd_log_without_start_up_is_still_sglangs():
    """Only batch lines and transfer failures: the engine is still identified (the batch
    line's grammar is SGLang's), and its TP is only the floor its rank tag proves, which is no
    value to call a mismatch."""
    decode = server("pd-decode-bf16-nostart.log", "decode", host="d")
    assert decode.report.engine == "sglang"
    assert decode.report.runtime.decode_batches == 30
    assert decode.transfer_failures == 2
    alerts = evaluate([server("pd-prefill-fp8.log", "prefill", host="p"), decode])
    assert by_rule(alerts, "fleet-tp-mismatch") == []
    assert by_rule(alerts, "fleet-kv-transfer-failing")


def test_tp_mismatch_between_prefill_and_decode():
    four = text("pd-decode-bf16.log")
    eight = four.replace("tp_size=4", "tp_size=8")
    assert eight != four
    alerts = evaluate([server("pd-decode-bf16.log", "prefill", host="p"),
                       server("pd-decode-bf16.log", "decode", host="d", log=eight)])
    (a,) = by_rule(alerts, "fleet-tp-mismatch")
    assert {s["value"] for s in a.extra["servers"]} == {4, 8}
    assert a.severity == "warning"


@pytest.fixture(scope="module")
def replicas() -> list:
    return [server("replica-a-bf16.log", None, host="gpu-a"),
            server("replica-b-bf16.log", "replica", host="gpu-b"),
            server("replica-c-fp8-unscaled.log", "replica", host="gpu-c")]


def test_one_replica_fp8_unscaled_among_bf16_twins(replicas):
    alerts = evaluate(replicas)
    (dt,) = by_rule(alerts, "fleet-kv-dtype-mismatch")
    assert dt.severity == "warning" and dt.extra["group"] == "replicas"
    (sc,) = by_rule(alerts, "fleet-fp8-scales-split")
    s = sides(sc)
    assert "scales missing" in s["gpu-c"]["value"]
    assert "no scaling factors" in s["gpu-c"]["evidence"]["text"]
    assert s["gpu-a"]["evidence"] is None  # the twin printed no such warning
    assert sc.title == "FP8 KV scale warning on gpu-c only"


def test_sustained_usage_and_queue_skew_names_the_hot_replica(replicas):
    alerts = evaluate(replicas)
    (u,) = by_rule(alerts, "fleet-usage-skew")
    (q,) = by_rule(alerts, "fleet-queue-skew")
    assert u.title.startswith("gpu-c: KV usage") and q.title.startswith("gpu-c: queue")
    assert u.extra["seconds"] >= 10
    assert sides(u)["gpu-c"]["evidence"]["line"] > 0


def test_skew_shorter_than_the_window_is_not_raised(replicas):
    opts = FleetOptions(skew_seconds=10_000)
    assert by_rule(evaluate(replicas, opts), "fleet-usage-skew") == []


def test_replicas_of_other_models_are_not_compared(replicas):
    other = text("replica-c-fp8-unscaled.log").replace("llama-3.1-70b", "other-model")
    alone = server("replica-c-fp8-unscaled.log", "replica", host="gpu-x", log=other)
    assert evaluate([replicas[0], alone]) == []
    assert [k for k, _ in groups([replicas[0], alone])] == []


def test_engine_versions_that_differ():
    import sys
    sys.path.insert(0, str(FLEET.parent))
    try:
        import vllm_samples
    finally:
        sys.path.pop(0)
    old = vllm_samples.llama70b_bf16()
    new = old.replace("version 0.33.0", "version 0.34.0")
    assert old != new
    alerts = evaluate([server("a.log", "replica", host="a", log=new),
                       server("b.log", "replica", host="b", log=old)])
    (a,) = by_rule(alerts, "fleet-version-mismatch")
    assert {s["value"] for s in a.extra["servers"]} == {"0.34.0", "0.33.0"}
    assert "0.33.0 vs 0.34.0" in a.title


def test_tp_over_two_nodes_only_the_deployment_shows():
    nodes = [server("node0-tp16.log", "node", host="n0"),
             server("node1-tp16.log", "node", host="n1")]
    assert nodes[0].report.parallel.tp == 8  # alone, TP0..TP7 read as TP 8
    (a,) = by_rule(evaluate(nodes), "fleet-tp-over-nodes")
    assert a.extra["tp"] == 16 and a.severity == "info"
    assert sides(a)["n1"]["value"] == "ranks TP8..TP15"
    # one node alone: nothing to say
    assert evaluate(nodes[:1]) == []


def test_missing_node_ranks_are_a_warning():
    n1 = server("node1-tp16.log", "node", host="n1")
    # the same node's log with TP10..TP15 renamed TP30..TP35: ranks TP0..TP7 and more unseen
    n3 = server("node1-tp16.log", "node", host="n3",
                log=text("node1-tp16.log").replace("TP1", "TP3"))
    (a,) = by_rule(evaluate([n1, n3]), "fleet-tp-over-nodes")
    assert a.severity == "warning" and "TP0" in a.detail


def test_stale_server_by_its_reader_and_by_the_log_clock(replicas):
    a, b, c = replicas
    stale = dataclasses.replace(b, last_line_age=900.0)
    (s,) = by_rule(evaluate([a, stale, c]), "fleet-server-stale")
    assert s.title == "gpu-b: no log line for 900 s" and s.extra["age_seconds"] == 900.0
    # no reader's age: the prefill log ends minutes before the replicas' (log clocks)
    p = server("pd-prefill-fp8.log", "prefill", host="gpu-p")
    hits = by_rule(evaluate([a, p], FleetOptions(stale_after=120)), "fleet-server-stale")
    assert [h.extra["servers"][0]["server"] for h in hits] == ["gpu-p"]
    assert by_rule(evaluate([a, p], FleetOptions(stale_after=3600)), "fleet-server-stale") == []
    assert "log clocks" in hits[0].detail


def test_unreachable_server_is_critical(replicas):
    gone = dataclasses.replace(replicas[1], connection="unreachable")
    (a,) = by_rule(evaluate([replicas[0], gone]), "fleet-server-unreachable")
    assert a.severity == "critical" and "gpu-b" in a.title


def test_alerts_are_in_the_one_vocabulary(replicas, pd):
    alerts = evaluate([*replicas, *pd])
    assert alerts and all(a.rule in RULES for a in alerts)
    assert all(a.severity in severity.SEVERITIES for a in alerts)
    ranks = [severity.rank(a.severity) for a in alerts]
    assert ranks == sorted(ranks)
    assert len(set(RULES)) == len(RULES)
    for a in alerts:  # JSON-ready like any alert
        assert a.to_json()["extra"]["servers"]


@pytest.mark.parametrize("line,expected", [
    ("[2026-01-01 00:00:00 TP0] Prefill bootstrap failed for request rank=0 req.rid='x' "
     "req.bootstrap_room=1", ("bootstrap", "prefill")),
    ("[2026-01-01 00:00:00 TP0] Prefill transfer failed for request rank=0 req.rid='x'",
     ("transfer", "prefill")),
    ("[2026-01-01 00:00:00 TP0] Decode handshake failed for request rank=1 x",
     ("handshake", "decode")),
    ("[2026-01-01 00:00:00] Could not fetch prefill parallel info from 10.0.0.1:8998 after 3 "
     "attempts", ("bootstrap", "decode")),
    ("[2026-01-01 00:00:00 TP0] Decode batch, #running-req: 3, #token: 2, token usage: 0.43",
     None),
    ("Failed to load image processor: x", None),
])
def test_transfer_failure_lines(line, expected):
    assert load("sglang").transfer_failure(line) == expected
    assert load("vllm").transfer_failure(line) is None


@pytest.mark.parametrize("name,role,kind", [
    ("sglang-issue-7353.log", "prefill", "prefill_batches"),  # PD prefill: batches only
    ("sglang-pr-30393.log", "decode", "decode_batches"),  # PD decode: batches only
])
def test_real_pd_logs_without_start_up_read_as_sglang(name, role, kind):
    from tests.conftest import corpus_dir
    path = corpus_dir() / name
    if not path.exists():
        pytest.skip("corpus not present")
    s = server(name, role, log=path.read_text(encoding="utf-8"))
    assert s.report.engine == "sglang"
    assert getattr(s.report.runtime, kind) >= 3
    # the load samples are the runtime fold's timeline: decode lines only
    assert bool(s.samples) == (kind == "decode_batches")


def test_a_release_only_dated_is_shown_as_a_range_and_not_compared(replicas):
    """SGLang prints no release: the row shows the dated label with "~", and the version rule
    compares only releases a log printed."""
    a = replicas[0]
    assert a.version_logged is None and a.version is not None and a.version.startswith("~")
    b = dataclasses.replace(replicas[1], version_logged=None)
    assert by_rule(evaluate([a, b]), "fleet-version-mismatch") == []
    c = dataclasses.replace(replicas[1], version_logged="0.5.9")
    d = dataclasses.replace(a, version_logged="0.5.10")
    (v,) = by_rule(evaluate([c, d]), "fleet-version-mismatch")
    assert v.severity == "info" and "0.5.10 vs 0.5.9" in v.title
