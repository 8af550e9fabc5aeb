"""The verdict first: the start-up lines of every server start of a big file, folded before the
rest of it, so the precision alert is on screen within a second whatever the file's size.

Why it is honest: the facts a verdict rests on (KV dtype, scaling factors, pools, capacity) are
printed during start-up, at the top of each server start; a fast byte scan finds the starts
(each engine names the markers of its start lines) and only their start-up regions are parsed.
The preview is a session of its own, marked partial; the full fold then replaces it, and that
final report is the same as without a preview.
"""

from __future__ import annotations

from collections.abc import Sequence

from kvtui.core.engine import Engine
from kvtui.core.pipeline.fold import Fold
from kvtui.core.pipeline.inputs import RangedFile
from parsers import BATCH_KINDS

# A start-up region ends after this many batch lines (the runtime has begun on every rank that
# logs it), at the next start, or after this many lines (a start that never served).
REGION_BATCHES = 64
REGION_MAX_LINES = 50_000


def start_markers(engines: Sequence[Engine], *, anchors: bool = False) -> tuple[bytes, ...]:
    """The strings that begin a server start of any of `engines`, each once (with `anchors`,
    only those every start prints: `Engine.start_anchors`)."""
    return tuple(dict.fromkeys(m for e in engines
                               for m in (e.start_anchors if anchors else e.start_markers)))


def start_offsets(ranged: RangedFile, engines: Sequence[Engine]) -> list[int]:
    """Byte offsets where start-up regions begin: the top of the file and every server start."""
    return sorted({0, *ranged.scan(ranged.path, start_markers(engines), ranged.size)})


def fold_top(ranged: RangedFile, source: str, fold: Fold) -> None:
    """Fold the start-up at the top of the file alone, before any scan: the first verdict, in a
    time that does not grow with the file (the scan for later starts does)."""
    _fold_region(ranged, source, fold, 0, ranged.size, 1)


def fold_startups(ranged: RangedFile, source: str, fold: Fold,
                  starts: list[int] | None = None) -> None:
    """Fold only the start-up regions of `ranged` into the (fresh) `fold`, each with its true
    line numbers; the runtime lines between them are skipped. `starts`: their offsets, when
    already scanned."""
    if starts is None:
        starts = start_offsets(ranged, fold.engines)
    bounds = list(zip(starts, [*starts[1:], ranged.size], strict=True))
    before, at = 0, 0
    for start, end in bounds:
        before += ranged.count_lines(ranged.path, at, start)
        at = start
        _fold_region(ranged, source, fold, start, end, before + 1)


def _fold_region(ranged: RangedFile, source: str, fold: Fold, start: int, end: int,
                 first: int) -> None:
    n = first
    batches = 0
    blocks = ranged.read(ranged.path, start, end)  # lazy: only what is parsed is read
    for block in blocks:
        for text in block:
            ev = fold.feed_line(source, n, text)
            n += 1
            if ev is not None and ev.kind in BATCH_KINDS:
                batches += 1
            if batches >= REGION_BATCHES or n - first >= REGION_MAX_LINES:
                fold.flush()
                return
    fold.flush()
