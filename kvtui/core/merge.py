"""Joining the states of consecutive chunks of one log, so `kvtui check` can use every core.

Why this is safe: a big log is almost all runtime lines, whose aggregates (counts, sums, last and
peak values, streaks with their prefixes) combine exactly. A chunk's first run can be joined to
the previous chunk's last run only when it holds nothing but runtime lines; every later run in a
chunk must have begun with a server-args dump (so the run boundary is the same one a sequential
read would draw). When either condition fails, `can_join` says no and the caller reads the file
sequentially: the answer never depends on how the file was cut. Tests compare merged and
sequential reports over every sample log cut at many points.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable
from typing import Any

from kvtui.core.state import Evidence, Run, Runtime, State, TimelinePoint

JOINABLE_KINDS = frozenset({"decode_batch", "prefill_batch", "retraction", "oom"})


def can_join(earlier: State, later: State) -> bool:
    """Can `later` (the state of the lines right after `earlier`'s) be joined exactly?"""
    first = later.runs[0]
    if not all(run.opener == "start" for run in later.runs[1:]):
        return False
    if first.opener != "start":
        return first.kinds_seen <= JOINABLE_KINDS  # runtime lines continue the last run
    last = earlier.runs[-1]
    # A server start: a new run, unless the cut fell inside an argument-resolution block
    # (then only a sequential read knows which start the lines belong to).
    return last.progressed or not (last.server_args or last.kv_dtype_lines)


def _walk(obj: Any, visit: Callable[[Any], bool], seen: set[int]) -> None:
    """Call `visit` on every dataclass inside a state; `visit` returns True when it has dealt
    with the object itself (its fields are then not walked)."""
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        if visit(obj):
            return
        for f in dataclasses.fields(obj):
            _walk(getattr(obj, f.name), visit, seen)
    elif isinstance(obj, dict):
        for v in obj.values():
            _walk(v, visit, seen)
    elif isinstance(obj, (list, tuple, set)) and not isinstance(obj, TimelinePoint):
        for v in obj:
            _walk(v, visit, seen)


def shift_lines(obj: Any, offset: int, _seen: set[int] | None = None) -> None:
    """Add `offset` to every line number inside a chunk's state (its lines were numbered from 1)."""
    if offset == 0:
        return

    def visit(node: Any) -> bool:
        if isinstance(node, Evidence):
            node.line += offset
            return True
        if isinstance(node, Runtime):
            node.timeline = deque((p._replace(line=p.line + offset) for p in node.timeline),
                                  maxlen=node.timeline.maxlen)
            for f in dataclasses.fields(node):
                if f.name != "timeline":
                    _walk(getattr(node, f.name), visit, seen)
            return True
        return False

    seen = _seen if _seen is not None else set()
    _walk(obj, visit, seen)


def rename_source(state: State, old: str, new: str) -> None:
    """The lines read so far as `old` now live in the file `new` (a rotation): every piece of
    evidence from them names `new`, so it keeps pointing at the file that holds the line."""
    def visit(node: Any) -> bool:
        if isinstance(node, Evidence):
            if node.source == old:
                node.source = new
            return True
        return False

    _walk(state.runs, visit, set())
    if old in state.sources:
        state.sources[new] = state.sources.get(new, 0) + state.sources.pop(old)


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
    join_runtime(a.runtime, b.runtime)


def _later(a: Any, b: Any) -> Any:
    return b if b is not None else a


def join_runtime(a: Runtime, b: Runtime) -> None:
    """Fold `b` (the runtime of the lines right after `a`'s, folded from scratch) into `a`.

    Also how `kvtui.core.bulk` adds a stretch of runtime rows to the current run.
    """
    # Saturation streaks: a's trailing streak continues into b's leading one.
    join = a.saturated_streak + b.saturated_prefix
    longest = max(a.saturated_longest, b.saturated_longest, join)
    if not a.saturated_broken:
        a.saturated_prefix += b.saturated_prefix
    a.saturated_streak = b.saturated_streak if b.saturated_broken else join
    a.saturated_broken = a.saturated_broken or b.saturated_broken
    a.saturated_longest = longest
    if a.saturated_evidence is None:
        a.saturated_evidence = b.saturated_evidence

    # Queue growth, decode line to decode line, across the cut.
    first, prev = b.first_decode_queue, a.last_decode_queue
    step = 0
    if first is not None and prev is not None:
        step = 1 if first > prev else (-1 if first < prev else 0)
    if step < 0:
        streak_in = b.queue_growth_prefix
        a.queue_dropped = True
    else:
        streak_in = a.queue_growth_streak + step + b.queue_growth_prefix
        if not a.queue_dropped:
            a.queue_growth_prefix += step + b.queue_growth_prefix
    a.queue_growth_longest = max(a.queue_growth_longest, b.queue_growth_longest, streak_in)
    a.queue_growth_streak = b.queue_growth_streak if b.queue_dropped else streak_in
    a.queue_dropped = a.queue_dropped or b.queue_dropped
    if a.first_decode_queue is None:
        a.first_decode_queue = b.first_decode_queue
    a.last_decode_queue = _later(a.last_decode_queue, b.last_decode_queue)

    # Peaks: strictly greater wins, as in the sequential fold (ties keep the first line).
    if b.peak_token_usage is not None and (a.peak_token_usage is None
                                           or b.peak_token_usage > a.peak_token_usage):
        a.peak_token_usage, a.peak_token_usage_evidence = (b.peak_token_usage,
                                                           b.peak_token_usage_evidence)
    if b.peak_running_req is not None and (a.peak_running_req is None
                                           or b.peak_running_req > a.peak_running_req):
        a.peak_running_req = b.peak_running_req
    if b.peak_queue_req is not None and (a.peak_queue_req is None
                                         or b.peak_queue_req > a.peak_queue_req):
        a.peak_queue_req, a.peak_queue_evidence = b.peak_queue_req, b.peak_queue_evidence

    a.prefill_batches += b.prefill_batches
    a.decode_batches += b.decode_batches
    a.last_token_usage = _later(a.last_token_usage, b.last_token_usage)
    a.last_running_req = _later(a.last_running_req, b.last_running_req)
    a.last_queue_req = _later(a.last_queue_req, b.last_queue_req)
    a.last_gen_throughput = _later(a.last_gen_throughput, b.last_gen_throughput)
    a.gen_throughput_centi += b.gen_throughput_centi
    a.gen_throughput_n += b.gen_throughput_n
    a.last_ts = _later(a.last_ts, b.last_ts)

    a.retractions += b.retractions
    a.retracted_reqs += b.retracted_reqs
    if a.new_token_ratio_first is None:
        a.new_token_ratio_first = b.new_token_ratio_first
    a.new_token_ratio_last = _later(a.new_token_ratio_last, b.new_token_ratio_last)
    if b.retraction_evidence is not None:
        if a.retraction_evidence is None:
            a.retraction_evidence = b.retraction_evidence
        else:
            a.retraction_evidence.count += b.retraction_evidence.count

    a.timeline.extend(b.timeline)
