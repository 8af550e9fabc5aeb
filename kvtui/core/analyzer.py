"""The one code path from log lines to a report, shared by `kvtui check`, the TUI and SSH.

Determinism is the point: the same lines give the same facts, alerts and what-if whether they
were replayed, tailed or checked headless, because every consumer goes through `Analyzer`.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Sequence
from itertools import compress
from operator import not_
from typing import Any

from kvtui.core.bulk import fold_rows
from kvtui.core.state import State
from parsers import Event, parse_line
from parsers.bulk import GEN, HEAD, QUEUE, RUNNING, USAGE, head_facts, runtime_rows

# Fold blocks of lines column-wise (kvtui.core.bulk); tests turn it off to compare.
BULK = True
# Below this many lines a block, or STRETCH_MIN recognized rows between two other events, the
# per-line route is cheaper than setting up the columns.
BULK_MIN = 64
STRETCH_MIN = 16


class Analyzer:
    """Parse and fold lines; build the report (facts + alerts + what-if) on demand."""

    def __init__(self, *, model: Any = None, alert_options: Any = None,
                 checkpoint: Any = None) -> None:
        self.state = State()
        self.model = model  # kvtui.core.capacity ModelSpec, or None to auto-detect from the log
        self.alert_options = alert_options
        self.checkpoint = checkpoint  # facts read from the checkpoint itself (SSH mode)
        self.lines = 0

    def feed(self, source: str, line_no: int, text: str) -> Event | None:
        self.lines += 1
        ev = parse_line(text)
        if ev is not None:
            self.state.apply(ev, source, line_no, text)
        return ev

    def feed_many(self, source: str, lines: Iterable[str], first_line_no: int = 1) -> int:
        """Feed texts numbered from first_line_no; returns the next line number."""
        if BULK and isinstance(lines, list) and len(lines) >= BULK_MIN:
            # A block makes some 150,000 short-lived tuples and strings, none in a cycle:
            # letting the cycle collector walk them costs about 12% of the whole fold.
            collecting = gc.isenabled()
            gc.disable()
            try:
                rows = runtime_rows(lines)
                if rows is not None:
                    return self._feed_rows(source, lines, rows, first_line_no)
            finally:
                if collecting:
                    gc.enable()
        apply = self.state.apply
        parse = parse_line
        n = first_line_no
        for text in lines:
            ev = parse(text)
            if ev is not None:
                apply(ev, source, n, text)
            n += 1
        count = n - first_line_no
        self.lines += count
        self.state.sources[source] = self.state.sources.get(source, 0) + count
        return n

    def _feed_rows(self, source: str, lines: list[str], rows: Sequence[tuple[str, ...]],
                   first: int) -> int:
        """Fold a block whose dominant runtime lines `parsers.bulk` recognized.

        Every other line is parsed on its own; one that yields an event is applied in its place,
        and the recognized rows between two such lines are folded as one stretch.
        """
        cols = list(zip(*rows, strict=True))
        heads = cols[HEAD]
        # Each distinct head (a second of one rank's log) is validated once; a row whose head is
        # no timestamp prefix goes back to the per-line route.
        facts = {h: head_facts(h) for h in set(heads) if h}
        if any(ts is None for ts, _ in facts.values()):
            cols[USAGE] = tuple(u if facts.get(h, (1,))[0] is not None else ""
                                for h, u in zip(heads, cols[USAGE], strict=True))
        apply = self.state.apply
        start = 0
        for i in compress(range(len(lines)), map(not_, cols[USAGE])):
            ev = parse_line(lines[i])
            if ev is not None:
                self._fold_stretch(source, lines, cols, facts, start, i, first)
                apply(ev, source, first + i, lines[i])
                start = i + 1
        self._fold_stretch(source, lines, cols, facts, start, len(lines), first)
        count = len(lines)
        self.lines += count
        self.state.sources[source] = self.state.sources.get(source, 0) + count
        return first + count

    def _fold_stretch(self, source: str, lines: list[str], cols: list[tuple[str, ...]],
                      facts: dict[str, tuple[str | None, str | None]], a: int, b: int,
                      first: int) -> None:
        """The recognized rows of lines[a:b], where no other line is an event."""
        recognized = cols[USAGE][a:b]
        at = list(compress(range(a, b), recognized))
        if len(at) < STRETCH_MIN:
            self._apply_lines(source, lines, at, first)
            return
        heads, running, usage, gen, queue = (list(compress(cols[c][a:b], recognized))
                                             for c in (HEAD, RUNNING, USAGE, GEN, QUEUE))
        # The first row of a kind the run has not seen takes the general route: it records
        # the format hints and may open the run.
        seen = self.state.runs[-1].kinds_seen
        firsts = []
        if "decode_batch" not in seen:
            firsts.append(next(compress(range(len(at)), gen), None))
        if "prefill_batch" not in seen:
            firsts.append(next(compress(range(len(at)), map(not_, gen)), None))
        new = [j for j in firsts if j is not None]
        if new:
            k = at[min(new)]
            self._fold_stretch(source, lines, cols, facts, a, k, first)
            self._apply_lines(source, lines, [k], first)
            self._fold_stretch(source, lines, cols, facts, k + 1, b, first)
            return
        fold_rows(self.state, source, first, lines, at, heads, facts, running, usage, gen, queue)

    def _apply_lines(self, source: str, lines: list[str], at: Iterable[int], first: int) -> None:
        apply = self.state.apply
        for k in at:
            text = lines[k]
            ev = parse_line(text)
            if ev is not None:
                apply(ev, source, first + k, text)

    def feed_batches(self, source: str, batches: Iterable[list[str]],
                     first_line_no: int = 1) -> int:
        """`feed_many` over lists of lines (what `iter_batches` yields)."""
        n = first_line_no
        for batch in batches:
            n = self.feed_many(source, batch, n)
        return n

    def report(self) -> dict[str, Any]:
        from kvtui.core.report import build_report

        return build_report(self.state, model=self.model, alert_options=self.alert_options,
                            checkpoint=self.checkpoint)
