"""A worker that dies or is stuck in the middle of a parallel fold costs time, never the answer
nor a hang: each parallel route (a stream's pieces, a file's byte ranges, `kvtui events`) still
gives exactly the sequential result, and no worker is left behind, not even as a zombie.

The workers are made to fail from the inside, on a line only the test puts in the log: the
method that folds (or parses) lines is patched before the fork, so the forked workers inherit
the patch, and it acts only in a process other than the test's. "Stuck" is the hazard of a fork
in a process with threads: the worker waits on a lock another thread of the parent held when
it was forked, a lock that no thread of the child will ever release.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from kvtui.core.pipeline import Options, Session, events
from kvtui.core.pipeline import workers as workers_mod
from kvtui.core.pipeline.fold import Fold
from kvtui.sources.readers import iter_batches, log_input, ranged_file
from tests.core.procs import children, finishes
from tests.core.test_bulk_fold import snapshot

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from biglog import write_big_log

# worker loss and stuck workers, over wall-clock waits:
# left to the full run (`dev.py test --fast` skips them)
pytestmark = pytest.mark.full

MARK = "a line that ends the worker that reads it"


class Failing:
    def __init__(self, how: str) -> None:
        self.how = how
        self.here = 0  # calls that folded or parsed MARK in this process (not a worker)


@pytest.fixture(params=["killed", "stuck"])
def failing_worker(request, monkeypatch):
    """Patch `Fold.feed_lines` and `Fold.parse` so that a worker that meets MARK is killed
    (SIGKILL, as the OOM killer does) or stuck on a lock this thread holds across the fork."""
    parent = os.getpid()
    failing = Failing(request.param)
    held = threading.Lock()
    held.acquire()
    monkeypatch.setattr(workers_mod, "STALL_SECONDS", 0.5)

    def fail() -> None:
        if request.param == "killed":
            os.kill(os.getpid(), signal.SIGKILL)
        held.acquire()  # copied locked by the fork: never released in this process

    real_feed, real_parse = Fold.feed_lines, Fold.parse

    def feed_lines(self, source, lines, first_line_no=1):
        lines = list(lines)
        if MARK in lines:
            if os.getpid() != parent:
                fail()
            failing.here += 1
        return real_feed(self, source, lines, first_line_no)

    def parse(self, text):
        if text == MARK:
            if os.getpid() != parent:
                fail()
            failing.here += 1
        return real_parse(self, text)

    monkeypatch.setattr(Fold, "feed_lines", feed_lines)
    monkeypatch.setattr(Fold, "parse", parse)
    before = children()
    yield failing
    held.release()
    assert not children() - before, "a worker was left behind"


def marked_log(tmp_path: Path, n: int = 40_000) -> Path:
    """A generated log with MARK once, two thirds of the way in (a later piece or range)."""
    path = write_big_log(tmp_path / "big.log", n)
    lines = path.read_text().splitlines()
    lines.insert(2 * len(lines) // 3, MARK)
    path.write_text("\n".join(lines) + "\n")
    return path


def sequential(path: Path) -> Session:
    ref = Session()
    ref.feed_blocks(str(path), iter_batches(str(path)))
    return ref


def test_a_stream_piece_whose_worker_is_lost_is_folded_in_place(tmp_path, failing_worker):
    path = marked_log(tmp_path)
    lines = path.read_text().splitlines()

    def stream() -> Any:
        s = Session(Options(workers=2, min_parallel_bytes=0, piece_bytes=256 << 10))
        feed = s.stream(1 << 40)
        try:
            for i in range(0, len(lines), 1000):
                feed.feed(str(path), lines[i:i + 1000], i + 1)
            feed.close()
        finally:
            feed.abort()
        return s, feed

    s, feed = finishes(stream)
    assert feed.lost == 1 and feed.joined > 3
    assert failing_worker.here  # the piece was folded again, here
    assert snapshot(s) == snapshot(sequential(path))


def test_a_file_range_whose_worker_is_lost_is_folded_in_place(tmp_path, failing_worker):
    path = marked_log(tmp_path)
    seen: list[int] = []

    def check() -> Session:
        s = Session(Options(workers=2, min_parallel_bytes=0))
        s.fold_file(ranged_file(str(path)), str(path), progress=lambda p: seen.append(p.done))
        return s

    s = finishes(check)
    assert failing_worker.here  # the range was folded again, here
    assert snapshot(s) == snapshot(sequential(path))
    assert seen[-1] == path.stat().st_size


def test_events_of_a_chunk_whose_worker_is_lost_are_written_in_place(tmp_path, failing_worker):
    path = marked_log(tmp_path, 20_000)
    inp = log_input(str(path))
    many = finishes(lambda: "".join(events(inp, Options(workers=2, min_parallel_bytes=0))))
    assert failing_worker.here  # the chunk was parsed again, here
    assert many == "".join(events(inp, Options(workers=1)))
