"""The metric series for the Timeline, on the log's clock.

A scrape's `Snapshot.at` is the scraper's own clock (monotonic: only differences mean
anything), the log's points are on the clock of their timestamps (`parsers.prefix.ts_seconds`:
epoch seconds of a dated stamp read as local time). Whoever took the scrapes knows the offset
between the two (for a live scrape on this machine beside a dated log:
`time.time() - time.monotonic()`), so it is given, never guessed: without it the metric series
are not drawn on the log's axis.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kvtui.core.metrics.snapshot import Snapshot


@dataclass(frozen=True, slots=True)
class MetricPoint:
    seconds: float  # on the log's clock
    kv_usage: float | None  # the fullest KV pool's usage (Mamba state slots are not KV)
    running: float | None
    queued: float | None


def points(snapshots: Sequence[Snapshot], offset: float) -> list[MetricPoint]:
    out = []
    for s in snapshots:
        usages = [p.usage for p in s.pools or () if p.kind != "mamba" and p.usage is not None]
        out.append(MetricPoint(s.at + offset, max(usages) if usages else None, s.running,
                               s.queued))
    return out
