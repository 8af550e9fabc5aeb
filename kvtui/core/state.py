"""Facts folded from parser events: per rank, per pool, per server start ("run").

Why a fold and not a list of events: a deploy session can log millions of decode lines, and the
questions kvtui answers (what KV dtype is in effect, are scales missing, how big is the pool, how
hard is it pressed) need only bounded aggregates plus the *first* evidence line of each fact.
Memory therefore stays flat however long the log is.

Runs: each `server_args` dump (or a second weight load on a rank that already finished start-up,
or a weight load or pool line stamped before the same rank's own in the run: two pasted launches,
the later one above, `Run.stamped_before_rank`) begins a new run. An engine may print its start
in several parts (vLLM: the CLI's non-default args, then the engine's resolved config, from each
of several DP engines): a part not yet seen completes the current run's dump. The latest run is
current; earlier ones are kept for the report.
A pasted log may put a start below its own start-up lines: a start stamped no later than the
lines of a run with no start of its own joins that run, and so does (for the report,
`State.settled`) a start that carries nothing but its dump.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

from kvtui.core.evidence import evidence_in
from kvtui.core.run_handlers import HANDLERS, _dump_fields
from kvtui.core.run_model import Pool, Run, _rank_sort_key, latest_ts, tag_shape
from parsers import BATCH_KINDS, KIND_TRAITS, Event

# The model (`run_model`) and the handlers (`run_handlers`) moved out of this module; these names
# stay importable from here for the modules that import them from the state.
__all__ = ["HANDLERS", "Hinter", "Pool", "Run", "State", "_rank_sort_key", "latest_ts"]

# Format hints of an event (the engine's `hints`), recorded for the first event of each kind.
Hinter = Callable[[Event, str], Iterable[str]]


class State:
    """Folds events into runs. `apply` is the mutator (the column route of the pipeline joins
    whole stretches of runtime rows onto `current.runtime` instead); it never raises."""

    def __init__(self) -> None:
        self.runs: list[Run] = [Run(index=0)]
        self.sources: dict[str, int] = {}  # source -> lines seen
        self.events: int = 0
        self.kinds: dict[str, int] = {}
        self.hinter: Hinter | None = None  # set by the fold once the engine is known (`bind`)
        # Does a start-up line in another rank-tag shape begin another server start (`bind`:
        # the engine's `tag_shape_starts`)?
        self.shape_starts = False
        # A log client said the server started again (a container restart, `restart_notice`):
        # the next line that is folded opens a new run, dump or not.
        self.restart_pending = False

    def bind(self, engine: Any) -> None:
        """The engine's rules this fold follows, once a line named the engine."""
        self.hinter = engine.hints
        self.shape_starts = bool(engine.tag_shape_starts)

    @property
    def current(self) -> Run:
        return self.runs[-1]

    def restart_notice(self) -> None:
        """A log client saw the server start again (docker's or kubectl's restart count, a
        journald unit restarted): what follows is a new run even if its start prints no
        argument dump (a client resumed with `--since` may miss it)."""
        self.restart_pending = True

    def upto(self, count: int) -> State:
        """The state as it stood when run `count` (1-based) was the last: a shallow view whose
        `current` is that run, so the report, the alerts and the what-if of an earlier run are
        built by the same code as the last one's. Only `runs` differs; nothing is copied."""
        view = copy.copy(self)
        view.runs = self.runs[:count]
        return view

    def rename_source(self, old: str, new: str) -> None:
        """The lines read as `old` now live in the file `new` (a rotation): every piece of
        evidence from them names `new`, so it keeps pointing at the file that holds the line."""
        for ev in evidence_in(self.runs):
            if ev.source == old:
                ev.source = new
        if old in self.sources:
            self.sources[new] = self.sources.get(new, 0) + self.sources.pop(old)

    def apply(self, ev: Event, source: str, line_no: int, text: str) -> None:
        self.events += 1
        kind = ev.kind
        kinds = self.kinds
        kinds[kind] = kinds.get(kind, 0) + 1
        handler = HANDLERS.get(kind)
        if handler is None:
            return
        run = self._run_for(ev, line_no)
        run.lines_seen += 1
        if ev.rank and not ev.foreign:  # another engine's tags prove nothing of this layout
            run.ranks.add(ev.rank)
        if ev.ts:
            run.last_ts = latest_ts(run.last_ts, ev.ts)
        if self.hinter is not None and not ev.foreign and (kind not in BATCH_KINDS
                                                           or kind not in run.kinds_seen):
            run.hints.update(self.hinter(ev, text))
        if not ev.foreign:  # (what the stream's engine printed: its rules read these kinds)
            run.kinds_seen.add(kind)
        handler(run, ev, source, line_no, text)

    # -- run boundaries -------------------------------------------------------------------
    def _run_for(self, ev: Event, line_no: int | None = None) -> Run:
        """The run an event belongs to, opening a new one at a server start.

        SGLang resolves its arguments (and logs model-specific KV dtype overrides, the DSA
        backends and TP mode) just before it dumps them, so both the dump and such a line open
        a new run once the current one has got past argument resolution, unless the start is
        stamped no later than the run's own lines (`Run.takes_start`: a paste that put the dump
        below its start-up). A
        second weight load on a rank that already served is a restart whose dump was not
        captured; so is a weight load or a pool line stamped before the same rank's own in
        the run (`Run.stamped_before_rank`). Such a run opens with no start of its own, so
        the chunk join leaves it to a sequential read.
        """
        run = self.current
        kind = ev.kind
        # A part of the arguments logged before the dump opens the start as an override does.
        before_dump = kind == "server_args" and bool(ev.get("before_dump"))
        start = (kind == "server_args" and not ev.get("partial")) or before_dump or (
            kind == "kv_dtype" and ev.get("origin") in ("override", "model_default")) or \
            kind == "engine_version"
        if start:
            if kind in ("server_args", "engine_version") and not before_dump:
                form = ev.get("form") if kind == "server_args" else "version"
                # A part seen before is a new start; so is any part once the run got going,
                # unless another rank already printed that part (vLLM's DP engines each print
                # their config while their siblings load).
                sibling = any(f == form for f, _ in run.dump_parts)
                if (form, ev.rank) in run.dump_parts:
                    if not run.sibling_part(form, _dump_fields(ev), ev.ts):
                        run = self._new_run()
                elif run.progressed and not sibling:
                    run = self._start_in(run, ev.ts)
            elif run.progressed:
                run = self._start_in(run, ev.ts)
        elif (kind == "load_weight_begin" and ev.rank in run.weights_begin and (
                run.started_up or run.stamped_before_rank(ev, kind))) or (
                kind == "kv_pool" and (run.stamped_before_rank(ev, kind)
                                       or run.pool_again(ev))) or (
                kind == "load_weight_end" and run.weights_again(ev)) or self._shape_start(run, ev):
            run = self._new_run()
        if self.restart_pending:
            self.restart_pending = False
            if run.lines_seen and run is self.current:
                run = self._new_run()
        if ev.rank and run.tag_shape is None:
            run.tag_shape = tag_shape(ev.rank)
        if run.opener is None:
            run.opener = "start" if start else kind
            run.opened_ts = ev.ts
            run.first_line = line_no
        return run

    def _shape_start(self, run: Run, ev: Event) -> bool:
        """Every rank of one start tags its lines alike (the engine's `tag_shape_starts`): a
        start-up line in another shape after the run started up is another start; so is a
        tagged one after a start whose lines carried no tag at all (SGLang tags ranks only
        when TP > 1: a TP1 start followed by a TP2 start that printed no dump)."""
        return bool(self.shape_starts and ev.rank and run.started_up
                    and KIND_TRAITS[ev.kind].phase == "startup"
                    and tag_shape(ev.rank) != run.tag_shape)

    def _start_in(self, run: Run, ts: str | None) -> Run:
        """The run a start line stamped `ts` opens: a new one, or `run` when its stamp says it
        was printed before `run`'s lines (`Run.takes_start`)."""
        if run.takes_start(ts):
            run.took_start = True
            return run
        return self._new_run()

    def _absorbs_last(self) -> bool:
        """Is the current run a start that held only its dump, after a run with no start of
        its own (`Run.takes_dump`)?"""
        return len(self.runs) >= 2 and self.runs[-2].takes_dump(self.runs[-1])

    def _settle_args_only(self) -> None:
        """Before a new run opens: an args-only current run joins the run it was the start of
        (`_absorbs_last`)."""
        if self._absorbs_last():
            self.runs[-2].absorb_start(self.runs.pop())

    def settled(self) -> State:
        """The state as a report reads it at this line: a last run that holds only a start's
        dump (`_absorbs_last`) taken as the start of the run before it. `self` is unchanged
        (the lines still to come decide for the fold itself), so the answer is the same
        whenever the report is asked."""
        if not self._absorbs_last():
            return self
        view = copy.copy(self)
        merged = copy.copy(self.runs[-2])
        merged.absorb_start(self.runs[-1])
        view.runs = [*self.runs[:-2], merged]
        return view

    def _new_run(self) -> Run:
        self._settle_args_only()
        run = Run(index=len(self.runs))
        self.runs.append(run)
        return run
