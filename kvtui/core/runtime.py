"""The runtime fold, defined once: a mergeable summary of a run's batch lines.

Why a summary with a join: a busy log is almost all decode and prefill lines, and kvtui folds them
three ways (one row at a time for a live tail, a column at a time for a block of a big file, and
chunk by chunk on several cores). All three must give the same facts, so the facts are built from
small monoids (counts, last values, first-of-maximum peaks, runs of consecutive saturated batches,
runs of a growing queue, a bounded timeline), each with its three operations side by side:

- `add` folds one row,
- a column constructor folds a whole column at C speed,
- `join` appends the summary of the lines that came right after.

`add(x)` is `join(summary of [x])` for each of them; `tests/core/test_runtime_monoid.py` holds the
three operations to that on random sequences. The few counters that only joining needs (the run
at the start of a sequence, whether it was ever broken) live inside these small types, not in the
facts a reader sees.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import add, floordiv, gt, lt, sub
from typing import Any, NamedTuple

from kvtui.core.evidence import Evidence

TIMELINE_POINTS = 600
_DIGITS = "0123456789"  # a rank tag is its name and its number: "DP1" is rank 1 of DP
SATURATION = 0.95
# Usage as the column route receives it: SGLang's `:.2f` text, where text order is numeric order.
SATURATED_TEXT = f"{SATURATION:.2f}"


class TimelinePoint(NamedTuple):
    """One decode (or retraction) sample for the timeline. A tuple: millions are made."""

    ts: str | None
    line: int
    token_usage: float | None
    running_req: int | None
    queue_req: int | None
    gen_throughput: float | None
    retraction: bool = False


_new_point = tuple.__new__


def shifted_timeline(tl: deque[TimelinePoint], offset: int) -> deque[TimelinePoint]:
    """The points of `tl` with `offset` added to their line numbers (a chunk folded from line 1
    joined in its place). Made with tuple.__new__, not `_replace`: a chunk brings hundreds of
    points, a stream dozens of chunks, and `_replace` costs several times as much per point."""
    return deque((_new_point(TimelinePoint, (ts, line + offset, *rest))
                  for ts, line, *rest in tl), maxlen=tl.maxlen)



# The usages a batch line may print, one per pool (a hybrid line prints its full pool's and its
# SWA or mamba pool's). The usage folded is the fullest: SGLang's own token usage of a hybrid
# model (max(full, swa): 0.5.9 managers/scheduler_metrics_mixin.py:184, 330; with the mamba
# usage from 0.5.13: managers/scheduler_components/pool_stats_observer.py:64-70, 124), since a
# full SWA or mamba pool stops admission as a full KV pool does.
POOL_USAGES = ("token_usage", "full_token_usage", "swa_token_usage", "mamba_usage")


def batch_usage(fields: dict[str, Any]) -> float | None:
    """The fullest pool's usage a batch line prints (None: it prints none)."""
    top = None
    for key in POOL_USAGES:
        v = fields.get(key)
        if v is not None and (top is None or v > top):
            top = v
    return top


@dataclass(slots=True)
class Streak:
    """The longest run of consecutive True in a sequence of booleans, joinable.

    `head` and `tail` are the runs at the start and the end; `broken` says a False was seen (so
    `head` stops growing). The facts a reader wants are `longest` and `tail`.
    """

    head: int = 0
    tail: int = 0
    longest: int = 0
    broken: bool = False

    def add(self, flag: bool) -> bool:
        """Fold one element; True when this element started the first run ever."""
        if flag:
            tail = self.tail = self.tail + 1
            if not self.broken:
                self.head += 1
            if tail > self.longest:
                first = self.longest == 0
                self.longest = tail
                return first
        elif self.tail or not self.broken:
            self.tail = 0
            self.broken = True
        return False

    def join(self, b: Streak) -> None:
        across = self.tail + b.head
        self.longest = max(self.longest, b.longest, across)
        if not self.broken:
            self.head += b.head
        self.tail = b.tail if b.broken else across
        self.broken = self.broken or b.broken

    @classmethod
    def of_flags(cls, flags: bytes) -> Streak:
        """From a byte string of 0/1 flags, by C-level splitting."""
        runs = flags.split(b"\x00")
        return cls(head=len(runs[0]), tail=len(runs[-1]), longest=max(map(len, runs)),
                   broken=len(runs) > 1)


@dataclass(slots=True)
class Growth:
    """How long a value kept growing: the most rises between two falls, joinable.

    The sequence is judged step by step: a rise extends the current run by one, an equal value
    keeps it, a fall ends it. `first` and `last` are kept so a join can judge the step across.
    """

    first: int | None = None
    last: int | None = None
    head: int = 0
    tail: int = 0
    longest: int = 0
    dropped: bool = False

    def add(self, value: int) -> None:
        prev = self.last
        if prev is None:
            if self.first is None:
                self.first = value
        elif value > prev:
            tail = self.tail = self.tail + 1
            if not self.dropped:
                self.head += 1
            if tail > self.longest:
                self.longest = tail
        elif value < prev:
            self.tail = 0
            self.dropped = True
        self.last = value

    def join(self, b: Growth) -> None:
        step = 0
        if b.first is not None and self.last is not None:
            step = 1 if b.first > self.last else (-1 if b.first < self.last else 0)
        if step < 0:
            across = b.head
            self.dropped = True
        else:
            across = self.tail + step + b.head
            if not self.dropped:
                self.head += step + b.head
        self.longest = max(self.longest, b.longest, across)
        self.tail = b.tail if b.dropped else across
        self.dropped = self.dropped or b.dropped
        if self.first is None:
            self.first = b.first
        if b.last is not None:
            self.last = b.last

    @classmethod
    def of_values(cls, values: Sequence[int]) -> Growth:
        """From a whole column, by C-level maps: +1 up, 0 down (a fall ends a run), 1 level."""
        if not values:
            return cls()
        later, earlier = values[1:], values[:-1]
        # operator.gt/lt, not int.__gt__/__lt__: a slot wrapper called through map costs
        # twice as much (half of this function's time on a 20,000-row block).
        steps = bytes(map(add, map(sub, map(gt, later, earlier), map(lt, later, earlier)),
                          repeat(1)))
        rises = list(map(bytes.count, steps.split(b"\x00"), repeat(b"\x02")))
        return cls(first=values[0], last=values[-1], head=rises[0], tail=rises[-1],
                   longest=max(rises), dropped=len(rises) > 1)


@dataclass(slots=True)
class Peak:
    """The maximum of a sequence and the first line that reached it (ties keep the first)."""

    value: Any = None
    evidence: Evidence | None = None

    def beats(self, value: Any) -> bool:
        return self.value is None or value > self.value

    def join(self, b: Peak) -> None:
        if b.value is not None and self.beats(b.value):
            self.value, self.evidence = b.value, b.evidence


# Above the whole hundredths of any gen throughput the column route reads (`d.dd` with at most
# nine integer digits, parsers/sglang/bulk.py), and a multiple of 100 (`Runtime.of_columns`).
_PAIR = 10 ** 12
_PAIR_BASE = _PAIR // 100  # a `gen_rows` key: running * _PAIR_BASE + whole tok/s


def _median(hist: dict[int, int] | None) -> float | None:
    """The median of a histogram {value: count}; of an even count, the mean of the two middle
    values; None when it is empty."""
    if not hist:
        return None
    total = sum(hist.values())
    lo_rank, hi_rank = (total - 1) // 2, total // 2
    seen, lo, hi = 0, None, None
    for value in sorted(hist):
        seen += hist[value]
        if lo is None and seen > lo_rank:
            lo = value
        if seen > hi_rank:
            hi = value
            break
    assert lo is not None and hi is not None
    return (lo + hi) / 2


def _later(a: Any, b: Any) -> Any:
    return b if b is not None else a


@dataclass
class Runtime:
    """Bounded aggregates over one run's runtime batch lines (and its retraction lines)."""

    prefill_batches: int = 0
    decode_batches: int = 0
    last_token_usage: float | None = None
    token_usage: Peak = field(default_factory=Peak)
    last_running_req: int | None = None
    running_req: Peak = field(default_factory=Peak)  # no evidence is kept for this peak
    last_queue_req: int | None = None
    queue_req: Peak = field(default_factory=Peak)
    last_gen_throughput: float | None = None
    gen_throughput_centi: int = 0  # sum in 1/100 token/s: exact, so chunk sums add up
    gen_throughput_n: int = 0
    # Retraction lines and the requests they retracted, by rank tag: rank -> [lines, requests].
    # How many episodes they are is the engine's to say (`retraction_counts`).
    retraction_ranks: dict[str | None, list[int]] = field(default_factory=dict)
    # The engine's own running count, by rank tag, where its line prints one (vLLM V0 logs
    # every 50th preemption with total_num_cumulative_preemption): the latest is the most.
    retraction_cumulative: dict[str | None, int] = field(default_factory=dict)
    new_token_ratio_first: float | None = None
    new_token_ratio_last: float | None = None
    retraction_evidence: Evidence | None = None
    saturation: Streak = field(default_factory=Streak)  # batches with usage >= 0.95 (batch_usage)
    saturated_evidence: Evidence | None = None  # the first saturated batch
    queue_growth: Growth = field(default_factory=Growth)  # queue, decode line to decode line
    last_ts: str | None = None
    timeline: deque[TimelinePoint] = field(default_factory=lambda: deque(maxlen=TIMELINE_POINTS))
    # Decode lines by running-request count: running -> {tok/s rounded to a whole token/s:
    # lines}. A histogram, so joins add counts and a median at each count is read exactly to
    # the token/s (`gen_median`): what compares two runs like for like (the same load). Read
    # it as `gen_by_running`: the column route counts its rows in `gen_rows` first.
    gen_hist: dict[int, dict[int, int]] = field(default_factory=dict)
    # The column route's decode rows not yet sorted into `gen_hist`, one int key a (running,
    # whole tok/s) pair: running * _PAIR_BASE + tok/s (`of_columns`). Counted in C straight
    # into the run's own Counter, block after block, and sorted out once when read: sorting
    # each block's ~10,000 distinct pairs into the nested histogram and joining that cost the
    # fold about 20% (bench_check, 2026-12-05).
    gen_rows: Counter[int] = field(default_factory=Counter)
    # Prefill throughput as the engine printed it: {tok/s rounded to a whole token/s: lines},
    # a histogram as above, of the lines that print a non-zero figure (`prefill_median`).
    # What the figure is: SGLang's `input throughput (token/s)` of a prefill line (0.5.9+) is
    # the previous prefill batch's new tokens over the time since the previous prefill line
    # (0.5.9 managers/scheduler_metrics_mixin.py:166-169), vLLM's `Avg prompt throughput` the
    # prompt tokens computed over the logging interval (0.34.0 v1/metrics/loggers.py:164, 169,
    # 257). Both are rates over an interval, idle time included, and name no batch: so they are
    # not bucketed by the line's own #new-token or #running-req (SGLang's figure belongs to the
    # batch before the line, vLLM's to no one batch), and a zero (an interval without prefill:
    # SGLang's first prefill line of a start, `last_prefill_tokens = 0` at :78; vLLM's line
    # after the engine went idle) is left out, as it measures no prefill at all.
    prefill_by_tput: dict[int, int] = field(default_factory=dict)

    # -- what a reader sees -----------------------------------------------------------------
    @property
    def peak_token_usage(self) -> float | None:
        return self.token_usage.value  # type: ignore[no-any-return]

    @property
    def peak_running_req(self) -> int | None:
        return self.running_req.value  # type: ignore[no-any-return]

    @property
    def peak_queue_req(self) -> int | None:
        return self.queue_req.value  # type: ignore[no-any-return]

    @property
    def mean_gen_throughput(self) -> float | None:
        if not self.gen_throughput_n:
            return None
        return self.gen_throughput_centi / self.gen_throughput_n / 100

    @property
    def gen_by_running(self) -> dict[int, dict[int, int]]:
        """`gen_hist` with the column route's pending rows (`gen_rows`) sorted in."""
        if self.gen_rows:
            by_running = self.gen_hist
            for key, n in self.gen_rows.items():
                running, value = divmod(key, _PAIR_BASE)
                hist = by_running.setdefault(running, {})
                hist[value] = hist.get(value, 0) + n
            self.gen_rows.clear()
        return self.gen_hist

    def gen_median(self, running: int) -> float | None:
        """The median generation throughput (whole tok/s) of the decode lines that ran
        `running` requests, None when none did; of an even count, the mean of the two middle
        values."""
        return _median(self.gen_by_running.get(running))

    def prefill_median(self) -> float | None:
        """The median prefill throughput (whole tok/s) of the lines that print a non-zero one
        (`prefill_by_tput`), None when none does."""
        return _median(self.prefill_by_tput)

    @property
    def prefill_tput_lines(self) -> int:
        return sum(self.prefill_by_tput.values())

    def retraction_counts(self, groups: Collection[str] | None) -> tuple[int, int]:
        """(episodes, requests retracted) of the retraction lines, each episode once.

        `groups` (the engine's `retraction_groups`) are the rank tags that set apart ranks
        which retract on their own; the ranks that share them log the same retraction, one line
        each, so such a group counts as its busiest rank, and the groups add up. None: every
        line is an episode of its own. The engine says which, as only it knows which of its
        ranks log a retraction (SGLang: every TP rank)."""
        cum = self.retraction_cumulative
        ranks = {rank: (max(n, cum.get(rank, 0)), max(reqs, cum.get(rank, 0)))
                 for rank, (n, reqs) in self.retraction_ranks.items()}
        if groups is None:
            return (sum(n for n, _ in ranks.values()), sum(r for _, r in ranks.values()))
        busiest: dict[str, list[int]] = {}
        for rank, (n, reqs) in ranks.items():
            key = " ".join(t for t in (rank or "").split() if t.rstrip(_DIGITS) in groups)
            top = busiest.setdefault(key, [0, 0])
            top[0], top[1] = max(top[0], n), max(top[1], reqs)
        return sum(n for n, _ in busiest.values()), sum(r for _, r in busiest.values())

    def to_dict(self, retraction_groups: Collection[str] | None = None) -> dict[str, Any]:
        """The facts a reader sees; the retractions counted by the engine's
        `retraction_groups` (`retraction_counts`)."""
        mean = self.mean_gen_throughput
        retractions, retracted_reqs = self.retraction_counts(retraction_groups)
        return {
            "prefill_batches": self.prefill_batches,
            "decode_batches": self.decode_batches,
            "last_token_usage": self.last_token_usage,
            "peak_token_usage": self.peak_token_usage,
            "last_running_req": self.last_running_req,
            "peak_running_req": self.peak_running_req,
            "last_queue_req": self.last_queue_req,
            "peak_queue_req": self.peak_queue_req,
            "last_gen_throughput": self.last_gen_throughput,
            "mean_gen_throughput": round(mean, 2) if mean is not None else None,
            "retractions": retractions,
            "retracted_reqs": retracted_reqs,
            "new_token_ratio_first": self.new_token_ratio_first,
            "new_token_ratio_last": self.new_token_ratio_last,
            "saturated_longest": self.saturation.longest,
            "queue_growth_longest": self.queue_growth.longest,
            "last_ts": self.last_ts,
        }

    # -- one row ----------------------------------------------------------------------------
    def add_batch(self, decode: bool, fields: dict[str, Any], ts: str | None, line: int,
                  witness: Witness) -> None:
        """Fold one decode or prefill batch line (its parsed fields); `witness` builds the
        evidence for this line only when a fact needs it."""
        f = fields
        u = batch_usage(f)
        if u is not None:
            self.last_token_usage = u
            if self.token_usage.beats(u):
                self.token_usage.value, self.token_usage.evidence = u, witness.evidence()
            if self.saturation.add(u >= SATURATION):
                self.saturated_evidence = witness.evidence()
        running = f.get("running_req")
        if running is not None:
            self.last_running_req = running
            if self.running_req.beats(running):
                self.running_req.value = running
        queue = f.get("queue_req")
        if queue is not None:
            self.last_queue_req = queue
            if self.queue_req.beats(queue):
                self.queue_req.value, self.queue_req.evidence = queue, witness.evidence()
            if decode:  # a prefill line repeats a queue that the decode lines already saw
                self.queue_growth.add(queue)
        if ts:
            self.last_ts = ts
        if not decode:
            self.prefill_batches += 1
            self._count_prefill_tput(f.get("input_throughput"))
            return
        self.decode_batches += 1
        self._count_prefill_tput(f.get("prompt_throughput"))  # vLLM's stats line
        preempted = f.get("preempted_reqs")
        if preempted:
            # Requests preempted since the previous stats line (vLLM counts over the interval):
            # a retraction episode, not a gauge.
            self._count_retraction(witness.rank, preempted)
            if self.retraction_evidence is None:
                self.retraction_evidence = witness.evidence()
            else:
                self.retraction_evidence.count += 1
            self.timeline.append(TimelinePoint(ts, line, None, None, None, None, True))
        g = f.get("gen_throughput")
        if g is not None and not math.isfinite(g):
            g = None  # a mangled line: no throughput, never a crash
        if g is not None:
            self.last_gen_throughput = g
            self.gen_throughput_centi += int(g * 100 + 0.5)
            self.gen_throughput_n += 1
            if running is not None:
                hist = self.gen_hist.setdefault(running, {})
                bucket = int(g + 0.5)
                hist[bucket] = hist.get(bucket, 0) + 1
        self.timeline.append(_new_point(TimelinePoint, (ts, line, u, running, queue, g, False)))

    def add_retraction(self, fields: dict[str, Any], ts: str | None, line: int,
                       witness: Witness) -> None:
        self._count_retraction(witness.rank, fields.get("retracted_reqs") or 0)
        total = fields.get("cumulative")
        if isinstance(total, int):
            rank = witness.rank
            self.retraction_cumulative[rank] = max(self.retraction_cumulative.get(rank, 0), total)
        before, after = fields.get("new_token_ratio_before"), fields.get("new_token_ratio_after")
        if self.new_token_ratio_first is None and before is not None:
            self.new_token_ratio_first = before
        if after is not None:
            self.new_token_ratio_last = after
        if self.retraction_evidence is None:
            self.retraction_evidence = witness.evidence()
        else:
            self.retraction_evidence.count += 1
        # A marker only: its values stay empty so that the point does not depend on what was
        # read before it (chunked reads must build the same timeline).
        self.timeline.append(TimelinePoint(ts, line, None, None, None, None, True))

    def _count_prefill_tput(self, p: float | None) -> None:
        if p is None or not math.isfinite(p):
            return
        bucket = int(p + 0.5)
        if bucket > 0:
            self.prefill_by_tput[bucket] = self.prefill_by_tput.get(bucket, 0) + 1

    def _count_retraction(self, rank: str | None, reqs: int) -> None:
        seen = self.retraction_ranks.setdefault(rank, [0, 0])
        seen[0] += 1
        seen[1] += reqs

    # -- the lines that came after ----------------------------------------------------------
    def join(self, b: Runtime) -> None:
        """Append `b`, the summary of the lines right after this one's, folded from scratch."""
        self.saturation.join(b.saturation)
        if self.saturated_evidence is None:
            self.saturated_evidence = b.saturated_evidence
        self.queue_growth.join(b.queue_growth)
        self.token_usage.join(b.token_usage)
        self.running_req.join(b.running_req)
        self.queue_req.join(b.queue_req)
        self.prefill_batches += b.prefill_batches
        self.decode_batches += b.decode_batches
        self.last_token_usage = _later(self.last_token_usage, b.last_token_usage)
        self.last_running_req = _later(self.last_running_req, b.last_running_req)
        self.last_queue_req = _later(self.last_queue_req, b.last_queue_req)
        self.last_gen_throughput = _later(self.last_gen_throughput, b.last_gen_throughput)
        self.gen_throughput_centi += b.gen_throughput_centi
        self.gen_throughput_n += b.gen_throughput_n
        self.last_ts = _later(self.last_ts, b.last_ts)
        for rank, (n, reqs) in b.retraction_ranks.items():
            seen = self.retraction_ranks.setdefault(rank, [0, 0])
            seen[0] += n
            seen[1] += reqs
        for rank, total in b.retraction_cumulative.items():
            self.retraction_cumulative[rank] = max(self.retraction_cumulative.get(rank, 0), total)
        if self.new_token_ratio_first is None:
            self.new_token_ratio_first = b.new_token_ratio_first
        self.new_token_ratio_last = _later(self.new_token_ratio_last, b.new_token_ratio_last)
        if b.retraction_evidence is not None:
            if self.retraction_evidence is None:
                self.retraction_evidence = b.retraction_evidence
            else:
                self.retraction_evidence.count += b.retraction_evidence.count
        self.timeline.extend(b.timeline)
        if b.gen_rows:
            self.gen_rows.update(b.gen_rows)
        for running, counts in b.gen_hist.items():
            hist = self.gen_hist.setdefault(running, {})
            for value, n in counts.items():
                hist[value] = hist.get(value, 0) + n
        tput = self.prefill_by_tput
        for value, n in b.prefill_by_tput.items():
            tput[value] = tput.get(value, 0) + n

    # -- whole columns ----------------------------------------------------------------------
    @classmethod
    def of_columns(cls, cols: Columns, gen_rows: Counter[int] | None = None) -> Runtime:
        """The summary of a stretch of batch rows given column-wise (see `Columns`); its decode
        rows' (running, tok/s) keys are counted into `gen_rows` when given (the `gen_rows` of
        the runtime it is then joined to: `add_columns`), else into its own."""
        b = cls()
        m = len(cols)
        if not m:
            return b
        usage, gen = cols.usage, cols.gen
        n_decode = m - gen.count("")
        b.prefill_batches = m - n_decode
        b.decode_batches = n_decode
        b.last_ts = cols.ts(m - 1)
        b.last_token_usage = float(usage[-1])
        top = max(usage)
        b.token_usage = Peak(float(top), cols.evidence(usage.index(top)))
        flags = bytes(map(SATURATED_TEXT.__le__, usage))
        b.saturation = Streak.of_flags(flags)
        if b.saturation.longest:
            b.saturated_evidence = cols.evidence(flags.index(1))
        # Each distinct running text (a few dozen a block) converted once, for the peak, the
        # last value and the histogram's keys below.
        running_of = {text: int(text) for text in set(cols.running)}
        b.last_running_req = running_of[cols.running[-1]]
        b.running_req = Peak(max(running_of.values()))
        queue_of = {text: int(text) for text in set(cols.queue)}  # each distinct text once
        queues = list(map(queue_of.__getitem__, cols.queue))
        b.last_queue_req = queues[-1]
        peak_q = max(queues)
        b.queue_req = Peak(peak_q, cols.evidence(queues.index(peak_q)))
        # A prefill row's input throughput, `d.dd` text (empty where the line prints none),
        # rounded as `add_batch` does, int(float + 0.5), in C; a zero is left out as there.
        for value, n in Counter(map(int, map(add, map(float, filter(None, cols.tput)),
                                             repeat(0.5)))).items():
            if value > 0:
                b.prefill_by_tput[value] = n
        if n_decode:
            b.queue_growth = Growth.of_values(list(compress(queues, gen)))
            gens = list(filter(None, gen))
            b.last_gen_throughput = float(gens[-1])
            # `d.dd` text: its digits are exactly int(g * 100 + 0.5), and of those whole
            # hundredths (c + 50) // 100 is int(g + 0.5), `add_batch`'s whole tok/s: each
            # figure is read once for both (the column route's hot loop)
            centis = list(map(int, map(str.replace, gens, repeat("."), repeat(""))))
            b.gen_throughput_centi = sum(centis)
            b.gen_throughput_n = len(gens)
            # The (running, whole tok/s) histogram counted on one int per row, in C:
            # (running * _PAIR + 50 + c) // 100 is running * _PAIR_BASE + (c + 50) // 100
            # (`_PAIR` a multiple of 100 above any c), where a Counter of (running, value) tuples
            # cost the fold +14% (bench_check).
            scaled = {text: n * _PAIR + 50 for text, n in running_of.items()}
            (b.gen_rows if gen_rows is None else gen_rows).update(
                map(floordiv, map(add, map(scaled.__getitem__, compress(cols.running, gen)),
                                  centis), repeat(100)))
            rows = list(compress(range(m), gen))[-TIMELINE_POINTS:]
            b.timeline.extend(TimelinePoint(cols.ts(k), cols.line(k), float(usage[k]),
                                            int(cols.running[k]), queues[k], float(gen[k]),
                                            False) for k in rows)
        return b

    def add_columns(self, cols: Columns) -> None:
        """Join the summary of a stretch of batch rows that come right after this one's."""
        self.join(Runtime.of_columns(cols, self.gen_rows))


class Witness:
    """Builds the evidence of one line on demand (most rows never need theirs)."""

    __slots__ = ("line", "rank", "source", "text", "ts")

    def __init__(self, source: str, line: int, rank: str | None, ts: str | None,
                 text: str) -> None:
        self.source, self.line, self.rank, self.ts, self.text = source, line, rank, ts, text

    def evidence(self) -> Evidence:
        return Evidence.of(self.source, self.line, self.rank, self.ts, self.text)


@dataclass(slots=True)
class Columns:
    """A stretch of batch rows of one block of lines, column-wise, in line order.

    Row k is the line `lines[at[k]]`, numbered `first_line + at[k]`. Values are the printed text
    (usage `d.dd`, so text order is numeric order); `gen` is empty for a prefill row, `tput` (a
    prefill row's input throughput) for a decode row or a prefill line that prints none. Each row's
    `[ts ranks]` head is kept as text and `facts` maps every distinct head to its (ts, rank)
    once, so a row's timestamp and evidence cost nothing until a fact needs them.
    """

    source: str
    first_line: int
    lines: Sequence[str]
    at: Sequence[int]
    heads: Sequence[str]
    facts: dict[str, tuple[str | None, str | None]]
    usage: Sequence[str]
    running: Sequence[str]
    queue: Sequence[str]
    gen: Sequence[str]
    tput: Sequence[str]

    def __len__(self) -> int:
        return len(self.at)

    def line(self, k: int) -> int:
        return self.first_line + self.at[k]

    def ts(self, k: int) -> str | None:
        return self.facts[self.heads[k]][0]

    def evidence(self, k: int) -> Evidence:
        ts, rank = self.facts[self.heads[k]]
        return Evidence.of(self.source, self.line(k), rank, ts, self.lines[self.at[k]])
