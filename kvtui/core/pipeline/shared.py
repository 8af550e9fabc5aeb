"""A Session fed on other threads than the one that reads it.

Why one class: the exporter (`kvtui.commands.exporter`) and the fleet screen
(`kvtui.ui.fleet`) each follow a log on a follower's thread and a server's /metrics on a
poller's, and build reports on a third; both need every access under one lock, the report
memoised until a line or a scrape arrives, and the age of the last line. It is a
`kvtui.sources.metrics.ScrapeSink`: a poller hands it its scrapes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from kvtui.core.metrics.exposition import Scrape
from kvtui.core.pipeline import Session
from kvtui.core.report_types import Report


class SharedSession:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.session = Session()
        self.lock = threading.Lock()
        self.clock = clock
        self.last_line: float | None = None  # `clock()` when the last line was fed
        self._memo: tuple[tuple[int, int], Report] | None = None

    def feed_line(self, source: str, line_no: int, text: str) -> None:
        """One line (the caller holds `lock`, as it feeds a batch)."""
        self.session.feed_line(source, line_no, text)
        self.last_line = self.clock()

    def feed_scrape(self, scrape: Scrape, source: str | None = None) -> None:
        with self.lock:
            self.session.feed_scrape(scrape, source)

    def scrape_failed(self, state: str, detail: str, at: float = 0.0,
                      source: str | None = None) -> None:
        with self.lock:
            self.session.scrape_failed(state, detail, at, source)

    def report(self) -> Report:
        """The session's report, built again only when a line or a scrape came since (the
        caller holds `lock`)."""
        key = (self.session.lines, self.session.metrics.fed)
        if self._memo is None or self._memo[0] != key:
            self._memo = (key, self.session.report())
        return self._memo[1]

    def line_age(self) -> float | None:
        """Seconds since the last line (None: none yet)."""
        return self.clock() - self.last_line if self.last_line is not None else None
