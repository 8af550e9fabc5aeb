"""Replay saved logs as if they were live, timed by the log's own timestamps (dolphie's model).

Why a controllable object and not a generator: the TUI needs play/pause, single steps, a speed
knob and jumps (to a time, to the next recognized event, to whatever the caller is looking for)
while the replay thread is running. The thread owns the file handles; the UI only flips fields
under a condition variable, so no control call ever blocks the event loop.

Timing: a gap between two lines is slept as `gap / speed`, but never longer than `max_gap`
seconds, so the minutes a 400B model spends loading weights pass in a blink by default while the
order and rhythm of the log stay visible. `instant` ingests as fast as the reader allows.

Several files are merged by timestamp (a per-rank log set, or a log and its rotated
predecessor); lines without a timestamp (tracebacks, uvicorn access lines) keep the timestamp of
the line before them in the same file, so they stay glued to their context.
"""

from __future__ import annotations

import gzip
import heapq
import math
import os
import re
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO

from kvtui.sources.base import (
    Emit,
    History,
    Item,
    Predicate,
    ReplayStatus,
    SourceLine,
    SourceNotice,
)
from kvtui.sources.lines import LineSplitter
from kvtui.sources.readers import ranged_file
from parsers.prefix import line_timestamp, ts_day, ts_seconds

DEFAULT_SPEED = 50.0
MIN_SPEED, MAX_SPEED = 0.01, 1e6  # what + / - can reach
DEFAULT_MAX_GAP = 0.2
INSTANT_BATCH = 4000
TIMED_BATCH_WINDOW = 0.05  # lines due within this many seconds go out in one batch
# Bytes read at a time; the splitter (`LineSplitter`) bounds what one line keeps in memory.
READ_CHUNK = 1 << 16


def parse_ts(text: str) -> float | None:
    """Seconds for a timestamp the parsers read (`parsers.prefix`, the one grammar)."""
    return ts_seconds(text)


@dataclass(slots=True)
class _Pending:
    """The next unread line of one file, ordered by (time, file index, line number)."""

    key: float
    index: int
    line_no: int
    offset: int
    text: str
    ts: str | None

    def __lt__(self, other: _Pending) -> bool:
        return (self.key, self.index, self.line_no) < (other.key, other.index, other.line_no)


class _FileReader:
    """Lines of one file (plain or .gz) with byte offsets and the compressed read position."""

    def __init__(self, path: str, index: int, want_ts: bool) -> None:
        self.path = path
        self.index = index
        self.want_ts = want_ts
        self.raw: IO[bytes] = open(path, "rb")  # noqa: SIM115 - closed by close()
        self.size = os.fstat(self.raw.fileno()).st_size
        self.stream: IO[bytes] = (gzip.GzipFile(fileobj=self.raw, mode="rb")  # type: ignore[assignment]
                                  if path.endswith(".gz") else self.raw)
        self.line_no = 0
        self.offset = 0
        self.last_key = 0.0
        self.last_ts: str | None = None

    def lines(self) -> Iterator[_Pending]:
        # The one line splitter every source uses (`LineSplitter`): an overlong line keeps its
        # head and counts once, NUL bytes are dropped, offsets stay exact.
        splitter = LineSplitter(self.offset)
        read = self.stream.read
        while True:
            chunk = read(READ_CHUNK)
            pairs = splitter.feed(chunk) if chunk else splitter.flush()
            for off, text in pairs:
                yield self._pending(off, text)
            if not chunk:
                self.offset = splitter.consumed
                return

    def _pending(self, off: int, text: str) -> _Pending:
        """The next line as the merge orders it: its timestamp, else the last one seen."""
        self.line_no += 1
        ts: str | None = None
        if self.want_ts:
            ts = line_timestamp(text)
            key = ts_seconds(ts) if ts is not None else None
            if key is not None:
                self.last_key = key
                self.last_ts = ts
            else:
                ts = self.last_ts
        return _Pending(self.last_key, self.index, self.line_no, off, text, ts)

    @property
    def position(self) -> int:
        try:
            return self.raw.tell()
        except (OSError, ValueError):
            return self.size

    def close(self) -> None:
        try:
            self.stream.close()
            self.raw.close()
        except OSError:
            pass



class ReplaySource:
    """A `LineSource` over saved files, with live controls callable from any thread.

    Controls: `pause()`, `resume()`, `toggle_pause()`, `step(n)`, `set_speed(x)`,
    `seek(predicate)` (run instantly until a line matches, emit it, pause), `seek_time(text)`
    and `restart()` (start over; consumers reset their state on the "restart" notice).
    `progress` (0..1) and `state` can be read at any time.
    """

    def __init__(self, paths: list[str], *, speed: float = DEFAULT_SPEED, instant: bool = False,
                 max_gap: float = DEFAULT_MAX_GAP, start_paused: bool = False,
                 sleep: Callable[[float], None] | None = None) -> None:
        if not paths:
            raise ValueError("replay needs at least one file")
        if not (speed > 0 and math.isfinite(speed)):
            # A zero, negative or infinite speed has no meaning for timed replay (`instant`
            # is the fast mode); refusing it beats guessing what was meant.
            raise ValueError(f"replay speed must be a number above 0, not {speed}")
        if not (max_gap >= 0 and math.isfinite(max_gap)):
            raise ValueError(f"max_gap must be 0 or more seconds, not {max_gap}")
        self.paths = list(paths)
        self.name = paths[0] if len(paths) == 1 else f"{paths[0]} (+{len(paths) - 1})"
        self.speed = speed
        self.instant = instant
        self.max_gap = max_gap
        self.progress = 0.0
        self.state = "paused" if start_paused else "replaying"
        self.lines_emitted = 0
        self._cond = threading.Condition()
        self._paused = start_paused
        self._steps = 0
        self._seek: Predicate | None = None
        self._restart = False
        self._readers: list[_FileReader] = []
        self._sleep = sleep
        self._start: tuple[int, int] | None = None  # (byte offset, lines before it): skip_to

    # -- controls (any thread) ----------------------------------------------------------------
    def pause(self) -> None:
        """Pause here; a running seek is cancelled (it would otherwise keep running)."""
        with self._cond:
            self._paused = True
            self._seek = None
            self._cond.notify_all()

    def resume(self) -> None:
        with self._cond:
            self._paused = False
            self._seek = None
            self._cond.notify_all()

    def toggle_pause(self) -> bool:
        """Flip play/pause; returns True when now paused."""
        with self._cond:
            self._paused = not self._paused
            self._seek = None  # pausing cancels a running seek; playing replaces it
            self._cond.notify_all()
            return self._paused

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def log_time(self) -> str | None:
        """The timestamp (as the log prints it) of the newest line read so far."""
        stamps = [r.last_ts for r in self._readers if r.last_ts]
        return max(stamps, key=lambda t: parse_ts(t) or 0.0) if stamps else None

    @property
    def pace(self) -> str:
        """The replay's speed as the header shows it: "instant" or "x50"."""
        return "instant" if self.instant else f"x{self.speed:g}"

    def status(self) -> ReplayStatus:
        return ReplayStatus(self.state, self.progress, self.pace, self.log_time)

    def step(self, n: int = 1) -> None:
        """While paused, emit the next n lines (a running seek is cancelled)."""
        with self._cond:
            self._paused = True
            self._seek = None
            self._steps += max(1, n)
            self._cond.notify_all()

    def set_speed(self, speed: float) -> None:
        with self._cond:
            self.speed = min(MAX_SPEED, max(MIN_SPEED, speed)) if math.isfinite(speed) \
                else self.speed
            self._cond.notify_all()

    def set_instant(self, instant: bool) -> None:
        with self._cond:
            self.instant = instant
            self._cond.notify_all()

    def seek(self, predicate: Predicate) -> None:
        """Replay instantly until a line satisfies `predicate`, emit it, then pause there."""
        with self._cond:
            self._seek = predicate
            self._paused = False
            self._cond.notify_all()

    def seek_time(self, when: str) -> bool:
        """Jump to the first line at or after `when` (a timestamp as the log prints it, or just
        HH:MM[:SS] on the log's first day). Going back restarts the replay. False if unparsable.
        """
        target = self._target_seconds(when.strip())
        if target is None:
            return False
        with self._cond:
            current = max((r.last_key for r in self._readers), default=0.0)
            if target < current:
                self._restart = True

            def at_time(line: SourceLine) -> bool:
                return line.ts is not None and (parse_ts(line.ts) or 0.0) >= target

            self._seek = at_time
            self._paused = False
            self._cond.notify_all()
        return True

    def local_paths(self) -> tuple[str, ...]:
        """The saved files, in replay order (`LocalFiles`)."""
        return tuple(self.paths)

    def history(self) -> History | None:
        """What a consumer may fold in bulk before the replay starts (then `skip_to`): the
        whole file, for an instant, unpaused replay of one plain file; big files only."""
        path = self.paths[0]
        if (len(self.paths) == 1 and self.instant and not self._paused and self._seek is None
                and not path.endswith(".gz") and path != "-" and os.path.isfile(path)):
            return History(ranged_file(path), fill_log=True, always=False)
        return None

    def skip_to(self, offset: int, lines: int) -> None:
        """Start the next pass at a byte offset that sits at a line start, `lines` lines in: the
        consumer has already read what comes before. A restart begins at the top again."""
        with self._cond:
            self._start = (offset, lines)

    def restart(self) -> None:
        """Start over from the top (a pending seek is dropped; seek_time sets its own)."""
        with self._cond:
            self._restart = True
            self._seek = None
            self._cond.notify_all()

    def _target_seconds(self, when: str) -> float | None:
        if re.fullmatch(r"\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?", when):
            if when.count(":") == 1:
                when += ":00"
            if len(when.split(":")[0]) == 1:
                when = "0" + when
            day = self._first_day()
            return parse_ts(f"{day} {when}" if day else when)
        return parse_ts(when)

    def _first_day(self) -> str | None:
        for path in self.paths:
            try:
                reader = _FileReader(path, 0, True)
            except OSError:
                continue
            try:
                for p in reader.lines():
                    if p.ts:
                        return ts_day(p.ts)
                    if reader.line_no > 1000:
                        break
            except (OSError, EOFError, gzip.BadGzipFile, zlib.error):
                pass
            finally:
                reader.close()
        return None

    # -- the thread body ----------------------------------------------------------------------
    def run(self, emit: Emit, stop: threading.Event) -> None:
        while not stop.is_set():
            restart = self._run_once(emit, stop)
            if not restart:
                break
            self._restart = False
            self.lines_emitted = 0
            emit([SourceNotice(self.name, "restart", "replay restarted")])
        emit([SourceNotice(self.name, "closed", "")])

    def _open_all(self, emit: Emit) -> list[_FileReader]:
        want_ts = True
        readers = []
        for i, path in enumerate(self.paths):
            try:
                readers.append(_FileReader(path, i, want_ts))
            except OSError as exc:
                emit([SourceNotice(path, "error", f"{path}: {exc.strerror or exc}")])
        start, self._start = self._start, None
        if start is not None and len(readers) == 1 and readers[0].stream is readers[0].raw:
            offset, lines = start
            reader = readers[0]
            reader.raw.seek(offset)
            reader.offset = offset
            reader.line_no = lines
            self.lines_emitted = lines
        return readers

    def _merged(self, readers: list[_FileReader]) -> Iterator[_Pending]:
        if len(readers) == 1:
            yield from readers[0].lines()
            return
        yield from heapq.merge(*(r.lines() for r in readers))

    def _update_progress(self) -> None:
        total = sum(r.size for r in self._readers) or 1
        self.progress = min(1.0, sum(r.position for r in self._readers) / total)

    def _run_once(self, emit: Emit, stop: threading.Event) -> bool:
        """One pass over the files. Returns True when a restart was requested."""
        self._readers = self._open_all(emit)
        if not self._readers:
            self.state = "error"
            return False
        self.state = "paused" if self._paused else "replaying"
        emit([SourceNotice(self.name, self.state, "")])
        multi = len(self._readers) > 1
        names = [r.path for r in self._readers]
        batch: list[Item] = []
        prev_key: float | None = None
        clock = time.monotonic
        due = clock()
        try:
            for p in self._merged(self._readers):
                if stop.is_set():
                    return False
                line = SourceLine(names[p.index] if multi else self.name, p.line_no, p.offset,
                                  p.text, p.ts)
                # Fast path: playing instantly, no seek, nothing to wait for.
                if self.instant and not self._paused and self._seek is None and not self._restart:
                    batch.append(line)
                    if len(batch) >= INSTANT_BATCH:
                        self._flush(emit, batch)
                        batch = []
                    prev_key = p.key
                    continue
                if batch:
                    self._flush(emit, batch)
                    batch = []
                # One line may be looked at more than once: a pause, seek or restart that
                # arrives while it waits for its time sends it back here, so a line due after
                # a pause is never emitted by that pause.
                while True:
                    if self._restart:
                        return True
                    if self._seek is not None:
                        if not self._seek_hit(emit, line):
                            batch.append(line)
                            if len(batch) >= INSTANT_BATCH:
                                self._flush(emit, batch)
                                batch = []
                        break
                    if self._paused:
                        if not self._wait_while_paused(emit, stop):
                            return self._restart
                        due = clock()
                        if self._steps:
                            with self._cond:
                                self._steps -= 1
                            self._flush(emit, [line])
                            break
                        continue  # resumed, seeking or restarting: look at the line again
                    if not self.instant and prev_key is not None:
                        gap = (p.key - prev_key) / self.speed
                        if self.max_gap > 0:
                            gap = min(gap, self.max_gap)
                        due = max(due, clock() - 1.0) + max(0.0, gap)
                        wait = due - clock()
                        if wait > TIMED_BATCH_WINDOW:
                            self._sleep_interruptibly(wait, stop)
                            if stop.is_set():
                                return False
                            if self._paused or self._seek is not None or self._restart:
                                due = clock()
                                continue
                    self._flush(emit, [line])
                    break
                prev_key = p.key
            if batch:
                self._flush(emit, batch)
                batch = []
        except (OSError, EOFError, gzip.BadGzipFile, zlib.error, ValueError) as exc:
            if batch:
                self._flush(emit, batch)
            emit([SourceNotice(self.name, "error", f"read failed: {exc}")])
        finally:
            for r in self._readers:
                r.close()
        self.progress = 1.0
        with self._cond:
            if self._seek is not None and not self._restart:
                self._seek = None  # the seek ran out of file: stop there, paused
                self._paused = True
        self._set_state(emit, "at_end", f"{self.lines_emitted} lines replayed")
        # Stay alive at the end so a backward jump or restart still works. A seek asked for
        # here has nothing left to find: it is dropped and "at_end" is said again, so whoever
        # waits for the seek's outcome hears one.
        while True:
            with self._cond:
                if stop.is_set() or self._restart:
                    break
                abandoned = self._seek is not None
                if abandoned:
                    self._seek = None
                    self._paused = True
                else:
                    self._cond.wait(0.2)
            if abandoned:
                self._set_state(emit, "at_end", "nothing further found")
        return self._restart and not stop.is_set()

    def _seek_hit(self, emit: Emit, line: SourceLine) -> bool:
        """If `line` is what the running seek looks for: emit it and pause there."""
        seek = self._seek
        if seek is None or not seek(line):
            return False
        with self._cond:
            self._seek = None
            self._paused = True
        self._flush(emit, [line])
        self._set_state(emit, "paused", f"jumped to line {line.line_no}")
        return True

    def _flush(self, emit: Emit, batch: list[Item]) -> None:
        self.lines_emitted += len(batch)
        self._update_progress()
        emit(batch)

    def _set_state(self, emit: Emit, state: str, message: str = "") -> None:
        self.state = state
        emit([SourceNotice(self.name, state, message)])

    def _wait_while_paused(self, emit: Emit, stop: threading.Event) -> bool:
        """Block until resumed, stepped, seeking or restarted; False if stopped.

        "paused" is said only when the state changes: a seek hit has already said it (with the
        line it jumped to), and a listener must hear one notice per stop, not two.
        """
        if self.state != "paused":
            self._set_state(emit, "paused")
        with self._cond:
            while (self._paused and not self._steps and self._seek is None
                   and not self._restart and not stop.is_set()):
                self._cond.wait(0.2)
        if stop.is_set():
            return False
        if not self._paused:
            self._set_state(emit, "replaying")
        return True

    def _sleep_interruptibly(self, seconds: float, stop: threading.Event) -> None:
        if self._sleep is not None:
            self._sleep(seconds)
            return
        with self._cond:
            deadline = time.monotonic() + seconds
            while not stop.is_set() and not self._paused and not self._restart:
                left = deadline - time.monotonic()
                if left <= 0 or self.instant or self._seek is not None:
                    break
                self._cond.wait(min(left, 0.1))
