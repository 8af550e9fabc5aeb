"""The worker processes of the parallel folds (`kvtui.core.pipeline.workers`): results and
errors cross back whole, and ending the pool in any state returns and reaps every worker."""

from __future__ import annotations

import os
import signal

import pytest

from kvtui.core.pipeline.workers import Lost, Workers, WorkerTraceback
from tests.core.procs import children, finishes

BIG = 24 << 20  # far more than a pipe holds


def task(arg):
    if arg == "raise":
        raise ValueError("raised in a worker")
    if arg == "big":
        return b"x" * BIG
    return arg * arg


def test_results_and_errors_cross_back_whole():
    with Workers(2, task) as pool:
        assert list(pool.map(range(20))) == [i * i for i in range(20)]
        assert pool.result(pool.submit("big")) == b"x" * BIG
        t = pool.submit("raise")
        with pytest.raises(ValueError, match="raised in a worker") as info:
            pool.result(t)
        assert isinstance(info.value.__cause__, WorkerTraceback)
        assert "in task" in str(info.value.__cause__)  # the worker's own traceback
        assert len(pool.pids) == 2  # an exception is an answer, not a lost worker


def test_ending_the_pool_while_a_worker_writes_a_big_result():
    """The shape of the hang this module replaced: a worker ended in the middle of sending its
    result (here blocked on a full pipe that nobody reads) must not hold anything up."""
    before = children()
    pool = Workers(2, task)
    pool.submit("big")
    pool.submit("big")
    assert len(pool.busy_pids()) == 2
    finishes(pool.close)
    assert not children() - before


def test_with_every_worker_gone_the_tasks_are_done_here():
    before = children()
    with Workers(2, task) as pool:
        for pid in pool.pids:
            os.kill(pid, signal.SIGKILL)
        t = pool.submit(3)
        with pytest.raises(Lost):
            finishes(lambda: pool.result(t))
        assert pool.value(pool.submit(4)) == 16  # done here, by the same function
        assert pool.pids == []  # each dead worker was found when it was given a task
        assert list(pool.map([5, 6])) == [25, 36]
    assert not children() - before


def describe(arg):
    """What a worker received: the kind and the bytes of each part."""
    return [(type(p).__name__, bytes(p)) for p in arg]


def test_pickle_buffers_cross_out_of_band_and_arrive_whole():
    """A stream piece's received bytes go as `PickleBuffer`s: written from where they lie and
    handed to the worker as views of what it read (no copy by either process), several of
    them, large ones (each far more than the pipe holds: the writes stop part-way through a
    buffer), empty ones, beside ordinary objects."""
    import pickle

    parts = [os.urandom(BIG // 3), b"", b"line\n", os.urandom(BIG // 2)]
    with Workers(1, describe) as pool:
        got = pool.result(pool.submit([pickle.PickleBuffer(p) for p in parts] + [b"inline"]))
    assert got == [("memoryview", p) for p in parts] + [("bytes", b"inline")]
