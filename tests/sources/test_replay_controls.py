"""ReplaySource review fixes: pause cancels a seek, one "paused" per seek hit, a seek that runs
out of file says so and leaves a restart paused, and overlong lines are read in bounded pieces."""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kvtui.sources import replay
from kvtui.sources.base import SourceLine, SourceNotice
from kvtui.sources.lines import MAX_LINE_CHARS, LineSplitter, decode_line
from kvtui.sources.replay import ReplaySource

# a replay's controls over wall-clock waits:
# left to the full run (`dev.py test --fast` skips them)
pytestmark = pytest.mark.full


class Run:
    """A ReplaySource running in a thread, with what it emitted."""

    def __init__(self, src: ReplaySource) -> None:
        self.src = src
        self.items: list[object] = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=src.run, args=(self.emit, self.stop), daemon=True)
        self.thread.start()

    def emit(self, batch: list[object]) -> None:
        with self.lock:
            self.items.extend(batch)

    def lines(self) -> list[SourceLine]:
        with self.lock:
            return [i for i in self.items if isinstance(i, SourceLine)]

    def states(self) -> list[str]:
        with self.lock:
            return [i.state for i in self.items if isinstance(i, SourceNotice)]

    def wait(self, cond: Callable[[], bool], timeout: float = 8.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if cond():
                return True
            time.sleep(0.01)
        return False

    def finish(self) -> None:
        self.stop.set()
        self.thread.join(5)
        assert not self.thread.is_alive()


def write_log(path: Path, n: int) -> Path:
    path.write_text("".join(f"[2025-01-01 00:{i // 60 % 60:02d}:{i % 60:02d}] n{i}\n"
                            for i in range(n)))
    return path


def slow_never(calls: list[int]) -> Callable[[SourceLine], bool]:
    def pred(line: SourceLine) -> bool:
        calls.append(line.line_no)
        time.sleep(0.0005)
        return False
    return pred


@pytest.mark.parametrize("how", ["toggle_pause", "pause", "step"])
def test_pausing_cancels_a_running_seek(tmp_path: Path, how: str) -> None:
    src = ReplaySource([str(write_log(tmp_path / "big.log", 20000))], start_paused=True)
    run = Run(src)
    calls: list[int] = []
    assert run.wait(lambda: src.state == "paused")
    src.seek(slow_never(calls))
    assert run.wait(lambda: len(calls) > 50)
    if how == "toggle_pause":
        assert src.toggle_pause() is True
    elif how == "pause":
        src.pause()
    else:
        src.step(1)
    assert run.wait(lambda: src.state == "paused")
    time.sleep(0.1)
    seen, emitted = len(calls), src.lines_emitted
    time.sleep(0.5)
    assert len(calls) == seen, "the seek kept running while paused"
    assert src.lines_emitted == emitted == len(run.lines())
    assert emitted < 20000 and src.state == "paused"
    run.finish()


def test_one_paused_notice_per_seek_hit(tmp_path: Path) -> None:
    src = ReplaySource([str(write_log(tmp_path / "s.log", 60))], start_paused=True)
    run = Run(src)
    assert run.wait(lambda: src.state == "paused")
    time.sleep(0.1)
    assert run.states() == ["paused"]
    src.seek(lambda line: line.text.endswith(" n10"))
    assert run.wait(lambda: bool(run.lines()) and run.lines()[-1].text.endswith(" n10"))
    time.sleep(0.3)  # the replay thread has moved on to the next line and waits there
    assert run.states() == ["paused", "replaying", "paused"]
    src.step(2)
    assert run.wait(lambda: len(run.lines()) == 13)
    time.sleep(0.1)
    assert run.states() == ["paused", "replaying", "paused"]  # steps stay paused, silently
    src.seek(lambda line: line.text.endswith(" n30"))
    assert run.wait(lambda: run.lines()[-1].text.endswith(" n30"))
    time.sleep(0.2)
    assert run.states() == ["paused", "replaying", "paused", "replaying", "paused"]
    run.finish()


def test_seek_past_the_end_then_restart_starts_paused(tmp_path: Path) -> None:
    src = ReplaySource([str(write_log(tmp_path / "s.log", 50))], start_paused=True)
    run = Run(src)
    assert run.wait(lambda: src.state == "paused")
    src.seek(lambda line: False)  # nothing to find: runs to the end
    assert run.wait(lambda: src.state == "at_end")
    assert src.paused and src._seek is None
    n_at_end = run.states().count("at_end")
    # A seek asked for at the end is dropped, and "at_end" is said again.
    src.seek(lambda line: False)
    assert run.wait(lambda: run.states().count("at_end") == n_at_end + 1)
    assert src.paused and src._seek is None
    src.restart()
    assert run.wait(lambda: "restart" in run.states())
    assert run.wait(lambda: run.states()[-1] == "paused")
    time.sleep(0.3)
    assert src.lines_emitted == 0 and src.state == "paused"
    run.finish()


def test_restart_drops_a_pending_seek(tmp_path: Path) -> None:
    src = ReplaySource([str(write_log(tmp_path / "s.log", 10))], start_paused=True)
    src.seek(lambda line: False)
    src.restart()
    assert src._seek is None and src._restart
    # seek_time going backwards still restarts *and* seeks.
    src._readers = [type("R", (), {"last_key": 1e12})()]  # type: ignore[list-item]
    assert src.seek_time("2025-01-01 00:00:05")
    assert src._seek is not None and src._restart


@pytest.mark.parametrize("gz", [False, True])
def test_overlong_lines_are_read_in_bounded_pieces(tmp_path: Path, gz: bool,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # the one line splitter's bound, and reads as small: every piece crosses a read
    monkeypatch.setattr(LineSplitter, "CARRY_MAX", 16)
    monkeypatch.setattr(replay, "READ_CHUNK", 16)
    raws = [b"[00:00:01] a", b"x" * 15, b"y" * 16, b"z" * 100, b"[00:00:02] after",
            b"\0" * 70, b"tail-without-newline" * 3]
    data = b"\n".join(raws)
    p = tmp_path / ("o.log.gz" if gz else "o.log")
    if gz:
        with gzip.open(p, "wb") as f:
            f.write(data)
    else:
        p.write_bytes(data)
    reads: list[int] = []
    real = replay._FileReader.__init__

    def spy_init(self: replay._FileReader, *a: object, **kw: object) -> None:
        real(self, *a, **kw)  # type: ignore[arg-type]
        read = self.stream.read

        def limited(size: int = -1) -> bytes:
            assert 0 < size <= 16
            out = read(size)
            reads.append(len(out))
            return out
        self.stream = type("S", (), {"read": staticmethod(limited),
                                     "close": self.stream.close})()  # type: ignore[assignment]

    monkeypatch.setattr(replay._FileReader, "__init__", spy_init)
    run = Run(ReplaySource([str(p)], instant=True))
    assert run.wait(lambda: run.src.state == "at_end")
    run.finish()
    got = run.lines()
    assert [ln.line_no for ln in got] == list(range(1, len(raws) + 1))
    assert [ln.text for ln in got] == [decode_line(r[:16]) for r in raws]
    offsets, off = [], 0
    for r in raws:
        offsets.append(off)
        off += len(r) + 1
    assert [ln.offset for ln in got] == offsets
    assert got[4].ts == "00:00:02" and got[5].ts == "00:00:02"
    assert max(reads) <= 16


def test_real_limit_keeps_a_newline_free_megabyte_out_of_memory(tmp_path: Path) -> None:
    p = tmp_path / "nl.log"
    big = b"[2025-01-01 00:00:01] " + b"q" * (3 * LineSplitter.CARRY_MAX)
    p.write_bytes(b"[2025-01-01 00:00:00] first\n" + big + b"\n[2025-01-01 00:00:02] last\n")
    run = Run(ReplaySource([str(p)], instant=True))
    assert run.wait(lambda: run.src.state == "at_end")
    run.finish()
    got = run.lines()
    assert len(got) == 3 and got[2].text.endswith("last")
    assert len(got[1].text) == MAX_LINE_CHARS
    assert got[2].offset == len(b"[2025-01-01 00:00:00] first\n") + len(big) + 1
