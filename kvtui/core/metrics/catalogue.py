"""The seam between the metrics core and each engine's metric knowledge.

An engine package that exports Prometheus metrics holds a `metrics` module with a `METRICS`
object (this protocol) and its metric names by release as data (`Name` rows, like the line
catalogue). The core loads it by the engine's name through `ENGINE_MODULES`, never by a static
import.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kvtui.core.metrics.exposition import Scrape
from kvtui.core.metrics.snapshot import Snapshot
from kvtui.core.releases import parse_version


@dataclass(frozen=True, slots=True)
class Name:
    """One exported metric (its family name as the parser gives it: counters without
    `_total`) and the releases that export it. `after` is the last release whose wheel was read
    WITHOUT it (None: the oldest release read has it), so a server exporting it is newer than
    that; `until` is the last release read with it when a newer one dropped it (None: the newest
    release read still has it). Releases between two read wheels are not claimed. `cite` is the
    wheel file:line of the newest release read that has it."""

    concept: str
    name: str
    after: str | None
    until: str | None
    cite: str


class MetricAlertLike(Protocol):
    severity: str
    kind: str
    message: str


class EngineMetrics(Protocol):
    engine: str
    prefix: str
    names: Sequence[Name]
    # paths on the server's origin that answer the release, in the order to try
    version_paths: Sequence[str]

    def snapshot(self, scrape: Scrape) -> Snapshot: ...

    def version(self, payload: Mapping[str, Any]) -> str | None: ...

    def alerts(self, new: Snapshot, old: Snapshot | None) -> list[Any]: ...

    def kv_cell(self, snap: Snapshot, spec: Any, release: str | None) -> dict[str, Any] | None:
        """The measured bytes per token against the model's cell for each KV dtype (None when
        the engine exports the dtype itself or not the figures to measure)."""
        ...


def load(engine: str) -> EngineMetrics:
    from kvtui.core.engine import ENGINE_MODULES

    module = ENGINE_MODULES.get(engine)
    if module is None:
        raise ValueError(f"unknown engine {engine!r}")
    metrics: EngineMetrics = importlib.import_module(module + ".metrics").METRICS
    return metrics


def detect(scrape: Scrape) -> EngineMetrics | None:
    """The engine whose namespace (`sglang:`, `vllm:`) the scrape carries."""
    from kvtui.core.engine import ENGINE_MODULES

    present = scrape.prefixes()
    for engine in ENGINE_MODULES:
        metrics = load(engine)
        if metrics.prefix in present:
            return metrics
    return None


def first(names: Sequence[Name], concept: str) -> tuple[str, ...]:
    """A concept's metric names, newest release first (the reader takes the first present)."""
    rows = [n for n in names if n.concept == concept]
    rows.sort(key=lambda n: _v(n.until) if n.until else (10**9,), reverse=True)
    return tuple(n.name for n in rows)


def _v(text: str) -> tuple[int, ...]:
    return tuple(parse_version(text) or (0, 0, 0))


def releases(scrape: Scrape, names: Sequence[Name], floors: Sequence[str] = ()) -> str | None:
    """The release range the metric set implies: newer than the newest `after` of the names
    present, at most the oldest `until` of them (a name later removed). Absent names prove
    nothing (a family can be missing because nothing was observed yet, or a feature is off),
    so only present names count. `floors` are more `after`s the engine found elsewhere (a
    label of an info metric)."""
    present = {n.name for n in names if scrape.get(n.name) is not None}
    rows = [n for n in names if n.name in present]
    floors = [n.after for n in rows if n.after] + list(floors)
    ceilings = [n.until for n in rows if n.until]
    low = max(floors, key=_v) if floors else None
    high = min(ceilings, key=_v) if ceilings else None
    if low and high:
        return f">{low}, <={high}"
    if low:
        return f">{low}"
    if high:
        return f"<={high}"
    return None
