"""What the SSH follower delivers: blocks of complete lines, and notices, in stream order.

One delivery path for every consumer: a `LineBlock` holds consecutive lines of one file with the
line number of the first and the byte offset where it starts (per-line offsets when the consumer
asked for them), so a headless check folds a block with one call and the TUI turns it into
`SourceLine`s (`as_items`). The follower itself never looks inside a line: the read-ahead block
(`prelude`) is found on the host by markers the consumer names.

`Cursor` is the read position in the file being followed: a bounded `LineSplitter` plus the last
bytes before the resume point, whose hash lets the host tell "same file, same bytes" from a file
truncated and rewritten with the same first bytes while we were away.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from kvtui.sources.base import Item, SourceLine, SourceNotice
from kvtui.sources.lines import LineSplitter

WINDOW = 4096  # bytes before the resume offset that must be unchanged to resume there


@dataclass(slots=True, frozen=True)
class LineBlock:
    source: str
    first_line_no: int  # 1-based, counted across rotations of the same logical source
    offset: int  # byte offset of the first line in its file (-1 for command output)
    texts: list[str]  # decoded, newline stripped, length bounded (kvtui.sources.lines)
    offsets: list[int] | None = None  # per line, when the follower was asked for them
    # read ahead: the start-up region of the last server start, sent before the lines before
    # it (its lines come again, in order, with the rest); not a continuation of the stream
    prelude: bool = False


Delivered = LineBlock | SourceNotice
Deliver = Callable[[list[Delivered]], None]


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
        if texts:
            end = data.rfind(b"\n") + 1  # `consumed` now sits just past this byte of `data`
            if end >= WINDOW:
                self.window = data[end - WINDOW:end]
            else:
                self.window = (self._recent + data[:end])[-WINDOW:]
        self._recent = data[-WINDOW:] if len(data) >= WINDOW else \
            (self._recent + data)[-WINDOW:]
        return start, texts, offs

    def flush(self) -> tuple[int, list[str], list[int] | None]:
        """The unterminated last line, as a line (its file has ended)."""
        start = self.splitter.consumed
        pairs = self.splitter.flush()
        return start, [t for _, t in pairs], [o for o, _ in pairs] if self.offsets else None

    def resume_window(self) -> tuple[int, str]:
        """(length, sha1) of the bytes before `consumed`, for the host to compare."""
        return len(self.window), hashlib.sha1(self.window).hexdigest()
