"""What the pipeline can read, as typed capabilities that sources provide.

Why typed: how a stream is folded (line by line, a column at a time, on every core, start-up
first) is the pipeline's choice, made from what the input can offer. A plain file on disk offers
byte ranges (`RangedFile`); a pipe, a `.gz` or a remote stream offers only its lines in order.
Sources (`kvtui.sources`) build these objects; the core never opens a file itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

# (path, start, end) -> blocks of lines between two byte offsets at line starts (end None: EOF)
RangeReader = Callable[[str, int, int | None], Iterator[list[str]]]
# (path, parts, end) -> byte offsets at line starts cutting [0, end) into similar parts
Cutter = Callable[[str, int, int | None], list[int]]
# (path, markers, end) -> byte offsets of the lines (in [0, end)) holding any marker, in order
Scanner = Callable[[str, tuple[bytes, ...], int], list[int]]
# (path, start, end) -> the number of lines that start in [start, end) (both line starts)
LineCounter = Callable[[str, int, int], int]


@dataclass(frozen=True, slots=True)
class RangedFile:
    """A plain file whose first `size` bytes (ending at a line start) may be read in ranges."""

    path: str
    size: int
    read: RangeReader
    cuts: Cutter
    scan: Scanner
    count_lines: LineCounter


@dataclass(frozen=True, slots=True)
class Input:
    """One stream to analyse: its name (what evidence cites) and how to read it."""

    name: str
    blocks: Callable[[], Iterator[list[str]]]  # the lines in order, in blocks
    ranged: RangedFile | None = None  # a plain file: byte ranges too
