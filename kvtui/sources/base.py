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
from typing import Protocol, runtime_checkable

from kvtui.core.pipeline.inputs import RangedFile


@dataclass(slots=True, frozen=True)
class SourceLine:
    source: str  # display name of the source (file path, "host:path", ...)
    line_no: int  # 1-based: the line's number in the file that holds it (a stream: its count)
    offset: int  # byte offset of the line start in that file (-1 if unknown)
    text: str  # decoded with errors="replace", newline stripped, length bounded
    ts: str | None = None  # replay only: timestamp text when known (else None)


# What a source can say about itself: the one vocabulary of notice states. A *state* changes
# what the header shows; a *message* (info, checkpoint) only tells something and leaves the
# state as it was; an *inline* state is also marked in the log pane where it happened.
STATES: frozenset[str] = frozenset({
    "connecting", "live", "loading", "replaying", "paused", "at_end", "rotated", "truncated",
    "reconnecting", "restarted", "restart", "error", "closed", "stale",
})
MESSAGES: frozenset[str] = frozenset({"info", "checkpoint"})
INLINE: frozenset[str] = frozenset({"rotated", "truncated", "error", "reconnecting", "restarted"})


@dataclass(slots=True, frozen=True)
class SourceNotice:
    source: str
    state: str  # "connecting" | "live" | "at_end" | "paused" | "rotated" | "truncated" |
    #             "reconnecting" | "error" | "closed" | ...
    message: str = ""
    # A rotation: the lines delivered so far under `source` are now in this file (another
    # name, or words such as "server.log (deleted)"); consumers relabel their evidence, and the
    # lines that follow under `source` are numbered from 1 again.
    moved_to: str | None = None


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


Predicate = Callable[[SourceLine], bool]


@dataclass(frozen=True, slots=True)
class ReplayStatus:
    """What the header shows of a replay, read at once: how far, how fast, the log's clock."""

    state: str  # a notice state (STATES): replaying, paused, at_end, ...
    progress: float  # 0..1 of the bytes read
    pace: str  # "instant" or "x50"
    log_time: str | None  # the newest line's timestamp, as the log prints it


@runtime_checkable
class ReplayControls(Protocol):
    """The optional capability of a source over saved files: play, pause, step, seek.

    A source that has it implements these methods on itself; `replay_controls` is the one
    place that asks, so the UI holds a typed handle (or None) instead of probing attributes.
    """

    speed: float

    def status(self) -> ReplayStatus: ...

    def toggle_pause(self) -> bool: ...

    def step(self, n: int = 1) -> None: ...

    def seek(self, predicate: Predicate) -> None: ...

    def seek_time(self, when: str) -> bool: ...

    def set_speed(self, speed: float) -> None: ...

    def restart(self) -> None: ...


@runtime_checkable
class LocalFiles(Protocol):
    """The optional capability of a source that reads files on this machine (a replay, a
    local tail): their paths, in reading order. The TUI's export goes next to the first."""

    def local_paths(self) -> tuple[str, ...]: ...


def local_files(source: LineSource) -> tuple[str, ...]:
    """The local files a source reads; none for a pipe, a log client or SSH (a structural
    check, as `replay_controls` is, for the same reason)."""
    return source.local_paths() if isinstance(source, LocalFiles) else ()


def replay_controls(source: LineSource) -> ReplayControls | None:
    """The source's replay controls, or None for a live source (tail, pipe, client, SSH).

    A structural check on purpose: LineSource is a protocol that sources (and the tests'
    stand-ins) satisfy by shape, so the capability is asked for here once, not per attribute."""
    return source if isinstance(source, ReplayControls) else None
