"""Folding a stretch of recognized runtime rows (`parsers.bulk`) into the state in one step.

Why: on a multi-million-line log the per-line fold is most of kvtui's time. Here a stretch of
decode and prefill lines becomes one `Runtime` of its own, computed column-wise by C-level
builtins (`max`, `sum`, `map`, `bytes.split`), and is then joined onto the current run with the
same exact join `kvtui.core.merge` uses for file chunks. The result is the state the line-by-line
fold would build: tests compare the two on every sample, the corpus and generated logs.

The caller guarantees what makes a stretch foldable at once: no other event lies between its
rows (so no run boundary), and the current run has already seen every kind in it (so the
first-line format hints were taken by the general route).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress, repeat
from operator import add, sub

from kvtui.core.merge import join_runtime
from kvtui.core.state import (
    EVIDENCE_TEXT_MAX,
    TIMELINE_POINTS,
    Evidence,
    Runtime,
    State,
    TimelinePoint,
)

# Usage is printed `d.dd`, so text comparison is numeric comparison (parsers.bulk).
_SATURATED = f"{Runtime.SATURATION:.2f}"


def fold_rows(state: State, source: str, first_line_no: int, lines: Sequence[str],
              at: Sequence[int], heads: Sequence[str],
              facts: dict[str, tuple[str | None, str | None]], running: Sequence[str],
              usage: Sequence[str], gen: Sequence[str], queue: Sequence[str]) -> None:
    """Fold the rows of `lines` at indices `at` (numbered from `first_line_no`), with their
    columns aligned to `at`, in line order; an empty `gen` marks a prefill row. `facts` maps
    each head to its (ts, rank), the ts never None."""
    m = len(at)
    if not m:
        return
    run = state.runs[-1]
    b = Runtime()
    n_decode = m - gen.count("")
    state.events += m
    kinds = state.kinds
    if n_decode:
        kinds["decode_batch"] = kinds.get("decode_batch", 0) + n_decode
    if n_decode < m:
        kinds["prefill_batch"] = kinds.get("prefill_batch", 0) + m - n_decode
    run.lines_seen += m
    for h in set(heads):
        rank = facts[h][1]
        if rank:
            run.ranks.add(rank)

    def evidence(k: int) -> Evidence:
        text = lines[at[k]]
        if len(text) > EVIDENCE_TEXT_MAX:
            text = text[:EVIDENCE_TEXT_MAX] + "…"
        ts, rank = facts[heads[k]]
        return Evidence(source=source, line=first_line_no + at[k], rank=rank, ts=ts, text=text)

    b.prefill_batches = m - n_decode
    b.decode_batches = n_decode
    b.last_ts = facts[heads[-1]][0]

    # Token usage: last, peak (first line that reached it), saturation streaks.
    b.last_token_usage = float(usage[-1])
    top = max(usage)
    b.peak_token_usage = float(top)
    b.peak_token_usage_evidence = evidence(usage.index(top))
    flags = bytes(map(_SATURATED.__le__, usage))
    streaks = flags.split(b"\x00")
    b.saturated_prefix = len(streaks[0])
    b.saturated_streak = len(streaks[-1])
    b.saturated_broken = len(streaks) > 1
    b.saturated_longest = max(map(len, streaks))
    if b.saturated_longest:
        b.saturated_evidence = evidence(flags.index(1))

    # Running requests and queue, over decode and prefill rows alike.
    b.last_running_req = int(running[-1])
    b.peak_running_req = max(map(int, running))
    queues = list(map(int, queue))
    b.last_queue_req = queues[-1]
    b.peak_queue_req = max(queues)
    b.peak_queue_evidence = evidence(queues.index(b.peak_queue_req))

    if n_decode:
        _fold_decode(b, first_line_no, at, heads, facts, usage, gen, running, queues)
    join_runtime(run.runtime, b)


def _fold_decode(b: Runtime, first_line_no: int, at: Sequence[int], heads: Sequence[str],
                 facts: dict[str, tuple[str | None, str | None]], usage: Sequence[str],
                 gen: Sequence[str], running: Sequence[str], queues: list[int]) -> None:
    # Queue growth, decode row to decode row: +1 up, 0 down (a drop ends a streak), 1 level.
    dq = list(compress(queues, gen))
    b.first_decode_queue, b.last_decode_queue = dq[0], dq[-1]
    later, earlier = dq[1:], dq[:-1]
    steps = bytes(map(add, map(sub, map(int.__gt__, later, earlier),
                               map(int.__lt__, later, earlier)), repeat(1)))
    growth = list(map(bytes.count, steps.split(b"\x00"), repeat(b"\x02")))
    b.queue_growth_prefix = growth[0]
    b.queue_growth_streak = growth[-1]
    b.queue_dropped = len(growth) > 1
    b.queue_growth_longest = max(growth)

    gens = list(filter(None, gen))
    b.last_gen_throughput = float(gens[-1])
    # `d.dd` with at most nine integer digits: the digits are exactly int(g * 100 + 0.5).
    b.gen_throughput_centi = sum(map(int, map(str.replace, gens, repeat("."), repeat(""))))
    b.gen_throughput_n = len(gens)

    rows = list(compress(range(len(gen)), gen))[-TIMELINE_POINTS:]
    b.timeline.extend(TimelinePoint(facts[heads[k]][0], first_line_no + at[k], float(usage[k]),
                                    int(running[k]), queues[k], float(gen[k]), False)
                      for k in rows)
