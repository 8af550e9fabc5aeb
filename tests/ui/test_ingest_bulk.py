"""An instant replay of a big file is folded in bulk, with the answer of a line-by-line read."""

from __future__ import annotations

import time
from pathlib import Path

from kvtui.core.pipeline import Options, Session
from kvtui.sources.readers import iter_batches
from kvtui.sources.replay import ReplaySource
from kvtui.ui.ingest import Ingest

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def wait(cond, timeout=30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return False


def make_log(tmp_path: Path) -> Path:
    body = (SAMPLES / "qwen35-397b-nvfp4-tp8-fp8.log").read_text().splitlines()
    runtime = [ln for ln in body if "Decode batch" in ln or "Prefill batch" in ln]
    path = tmp_path / "big.log"
    path.write_text("\n".join(body + runtime * 30) + "\n")
    return path


def test_bulk_fold_matches_a_sequential_read(tmp_path):
    path = make_log(tmp_path)
    src = ReplaySource([str(path)], instant=True)
    ingest = Ingest(src, ring=500, session=Session(Options(min_parallel_bytes=0)))
    ingest.start()
    try:
        assert wait(lambda: ingest.last_state == "at_end")
        ref = Session()
        ref.feed_blocks(str(path), iter_batches(str(path)))
        with ingest.report_lock:
            got = ingest.session.report()
        assert got == ref.report()
        assert ingest.lines == ref.lines == ingest.bulk_lines
        drained = ingest.drain()
        assert len(drained.entries) == 500
        lines = path.read_text().splitlines()
        last = drained.entries[-1]
        assert last.line_no == len(lines) and last.text == lines[-1]
        assert last.kind in ("decode_batch", "prefill_batch")
        assert drained.entries[0].line_no == len(lines) - 499
        # A restart replays the file line by line from the top.
        src.restart()
        assert wait(lambda: ingest.drain().restarted or ingest.lines < len(lines))
        assert wait(lambda: ingest.last_state == "at_end" and ingest.lines == len(lines))
    finally:
        ingest.close()


def test_small_files_take_the_ordinary_path(tmp_path):
    path = SAMPLES / "qwen35-397b-nvfp4-tp8-fp8.log"
    src = ReplaySource([str(path)], instant=True)
    ingest = Ingest(src, ring=100)  # default threshold: 32 MB
    ingest.start()
    try:
        assert wait(lambda: ingest.last_state == "at_end")
        assert ingest.lines == len(path.read_text().splitlines())
        assert ingest.bulk_lines == 0
    finally:
        ingest.close()


def test_tail_from_the_end_still_knows_the_startup_facts(tmp_path):
    """`kvtui tail` starts near the end of a long log, yet its facts include the start-up lines
    (the FP8 warning, the pools) and its line numbers are the file's own."""
    from kvtui.sources.local import LocalFollower

    path = make_log(tmp_path)  # the start-up is far more than 64 KiB before the end
    lines = path.read_text().splitlines()
    follower = LocalFollower(str(path), force_polling=True, poll_ms=50)
    ingest = Ingest(follower, ring=100000)
    ingest.start()
    try:
        assert wait(lambda: ingest.last_state == "live")
        with ingest.report_lock:
            report = ingest.session.report()
        assert [a.rule for a in report.alerts] == ["kv-fp8-unscaled"]
        assert report.pools[0].tokens == 608174
        shown = ingest.drain().entries
        assert 0 < len(shown) < len(lines) // 4  # only the context window is shown
        for e in shown:
            assert lines[e.line_no - 1] == e.text
        with path.open("a") as f:
            f.write(lines[-1] + "\n")
        assert wait(lambda: ingest.lines == len(lines) + 1)
        new = [e for e in ingest.drain().entries if not e.notice]
        assert new and new[-1].line_no == len(lines) + 1
        ref = Session()
        ref.feed_blocks(str(path), iter_batches(str(path)))
        assert wait(lambda: ingest.session.state.current.runtime.decode_batches
                    == ref.state.current.runtime.decode_batches)
    finally:
        ingest.close()


def test_closing_during_a_bulk_fold_ends_it_and_its_workers(tmp_path):
    """The app closed while a big file is folded on every core: the fold ends with the ingest,
    workers and all; before, it ran on for seconds in the process that hosted the app (a test
    run's next tests shared the CPU with it)."""
    from tests.core.procs import children

    body = (SAMPLES / "qwen35-397b-nvfp4-tp8-fp8.log").read_text().splitlines()
    runtime = [ln for ln in body if "Decode batch" in ln or "Prefill batch" in ln]
    path = tmp_path / "huge.log"
    path.write_text("\n".join(body + runtime * 3000) + "\n")  # 148 MB: seconds of folding
    before = children()
    src = ReplaySource([str(path)], instant=True)
    ingest = Ingest(src, ring=500, session=Session(Options(min_parallel_bytes=0)))
    ingest.start()
    assert wait(lambda: ingest.load is not None and children() - before)  # workers folding
    ingest.close(timeout=60)  # a bound on a hang, not a timing: it returns once the thread ends
    assert ingest.done.is_set()
    assert not children() - before
    assert ingest.load is not None and ingest.load.done < path.stat().st_size  # cut short
