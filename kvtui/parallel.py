"""Reading one big log on every core for `kvtui check`.

Each worker folds one byte range of the file with the same `Analyzer` the TUI uses; the parent
joins the chunk states with `kvtui.core.merge`, which is exact for the runtime lines that make up
a big log and refuses anything else (then the file is read sequentially). So the report is the
same whichever path ran; tests compare the two.
"""

from __future__ import annotations

import multiprocessing
import os
from typing import Any

from kvtui.core.analyzer import Analyzer
from kvtui.core.merge import can_join, merge_into
from kvtui.core.state import State
from kvtui.sources.readers import iter_byte_range, line_start_offsets

MIN_PARALLEL_BYTES = 32 << 20


def _fold_range(job: tuple[str, str, int, int | None]) -> tuple[State, int]:
    path, source, start, end = job
    analyzer = Analyzer()
    analyzer.feed_batches(source, iter_byte_range(path, start, end))
    return analyzer.state, analyzer.lines


def fold_ranges(path: str, source: str, cuts: list[int], workers: int,
                end: int | None = None) -> tuple[State, int] | None:
    """Fold the file (up to byte `end`, a line start; None: all of it) cut at `cuts` with
    `workers` processes; None when the chunks cannot be joined exactly."""
    bounds = list(zip(cuts, [*cuts[1:], end], strict=True))
    jobs = [(path, source, start, end) for start, end in bounds]
    if workers <= 1 or len(jobs) == 1:
        results = [_fold_range(j) for j in jobs]
    else:
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(min(workers, len(jobs))) as pool:
            results = pool.map(_fold_range, jobs, chunksize=1)
    state, lines = results[0]
    for later, count in results[1:]:
        if not can_join(state, later):
            return None
        merge_into(state, later, lines)
        lines += count
    return state, lines


def analyse_parallel(path: str, *, model: Any = None, alert_options: Any = None,
                     workers: int | None = None, min_bytes: int = MIN_PARALLEL_BYTES,
                     end: int | None = None) -> Analyzer | None:
    """An Analyzer holding the whole file's facts (or those of its first `end` bytes, `end`
    at a line start), or None when the parallel path does not apply (stdin, .gz, a small
    file, one core, or chunks that cannot be joined)."""
    if path == "-" or path.endswith(".gz") or not os.path.isfile(path):
        return None
    n = workers if workers is not None else min(os.cpu_count() or 1, 8)
    size = os.path.getsize(path) if end is None else end
    if n <= 1 or size < min_bytes:
        return None
    folded = fold_ranges(path, path, line_start_offsets(path, n, end), n, end)
    if folded is None:
        return None
    analyzer = Analyzer(model=model, alert_options=alert_options)
    analyzer.state, analyzer.lines = folded
    return analyzer
