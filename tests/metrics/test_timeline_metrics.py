"""The /metrics series on the Timeline's time axis beside the log's (KV usage and queue)."""

from __future__ import annotations

import pytest

from kvtui.core.metrics.timeline import points
from kvtui.ui.panes import TimelinePane
from parsers.prefix import ts_seconds
from tests.metrics.conftest import sample
from tests.metrics.recorded import SGLANG, setting, snapshots
from tests.ui.ui_helpers import ROOT, replay_app, screen_text, settle

LOG = "sample_logs/llama31-8b-retraction.log"  # 2026-03-01 11:59:01 .. 12:04:16


@pytest.fixture(autouse=True)
def _in_checkout(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)


def series():
    """Six scrapes 30 s apart from 12:03:00 (the last two after the log's last line): the full
    pool filling from 50% and the queue growing, in the SGLang capture's names."""
    texts = [setting(sample(SGLANG), {"sglang:full_token_usage": 0.5 + 0.1 * i,
                                      "sglang:num_queue_reqs": 2.0 * i}) for i in range(6)]
    return snapshots(texts, every=30.0)


def offset() -> float:
    start = ts_seconds("2026-03-01 12:03:00")
    assert start is not None
    return start - 100.0  # recorded.snapshots starts at 100 s


def test_points_are_on_the_log_clock():
    pts = points(series(), offset())
    assert [round(p.seconds - pts[0].seconds) for p in pts] == [0, 30, 60, 90, 120, 150]
    assert pts[0].kv_usage == pytest.approx(0.5) and pts[-1].queued == 10
    # the mamba pool's slots are not KV: as captured it is 0%, the full pool's usage is taken
    assert pts[-1].kv_usage == pytest.approx(1.0)


async def test_timeline_draws_the_metric_rows_on_the_widened_axis():
    app = replay_app(LOG, "llama31-8b-retraction.log")
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        pane = app.query_one(TimelinePane)
        without = pane.build(160, 8).plain
        assert "/metrics" not in without and without.rstrip().endswith("12:04:16")
        app.show_metrics(series(), offset=offset())
        await pilot.pause()
        text = pane.build(160, 8).plain
        rows = text.splitlines()
        assert rows[1].startswith("KV % (/metrics)") and rows[1].rstrip().endswith("100%")
        assert rows[4].startswith("queued /metrics") and rows[4].rstrip().endswith("10")
        # the axis runs to the last scrape, past the log's last line
        assert rows[-1].rstrip().endswith("12:05:30")
        # the metric series sit in the right end of the axis: nothing before 12:03:00
        span = len(rows[1]) - 17 - 10
        first = next(i for i, c in enumerate(rows[1][17:]) if c != " ")
        assert first > span * 0.5
        assert "KV % (/metrics)" in screen_text(app)
        # without an offset the scrapes cannot be placed: no rows
        app.show_metrics(series())
        await pilot.pause()
        assert "/metrics" not in pane.build(160, 8).plain


def test_snapshot_timeline_with_metrics(snap_compare) -> None:
    # built before the app runs: a missing capture's skip inside `run_before` would leave
    # the app running (tests/metrics/test_metrics_pane.py `_with_metrics`)
    data, shift = series(), offset()

    async def run(pilot) -> None:
        await settle(pilot)
        pilot.app.show_metrics(data, offset=shift)
        await pilot.pause()

    assert snap_compare(replay_app(LOG, "llama31-8b-retraction.log"), terminal_size=(200, 50),
                        run_before=run)
