"""A session's scrapes of the server's `/metrics`, kept as a bounded series of snapshots in
time order, with the state of the source that takes them.

Why in the core: scrapes enter the one pipeline (`Session.feed_scrape`) as typed events, so
the TUI's metrics pane, `check` on a recorded session and the export read the same series and
say the same thing. The engine's catalogue (`kvtui.core.metrics.catalogue`) reads each scrape
into a `Snapshot`; the series keeps the last `limit` of them (a live view at 1 Hz holds ten
minutes by default) and the state of the source, which is honest about a scrape that failed:
`ok`, `not_enabled`, `refused`, `timeout`, `http_error`, `bad_url`, `bad_response`,
`unknown_engine`, or `stale` (a scrape succeeded before, the latest did not: what the series
shows is the last good one).
"""

from __future__ import annotations

import bisect
import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kvtui.core.metrics import alerts as metric_alerts
from kvtui.core.metrics import catalogue
from kvtui.core.metrics import report as metric_report
from kvtui.core.metrics import window as metric_window
from kvtui.core.metrics.exposition import Scrape
from kvtui.core.metrics.snapshot import Snapshot
from kvtui.core.text import inert

SERIES_LIMIT = 600  # snapshots kept (10 minutes at 1 Hz, 50 at the slowest 5 s interval)


@dataclass(frozen=True, slots=True)
class SourceState:
    """The metrics source's last word: `state` (see the module docstring), what it means
    (`detail`) and when (the scrape clock)."""

    state: str
    detail: str = ""
    at: float = 0.0


NO_SCRAPE = SourceState("none", "no scrape yet")


class MetricsSeries:
    """The snapshots of one server's scrapes, oldest first (at most `limit`).

    `snapshots`: the kept ones, in time order (a scrape that arrives late is put in its place).
    `latest`: the newest, or None. `state`: the source's (`SourceState`). `name`: where the
    scrapes come from (a URL, "host:port over SSH", a recording).

    Safe across threads: a poller feeds it while a view reads it (one small lock)."""

    __slots__ = ("_lock", "_snaps", "engine", "fed", "name", "state")

    def __init__(self, limit: int = SERIES_LIMIT) -> None:
        self._snaps: deque[Snapshot] = deque(maxlen=max(2, limit))
        self.engine: catalogue.EngineMetrics | None = None
        self.state: SourceState = NO_SCRAPE
        self.name: str | None = None
        self.fed = 0  # scrapes and failures fed, kept or not (a view polls it for change)
        self._lock = threading.Lock()

    # -- feeding -----------------------------------------------------------------------------
    def feed(self, scrape: Scrape, source: str | None = None) -> Snapshot | None:
        """A parsed scrape: read by its engine's catalogue (detected from the first scrape that
        carries a known namespace) and kept; None when no known engine's metric is in it."""
        with self._lock:
            return self._feed(scrape, source)

    def _feed(self, scrape: Scrape, source: str | None) -> Snapshot | None:
        self.fed += 1
        if source is not None:
            self.name = source
        engine = self.engine or catalogue.detect(scrape)
        if engine is None or engine.prefix not in scrape.prefixes():
            self.state = SourceState("unknown_engine", "the endpoint answered with no metric "
                                     "of a known engine (sglang:*, vllm:*)", scrape.at)
            return None
        self.engine = engine
        snap = engine.snapshot(scrape)
        snaps = self._snaps
        if snaps and snap.at < snaps[-1].at:  # late: its place in time, the oldest may go
            items = list(snaps)
            bisect.insort(items, snap, key=lambda s: s.at)
            snaps.clear()
            snaps.extend(items[-(snaps.maxlen or len(items)):])
        else:
            snaps.append(snap)
        self.state = SourceState("ok", "", scrape.at)
        return snap

    def fail(self, state: str, detail: str, at: float = 0.0, source: str | None = None) -> None:
        """A scrape that failed: its state, `stale` when a good one came before."""
        with self._lock:
            self.fed += 1
            if source is not None:
                self.name = source
            if self._snaps and state != "stale":
                ago = at - self._snaps[-1].at
                detail = f"last good scrape {ago:.1f} s ago; now: {state}: {detail}"
                state = "stale"
            self.state = SourceState(state, detail, at)

    # -- reading -----------------------------------------------------------------------------
    @property
    def snapshots(self) -> Sequence[Snapshot]:
        with self._lock:
            return tuple(self._snaps)

    @property
    def latest(self) -> Snapshot | None:
        with self._lock:
            return self._snaps[-1] if self._snaps else None

    def __len__(self) -> int:
        return len(self._snaps)

    @property
    def empty(self) -> bool:
        """Nothing was ever fed: the report says nothing of metrics."""
        return self.fed == 0

    def facts(self) -> dict[str, Any] | None:
        """What the series says, for the session's report (None when nothing was fed): the
        source and its state, and the `kvtui metrics` report of the newest snapshot over the
        window since the one before it (rates and percentiles need two)."""
        with self._lock:
            return self._facts()

    def _facts(self) -> dict[str, Any] | None:
        if self.empty:
            return None
        out: dict[str, Any] = {"source": self.name, "state": self.state.state,
                               "detail": self.state.detail or None, "scrapes": len(self._snaps),
                               "facts": None}
        new = self._snaps[-1] if self._snaps else None
        if new is None or self.engine is None:
            return out
        old = self._snaps[-2] if len(self._snaps) > 1 else None
        win = metric_window.window(new, old)
        found = self.engine.alerts(new, old) + metric_alerts.general(new, old, win)
        out["facts"] = metric_report.build(self.name or "", new, old, win, found, None)
        return out


def facts_text(facts: dict[str, Any]) -> list[str]:
    """The metrics facts as lines of the text report (`kvtui.core.render`)."""
    head = f"Metrics    {facts['source'] or 'scrapes'}: {facts['state']}"
    if facts["detail"]:
        head += f" ({facts['detail']})"
    out = [head]
    if facts["facts"] is not None:
        body = metric_report.text(facts["facts"]).rstrip("\n").split("\n")
        out.extend("  " + line for line in body[1:])  # its first line names the source again
    # labels and details come from the server: never markup, never control characters
    return [inert(line, 2000) for line in out]
