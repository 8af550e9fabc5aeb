"""Every recognised line as JSON Lines (`kvtui events`), on every core for a big file.

Why its own strategy: the output is as long as the log, so the cost is parsing and serialising
each line, which a fold's column route cannot skip. A big plain file is cut at line starts; each
chunk's lines are first counted (so every chunk knows its first line number), then parsed and
serialised by a worker into one text block, which the parent writes in order. A chunk whose
worker died or was stuck is done here (`kvtui.core.pipeline.workers`): the text is the same.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from typing import Any

from kvtui.core.engine import load
from kvtui.core.pipeline.fold import Fold
from kvtui.core.pipeline.inputs import Input, RangedFile
from kvtui.core.pipeline.workers import Workers

Job = tuple[RangedFile, str, tuple[str, ...], int, int, int]


def _jsonl(fold: Fold, source: str, lines: Sequence[str], first: int) -> str:
    """The JSON lines of a block's events, hand-wrapped lines read as one (`Fold.unwrap`, as
    the fold reads them; a wrap cut between two blocks is read as two)."""
    dumps = json.dumps
    out = []
    for n, text in enumerate(fold.unwrap(list(lines)), first):
        ev = fold.parse(text)
        if ev is not None:
            obj = {"source": source, "line": n}
            obj.update(ev.to_dict())
            out.append(dumps(obj, ensure_ascii=False))
    return "\n".join(out) + "\n" if out else ""


def _count(job: tuple[RangedFile, int, int]) -> int:
    ranged, start, end = job
    return ranged.count_lines(ranged.path, start, end)


def _chunk(job: Job) -> str:
    ranged, source, names, start, end, first = job
    fold = Fold([load(name) for name in names])
    parts = []
    n = first
    for block in ranged.read(ranged.path, start, end):
        parts.append(_jsonl(fold, source, block, n))
        n += len(block)
    return "".join(parts)


def _task(job: Any) -> Any:
    """A worker's task: a chunk's line count, or its text once every first line is known."""
    return _count(job) if len(job) == 3 else _chunk(job)


def events_jsonl(inp: Input, names: tuple[str, ...], workers: int, min_bytes: int
                 ) -> Iterator[str]:
    """The JSON Lines text of one stream, in blocks, in line order."""
    ranged = inp.ranged
    if ranged is None or workers <= 1 or ranged.size < min_bytes:
        fold = Fold([load(name) for name in names])
        n = 1
        for block in inp.blocks():
            yield _jsonl(fold, inp.name, block, n)
            n += len(block)
        return
    cuts = ranged.cuts(ranged.path, workers * 4, ranged.size)
    bounds = list(zip(cuts, [*cuts[1:], ranged.size], strict=True))
    with Workers(min(workers, os.cpu_count() or 1), _task) as pool:
        counts = list(pool.map((ranged, a, b) for a, b in bounds))
        firsts = [1]
        for c in counts[:-1]:
            firsts.append(firsts[-1] + c)
        jobs: list[Job] = [(ranged, inp.name, names, a, b, f)
                           for (a, b), f in zip(bounds, firsts, strict=True)]
        yield from pool.map(jobs)
