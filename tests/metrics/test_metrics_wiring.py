"""Scrapes fed to the app's session (as a poller does, from its own thread) reach the metrics
pane, the Facts pane and the Alerts pane through the one pipeline, with no call into the app:
`Session.feed_scrape` -> `Ingest` (its report rebuilt, `Drained.metrics`) -> `KvApp.show_metrics`.
"""

from __future__ import annotations

import threading

import pytest

from kvtui.core.metrics.exposition import parse
from kvtui.core.pipeline import Session
from kvtui.ui.metrics import MetricsPane
from tests.metrics.conftest import sample
from tests.metrics.recorded import VLLM, observing, setting
from tests.ui.ui_helpers import ROOT, replay_app, settle, wait_for

VLLM_LOG = "sample_logs/vllm-llama31-8b-tp2-fp8-unscaled.log"


@pytest.fixture(autouse=True)
def _in_checkout(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)


async def test_scrapes_fed_to_the_session_reach_the_panes():
    base = sample(VLLM)
    later = observing(setting(base, {"vllm:kv_cache_usage_perc": 0.97,
                                     "vllm:num_requests_waiting": 7.0}),
                      "vllm:time_to_first_token_seconds", 1.5, 10)
    session = Session()
    app = replay_app(VLLM_LOG, session=session)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        pane = app.query_one(MetricsPane)

        def poll() -> None:  # a poller's thread
            session.feed_scrape(parse(base, 100.0), "http://127.0.0.1:8000/metrics")
            session.feed_scrape(parse(later, 130.0))

        t = threading.Thread(target=poll)
        t.start()
        t.join()
        await wait_for(pilot, lambda: "queued 7" in str(
            pane.query_one("#metrics-body").render()), "the pane to show the scrapes")
        # the log says fp8_e4m3, /metrics auto: the cross alert is among the report's alerts
        await wait_for(pilot, lambda: app.report is not None and any(
            a.rule == "metrics-kv-dtype-mismatch" for a in app.report.alerts),
            "the report's alerts to take the log+metrics alert")
        facts = str(app.facts_pane.query_one("#facts-body").render())
        assert "Metrics   vllm  KV dtype auto" in facts
