"""The contract between a line source and whoever consumes it (headless check, TUI, SSH check).

A source runs in its own thread and hands over *batches*: a list mixing `SourceLine`s (in order,
each with its 1-based line number and the byte offset where it starts) and `SourceNotice`s
(state changes such as "live", "rotated", "truncated", "reconnecting", "error"). Consumers never
get one callback per line, so a firehose costs one hand-off per batch.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from kvtui.core.pipeline.inputs import RangedFile


@dataclass(slots=True, frozen=True)
class SourceLine:
    source: str  # display name of the source (file path, "host:path", ...)
    line_no: int  # 1-based, counted across rotations of the same logical source
    offset: int  # byte offset of the line start in the current underlying file (-1 if unknown)
    text: str  # decoded with errors="replace", newline stripped, length bounded
    ts: str | None = None  # replay only: timestamp text when known (else None)


@dataclass(slots=True, frozen=True)
class SourceNotice:
    source: str
    state: str  # "connecting" | "live" | "at_end" | "paused" | "rotated" | "truncated" |
    #             "reconnecting" | "error" | "closed" | ...
    message: str = ""


@dataclass(slots=True, frozen=True)
class History:
    """A source's offer: what is already in a file, for the consumer to fold in bulk (on every
    core when it is big) before the source streams the rest, from `skip_to(file.size, lines)`.

    `fill_log`: nothing follows at once (an instant replay), so the consumer shows the file's
    last lines itself. `always`: fold it even when it is small (tailing from the end must still
    see the start-up lines the facts come from).
    """

    file: RangedFile
    fill_log: bool
    always: bool


Item = SourceLine | SourceNotice
Emit = Callable[[list[Item]], None]


class LineSource(Protocol):
    """A producer of line batches. `run` blocks until `stop` is set or the source ends.

    `history()` is the source's bulk offer (None: it streams everything itself); when the
    consumer took it, it calls `skip_to(offset, lines)` before `run`.
    """

    name: str

    def run(self, emit: Emit, stop: threading.Event) -> None: ...

    def history(self) -> History | None: ...

    def skip_to(self, offset: int, lines: int) -> None: ...
