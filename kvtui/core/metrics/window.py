"""Rates and percentiles over the window between two scrapes.

Percentiles are read from the histogram's bucket deltas with Prometheus' own
`histogram_quantile` rule (linear interpolation inside the bucket that holds the rank; the
lower bound of the first bucket is 0; a rank in the +Inf bucket answers the highest finite
bound): https://prometheus.io/docs/prometheus/latest/querying/functions/#histogram_quantile.
A bucket-interpolated figure is approximate by construction: its error is at most the width of
the bucket it falls in.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from kvtui.core.metrics.snapshot import Histogram, Snapshot

QUANTILES: tuple[float, ...] = (0.5, 0.95, 0.99)


def delta(new: Histogram, old: Histogram | None) -> Histogram | None:
    """`new - old`, or None on a counter reset (the server restarted between the scrapes) or
    when the buckets changed."""
    if old is None:
        return new
    if [b for b, _ in new.buckets] != [b for b, _ in old.buckets] or new.count < old.count:
        return None
    buckets = tuple((b, n - o) for (b, n), (_, o) in zip(new.buckets, old.buckets, strict=True))
    if any(c < 0 for _, c in buckets):
        return None
    return Histogram(buckets, new.sum - old.sum, new.count - old.count)


def quantile(q: float, h: Histogram) -> float | None:
    """Prometheus' histogram_quantile over cumulative buckets; None when nothing was observed."""
    if h.count <= 0 or not h.buckets:
        return None
    rank = q * h.count
    lower, below = 0.0, 0.0
    finite = [b for b, _ in h.buckets if not math.isinf(b)]
    for bound, cumulative in h.buckets:
        if cumulative >= rank:
            if math.isinf(bound):
                return finite[-1] if finite else None
            inside = cumulative - below
            if inside <= 0:
                return bound
            return lower + (bound - lower) * (rank - below) / inside
        lower, below = bound, cumulative
    return finite[-1] if finite else None


@dataclass(frozen=True, slots=True)
class Window:
    """What two scrapes say together. `seconds` is None for a single scrape: then the
    percentiles are over everything since the server started and there are no rates."""

    seconds: float | None
    percentiles: Mapping[str, Mapping[str, float | None] | None]
    rates: Mapping[str, float | None]
    counts: Mapping[str, float | None]
    queue_growth: float | None


def window(new: Snapshot, old: Snapshot | None) -> Window:
    seconds = None if old is None else new.at - old.at
    percentiles: dict[str, dict[str, float | None] | None] = {}
    counts: dict[str, float | None] = {}
    for name, hist in new.histograms.items():
        d = delta(hist, None if old is None else old.histograms.get(name))
        percentiles[name] = None if d is None else {
            f"p{round(q * 100)}": quantile(q, d) for q in QUANTILES}
        counts[name] = None if d is None else d.count
    rates: dict[str, float | None] = {}
    if old is not None and seconds and seconds > 0:
        for name, value in new.counters.items():
            before = old.counters.get(name)
            rates[name] = (None if before is None or value < before
                           else (value - before) / seconds)
    growth = None
    if old is not None and new.queued is not None and old.queued is not None:
        growth = new.queued - old.queued
    return Window(seconds, percentiles, rates, counts, growth)


def hit_rate(new: Snapshot, old: Snapshot | None) -> float | None:
    """Prefix-cache hit rate: hits/queries over the window (vLLM's counters, in tokens), else
    over the server's life, else the engine's own gauge (SGLang's `cache_hit_rate` is the last
    prefill's value, not a window: sglang-0.5.23 wheel:
    sglang/srt/managers/scheduler_components/metrics_reporter.py:1084-1086)."""
    hits, queries = new.counters.get("cache_hits"), new.counters.get("cache_queries")
    if hits is not None and queries is not None:
        if old is not None:
            oh, oq = old.counters.get("cache_hits"), old.counters.get("cache_queries")
            if oh is not None and oq is not None and queries > oq and hits >= oh:
                return (hits - oh) / (queries - oq)
        return hits / queries if queries > 0 else None
    return new.gauges.get("cache_hit_rate")
