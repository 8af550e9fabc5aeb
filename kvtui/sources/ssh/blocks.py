"""What the SSH follower delivers: blocks of complete lines, and notices, in stream order.

One delivery path for every consumer: a `LineBlock` holds consecutive lines of one file with the
line number of the first and the byte offset where it starts (per-line offsets when the consumer
asked for them), so a headless check folds a block with one call and the TUI turns it into
`SourceLine`s (`as_items`). A consumer that needs no offsets gets the lines of most blocks as the
bytes received (`raw`), which a stream fold hands to its workers undecoded. The follower itself
never looks inside a line: the read-ahead block (`prelude`) is found on the host by markers the
consumer names.

`Cursor` is the read position in the file being followed: a bounded `LineSplitter` plus the last
bytes before the resume point, whose hash lets the host tell "same file, same bytes" from a file
truncated and rewritten with the same first bytes while we were away.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from kvtui.sources.base import Item, SourceLine, SourceNotice
from kvtui.sources.lines import LineSplitter, lines_of

if TYPE_CHECKING:
    from kvtui.core.pipeline import StreamFold

WINDOW = 4096  # bytes before the resume offset that must be unchanged to resume there


class LineBlock:
    """Consecutive lines of one file. Either their texts, or (`raw`) their bytes as received,
    each line ending in "\n": the texts are then decoded only if someone reads them (a
    stream fold hands the bytes to a worker process, which decodes them itself)."""

    __slots__ = ("_texts", "count", "first_line_no", "offset", "offsets", "prelude", "raw",
                 "source")

    def __init__(self, source: str, first_line_no: int, offset: int,
                 texts: list[str] | None = None, offsets: list[int] | None = None,
                 prelude: bool = False, *, raw: bytes | None = None) -> None:
        if (texts is None) == (raw is None):
            raise ValueError("a LineBlock holds texts or raw bytes")
        self.source = source
        self.first_line_no = first_line_no  # 1-based, counted across rotations of the source
        self.offset = offset  # byte offset of the first line in its file (-1: command output)
        self._texts = texts  # decoded, newline stripped, length bounded (kvtui.sources.lines)
        self.raw = raw
        self.count = len(texts) if texts is not None else raw.count(b"\n")  # type: ignore
        self.offsets = offsets  # per line, when the follower was asked for them
        # read ahead: the start-up region of the last server start, sent before the lines
        # before it (its lines come again, in order, with the rest); not a continuation
        self.prelude = prelude

    @property
    def texts(self) -> list[str]:
        if self._texts is None:
            self._texts = lines_of(self.raw or b"")
        return self._texts

    def fold_into(self, feed: StreamFold) -> None:
        """Hand the block to a stream fold: the bytes when it has them (decoded where they are
        folded), else the texts."""
        if self.raw is not None:
            feed.feed_raw(self.source, self.raw, self.count, self.first_line_no, lines_of)
        else:
            feed.feed(self.source, self.texts, self.first_line_no)

    def __repr__(self) -> str:
        return (f"LineBlock({self.source!r}, {self.first_line_no}, {self.offset}, "
                f"{self.count} lines{', raw' if self.raw is not None else ''}"
                f"{', prelude' if self.prelude else ''})")


Delivered = LineBlock | SourceNotice
Deliver = Callable[[list[Delivered]], None]


@runtime_checkable
class BlockSource(Protocol):
    """The capability of a source that delivers its lines in blocks (the SSH follower): a
    consumer folds each block whole, on every core when `expected_bytes` (the history's size,
    once the host said it; None before) says the log is big. Asked for in one place
    (`block_source`) so consumers hold a typed handle instead of probing attributes."""

    expected_bytes: int | None

    def run_blocks(self, deliver: Deliver, stop: threading.Event) -> None: ...


def block_source(source: object) -> BlockSource | None:
    """`source` as a block source, or None when it delivers lines one batch at a time."""
    return source if isinstance(source, BlockSource) else None


def as_items(batch: list[Delivered]) -> list[Item]:
    """The `LineSource` form of a batch: one `SourceLine` per line.

    A read-ahead block is left out: `SourceLine`s are folded in order, and its lines arrive
    again in their place. Only `run_blocks` consumers see it (`ssh --check`, and the TUI's
    ingest, which folds it on the side to show its verdict first).
    """
    items: list[Item] = []
    for d in batch:
        if isinstance(d, LineBlock) and d.prelude:
            continue
        if isinstance(d, LineBlock):
            offs = d.offsets if d.offsets is not None else [-1] * len(d.texts)
            items.extend(SourceLine(d.source, n, off, text)
                         for n, (off, text) in enumerate(zip(offs, d.texts, strict=True),
                                                         d.first_line_no))
        else:
            items.append(d)
    return items


class Cursor:
    """The read position in one file: complete lines out, resume offset and window kept."""

    __slots__ = ("_recent", "offsets", "splitter", "window")

    def __init__(self, offset: int, *, offsets: bool, window: bytes = b"") -> None:
        self.splitter = LineSplitter(offset)
        self.offsets = offsets
        self.window = window  # the bytes just before `consumed` (at most WINDOW)
        self._recent = window  # the last WINDOW bytes fed

    @property
    def consumed(self) -> int:
        """Offset just past the last complete line: where a new session resumes."""
        return self.splitter.consumed

    def feed(self, data: bytes) -> tuple[int, list[str], list[int] | None]:
        """(offset of the first completed line, their texts, their offsets if asked)."""
        start = self.splitter.consumed
        if self.offsets:
            pairs = self.splitter.feed(data)
            texts = [t for _, t in pairs]
            offs: list[int] | None = [o for o, _ in pairs]
        else:
            texts, offs = self.splitter.feed_texts(data), None
        self._seen(data, bool(texts))
        return start, texts, offs

    def feed_raw(self, data: bytes) -> tuple[int, bytes | list[str]]:
        """(offset of the first completed line, their bytes or texts: `LineSplitter.feed_raw`),
        for a consumer that needs no offsets."""
        start = self.splitter.consumed
        got = self.splitter.feed_raw(data)
        self._seen(data, bool(got))
        return start, got

    def _seen(self, data: bytes, completed: bool) -> None:
        if completed:
            end = data.rfind(b"\n") + 1  # `consumed` now sits just past this byte of `data`
            if end >= WINDOW:
                self.window = data[end - WINDOW:end]
            else:
                self.window = (self._recent + data[:end])[-WINDOW:]
        self._recent = data[-WINDOW:] if len(data) >= WINDOW else \
            (self._recent + data)[-WINDOW:]

    def flush(self) -> tuple[int, list[str], list[int] | None]:
        """The unterminated last line, as a line (its file has ended)."""
        start = self.splitter.consumed
        pairs = self.splitter.flush()
        return start, [t for _, t in pairs], [o for o, _ in pairs] if self.offsets else None

    def resume_window(self) -> tuple[int, str]:
        """(length, sha1) of the bytes before `consumed`, for the host to compare."""
        return len(self.window), hashlib.sha1(self.window).hexdigest()
