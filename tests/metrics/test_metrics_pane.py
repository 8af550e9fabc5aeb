"""The TUI metrics pane (key 6): Pilot and snapshot tests at 80x24 and 200x50, fed Snapshots
built from the real captures (tests/metrics/recorded.py) through `KvApp.show_metrics`, the way
the session's metric series reaches the app."""

from __future__ import annotations

import pytest

from kvtui.ui.metrics import MetricsPane, metrics_text, sliding
from tests.metrics.conftest import sample
from tests.metrics.recorded import SGLANG, VLLM, observing, setting, snapshots
from tests.ui.ui_helpers import ROOT, region_text, replay_app, screen_text, settle, wait_for

VLLM_LOG = "sample_logs/vllm-llama31-8b-tp2-fp8-unscaled.log"
SGLANG_LOG = "sample_logs/llama31-8b-retraction.log"


@pytest.fixture(autouse=True)
def _in_checkout(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)


def vllm_series():
    """Three scrapes of the real vLLM capture 30 s apart: the pool filling, the queue growing,
    preemptions and slower first tokens."""
    ttft = "vllm:time_to_first_token_seconds"
    base = sample(VLLM)
    s1 = observing(setting(base, {"vllm:kv_cache_usage_perc": 0.5,
                                  "vllm:num_requests_running": 20.0,
                                  "vllm:num_preemptions_total": 83.0}), ttft, 0.05, 40)
    s2 = observing(setting(s1, {"vllm:kv_cache_usage_perc": 0.97,
                                "vllm:num_requests_waiting": 7.0,
                                "vllm:num_preemptions_total": 95.0}), ttft, 1.5, 10)
    return snapshots([base, s1, s2], every=30.0)


def sglang_series():
    text = setting(sample(SGLANG), {"sglang:num_running_reqs": 12.0,
                                    "sglang:num_queue_reqs": 3.0})
    return snapshots([sample(SGLANG), text], every=1.0)


def test_empty_state_without_a_metrics_source():
    assert "No metrics source" in metrics_text(None).plain
    assert "waiting for the first scrape" in metrics_text([]).plain


def test_sliding_window_takes_the_oldest_scrape_inside_it():
    snaps = snapshots([sample(VLLM)] * 4, every=30.0)  # at 100, 130, 160, 190
    new, old = sliding(snaps, 60.0)
    assert (new.at, old.at if old else None) == (190.0, 130.0)
    assert sliding(snaps[:1])[1] is None


def test_text_of_the_vllm_series():
    text = metrics_text(vllm_series()).plain
    assert "example-org/example-model-27B" in text
    assert "KV dtype  auto" in text
    assert "97%" in text and "queued 7 (+7)" in text
    # 95 preemptions in the 60 s since the first scrape of the window (0 as captured)
    assert "preempted 1.58/s over 60s  (95 since start)" in text
    # ttft over the window: 40 at <= 0.05 s and 10 at 1.5 s (in the (1, 2.5] bucket)
    assert "ttft" in text and "(50)" in text


def test_sglang_pools_with_mamba_slots_and_evictable():
    text = metrics_text(sglang_series()).plain
    assert "360,960" in text and "294,400" in text  # evictable and available, as captured
    assert "mamba*" in text and "state slots" in text
    assert "running 12  queued 3 (+3)" in text
    assert "hit rate  99.7%" in text  # the engine's own gauge, as captured
    assert "latency" not in text  # the excerpt has no histogram


def test_source_state_is_said_and_markup_is_not_read():
    snaps = snapshots([setting(sample(VLLM), {})])
    text = metrics_text(snaps, state="stale", detail="[bold]last good scrape 9.0 s ago")
    assert "stale" in text.plain and "[bold]last good scrape" in text.plain
    refused = metrics_text([], state="refused", detail="connection refused")
    assert refused.plain.startswith("source refused")
    # a label value from the server is text, never markup
    hostile = sample(VLLM).replace("example-org/example-model-27B", "[red]x[/red]\x1b[2J")
    shown = metrics_text(snapshots([hostile])).plain
    assert "[red]x[/red]" in shown and "\x1b" not in shown


async def test_key_6_shows_the_pane_and_the_cross_alerts():
    app = replay_app(VLLM_LOG, "vllm-llama31-8b-tp2-fp8-unscaled.log")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        pane = app.query_one(MetricsPane)
        assert not pane.display and "6 Metrics" not in screen_text(app)
        await pilot.press("6")
        await pilot.pause()
        assert pane.display
        assert "No metrics source" in region_text(app, pane)
        app.show_metrics(vllm_series())
        await pilot.pause()
        assert "6 Metrics" in screen_text(app)
        shown = str(pane.query_one("#metrics-body").render())
        # the log started with fp8_e4m3, /metrics says auto: another server
        assert "log + metrics (alerts)" in shown
        assert "/metrics implies KV auto, the log fp8_e4m3" in shown
        # the Facts pane has the /metrics line, tagged with its source
        facts = str(app.facts_pane.query_one("#facts-body").render())
        assert "Metrics   vllm  KV dtype auto" in facts and "· metrics" in facts
        await pilot.press("1")
        await pilot.pause()
        assert not pane.display


async def test_a_replayed_recording_says_its_scrapes_wait_for_their_lines(tmp_path):
    """`kvtui replay DIR` of a recording, paused at its start: the pane is listed and says the
    recorded scrapes come where the replay reaches them, not "no metrics source"; stepping
    past the first one's line shows it."""
    from pathlib import Path

    from kvtui.sources.metrics import ScrapeResult
    from kvtui.sources.record import Recorder, paced_scrapes
    from kvtui.sources.replay import ReplaySource
    from kvtui.ui.app import KvApp
    from tests.metrics.conftest import DATA

    lines = Path(SGLANG_LOG).read_text().splitlines()
    rec = Recorder(str(tmp_path / "rec"))
    rec.lines(lines[:30])
    rec.scrape(ScrapeResult("ok", (DATA / "sglang-seq-1.prom").read_text(), "", 1000.0), "gpu")
    rec.lines(lines[30:])
    rec.close()
    src = ReplaySource([str(tmp_path / "rec" / "log.txt")], start_paused=True)
    app = KvApp(src, "rec", paced_scrapes=paced_scrapes(str(tmp_path / "rec")))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "6 Metrics" in screen_text(app)
        await pilot.press("6")
        await pilot.pause()
        pane = app.query_one(MetricsPane)
        shown = region_text(app, pane)
        assert "recorded" in shown and "No metrics source" not in shown
        src.step(30)
        await wait_for(pilot, lambda: app.ingest.session.metrics.fed == 1, "the scrape")
        await wait_for(pilot, lambda: "recorded" not in region_text(app, pane), "a repaint")
        assert "sglang" in region_text(app, pane)


def _with_metrics(series, key: str = "6"):
    # Built here, before the app runs: a capture that is missing skips the test
    # (`tests.metrics.conftest.sample`), and a skip raised inside `run_before` ends the
    # pilot's task without closing the app, so the snapshot waited forever.
    data = series()

    async def run(pilot) -> None:
        await settle(pilot)
        pilot.app.show_metrics(data)
        await pilot.press(key)
        await pilot.pause()
    return run


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_vllm(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(replay_app(VLLM_LOG, "vllm-llama31-8b-tp2-fp8-unscaled.log"),
                        terminal_size=size, run_before=_with_metrics(vllm_series))


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_sglang(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(replay_app(SGLANG_LOG, "llama31-8b-retraction.log"),
                        terminal_size=size, run_before=_with_metrics(sglang_series))


def test_snapshot_empty_state(snap_compare) -> None:
    async def run(pilot) -> None:
        await settle(pilot)
        await pilot.press("6")
        await pilot.pause()

    assert snap_compare(replay_app(SGLANG_LOG, "llama31-8b-retraction.log"),
                        terminal_size=(80, 24), run_before=run)
