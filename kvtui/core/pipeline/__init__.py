"""The only way from log lines to a report: one `Session` per stream, fed by whoever has lines.

Headless commands (`check`, `whatif`, `events`, `ssh --check`) call `analyse(inputs)` once; live
views (the TUI's replay, tail and ssh) hold a `Session` and feed it as lines arrive. How lines are
folded is the pipeline's private business, chosen from what the input offers
(`kvtui.core.pipeline.inputs`): a big plain file is folded on every core (`chunks`), a big
stream of line blocks too, as they arrive (`stream`), a block of lines column-wise, a single line
through the line route (`fold`). Every strategy gives the same
state, which tests hold equal, so the same file gives the same report whichever way it came.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from kvtui.core.engine import Engine, all_engines, load
from kvtui.core.metrics.exposition import Scrape
from kvtui.core.metrics.series import MetricsSeries
from kvtui.core.pipeline.chunks import MIN_PARALLEL_BYTES, block_bytes, fold_ranges
from kvtui.core.pipeline.events import events_jsonl
from kvtui.core.pipeline.fold import Fold
from kvtui.core.pipeline.inputs import Input, RangedFile
from kvtui.core.pipeline.startup import fold_startups, fold_top, start_offsets
from kvtui.core.pipeline.stream import PIECE_BYTES, StreamFold
from kvtui.core.report_types import Report
from kvtui.core.state import State
from parsers import Event

if TYPE_CHECKING:
    from kvtui.core.checkpoint import CheckpointFacts

__all__ = ["MIN_PARALLEL_BYTES", "Input", "Options", "Progress", "RangedFile", "Session",
           "StreamFold", "analyse", "events"]

PREVIEW_BYTES = 8 << 20


@dataclass(frozen=True)
class Options:
    """What shapes an analysis besides the lines themselves."""

    model: Any = None  # a ModelSpec, a preset name, a config path; None: from the log
    alert_options: Any = None  # kvtui.core.alerts.AlertOptions; None: the defaults
    checkpoint: CheckpointFacts | None = None  # facts read from the checkpoint itself
    engine: str | None = None  # an engine name to use instead of detecting it
    # The release to assume per engine ({"sglang": "0.5.12"}), instead of the log's dating.
    releases: tuple[tuple[str, str], ...] = ()
    workers: int | None = None  # cores for a big file (None: all, at most 8)
    min_parallel_bytes: int = MIN_PARALLEL_BYTES
    piece_bytes: int = PIECE_BYTES  # lines a worker folds at once from a stream
    # Files from this size get a start-up preview before the full fold (when one is asked for).
    preview_bytes: int = PREVIEW_BYTES
    columns: bool = True  # the column route (tests turn it off to compare)

    def engines(self) -> Sequence[Engine]:
        return (load(self.engine),) if self.engine else all_engines()

    def release(self, engine: Engine | None) -> str | None:
        """The release pinned for `engine` (None: date it from the log)."""
        return dict(self.releases).get(engine.name) if engine is not None else None


@dataclass(frozen=True, slots=True)
class Progress:
    """How far a fold of a file is: bytes folded of the total, seconds since it began."""

    done: int
    total: int
    elapsed: float

    @property
    def fraction(self) -> float:
        return min(1.0, self.done / self.total) if self.total else 1.0

    @property
    def eta(self) -> float | None:
        """Seconds left at the rate so far (None until there is a rate)."""
        if not self.done or not self.elapsed:
            return None
        return max(0.0, (self.total - self.done) * self.elapsed / self.done)


@dataclass(slots=True)
class Session:
    """The analysis of one stream: its fold, and the report built from it on demand.

    `partial`: a start-up preview (only the start-up regions were folded).
    """

    options: Options = field(default_factory=Options)
    fold: Fold = field(init=False)
    partial: bool = False
    # Each earlier run's what-if and alerts, kept while the run is unchanged
    # (`kvtui.core.runs.analyses`): a live view asks for the report many times a second.
    memo: dict[int, Any] = field(init=False, default_factory=dict, repr=False)
    # The server's /metrics scrapes fed beside the lines (`feed_scrape`): the TUI's metrics
    # pane reads `metrics.snapshots`, the report their facts.
    metrics: MetricsSeries = field(init=False, default_factory=MetricsSeries, repr=False)

    def __post_init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Start over (a replay restarted): nothing of what was folded is kept."""
        self.fold = Fold(self.options.engines(), columns=self.options.columns)
        self.memo = {}
        self.metrics = MetricsSeries()

    def configure(self, **changes: Any) -> None:
        """Change an option (a model chosen in the TUI, a checkpoint read later)."""
        self.options = replace(self.options, **changes)
        self.memo = {}

    # -- feeding ---------------------------------------------------------------------------
    @property
    def state(self) -> State:
        return self.fold.state

    @property
    def lines(self) -> int:
        return self.fold.lines

    @property
    def engine(self) -> Engine | None:
        return self.fold.engine

    def feed_line(self, source: str, line_no: int, text: str) -> Event | None:
        return self.fold.feed_line(source, line_no, text)

    def feed_lines(self, source: str, lines: Iterable[str], first_line_no: int = 1) -> int:
        return self.fold.feed_lines(source, lines, first_line_no)

    def feed_blocks(self, source: str, blocks: Iterable[list[str]],
                    first_line_no: int = 1) -> int:
        """`feed_lines` over blocks of lines (what the readers yield)."""
        n = first_line_no
        for block in blocks:
            n = self.fold.feed_lines(source, block, n)
        return n

    def feed_scrape(self, scrape: Scrape, source: str | None = None) -> None:
        """A parsed /metrics scrape (`kvtui.core.metrics.exposition.parse`, its `at` the time
        it was taken): the typed non-line event of the pipeline. Kept in `metrics` (in time
        order, bounded) and said by the report; the log's fold is not touched."""
        self.metrics.feed(scrape, source)

    def scrape_failed(self, state: str, detail: str, at: float = 0.0,
                      source: str | None = None) -> None:
        """A scrape that did not come (`kvtui.sources.metrics` states): the report says so,
        `stale` when an earlier one did."""
        self.metrics.fail(state, detail, at, source)

    def preview_lines(self, source: str, texts: Sequence[str], first_line_no: int = 1) -> Session:
        """A start-up region read ahead of the stream (an SSH host's prelude block) folded
        alone: a partial session with this session's options, so its verdict uses the model,
        checkpoint and releases the user gave, as the full fold will. The one way every
        consumer (`ssh --check`, the TUI's ingest) makes such a preview."""
        early = Session(self.options, partial=True)
        early.feed_lines(source, texts, first_line_no)
        return early

    def end(self) -> None:
        """The stream ended: a last line held to see whether the next one was its rest (a
        hand-wrapped paste, `Fold.pending`) is folded alone. Until then a live view's report
        leaves it out."""
        self.fold.flush()

    def parse(self, text: str) -> Event | None:
        """The event of a line as this stream's engine reads it (nothing is folded)."""
        engine = self.fold.engine
        if engine is not None:
            return engine.parse_line(text)
        for candidate in self.fold.engines:
            ev = candidate.parse_line(text)
            if ev is not None:
                return ev
        return None

    def fold_file(self, ranged: RangedFile, source: str | None = None, *,
                  preview: Callable[[Session], None] | None = None,
                  progress: Callable[[Progress], None] | None = None) -> None:
        """Fold the first `ranged.size` bytes of a plain file: on every core when it is big
        (exact, or it declines), otherwise in blocks.

        `preview(session)`: on a big file, first a session of the start-up regions alone
        (`partial`), so the verdict is known before the runtime lines are folded.
        `progress(p)`: called as the fold proceeds.
        """
        name = source or ranged.path
        started = time.monotonic()

        def tell(done: int) -> None:
            if progress is not None:
                progress(Progress(done, ranged.size, time.monotonic() - started))

        if preview is not None and self.fold.lines == 0 and \
                ranged.size >= self.options.preview_bytes:
            self._preview(ranged, name, preview)
        if self.fold.lines == 0 and self.is_big(ranged.size):
            workers = self._workers()
            cuts = ranged.cuts(ranged.path, workers, ranged.size)
            if fold_ranges(ranged, name, self.fold, cuts, workers, tell):
                self.fold.flush()
                tell(ranged.size)
                return
            self.reset()
        n = self.fold.lines + 1
        done = 0
        for block in ranged.read(ranged.path, 0, ranged.size):
            n = self.fold.feed_lines(name, block, n)
            if progress is not None:
                done += block_bytes(block)
                tell(done)
        self.fold.flush()

    def _preview(self, ranged: RangedFile, name: str, preview: Callable[[Session], None]) -> None:
        """The verdict before the runtime lines: the top start-up at once, then (when the file
        holds later server starts) every start's start-up, found by a byte scan for the markers
        of the engine the top names."""
        top = Session(self.options)
        fold_top(ranged, name, top.fold)
        top.partial = True
        preview(top)
        engine = top.engine
        starts = start_offsets(ranged, [engine] if engine is not None else top.fold.engines)
        if len(starts) > 1:
            early = Session(self.options)
            fold_startups(ranged, name, early.fold, starts)
            early.partial = True
            preview(early)

    def stream(self, size: int | None = None) -> StreamFold:
        """A feed for a stream of line blocks in order (a remote log), `size` bytes of lines
        to come (None: unknown). A big one is folded on every core as it arrives: from its
        first block when `size` says it is big, else once it has proved big by what came
        (`min_parallel_bytes`); a small one in place. Call `close()` at its end (`abort()` when
        the read failed); the session then holds exactly what `feed_lines` of every block in
        order would have made."""
        workers = self._workers()
        if size is not None and not self.is_big(size):
            workers = 1
        return StreamFold(self.fold, workers, piece_bytes=self.options.piece_bytes,
                          start_after=0 if size is not None else self.options.min_parallel_bytes)

    def is_big(self, size: int) -> bool:
        """Is a file of `size` bytes worth folding on every core?"""
        return self._workers() > 1 and size >= self.options.min_parallel_bytes

    def _workers(self) -> int:
        return self.options.workers or min(os.cpu_count() or 1, 8)

    # -- what it says ----------------------------------------------------------------------
    def report(self) -> Report:
        """The analysis so far (`partial`: start-up lines only, the runtime not folded yet)."""
        from kvtui.core.report import build_report

        o = self.options
        report = build_report(self.fold.state.settled(), engine=self.fold.engine, model=o.model,
                              alert_options=o.alert_options, checkpoint=o.checkpoint,
                              release=o.release(self.fold.engine), partial=self.partial,
                              memo=self.memo)
        return self._with_metrics(report)

    def _with_metrics(self, report: Report) -> Report:
        """The report with what the scrapes say (unchanged when none were fed): their facts,
        and the alerts that need both the log and the scrapes among the report's alerts, so the
        gate, the export and the TUI's Alerts pane see them as any other rule's."""
        facts = self.metrics.facts()
        if facts is None:
            return report
        from kvtui.core import severity
        from kvtui.core.metrics.cross import cross_alerts

        both = cross_alerts(report, self.metrics.snapshots)
        alerts = tuple(sorted((*report.alerts, *both), key=lambda a: severity.rank(a.severity)))
        return replace(report, metrics=facts, alerts=alerts)

    @property
    def run_count(self) -> int:
        """How many server starts the stream holds so far (`State.settled`)."""
        return len(self.fold.state.settled().runs)

    def run_report(self, number: int) -> Report:
        """The report of run `number` (from 1) as it stood when it was the last: its facts,
        alerts and what-if, built by the same code as the last run's (`State.upto`)."""
        from kvtui.core.report import build_report

        state = self.fold.state.settled()
        if not 1 <= number <= len(state.runs):
            raise ValueError(f"run {number} does not exist: the log holds "
                             f"{len(state.runs)} server start(s)")
        o = self.options
        return build_report(state.upto(number), engine=self.fold.engine, model=o.model,
                            alert_options=o.alert_options, checkpoint=o.checkpoint,
                            release=o.release(self.fold.engine), partial=self.partial,
                            memo=self.memo)

    def restart_notice(self) -> None:
        """A log client saw the server start again: what follows is a new run
        (`State.restart_notice`)."""
        self.fold.state.restart_notice()

    def alert_watch(self) -> Callable[[Event], bool]:
        """A predicate: may an event that comes next change the alerts? (a replay's "next
        alert" pauses on such lines)."""
        from kvtui.core.alerts import alert_watch

        return alert_watch(self.fold.state.settled().current, self.options.alert_options)

    def calculator(self) -> Any:
        """The interactive what-if for the current run, or None."""
        engine = self.fold.engine or self.fold.engines[0]
        o = self.options
        return engine.calculator(self.fold.state.settled().current, o.model, o.checkpoint,
                                 release=o.release(engine))


def analyse(inputs: Sequence[Input], options: Options | None = None, *,
            preview: Callable[[Session], None] | None = None,
            progress: Callable[[str, Progress], None] | None = None) -> list[Session]:
    """Each input analysed to its end: one session per stream, in the order given.

    `preview` and `progress` as in `Session.fold_file` (progress also names the input)."""
    opts = options or Options()
    out = []
    for inp in inputs:
        session = Session(opts)
        session.state.sources.setdefault(inp.name, 0)  # an empty input is still reported
        if inp.ranged is not None:
            tell = None
            if progress is not None:
                def tell(p: Progress, name: str = inp.name) -> None:
                    progress(name, p)
            session.fold_file(inp.ranged, inp.name, preview=preview, progress=tell)
        else:
            session.feed_blocks(inp.name, inp.blocks())
            session.end()
        out.append(session)
    return out


def events(inp: Input, options: Options | None = None) -> Iterator[str]:
    """Every recognised line of one stream as JSON Lines text (in blocks, in line order), each
    line read by the stream's engine (`kvtui events`); nothing is folded."""
    opts = options or Options()
    names = tuple(e.name for e in opts.engines())
    workers = opts.workers or min(os.cpu_count() or 1, 8)
    return events_jsonl(inp, names, workers, opts.min_parallel_bytes)
