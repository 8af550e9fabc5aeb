"""Issue 37 point 5: `--record DIR` keeps the log lines and the /metrics scrapes (log.txt,
metrics.jsonl) so a session is replayed later with its metrics, and `kvtui check DIR` gives
the same metrics facts as the live session (a real HTTP server on 127.0.0.1 serving the
recorded sequences made from the real captures' names)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvtui.commands.check import analyse_files
from kvtui.core.pipeline import Session
from kvtui.sources.base import SourceLine
from kvtui.sources.metrics import MetricsPoller, Scraper
from kvtui.sources.record import Recorder, found, recorded_scrapes, recording
from kvtui.sources.replay import ReplaySource
from tests.metrics.conftest import DATA, MetricsServer

LOG = Path(__file__).resolve().parents[2] / "sample_logs" / "llama31-70b-tp8.log"


@pytest.fixture
def sglang_server() -> Iterator[MetricsServer]:
    s = MetricsServer({"/metrics": [(200, (DATA / "sglang-seq-1.prom").read_text()),
                                    (200, (DATA / "sglang-seq-2.prom").read_text()),
                                    (404, "")]})
    s.thread.start()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


def test_record_then_check_and_replay_give_the_live_facts(tmp_path, sglang_server):
    rec_dir = tmp_path / "rec"
    recorder = Recorder(str(rec_dir))
    live = Session()
    source = recording(ReplaySource([str(LOG)], instant=True), recorder)
    got: list[SourceLine] = []
    stop = threading.Event()

    def emit(items: list) -> None:
        got.extend(i for i in items if isinstance(i, SourceLine))
        if any(getattr(i, "state", None) == "at_end" for i in items):
            stop.set()  # a replay waits at its end for a restart: this one is over

    source.run(emit, stop)
    live.feed_lines(source.name, [x.text for x in got])
    live.end()
    clock = iter([1000.0, 1003.0, 1006.0])
    poller = MetricsPoller(Scraper(sglang_server.url(), clock=lambda: next(clock)), live,
                           record=recorder.scrape)
    assert [poller.once().state for _ in range(3)] == ["ok", "ok", "stale"]
    recorder.close()

    kept = found(str(rec_dir))
    assert kept is not None and kept.metrics is not None
    assert Path(kept.log).read_text() == LOG.read_text()
    rows = [json.loads(x) for x in Path(kept.metrics).read_text().splitlines()]
    assert [r["state"] for r in rows] == ["ok", "ok", "stale"]
    assert [r["at"] for r in rows] == [1000.0, 1003.0, 1006.0]
    assert next(iter(recorded_scrapes(str(rec_dir)))).result.body == \
        (DATA / "sglang-seq-1.prom").read_text()

    live_metrics = live.report().to_json()["metrics"]
    assert live_metrics["state"] == "stale" and live_metrics["facts"]["latency"]["window_s"] == 3
    checked = analyse_files([str(rec_dir)])[0].report().to_json()
    assert checked["metrics"] == live_metrics
    local = analyse_files([str(LOG)])[0].report().to_json()
    assert checked["kv_cache"] == json.loads(json.dumps(local["kv_cache"]).replace(
        str(LOG), kept.log))


def test_check_a_recording_without_scrapes_is_the_log_report(tmp_path):
    rec = tmp_path / "r"
    rec.mkdir()
    (rec / "log.txt").write_text(LOG.read_text())
    doc = analyse_files([str(rec)])[0].report().to_json()
    assert "metrics" not in doc and doc["engine"] == "sglang"


def _wait(cond, tries: int = 600) -> bool:
    for _ in range(tries):
        if cond():
            return True
        threading.Event().wait(0.02)
    return cond()


def test_a_replayed_recording_feeds_each_scrape_where_it_was_taken(tmp_path):
    """`kvtui replay DIR` of a recording: each scrape enters the session once the replayed
    log passes the line count it was taken at (metrics.jsonl's `lines`), so the metrics pane
    and the Timeline move with the log; a restart of the replay starts them over."""
    from kvtui.sources.metrics import ScrapeResult
    from kvtui.sources.record import paced_scrapes
    from kvtui.ui.ingest import Ingest

    lines = LOG.read_text().splitlines()
    assert len(lines) > 90
    rec_dir = tmp_path / "rec"
    recorder = Recorder(str(rec_dir))
    recorder.lines(lines[:40])
    recorder.scrape(ScrapeResult("ok", (DATA / "sglang-seq-1.prom").read_text(), "", 1000.0),
                    "gpu /metrics")
    recorder.raw(("\n".join(lines[40:80]) + "\n").encode())
    recorder.scrape(ScrapeResult("ok", (DATA / "sglang-seq-2.prom").read_text(), "", 1003.0),
                    "gpu /metrics")
    recorder.lines(lines[80:])
    recorder.close()
    paced = paced_scrapes(str(rec_dir))
    assert paced is not None and [p.lines for p in paced] == [40, 80]

    source = ReplaySource([str(rec_dir / "log.txt")], start_paused=True)
    ingest = Ingest(source, paced=paced)
    ingest.start()
    try:
        fed = ingest.session.metrics
        source.step(39)
        assert _wait(lambda: ingest.lines == 39)
        assert fed.fed == 0
        source.step(1)
        assert _wait(lambda: ingest.lines == 40) and _wait(lambda: fed.fed == 1)
        # the scrape was taken after line 40: its clock is put on the log's there (the
        # Timeline draws the metric series with it)
        from parsers.prefix import line_timestamp, ts_seconds

        stamp = line_timestamp(lines[39])
        assert stamp is not None
        assert ingest.metrics_offset == ts_seconds(stamp) - 1000.0
        source.step(39)
        assert _wait(lambda: ingest.lines == 79)
        assert ingest.session.metrics.fed == 1
        source.step(1)
        assert _wait(lambda: ingest.session.metrics.fed == 2)
        source.restart()  # the session starts over, and so do the scrapes
        assert _wait(lambda: ingest.lines == 0)
        source.step(10)
        assert _wait(lambda: ingest.lines == 10)
        assert ingest.session.metrics.fed == 0
    finally:
        ingest.close()


def test_a_recording_without_line_counts_is_fed_whole():
    """A recording made before the scrapes kept their place: no pacing (fed at the start)."""
    from kvtui.sources.record import paced_scrapes

    rows = [json.dumps({"at": 1.0, "source": "s", "state": "ok", "detail": "", "body": "x"})]
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        Path(d, "log.txt").write_text("a\n")
        Path(d, "metrics.jsonl").write_text("\n".join(rows) + "\n")
        assert paced_scrapes(d) is None
