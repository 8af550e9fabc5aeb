"""ReplaySource: merge order, timing, gzip, pause/step/seek/restart."""

from __future__ import annotations

import gzip
import threading
import time
from pathlib import Path

from kvtui.sources.base import SourceLine, SourceNotice
from kvtui.sources.replay import ReplaySource, parse_ts


def run_to_end(src: ReplaySource, timeout: float = 10.0) -> list[object]:
    items: list[object] = []
    lock = threading.Lock()

    def emit(batch: list[object]) -> None:
        with lock:
            items.extend(batch)

    stop = threading.Event()
    t = threading.Thread(target=src.run, args=(emit, stop), daemon=True)
    t.start()
    end = time.monotonic() + timeout
    while time.monotonic() < end and src.state != "at_end":
        time.sleep(0.01)
    stop.set()
    t.join(5)
    return items


def lines(items: list[object]) -> list[SourceLine]:
    return [i for i in items if isinstance(i, SourceLine)]


def test_parse_ts() -> None:
    assert parse_ts("16:43:29") == 16 * 3600 + 43 * 60 + 29
    a = parse_ts("2025-04-28 05:39:43")
    b = parse_ts("2025-04-28 05:39:44.500")
    assert a is not None and b is not None and b - a == 1.5
    assert parse_ts("garbage") is None


def test_merge_by_timestamp_keeps_untimed_lines_with_their_context(tmp_path: Path) -> None:
    a = tmp_path / "a.log"
    b = tmp_path / "b.log"
    a.write_text("[2025-01-01 00:00:01 TP0] a1\nTraceback a1\n[2025-01-01 00:00:03 TP0] a3\n")
    b.write_text("[2025-01-01 00:00:02 TP1] b2\n[2025-01-01 00:00:04 TP1] b4\n")
    got = lines(run_to_end(ReplaySource([str(a), str(b)], instant=True)))
    assert [ln.text.split("] ")[-1] for ln in got] == ["a1", "Traceback a1", "b2", "a3", "b4"]
    assert [ln.source for ln in got] == [str(a), str(a), str(b), str(a), str(b)]
    assert [ln.line_no for ln in got] == [1, 2, 1, 3, 2]
    assert got[1].ts == "2025-01-01 00:00:01"  # inherited


def test_gzip_and_progress(tmp_path: Path) -> None:
    p = tmp_path / "x.log.gz"
    with gzip.open(p, "wt") as f:
        for i in range(1000):
            f.write(f"[2025-01-01 00:00:{i % 60:02d}] line {i}\n")
    src = ReplaySource([str(p)], instant=True)
    items = run_to_end(src)
    got = lines(items)
    assert len(got) == 1000 and got[-1].text.endswith("line 999")
    assert src.progress == 1.0
    assert "at_end" in [n.state for n in items if isinstance(n, SourceNotice)]


def test_timed_replay_sleeps_scaled_and_capped_gaps(tmp_path: Path) -> None:
    p = tmp_path / "t.log"
    p.write_text("[00:00:00] a\n[00:00:10] b\n[00:10:00] c\n")
    slept: list[float] = []
    src = ReplaySource([str(p)], speed=100, max_gap=0.5, sleep=slept.append)
    got = lines(run_to_end(src))
    assert len(got) == 3
    # 10 s at x100 = 0.1 s; 590 s at x100 = 5.9 s capped to 0.5 s.
    assert len(slept) == 2
    assert abs(slept[0] - 0.1) < 0.05 and abs(slept[1] - 0.5) < 0.1


def test_pause_step_seek_restart(tmp_path: Path) -> None:
    p = tmp_path / "s.log"
    p.write_text("".join(f"[2025-01-01 00:00:{i:02d}] n{i}\n" for i in range(30)))
    items: list[object] = []
    lock = threading.Lock()

    def emit(batch: list[object]) -> None:
        with lock:
            items.extend(batch)

    def texts() -> list[str]:
        with lock:
            return [i.text.split("] ")[1] for i in items if isinstance(i, SourceLine)]

    def wait(cond) -> bool:
        end = time.monotonic() + 5
        while time.monotonic() < end:
            if cond():
                return True
            time.sleep(0.01)
        return False

    src = ReplaySource([str(p)], start_paused=True, speed=1000)
    stop = threading.Event()
    t = threading.Thread(target=src.run, args=(emit, stop), daemon=True)
    t.start()
    time.sleep(0.1)
    assert texts() == []
    src.step()
    assert wait(lambda: texts() == ["n0"])
    src.step(2)
    assert wait(lambda: texts() == ["n0", "n1", "n2"])
    src.seek(lambda line: line.text.endswith("n10"))
    assert wait(lambda: texts()[-1:] == ["n10"])
    assert src.paused
    time.sleep(0.1)
    assert texts()[-1] == "n10"  # stays paused after the seek
    assert src.seek_time("00:00:20")
    assert wait(lambda: texts()[-1:] == ["n20"])
    assert src.seek_time("2025-01-01 00:00:05")  # backwards: restart, then seek
    assert wait(lambda: any(isinstance(i, SourceNotice) and i.state == "restart"
                            for i in items))
    assert wait(lambda: texts()[-1:] == ["n5"])
    src.resume()
    assert wait(lambda: src.state == "at_end")
    stop.set()
    t.join(5)
    assert not t.is_alive()


def test_missing_file_reports_error(tmp_path: Path) -> None:
    items = run_to_end(ReplaySource([str(tmp_path / "nope.log")], instant=True), timeout=2)
    assert any(isinstance(i, SourceNotice) and i.state == "error" for i in items)
