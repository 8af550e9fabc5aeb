"""Issue 37 point 5 / issue 41 point 3: /metrics scrapes enter the one pipeline as typed events
(`Session.feed_scrape`), are kept as a bounded series in time order, and the report says what
they say; a session fed none reports exactly what it did before (the goldens hold)."""

from __future__ import annotations

import json
from pathlib import Path

from kvtui.core.metrics.exposition import parse
from kvtui.core.metrics.series import MetricsSeries
from kvtui.core.pipeline import Session
from kvtui.core.render import render_text
from tests.metrics.conftest import DATA, sample

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
LOG = SAMPLES / "llama31-70b-tp8.log"


def _session() -> Session:
    s = Session()
    s.feed_lines(str(LOG), LOG.read_text().splitlines())
    s.end()
    return s


def test_no_scrape_leaves_the_report_as_it_was():
    s = _session()
    doc = s.report().to_json()
    assert "metrics" not in doc
    assert "Metrics" not in render_text(s.report())
    assert s.metrics.snapshots == () and s.metrics.latest is None


def test_two_scrapes_give_the_metrics_facts_in_json_and_text():
    s = _session()
    before = s.report().to_json()
    s.feed_scrape(parse((DATA / "sglang-seq-1.prom").read_text(), 100.0), "http://x/metrics")
    s.feed_scrape(parse((DATA / "sglang-seq-2.prom").read_text(), 103.0))
    doc = s.report().to_json()
    m = doc.pop("metrics")
    both = [a for a in doc.pop("alerts", []) if a not in before.pop("alerts", [])]
    assert doc == before  # the log's facts are untouched
    # ... and the alerts that need the log and the scrapes join the report's own (the gate
    # and the export read them there): the capture's pool at 97% with a growing queue and
    # retractions the log does not show (kvtui.core.metrics.cross)
    from kvtui.core.metrics.cross import cross_alerts

    expected = [a.to_json() for a in cross_alerts(_session().report(), s.metrics.snapshots)]
    assert both == expected and {a["rule"] for a in both} >= {"metrics-saturated-queue"}
    assert m["source"] == "http://x/metrics" and m["state"] == "ok" and m["scrapes"] == 2
    facts = m["facts"]
    assert facts["engine"] == "sglang"
    assert facts["latency"]["window_s"] == 3  # the window between the two scrapes
    assert facts["pools"][0]["kind"] == "full"
    assert [x.at for x in s.metrics.snapshots] == [100.0, 103.0]
    assert s.metrics.latest is s.metrics.snapshots[-1]
    text = render_text(s.report())
    assert "Metrics    http://x/metrics: ok" in text
    assert "  requests       running" in text
    json.dumps(doc)


def test_a_failed_scrape_after_a_good_one_is_stale_and_first_failure_says_its_state():
    s = Session()
    s.scrape_failed("refused", "connection refused at http://x/metrics", 1.0, "http://x/metrics")
    m = s.report().to_json()["metrics"]
    assert (m["state"], m["facts"]) == ("refused", None)
    s.feed_scrape(parse(sample("vllm-0.24.0-yongzane00-vllmtop-fixture.txt"), 2.0))
    s.scrape_failed("timeout", "no answer", 9.5)
    m = s.report().to_json()["metrics"]
    assert m["state"] == "stale" and "7.5 s ago" in m["detail"]
    assert m["facts"]["engine"] == "vllm"  # the last good scrape still speaks


def test_the_series_is_bounded_and_in_time_order():
    body = (DATA / "vllm-seq-1.prom").read_text()
    series = MetricsSeries(limit=3)
    for at in (1.0, 2.0, 4.0, 3.0, 5.0):
        series.feed(parse(body, at))
    assert [x.at for x in series.snapshots] == [3.0, 4.0, 5.0]
    unknown = MetricsSeries()
    unknown.feed(parse("# TYPE up gauge\nup 1\n", 1.0))
    assert unknown.state.state == "unknown_engine" and not unknown.snapshots


def test_reset_forgets_the_scrapes():
    s = Session()
    s.feed_scrape(parse((DATA / "vllm-seq-1.prom").read_text(), 1.0))
    s.reset()
    assert "metrics" not in s.report().to_json()
