"""Folding a big plain file on every core: byte ranges folded apart, their states joined exactly.

Why this is safe: a big log is almost all runtime lines, whose summary joins exactly
(`Runtime.join`). A chunk's first run can be joined to the previous chunk's last run only when it
holds nothing but runtime lines; every later run in a chunk must have begun with a server start
(so the run boundary is the one a sequential read would draw). When either condition fails,
`can_join` says no and the pipeline reads the file sequentially: the answer never depends on how
the file was cut. Tests compare joined and sequential states over every sample cut at every line.
"""

from __future__ import annotations

import mmap
from collections.abc import Callable
from functools import partial

from kvtui.core.engine import load
from kvtui.core.evidence import evidence_in
from kvtui.core.pipeline.fold import Fold
from kvtui.core.pipeline.inputs import RangedFile
from kvtui.core.pipeline.workers import Workers
from kvtui.core.runtime import shifted_timeline
from kvtui.core.state import Run, State, latest_ts
from parsers.kinds import JOINABLE_KINDS

# Files smaller than this are read sequentially: forking costs more than it saves.
MIN_PARALLEL_BYTES = 32 << 20


def can_join(earlier: State, later: State) -> bool:
    """Can `later` (the state of the lines right after `earlier`'s) be joined exactly?"""
    first = later.runs[0]
    if not all(run.opener == "start" for run in later.runs[1:]):
        return False
    if first.took_start:
        return False  # a start its stamp put in the run: whether it may is the earlier's say
    if first.opener != "start":
        return first.kinds_seen <= JOINABLE_KINDS  # runtime lines continue the last run
    last = earlier.runs[-1]
    # A start stamped before the last run's lines is that run's (`Run.takes_start`), and so is
    # a start that held only its dump before the next start (`Run.takes_dump`, which
    # `State._settle_args_only` applies at that start): only a sequential read does it.
    if last.takes_start(first.opened_ts) or (len(later.runs) > 1 and last.takes_dump(first)):
        return False
    # A data-parallel sibling's copy of a part the last run holds joins it (`Run.sibling_part`).
    if any(last.sibling_part(form, fields, first.opened_ts)
           for form, (fields, _) in first.dump_copies.items()):
        return False
    # A server start: a new run, unless the cut fell inside an argument-resolution block (a
    # dump, a KV dtype override, an engine's release line or one part of a start it prints in
    # several): then only a sequential read knows which start the lines belong to.
    return last.progressed or last.lines_seen == 0


def shift_lines(runs: list[Run], offset: int) -> None:
    """Add `offset` to every line number inside a chunk's runs (their lines were numbered from
    1): each piece of evidence and each timeline point."""
    if offset == 0:
        return
    for ev in evidence_in(runs):
        ev.line += offset
    for run in runs:
        run.runtime.timeline = shifted_timeline(run.runtime.timeline, offset)
        if run.first_line is not None:
            run.first_line += offset


def merge_into(earlier: State, later: State, line_offset: int) -> None:
    """Fold `later` into `earlier` in place; `can_join(earlier, later)` must hold."""
    if not can_join(earlier, later):
        raise ValueError("chunk state cannot be joined exactly; read sequentially")
    shift_lines(later.runs, line_offset)
    earlier.events += later.events
    for k, v in later.kinds.items():
        earlier.kinds[k] = earlier.kinds.get(k, 0) + v
    for k, v in later.sources.items():
        earlier.sources[k] = earlier.sources.get(k, 0) + v
    runs = later.runs
    last = earlier.runs[-1]
    if runs[0].opener != "start":
        _join_run(last, runs[0])
        runs = runs[1:]
    elif not last.progressed:
        earlier.runs.pop()  # an empty implicit run: the sequential read would reuse it
    for run in runs:
        run.index = len(earlier.runs)
        earlier.runs.append(run)


def _join_run(a: Run, b: Run) -> None:
    a.lines_seen += b.lines_seen
    a.tag_shape = a.tag_shape or b.tag_shape
    a.last_ts = latest_ts(a.last_ts, b.last_ts)
    a.ranks |= b.ranks
    a.hints |= b.hints
    a.kinds_seen |= b.kinds_seen
    for ev, msg in zip(b.ooms, b.oom_messages, strict=True):
        if msg in a.oom_messages:
            a.ooms[a.oom_messages.index(msg)].count += ev.count
        elif len(a.ooms) < 50:
            a.ooms.append(ev)
            a.oom_messages.append(msg)
        else:
            a.ooms[-1].count += ev.count
    a.runtime.join(b.runtime)


# A chunk of lines folded from scratch (numbered from 1, or as in its stream: then joined at
# line offset 0): its state, line count, engine name, its last line (or the wrap that ends with
# it) when the fold holds it (`Fold.pending`: it may go on in the next chunk), and its first
# line.
Result = tuple[State, int, str | None, tuple[str, int, str, int] | None, str | None]


def result_of(fold: Fold) -> Result:
    """What a worker hands back of the chunk it folded (nothing flushed: see `Result`)."""
    return (fold.state, fold.lines, fold.engine.name if fold.engine else None, fold.pending,
            fold.first_text)


def join_result(fold: Fold, result: Result, line_offset: int) -> bool:
    """Join a chunk folded from scratch onto `fold`, which holds every line before it, exactly
    as a sequential read would have gone on; `line_offset`: the line number before the chunk's
    first. False when only a sequential read can tell: the chunk cannot be joined
    (`can_join`), it names another engine than the lines before it did, or its first line may
    be the rest of a line `fold` holds (`Fold.pending`). `fold` is then as a sequential read
    stands before the chunk's lines (a held line that the chunk does not go on is folded).

    The one join of the pipeline: byte ranges of a file (`fold_ranges`) and blocks of a stream
    (`kvtui.core.pipeline.stream`) are both joined here.
    """
    later, count, name, pending, first_text = result
    if name is not None and fold.engine is not None and name != fold.engine.name:
        return False
    if fold.pending is not None:
        # The line held at the end of what came before: the chunk's first line may be its
        # rest, which only a read of the two together can tell.
        _, _, held, pieces = fold.pending
        if first_text is not None and fold.joined(held, first_text, pieces) is not None:
            return False
        fold.flush()
    if fold.lines == 0:  # a fresh fold: the chunk's state is what a sequential read makes
        shift_lines(later.runs, line_offset)
        for k, v in fold.state.sources.items():  # an empty input is still reported
            later.sources[k] = later.sources.get(k, 0) + v
        fold.state = later
    elif can_join(fold.state, later):
        merge_into(fold.state, later, line_offset)
    else:
        return False
    fold.lines += count
    if fold.first_text is None:
        fold.first_text = first_text
    if pending is not None:
        source, n, text, pieces = pending
        fold.pending = (source, n + line_offset, text, pieces)
    if fold.engine is None and name is not None:
        fold.engine = load(name)
    if fold.engine is not None:
        fold.state.bind(fold.engine)
    return True


Job = tuple[RangedFile, str, tuple[str, ...], int, int | None]


def block_bytes(block: list[str]) -> int:
    """The size of a block of lines as read (each with its newline), for progress."""
    return sum(map(len, block)) + len(block)


class _Counts:
    """Bytes folded so far per job, in memory shared with the forked workers: each job's slot
    is written only by whoever folds that job, so no lock is needed (a lock held by a worker
    that died would stop the progress reads for ever)."""

    def __init__(self, n: int) -> None:
        self._map = mmap.mmap(-1, 8 * n)  # anonymous and shared: the forks see the same pages
        self.slots = memoryview(self._map).cast("q")

    def total(self) -> int:
        return sum(self.slots)

    def close(self) -> None:
        self.slots.release()
        self._map.close()


def _fold_range(counts: memoryview | None, indexed: tuple[int, Job]) -> Result:
    """One byte range folded from scratch (its lines numbered from 1), by a worker or, when its
    worker was lost, here; `counts[i]` follows its progress."""
    i, (ranged, source, engine_names, start, end) = indexed
    fold = Fold([load(name) for name in engine_names])
    n = 1
    if counts is not None:
        counts[i] = 0
    for block in ranged.read(ranged.path, start, end):
        n = fold.feed_lines(source, block, n)
        if counts is not None:
            counts[i] += block_bytes(block)
    return result_of(fold)


def fold_ranges(ranged: RangedFile, source: str, fold: Fold, cuts: list[int], workers: int,
                progress: Callable[[int], None] | None = None) -> bool:
    """Fold `ranged` cut at `cuts` (byte offsets at line starts, the first 0) into `fold`,
    which must be fresh; False when the chunks cannot be joined (`fold` then holds part of the
    file: reset it and read sequentially).
    `progress(bytes_done)` is called a few times a second while the workers run. A range whose
    worker died or was stuck is folded here afterwards: the answer is the same."""
    names = (fold.engine.name,) if fold.engine is not None else tuple(e.name
                                                                      for e in fold.engines)
    bounds = list(zip(cuts, [*cuts[1:], ranged.size], strict=True))
    jobs: list[tuple[int, Job]] = list(enumerate((ranged, source, names, a, b)
                                                 for a, b in bounds))
    if workers <= 1 or len(jobs) == 1:
        results = [_fold_range(None, j) for j in jobs]
    else:
        results = _fold_on_workers(jobs, min(workers, len(jobs)), progress)
    return all(join_result(fold, result, fold.lines) for result in results)


def _fold_on_workers(jobs: list[tuple[int, Job]], workers: int,
                     progress: Callable[[int], None] | None) -> list[Result]:
    counts = _Counts(len(jobs))
    try:
        with Workers(workers, partial(_fold_range, counts.slots)) as pool:
            tasks = [pool.submit(j) for j in jobs]
            while not pool.wait(tasks, 0.1):
                if progress is not None:
                    progress(counts.total())
            return [pool.value(task) for task in tasks]  # a lost range is folded here
    finally:
        counts.close()
