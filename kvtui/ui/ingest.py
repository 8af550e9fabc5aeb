"""The bridge between a line source (its own thread) and the UI (the event loop).

Why this shape: the source thread folds every line into a pipeline `Session` and keeps only
bounded things for the UI (the newest lines in a ring, a pending notice list, and a report
snapshot at a few Hz). The UI drains it on a 15 Hz timer. No message is posted per line, no
widget is touched from the thread, and a 1,000,000-line instant replay costs the UI at most one
ring's worth of rendering per tick. Nothing here imports Textual, so it is testable on its own.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kvtui.core.pipeline import Progress, Session, StreamFold
from kvtui.sources.base import INLINE, LineSource, SourceLine, SourceNotice
from kvtui.sources.ssh.blocks import LineBlock, as_items, block_source
from kvtui.ui import report_view as rv

if TYPE_CHECKING:
    from kvtui.sources.record import RecordedScrape

# Notices that do not end the initial load of a block source (what follows is still history).
LOADING_STATES = frozenset({"connecting", "loading", "info", "checkpoint"})

REPORT_INTERVAL = 0.25  # seconds between report snapshots while lines keep coming


@dataclass(slots=True)
class LogEntry:
    """One line as the log pane keeps it: full text (bounded by the source), kind if recognized.

    `notice` marks inline markers ("rotated", "truncated", errors) that are not log lines.
    """

    line_no: int
    source: str
    text: str
    kind: str | None = None
    notice: bool = False


def restart_marker(source: str, run: int, line: int) -> LogEntry:
    """The log pane's inline marker before the line that began server start `run`."""
    return LogEntry(0, source, f"── server restarted: run {run}, line {line:,} ──", None,
                    notice=True)


@dataclass
class Drained:
    """What the UI takes from the ingest in one tick."""

    entries: list[LogEntry] = field(default_factory=list)
    dropped: int = 0  # lines that went past while the UI was not draining (ring overflow)
    notices: list[SourceNotice] = field(default_factory=list)
    report: rv.Shown = None
    timeline: list[Any] | None = None
    calc: Any = None  # the engine's calculator for the current run (Engine.calculator), or None
    lines: int = 0
    restarted: bool = False
    load: Any = None  # kvtui.core.pipeline.Progress of the bulk fold while it runs, else None
    metrics: bool = False  # a scrape (or a failed one) came since the last tick: the metrics
    # pane and the Timeline read `session.metrics` again


def _tail_lines(path: str, size: int, count: int) -> list[str]:
    """The last `count` complete lines of a file, read from its end."""
    from kvtui.sources.lines import decode_line

    want = count + 1
    block = max(1 << 16, count * 256)
    with open(path, "rb") as f:
        while True:
            start = max(0, size - block)
            f.seek(start)
            data = f.read(size - start)
            raws = data.split(b"\n")
            if raws and raws[-1] == b"":
                raws.pop()
            if start == 0 or len(raws) > want:
                break
            block *= 4
    if start > 0:
        raws = raws[1:]  # the first piece may be a partial line
    return [decode_line(r) for r in raws[-count:]]


class _Closed(Exception):
    """`close()` was called while a bulk fold ran: without it, the fold (and its workers) went
    on for seconds after the app had gone, in the process that hosted it."""


class Ingest:
    """Runs a LineSource in a daemon thread and folds its batches into a pipeline Session."""

    def __init__(self, source: LineSource, *, session: Session | None = None,
                 ring: int = 20000, report_interval: float = REPORT_INTERVAL,
                 paced: Sequence[RecordedScrape] | None = None) -> None:
        self.source = source
        # A recording's scrapes, each fed once the replayed log has passed the line count it
        # was taken at (`kvtui.sources.record.paced_scrapes`); `_paced_next`: the next one.
        self._paced = tuple(paced or ())
        self._paced_next = 0
        # Seconds from the recorded scrapes' clock to the log's (`KvApp.metrics_offset`),
        # learned from the first paced scrape fed on a timestamped line: it was taken just
        # after that line was logged (its gap to the line is the error, under the lines'
        # spacing; a skew between the two machines' clocks or zones is taken out). None: not
        # learned (no paced scrape yet, or none on a dated line).
        self.metrics_offset: float | None = None
        self.bulk_lines = 0  # lines folded in bulk before the source streamed (0: none)
        self.load: Progress | None = None  # how far the bulk fold is, while it runs
        self.session = session or Session()
        self.stop = threading.Event()
        self.done = threading.Event()
        self._lock = threading.Lock()
        self._ring: deque[LogEntry] = deque(maxlen=ring)
        self._ring_added = 0
        self._notices: list[SourceNotice] = []
        self._report: rv.Shown = None
        self._timeline: list[Any] | None = None
        self._calc: Any = None
        self._report_dirty = False
        self._metrics_fed = 0  # `session.metrics.fed` at the last snapshot
        self._metrics_moved = False  # ... and it moved since the UI last drained
        self._restarted = False
        self._last_report = 0.0
        self._report_cost = 0.0
        self.report_interval = report_interval
        self.lines = 0
        self.last_state: str | None = None
        self.error: str | None = None
        self.finished_at: float | None = None
        self.started_at: float | None = None
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()
        self.report_lock = threading.Lock()  # held while the session is read or written
        # A block source (the SSH follower) while it delivers what is logged so far: its
        # blocks go to the pipeline's stream fold, the last `ring` lines are kept unparsed.
        self._loading = True
        self._load: StreamFold | None = None
        self._load_started = 0.0
        self._tail: deque[LineBlock] = deque()
        self._tail_count = 0
        # The read-ahead start-up of the running server (a `prelude` block), folded on its
        # own: the panes show its report until the load has folded past its last line.
        self._early: Session | None = None
        self._early_at = -1  # its byte offset in the file
        self._load_at = -1  # the byte offset of the load's first line (-1: not begun)
        self._early_end: int | None = 0  # its last line (None: shown until the load ends)

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self) -> None:
        self.started_at = time.perf_counter()
        self._thread = threading.Thread(target=self._run, name="kvtui-source", daemon=True)
        self._thread.start()
        threading.Thread(target=self._report_loop, name="kvtui-report", daemon=True).start()

    def _report_loop(self) -> None:
        """Rebuild the snapshot a few times a second while anything changed, on its own
        thread: a burst of lines followed by silence (an idle server after start-up) must still
        show its verdict, which a rebuild driven by arriving lines would leave stale."""
        while not self.done.is_set():
            # Keep report building under ~10% of the time on big logs.
            self._wake.wait(max(self.report_interval, 10 * self._report_cost))
            self._wake.clear()
            if not self.done.is_set():
                self._snapshot()

    def close(self, timeout: float = 2.0) -> None:
        self.stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        try:
            # A file that moved under the bulk fold: the source reads it and says so.
            with contextlib.suppress(Exception):
                self._bulk_prefix()
            blocks = block_source(self.source)
            if blocks is None:
                self.source.run(self._emit, self.stop)
            else:
                try:
                    blocks.run_blocks(self._blocks, self.stop)
                    if not self.stop.is_set():
                        self._end_load()
                finally:
                    if self._load is not None:
                        self._load.abort()
        except Exception as exc:  # the UI shows it; the app must not die with the source
            self.error = f"{type(exc).__name__}: {exc}"
            with self._lock:
                self._notices.append(SourceNotice(self.source.name,
                                                  "error", self.error))
        finally:
            self._snapshot(force=True)
            self.finished_at = time.perf_counter()
            self.done.set()

    def _bulk_prefix(self) -> None:
        """Fold what a file already holds in bulk before its lines start streaming (the
        source's `history`). A big file is folded on every core (the headless check's path);
        this thread then only waits on worker processes, which leaves the interpreter to the
        UI. So a 1,000,000-line instant replay costs what `kvtui check` costs, and `kvtui tail`
        from the end still knows the start-up facts."""
        history = self.source.history()
        if history is None or history.file.size <= 0:
            return
        s = self.session
        if not history.always and not s.is_big(history.file.size):
            return  # small: the source streams it, line by line
        name = self.source.name
        with self._lock:
            self._notices.append(SourceNotice(name, "loading", "reading what is logged so far"))
        def preview(early: Session) -> None:
            """The start-up verdict, on screen before the runtime lines are folded."""
            report = early.report()
            calc = early.calculator()
            with self._lock:
                self._report, self._timeline, self._calc = report, [], calc

        def progress(p: Progress) -> None:
            self.load = p
            if self.stop.is_set():
                raise _Closed  # the app is closing: end the fold and its workers now

        try:
            with self.report_lock:
                s.fold_file(history.file, name, preview=preview, progress=progress)
        except _Closed:
            with self.report_lock:
                s.reset()
            return
        except (OSError, ValueError):
            with self.report_lock:
                s.reset()
            return  # the source reads the file itself and reports the error
        if self.stop.is_set():
            return
        entries = []
        if history.fill_log:
            tail = _tail_lines(history.file.path, history.file.size, self._ring.maxlen or 20000)
            first = s.lines - len(tail) + 1
            for i, text in enumerate(tail):
                ev = s.parse(text)
                entries.append(LogEntry(first + i, name, text,
                                        ev.kind if ev is not None else None))
        self.lines = self.bulk_lines = s.lines
        self.load = None
        with self.report_lock:
            self._feed_paced(s.lines)
        with self._lock:
            self._ring.extend(entries)
            self._ring_added += s.lines  # the rest went past without being kept
            self._report_dirty = True
        self.source.skip_to(history.file.size, s.lines)
        self._snapshot(force=True)

    # -- source thread side --------------------------------------------------------------------
    def _blocks(self, batch: list[Any]) -> None:
        """A block source's batch (`run_blocks`: the SSH follower, whose history streams too).
        Until its first notice that the history is over (live, at end, a rotation, a loss),
        blocks are folded by the pipeline's stream fold, on every core when the log is big
        (the `kvtui ssh --check` path), and only the lines the log pane can hold are kept;
        after it, lines go one by one as `_emit` takes them."""
        rest: list[Any] = []
        for item in batch:
            if not self._loading:
                rest.append(item)
            elif isinstance(item, LineBlock):
                if item.prelude:  # the read-ahead: its lines come again in their place
                    self._read_ahead(item)
                else:
                    self._load_block(item)
            elif item.state in LOADING_STATES:
                self._emit([item])
            else:
                self._end_load()
                rest.append(item)
        if rest:
            self._emit(as_items(rest))

    def _read_ahead(self, block: LineBlock) -> None:
        """The start-up region of the last server start, sent by the host before the lines
        before it: folded alone (a partial session, with the live session's options), its
        report is on screen at once. The stream's own report takes over once the load has
        folded past the region's last line (it then knows all the region says, and what came
        before); the full report at the load's end is the sequential fold's as ever."""
        early = self.session.preview_lines(block.source, block.texts, block.first_line_no)
        with self.report_lock:
            self._early, self._early_at = early, block.offset
            self._early_end = block.first_line_no + len(block.texts) - 1
            self._early_before_load()
        self._snapshot(force=True)

    def _early_before_load(self) -> None:
        """`--lines N` left the read-ahead start-up out: the stream, numbered from its own first
        line, never folds it, so its verdict stands for the load only."""
        if self._early is not None and 0 <= self._early_at < self._load_at:
            self._early_end = None

    def _shown_session(self) -> Session:
        """The session the panes show: the read-ahead one while the fold is behind its end
        (also across a reconnect that ended the load early). The caller holds report_lock."""
        early, end = self._early, self._early_end
        if early is None:
            return self.session
        if (not self._loading) if end is None else self.session.lines >= end:
            self._early = None
            return self.session
        early.options = self.session.options  # a model chosen, a checkpoint read meanwhile
        return early

    def _expected_bytes(self) -> int | None:
        """The history's size a block source announced (None: unknown, or no block source)."""
        blocks = block_source(self.source)
        return blocks.expected_bytes if blocks is not None else None

    def _load_block(self, block: LineBlock) -> None:
        if self._load is None:
            self._load = self.session.stream(self._expected_bytes())
            self._load_started = time.monotonic()
            self._load_at = block.offset
            self._early_before_load()
        with self.report_lock:
            block.fold_into(self._load)
        # The blocks that hold the last `ring` lines, kept as they came (their lines are
        # decoded for the log pane once, at the load's end).
        tail = self._tail
        tail.append(block)
        self._tail_count += block.count
        while tail and self._tail_count - tail[0].count >= (self._ring.maxlen or 0):
            self._tail_count -= tail.popleft().count
        self.lines = block.first_line_no + block.count - 1
        total = self._expected_bytes()
        if total:
            self.load = Progress(self._load.fed, total, time.monotonic() - self._load_started)
        with self._lock:
            self._report_dirty = True

    def _end_load(self) -> None:
        """The history is in: every piece joined, the log pane gets its last lines."""
        self._loading = False
        load, self._load = self._load, None
        if load is None:
            return
        s = self.session
        with self.report_lock:
            load.close()
            kept = [(n, block.source, text) for block in self._tail
                    for n, text in enumerate(block.texts, block.first_line_no)]
            del kept[:-(self._ring.maxlen or 1)]
            entries = []
            starts = {run.first_line: number for number, run in enumerate(s.state.runs, 1)
                      if number > 1 and run.first_line is not None}
            for n, source, text in kept:
                if n in starts:
                    entries.append(restart_marker(source, starts[n], n))
                ev = s.parse(text)
                entries.append(LogEntry(n, source, text, ev.kind if ev is not None else None))
        self._tail.clear()
        self._tail_count = 0
        self.load = None
        with self._lock:
            self._ring.extend(entries)
            self._ring_added += self.lines  # the rest went past without being kept
            self._report_dirty = True
        self._wake.set()

    def paced_waiting(self) -> int:
        """How many of a recording's scrapes are still to be fed (`paced`)."""
        return len(self._paced) - self._paced_next

    def _paced_due(self) -> tuple[int] | tuple[()]:
        """(the line count the next paced scrape waits for,), or () when none is left."""
        if self._paced_next < len(self._paced):
            lines = self._paced[self._paced_next].lines
            return (lines if lines is not None else 0,)
        return ()

    def _feed_paced(self, upto: int, text: str | None = None) -> tuple[int] | tuple[()]:
        """Every paced scrape taken by line `upto` (whose text is `text`, when the line was
        read one by one) into the session (report_lock held); what `_paced_due` then says."""
        from kvtui.sources.metrics import deliver
        from parsers.prefix import line_timestamp, ts_seconds

        while self._paced_next < len(self._paced):
            kept = self._paced[self._paced_next]
            if (kept.lines or 0) > upto:
                break
            deliver(kept.result, self.session, kept.source)
            self._paced_next += 1
            if self.metrics_offset is None and text is not None and kept.lines == upto:
                ts = line_timestamp(text)
                seconds = ts_seconds(ts) if ts is not None else None
                if seconds is not None and seconds > 86400:  # a dated stamp, not time of day
                    self.metrics_offset = seconds - kept.result.at
        return self._paced_due()

    def _emit(self, batch: list[Any]) -> None:
        feed = self.session.feed_line
        entries: list[LogEntry] = []
        notices: list[SourceNotice] = []
        added = 0
        paced = self._paced_due()
        with self.report_lock:
            state = self.session.state
            runs = len(state.runs)
            for item in batch:
                if type(item) is SourceLine:
                    ev = feed(item.source, item.line_no, item.text)
                    added += 1
                    if paced and item.line_no >= paced[0]:
                        paced = self._feed_paced(item.line_no, item.text)
                    if len(state.runs) > runs:
                        runs = len(state.runs)
                        entries.append(restart_marker(item.source, runs, item.line_no))
                    entries.append(LogEntry(item.line_no, item.source, item.text,
                                            ev.kind if ev is not None else None))
                elif isinstance(item, SourceNotice):
                    if item.state == "restarted":
                        # a log client saw the server start again: a new run, dump or not
                        self.session.restart_notice()
                    if item.state in ("restart", "truncated"):
                        self._early = None  # what it read ahead is no longer the log
                    if item.state == "restart":
                        self.session.reset()
                        self._paced_next = 0
                        paced = self._paced_due()
                        state = self.session.state
                        runs = len(state.runs)
                        entries.clear()
                        with self._lock:
                            self._ring.clear()
                            self._notices.clear()
                            self._restarted = True
                        self.lines = added = 0
                    if item.moved_to:
                        self._moved(item.source, item.moved_to, entries)
                    notices.append(item)
                    if item.state in ("at_end", "live"):
                        # the input ended, or the history is in: a line held in case the next
                        # one was the rest of it (a hand-wrapped paste, `Fold.pending`) is
                        # folded alone; a live server writes no such pairs
                        self.session.end()
                    if item.state == "at_end":
                        self.finished_at = time.perf_counter()
                        if item.source:  # an empty input is still reported, as `check` does
                            self.session.state.sources.setdefault(item.source, 0)
                    if item.state in INLINE:
                        entries.append(LogEntry(0, item.source,
                                                f"── {item.state}: {item.message} ──",
                                                None, notice=True))
        self.lines += added
        with self._lock:
            self._ring.extend(entries)
            self._ring_added += len(entries)
            self._notices.extend(notices)
            self._report_dirty = True
            if notices:
                # Published with the batch it ends, so `idle` never sees "at_end" before the
                # batch's lines are in the ring.
                self.last_state = notices[-1].state
        if notices:
            self._wake.set()  # a state change: a fresh snapshot now, not at the next beat
        time.sleep(0)  # hand the GIL to the event loop between batches

    def _moved(self, old: str, new: str, entries: list[LogEntry]) -> None:
        """A rotation moved the lines read as `old` into the file `new`: the evidence and the
        kept lines say so (the UI relabels what it already took, `KvApp._on_notice`)."""
        self.session.state.rename_source(old, new)  # the caller holds report_lock
        with self._lock:
            for e in (*self._ring, *entries):
                if e.source == old and not e.notice:
                    e.source = new

    def _snapshot(self, force: bool = False) -> None:
        fed = self.session.metrics.fed  # a scrape fed by a poller's thread changes the report
        if fed != self._metrics_fed:
            self._metrics_fed, force = fed, True
            with self._lock:
                self._metrics_moved = True
        if not force and not self._report_dirty:
            return
        t0 = time.perf_counter()
        report: rv.Shown
        try:
            with self.report_lock:
                shown = self._shown_session()
                report = shown.report()
                timeline = list(shown.state.current.runtime.timeline)
                calc = self._calculator(shown)
        except Exception as exc:  # a bug in a rule must not stop ingestion
            report = rv.Failed(f"report failed: {type(exc).__name__}: {exc}")
            timeline = []
            calc = None
        with self._lock:
            self._report = report
            self._timeline = timeline
            self._calc = calc
            self._report_dirty = False
        self._last_report = time.monotonic()
        self._report_cost = time.perf_counter() - t0

    @staticmethod
    def _calculator(session: Session) -> Any:
        try:
            return session.calculator()
        except Exception:
            return None

    def refresh_report(self) -> None:
        """Rebuild the snapshot now (e.g. when paused, or after a what-if option changed)."""
        self._report_dirty = True
        self._snapshot()

    # -- UI side --------------------------------------------------------------------------------
    def drain(self) -> Drained:
        out = Drained()
        with self._lock:
            if self._ring:
                out.entries = list(self._ring)
                out.dropped = max(0, self._ring_added - len(self._ring))
                self._ring.clear()
                self._ring_added = 0
            if self._notices:
                out.notices, self._notices = self._notices, []
            if self._report is not None:
                out.report, self._report = self._report, None
                out.timeline, self._timeline = self._timeline, None
                out.calc, self._calc = self._calc, None
            out.restarted, self._restarted = self._restarted, False
            out.metrics, self._metrics_moved = self._metrics_moved, False
        out.lines = self.lines
        out.load = self.load
        return out

    @property
    def idle(self) -> bool:
        """True when the source has ended (or sits at its end) and the UI has drained it all."""
        with self._lock:
            ended = self.done.is_set() or self.last_state in ("at_end", "closed")
            return ended and not self._ring and self._report is None and not self._notices \
                and not self._report_dirty
