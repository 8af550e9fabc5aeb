"""Folding a stream of line blocks on every core as it arrives (a remote log read over SSH).

Why: a stream offers no byte ranges (nothing of it is kept on disk), so `fold_ranges` cannot cut
it; but consecutive blocks of its lines can be cut into pieces as they come. Each piece (a few
MiB of lines, with the number of its first line) goes to a worker process, which folds it from
scratch, and the results are joined in stream order by the one join of the pipeline
(`chunks.join_result`, the join `fold_ranges` uses). A piece whose join is declined (a server
start cut in the middle, another engine) is folded in place onto the state of every line before
it, which is where a sequential read stands there: the result is always the sequential fold's,
which tests hold equal.

Memory stays bounded: at most `ahead` pieces are in flight; a new one waits until the oldest
result has been joined (the source's reader then waits too, and the transport's window fills).
The lines of a piece are kept only until its result has been joined (a declined join needs them).

The workers (`kvtui.core.pipeline.workers`, as `fold_ranges`' are) are forked when the first
piece is full. They only fold, and ignore the signals the parent handles, so a SIGINT, SIGTERM or
SIGHUP ends the parent's read, which ends them. A piece whose worker died or was stuck is folded
in place, as a declined one is: the result is still the sequential fold's.
"""

from __future__ import annotations

import pickle
from collections import deque
from collections.abc import Callable
from typing import Any

from kvtui.core.engine import load
from kvtui.core.pipeline.chunks import Result, block_bytes, join_result, result_of
from kvtui.core.pipeline.fold import Fold
from kvtui.core.pipeline.workers import Lost, Workers

PIECE_BYTES = 4 << 20  # lines handed to a worker at once (about 20,000 log lines)

# bytes -> lines: how the source decodes the lines it hands on as received bytes (each line
# ending in "\n"); called where they are folded (a function of the sources layer, passed in).
Decode = Callable[[bytes | memoryview], list[str]]

# (source, engine names, the piece's lines, how many, the number of its first line, decode): a
# piece for a worker. The worker numbers the lines as they are numbered in the stream, so its
# result joins with no line shift (a stream's pieces, unlike a file's byte ranges, know where
# they start: shifting every timeline point and piece of evidence of ~50 results cost the reader
# 0.15 s of a 199 MB load). The lines
# cross the pipe as few objects, where a list of 20,000 strings costs the reader (the process
# that also decrypts and decompresses the stream) a pickling step per line: either the bytes as
# they came, a tuple of `PickleBuffer`s of whole lines (`decode` set: the worker decodes them,
# so the reader never does; out of band, so neither process copies them: workers._message) or
# the texts joined by newlines (`decode` None). The readers split at newlines, so no text holds
# one and splitting gives the same lines back; the worker checks the count, and a piece whose
# count differs (a line that did hold one: another feeder) comes back unfolded, to be folded in
# place.
Parts = tuple[bytes | memoryview | pickle.PickleBuffer, ...]
PieceJob = tuple[str, tuple[str, ...], str | Parts, int, int, Decode | None]
# A piece of more received blocks than this crosses as one (joined): each part costs a pickle
# entry and a buffer of the write (a live trickle makes blocks of a line or two).
_PARTS_MAX = 64


def _payload_lines(payload: str | Parts, decode: Decode | None) -> list[str]:
    """A piece's lines from what it crossed the pipe as (see PieceJob)."""
    if isinstance(payload, str):
        return payload.split("\n")
    lines: list[str] = []
    if decode is not None:
        for part in payload:  # each is whole lines
            lines += decode(memoryview(part))
    return lines


def _fold_piece(job: PieceJob) -> Result | None:
    """A worker: one piece of the stream folded from scratch (its lines numbered from `first`,
    their numbers in the stream)."""
    source, engine_names, payload, count, first, decode = job
    lines = _payload_lines(payload, decode)
    if len(lines) != count:
        return None
    fold = Fold([load(name) for name in engine_names])
    fold.feed_lines(source, lines, first)
    return result_of(fold)


class _Piece:
    """Consecutive lines for one worker: texts, or received bytes (`raws`, with `decode`)."""

    __slots__ = ("bytes", "count", "decode", "first", "payload", "raws", "source", "texts")

    def __init__(self, source: str, first: int, decode: Decode | None = None) -> None:
        self.source = source
        self.first = first
        self.decode = decode
        self.texts: list[str] = []
        self.raws: list[bytes] = []
        self.count = 0
        self.payload: str | Parts | None = None  # once sent: the lines as sent
        self.bytes = 0

    def follows(self, source: str, first: int, decode: Decode | None) -> bool:
        return source == self.source and first == self.first + self.count and \
            decode is self.decode

    def lines(self) -> list[str]:
        return self.texts if self.payload is None else _payload_lines(self.payload, self.decode)


class StreamFold:
    """Feed blocks of consecutive lines as they arrive, then `close()`: `fold` then holds
    exactly what feeding them to `fold.feed_lines` in order would have made.

    `workers` <= 1: every block is fed in place. The first block is always fed in place: a
    stream's first block holds its start-up (the SSH follower sends it small on purpose), so
    the verdict is in `fold` at once, and no worker could have it sooner. `start_after`: bytes
    fed in place before the workers start (a stream of unknown size proves it is big first).
    `abort()` (on any exit path that is not `close()`) ends the workers; `fold` is then
    incomplete.
    """

    def __init__(self, fold: Fold, workers: int, *, piece_bytes: int = PIECE_BYTES,
                 ahead: int | None = None, start_after: int = 0) -> None:
        self.fold = fold
        self.workers = workers
        self.piece_bytes = piece_bytes
        self.ahead = ahead or workers + 1  # pieces in flight: one folding per worker, one queued
        self.start_after = start_after
        self.fed = 0  # bytes of lines fed so far
        self.joined = 0  # pieces folded by a worker and joined
        self.declined = 0  # pieces whose join was declined (folded in place instead)
        self.lost = 0  # pieces whose worker died or was stuck (folded in place too)
        self._pool: Any = None
        self._piece: _Piece | None = None
        self._pending: deque[tuple[Any, _Piece]] = deque()

    @property
    def parallel(self) -> bool:
        """Are blocks going to the workers (now, or from the next one)?"""
        return self.workers > 1 and self.fed > 0 and self.fed >= self.start_after

    def feed(self, source: str, texts: list[str], first_line_no: int) -> None:
        """One block: `texts` numbered from `first_line_no`, after every block fed before."""
        if not texts:
            return
        if not self.parallel:
            self.fed += block_bytes(texts)
            self.fold.feed_lines(source, texts, first_line_no)
            return
        size = block_bytes(texts)
        piece = self._piece_for(source, first_line_no, None, size)
        piece.texts.extend(texts)
        self._grown(piece, len(texts), size)

    def feed_raw(self, source: str, raw: bytes, count: int, first_line_no: int,
                 decode: Decode) -> None:
        """`feed` of `count` lines given as the bytes received, each ending in "\n" (`decode`
        makes their texts). Folded by a worker, they are decoded there and only there: the
        reader of a remote stream (also decrypting and decompressing it) skips decoding,
        splitting and joining the lines it only passes on."""
        if not count:
            return
        if not self.parallel:
            self.fed += len(raw)
            self.fold.feed_lines(source, decode(raw), first_line_no)
            return
        piece = self._piece_for(source, first_line_no, decode, len(raw))
        piece.raws.append(raw)
        self._grown(piece, count, len(raw))

    def _piece_for(self, source: str, first: int, decode: Decode | None, size: int) -> _Piece:
        """The piece a block of `size` bytes joins: the current one, unless the block does not
        follow it or would make it pass 1.5 x `piece_bytes` (blocks of about `piece_bytes`,
        the host's frames, then make a piece each instead of two)."""
        piece = self._piece
        if piece is not None and (not piece.follows(source, first, decode) or
                                  piece.bytes + size > self.piece_bytes * 3 // 2):
            self._submit()
            piece = None
        if piece is None:
            piece = self._piece = _Piece(source, first, decode)
        return piece

    def _grown(self, piece: _Piece, count: int, size: int) -> None:
        piece.count += count
        piece.bytes += size
        self.fed += size
        if piece.bytes >= self.piece_bytes:
            self._submit()
        elif self._pool is not None:
            self._pool.poll()  # a worker that is done takes the queued piece now

    def close(self) -> None:
        """Every piece folded and joined, in order; the workers end."""
        try:
            self._submit()
            while self._pending:
                self._join_oldest()
            self.fold.flush()
        finally:
            self._stop()

    def abort(self) -> None:
        """Stop at once (an error or a signal ended the read): the workers are terminated."""
        self._pending.clear()
        self._piece = None
        self._stop()

    # -- inside -----------------------------------------------------------------------------
    def _names(self) -> tuple[str, ...]:
        fold = self.fold
        return (fold.engine.name,) if fold.engine is not None else tuple(
            e.name for e in fold.engines)

    def _submit(self) -> None:
        piece, self._piece = self._piece, None
        if piece is None:
            return
        while len(self._pending) >= self.ahead:
            self._join_oldest()
        if self._pool is None:
            self._pool = Workers(self.workers, _fold_piece)
        payload: str | Parts
        if piece.decode is not None:
            raws = piece.raws if len(piece.raws) <= _PARTS_MAX else [b"".join(piece.raws)]
            piece.payload, piece.raws = tuple(raws), []
            payload = tuple(pickle.PickleBuffer(r) for r in raws)
        else:
            payload = "\n".join(piece.texts)
            if payload.count("\n") == piece.count - 1:
                # One string is all this process keeps of the piece (a declined join splits
                # it again): its memory goes back to the system when it is freed, where 20,000
                # small strings would leave the allocator's arenas fragmented.
                piece.payload, piece.texts = payload, []
        job: PieceJob = (piece.source, self._names(), payload, piece.count, piece.first,
                         piece.decode)
        self._pending.append((self._pool.submit(job), piece))

    def _join_oldest(self) -> None:
        pending, piece = self._pending.popleft()
        try:
            result = self._pool.result(pending)
        except Lost:  # its worker died or was stuck
            self.lost += 1
            self.fold.feed_lines(piece.source, piece.lines(), piece.first)
            return
        if result is not None and join_result(self.fold, result, 0):  # numbered already
            self.joined += 1
        else:  # only a sequential read can tell: it stands here with the lines before
            self.declined += 1
            self.fold.feed_lines(piece.source, piece.lines(), piece.first)

    def _stop(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()  # idle after close(), busy after abort(): ended and reaped either way
