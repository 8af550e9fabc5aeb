"""A stream of line blocks folded on every core as it arrives (`Session.stream`) gives exactly the
sequential fold: pieces joined by the pipeline's one join, a declined join folded in place."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kvtui.core.pipeline import Options, Session
from kvtui.core.pipeline.fold import Fold
from kvtui.sources.lines import lines_of
from tests.conftest import SAMPLES, corpus_dir
from tests.core.procs import children, finishes
from tests.core.test_bulk_fold import snapshot

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from biglog import write_big_log

BIG = 1 << 40  # a size that says "big"


def blocks_of(lines: list[str], size: int) -> list[tuple[int, list[str]]]:
    return [(i + 1, lines[i:i + size]) for i in range(0, len(lines), size)]


def sequential(lines: list[str], size: int) -> Session:
    s = Session()
    for first, texts in blocks_of(lines, size):
        s.feed_lines("remote", texts, first)
    return s


def streamed(lines: list[str], size: int, piece_bytes: int, *, expected: int | None = BIG,
             min_parallel: int = 0, raw: str = "never"):
    """`raw`: which blocks come as received bytes (the SSH follower's form), decoded by
    `lines_of` where they are folded: "never", "always", or "odd" (every other block)."""
    s = Session(Options(workers=2, min_parallel_bytes=min_parallel, piece_bytes=piece_bytes))
    feed = s.stream(expected)
    try:
        for i, (first, texts) in enumerate(blocks_of(lines, size)):
            if raw == "always" or (raw == "odd" and i % 2):
                data = "".join(x + "\n" for x in texts).encode()
                feed.feed_raw("remote", data, len(texts), first, lines_of)
            else:
                feed.feed("remote", texts, first)
        feed.close()
    finally:
        feed.abort()
    return s, feed


def agree(lines: list[str], size: int, piece_bytes: int, **kw: object):
    s, feed = streamed(lines, size, piece_bytes, **kw)
    ref = sequential(lines, size)
    assert s.lines == ref.lines
    assert s.engine is ref.engine
    assert snapshot(s) == snapshot(ref)
    return feed


def sample_lines(name: str) -> list[str]:
    return (SAMPLES / name).read_text().splitlines()


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.glob("*.log")))
def test_every_sample_cut_into_pieces_at_every_line(name):
    """Pieces of one line: a join is tried at every line of the sample, start-up included, and
    each either joins exactly or is declined and folded in place."""
    lines = sample_lines(name)
    feed = agree(lines, 1, 1)
    assert feed.joined > len(lines) // 2  # the runtime lines join
    if any("server_args=" in x or "non-default args" in x for x in lines):
        assert feed.declined > 0  # a cut inside a start-up is declined, and still exact


@pytest.mark.parametrize("raw", ["never", "always", "odd"])
@pytest.mark.parametrize("size,piece", [(7, 300), (64, 4096), (500, 1 << 16)])
def test_two_servers_in_one_stream(size, piece, raw):
    lines = sample_lines("qwen35-397b-nvfp4-tp8-fp8.log") + sample_lines(
        "llama31-8b-retraction.log") + sample_lines("qwen35-397b-nvfp4-tp8-bf16.log")
    agree(lines, size, piece, raw=raw)


@pytest.mark.parametrize("name", ["qwen35-397b-nvfp4-tp8-fp8.log", "llama31-8b-retraction.log"])
def test_raw_blocks_cut_at_every_line(name):
    """Received bytes decoded by the workers: a join tried at every line, as for texts."""
    lines = sample_lines(name)
    feed = agree(lines, 1, 1, raw="always")
    assert feed.joined > len(lines) // 2 and feed.declined > 0


def test_blocks_of_about_a_piece_make_a_piece_each(tmp_path):
    """The host's frames are about `piece_bytes` of lines: each is a piece of its own, never
    two joined into one twice as big (the pieces in flight are what the reader holds)."""
    lines = write_big_log(tmp_path / "big.log", 20_000).read_text().splitlines()
    blocks = blocks_of(lines, 300)  # about 60 KiB each
    size = max(len("".join(x + "\n" for x in texts)) for _, texts in blocks)
    feed = agree(lines, 300, size + 1, raw="always")  # every block just under a piece
    assert feed.joined + feed.declined == len(blocks) - 1  # the first block is folded here


def test_a_declined_join_is_folded_in_place_onto_the_lines_before():
    """A piece that begins inside the second server's start-up cannot be joined: the worker's
    fold is dropped and the piece folded here, after the joined pieces before it; the pieces
    after it join again."""
    first = sample_lines("llama31-8b-retraction.log")
    second = sample_lines("qwen35-397b-nvfp4-tp8-fp8.log")
    runtime = [x for x in second if "Decode batch" in x]
    restart = next(i for i, x in enumerate(second) if "server_args=" in x)
    lines = first + second[:restart + 3] + second[restart + 3:] + runtime * 20
    s = Session(Options(workers=2, min_parallel_bytes=0, piece_bytes=1 << 30))
    feed = s.stream(BIG)
    calls: list[int] = []
    real = Fold.feed_lines

    def counting(self, source, texts, first_line_no=1):
        calls.append(first_line_no)
        return real(self, source, texts, first_line_no)

    Fold.feed_lines = counting  # type: ignore[method-assign]
    try:
        cut = len(first) + restart + 3  # a piece boundary three lines into the start-up
        feed.feed("remote", lines[:20], 1)  # the first block: folded in place
        feed.feed("remote", lines[20:len(first)], 21)
        feed._submit()
        feed.feed("remote", lines[len(first):cut], len(first) + 1)
        feed._submit()
        feed.feed("remote", lines[cut:], cut + 1)
        feed.close()
    finally:
        Fold.feed_lines = real  # type: ignore[method-assign]
        feed.abort()
    assert feed.declined == 1 and feed.joined == 2
    # here: the first block (its first line, and the rest once the engine is known), and the
    # declined piece; the rest was folded by the workers
    assert calls[0] == 1 and [c for c in calls if c > 20] == [cut + 1]
    ref = sequential(lines, len(lines))
    assert snapshot(s) == snapshot(ref)
    assert len(s.state.runs) == 2


def test_corpus():
    corpus = corpus_dir()
    if not corpus.is_dir():
        pytest.skip(f"corpus not found at {corpus}")
    for path in sorted(corpus.glob("*.log")):
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        agree(lines, 50, 2048)


@pytest.mark.parametrize("raw", ["never", "always"])
def test_generated_big_log(tmp_path, raw):
    path = write_big_log(tmp_path / "big.log", 60_000)
    lines = path.read_text().splitlines()
    feed = agree(lines, 2000, 1 << 20, raw=raw)
    assert feed.joined >= 8 and feed.declined == 0


def test_workers_fold_it_and_the_reader_waits_for_them(tmp_path, monkeypatch):
    """Big: every piece after the first block goes to a worker process, never more than `ahead`
    in flight (memory stays bounded)."""
    lines = write_big_log(tmp_path / "big.log", 30_000).read_text().splitlines()
    s = Session(Options(workers=2, min_parallel_bytes=0, piece_bytes=64 << 10))
    feed = s.stream(BIG)
    calls: list[int] = []
    most = 0
    real = Fold.feed_lines

    def counting(self, *a, **kw):
        calls.append(1)  # in this process only
        return real(self, *a, **kw)

    monkeypatch.setattr(Fold, "feed_lines", counting)
    for first, texts in blocks_of(lines, 1000):
        feed.feed("remote", texts, first)
        most = max(most, len(feed._pending))
    feed.close()
    monkeypatch.undo()
    assert 0 < len(calls) <= 2  # the first block (in one or two calls), nothing else
    assert most <= feed.ahead == 3
    assert feed.joined > 20
    assert snapshot(s) == snapshot(sequential(lines, 1000))


def test_small_or_unknown_size_stays_here_until_it_is_big(tmp_path):
    lines = write_big_log(tmp_path / "big.log", 20_000).read_text().splitlines()
    s = Session(Options(workers=2))
    small = s.stream(1 << 20)
    assert small.workers == 1  # `is_big` says no: folded in place
    # size unknown (a command's output): in place until it proved big, then on every core
    feed = agree(lines, 500, 64 << 10, expected=None, min_parallel=1 << 20)
    assert feed.joined > 0
    assert feed.fed >= 1 << 20


def test_abort_ends_the_workers():
    """Busy workers ended at once, none left behind, not even as a zombie. (A pool aborted
    with busy workers once hung the suite: a worker terminated while sending its result held
    the result queue's lock, which the pool's own task handler then waited on for ever.)"""
    lines = sample_lines("llama31-8b-retraction.log") * 20
    before = children()
    for _ in range(5):
        s = Session(Options(workers=2, min_parallel_bytes=0, piece_bytes=4096))
        feed = s.stream(BIG)
        for first, texts in blocks_of(lines, 100):
            feed.feed("remote", texts, first)
        assert len(children() - before) == 2
        finishes(feed.abort)
        assert not children() - before


def test_a_line_holding_a_newline_still_reaches_the_worker_whole():
    """Pieces cross to the workers as one newline-joined string; a feeder whose lines hold
    newlines gets the same fold as feeding them in place."""
    lines = sample_lines("llama31-8b-retraction.log")
    odd = [x + "\nnot a line of its own" if i % 97 == 5 else x for i, x in enumerate(lines)]
    feed = agree(odd * 3, 40, 2048)
    assert feed.joined > 5
