"""The bridge between a line source (its own thread) and the UI (the event loop).

Why this shape: the source thread parses every line (`Analyzer.feed`) and keeps only bounded
things for the UI (the newest lines in a ring, a pending notice list, and a report snapshot at a
few Hz). The UI drains it on a 15 Hz timer. No message is posted per line, no widget is touched
from the thread, and a 1,000,000-line instant replay costs the UI at most one ring's worth of
rendering per tick. Nothing here imports Textual, so it is testable on its own.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from kvtui.core.analyzer import Analyzer
from kvtui.sources.base import LineSource, SourceLine, SourceNotice
from parsers import parse_line

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


@dataclass
class Drained:
    """What the UI takes from the ingest in one tick."""

    entries: list[LogEntry] = field(default_factory=list)
    dropped: int = 0  # lines that went past while the UI was not draining (ring overflow)
    notices: list[SourceNotice] = field(default_factory=list)
    report: dict[str, Any] | None = None
    timeline: list[Any] | None = None
    calc: Any = None  # kvtui.core.capacity.Calculator for the current run, or None
    lines: int = 0
    restarted: bool = False


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


class Ingest:
    """Runs a LineSource in a daemon thread and folds its batches into an Analyzer."""

    def __init__(self, source: LineSource, *, analyzer: Analyzer | None = None,
                 ring: int = 20000, report_interval: float = REPORT_INTERVAL,
                 bulk_min_bytes: int | None = None) -> None:
        self.source = source
        self.bulk_min_bytes = bulk_min_bytes  # None: kvtui.parallel's default threshold
        self.bulk_lines = 0  # lines folded in bulk before the replay (0: none)
        self.analyzer = analyzer or Analyzer()
        self._analyzer_factory = (lambda: Analyzer(model=self.analyzer.model,
                                                   alert_options=self.analyzer.alert_options,
                                                   checkpoint=self.analyzer.checkpoint))
        self.stop = threading.Event()
        self.done = threading.Event()
        self._lock = threading.Lock()
        self._ring: deque[LogEntry] = deque(maxlen=ring)
        self._ring_added = 0
        self._notices: list[SourceNotice] = []
        self._report: dict[str, Any] | None = None
        self._timeline: list[Any] | None = None
        self._calc: Any = None
        self._report_dirty = False
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
        self.report_lock = threading.Lock()  # held while the analyzer is read or written

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self) -> None:
        self.started_at = time.perf_counter()
        self._thread = threading.Thread(target=self._run, name="kvtui-source", daemon=True)
        self._thread.start()

    def close(self, timeout: float = 2.0) -> None:
        self.stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        try:
            # A file that moved under the bulk fold: the source reads it and says so.
            with contextlib.suppress(Exception):
                self._bulk_prefix()
            self.source.run(self._emit, self.stop)
        except Exception as exc:  # the UI shows it; the app must not die with the source
            self.error = f"{type(exc).__name__}: {exc}"
            with self._lock:
                self._notices.append(SourceNotice(getattr(self.source, "name", "source"),
                                                  "error", self.error))
        finally:
            self._snapshot(force=True)
            self.finished_at = time.perf_counter()
            self.done.set()

    def _bulk_prefix(self) -> None:
        """Fold the past of a file in bulk before its lines start streaming (`BulkPlan`).

        A big file goes through the chunked fold `kvtui check` uses on every core (exact, or
        it declines); this thread then only waits on worker processes, which leaves the
        interpreter to the UI. A 1,000,000-line instant replay thus costs what the headless
        check costs, and `kvtui tail` from the end still knows the start-up facts.
        """
        offer = getattr(self.source, "bulk_plan", None)
        plan = offer() if callable(offer) else None
        if plan is None or plan.end <= 0:
            return
        from kvtui.parallel import analyse_parallel
        from kvtui.sources.readers import iter_byte_range

        name = getattr(self.source, "name", plan.path)
        with self._lock:
            self._notices.append(SourceNotice(name, "loading", "reading what is logged so far"))
        a = self.analyzer
        try:
            kw = {} if self.bulk_min_bytes is None else {"min_bytes": self.bulk_min_bytes}
            folded = analyse_parallel(plan.path, model=a.model, alert_options=a.alert_options,
                                      end=plan.end, **kw)
            if folded is None and plan.always:
                folded = self._analyzer_factory()
                for batch in iter_byte_range(plan.path, 0, plan.end):
                    if self.stop.is_set():
                        return
                    folded.feed_many(name, batch, folded.lines + 1)
        except (OSError, ValueError):
            return  # the source reads the file itself and reports the error
        if folded is None or self.stop.is_set():
            return
        folded.checkpoint = a.checkpoint
        entries = []
        if plan.fill_log:
            tail = _tail_lines(plan.path, plan.end, self._ring.maxlen or 20000)
            first = folded.lines - len(tail) + 1
            for i, text in enumerate(tail):
                ev = parse_line(text)
                entries.append(LogEntry(first + i, name, text,
                                        ev.kind if ev is not None else None))
        with self.report_lock:
            self.analyzer = folded
        self.lines = self.bulk_lines = folded.lines
        with self._lock:
            self._ring.extend(entries)
            self._ring_added += folded.lines  # the rest went past without being kept
            self._report_dirty = True
        self.source.skip_to(plan.end, folded.lines)  # type: ignore[attr-defined]
        self._snapshot(force=True)

    # -- source thread side --------------------------------------------------------------------
    def _emit(self, batch: list[Any]) -> None:
        feed = self.analyzer.feed
        entries: list[LogEntry] = []
        notices: list[SourceNotice] = []
        counts: dict[str, int] = {}
        with self.report_lock:
            for item in batch:
                if type(item) is SourceLine:
                    ev = feed(item.source, item.line_no, item.text)
                    entries.append(LogEntry(item.line_no, item.source, item.text,
                                            ev.kind if ev is not None else None))
                    counts[item.source] = counts.get(item.source, 0) + 1
                elif isinstance(item, SourceNotice):
                    if item.state == "restart":
                        self.analyzer = self._analyzer_factory()
                        entries.clear()
                        with self._lock:
                            self._ring.clear()
                            self._notices.clear()
                            self._restarted = True
                        self.lines = 0
                    notices.append(item)
                    if item.state == "at_end":
                        self.finished_at = time.perf_counter()
                    if item.state in ("rotated", "truncated", "error", "reconnecting"):
                        entries.append(LogEntry(0, item.source,
                                                f"── {item.state}: {item.message} ──",
                                                None, notice=True))
            sources = self.analyzer.state.sources
            for name, n in counts.items():
                sources[name] = sources.get(name, 0) + n
        self.lines += sum(counts.values())
        with self._lock:
            self._ring.extend(entries)
            self._ring_added += len(entries)
            self._notices.extend(notices)
            self._report_dirty = True
            if notices:
                # Published with the batch it ends, so `idle` never sees "at_end" before the
                # batch's lines are in the ring.
                self.last_state = notices[-1].state
        now = time.monotonic()
        # Keep report building under ~10% of the thread's time on big logs.
        interval = max(self.report_interval, 10 * self._report_cost)
        if notices or now - self._last_report >= interval:
            self._snapshot()
        time.sleep(0)  # hand the GIL to the event loop between batches

    def _snapshot(self, force: bool = False) -> None:
        if not force and not self._report_dirty:
            return
        t0 = time.perf_counter()
        try:
            with self.report_lock:
                report = self.analyzer.report()
                timeline = list(self.analyzer.state.current.runtime.timeline)
                calc = self._calculator()
        except Exception as exc:  # a bug in a rule must not stop ingestion
            report = {"error": f"report failed: {type(exc).__name__}: {exc}"}
            timeline = []
            calc = None
        with self._lock:
            self._report = report
            self._timeline = timeline
            self._calc = calc
            self._report_dirty = False
        self._last_report = time.monotonic()
        self._report_cost = time.perf_counter() - t0

    def _calculator(self) -> Any:
        try:
            from kvtui.core import capacity

            a = self.analyzer
            return capacity.calculator_for_run(a.state.current, a.model, a.checkpoint)
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
        out.lines = self.lines
        return out

    @property
    def idle(self) -> bool:
        """True when the source has ended (or sits at its end) and the UI has drained it all."""
        with self._lock:
            ended = self.done.is_set() or self.last_state in ("at_end", "closed")
            return ended and not self._ring and self._report is None and not self._notices \
                and not self._report_dirty
