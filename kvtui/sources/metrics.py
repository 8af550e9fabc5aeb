"""Scraping a server's Prometheus endpoint over HTTP, with an honest state.

The URL is used as given (any path: a proxy may serve the exposition elsewhere). The states
say what the user can act on: `not_enabled` (the server answered 404 at that path: SGLang
mounts /metrics only with --enable-metrics, sglang-0.5.23 wheel:
sglang/srt/entrypoints/http_server.py:314-317; vLLM always serves it on its API port,
vllm-0.34.0 wheel: vllm/entrypoints/serve/instrumentator/metrics.py:55-80), `refused` (nothing
listens), `timeout`, `http_error` (another status), `bad_url` (no scheme), `stale` (a scrape
succeeded before and the latest failed: what is shown is the last good one), `ok`. After a
failure the next attempt waits twice as long, up to BACKOFF_MAX.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from kvtui.core.metrics.exposition import Scrape

# the scrape interval's bounds: faster loads the server's /metrics (it walks the multiprocess
# directory on each request), slower misses the queue's short bursts
INTERVAL_MIN, INTERVAL_MAX = 1.0, 5.0
BACKOFF_MAX = 60.0
TIMEOUT = 5.0
# exposition bodies are tens of KB (vLLM's sample is 67 KB); a bigger answer is not /metrics
MAX_BODY = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ScrapeResult:
    state: str
    body: str | None
    detail: str
    at: float


def clamp_interval(seconds: float) -> float:
    return min(INTERVAL_MAX, max(INTERVAL_MIN, seconds))


def fetch(url: str, timeout: float = TIMEOUT, clock: Callable[[], float] = time.monotonic,
          ) -> ScrapeResult:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return ScrapeResult("bad_url", None, f"{url!r} is not an http(s) URL "
                            "(http://HOST:PORT/PATH)", clock())
    request = urllib.request.Request(url, headers={"Accept": "text/plain"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read(MAX_BODY + 1)
            charset = response.headers.get_content_charset() or "utf-8"
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return ScrapeResult("not_enabled", None, f"HTTP 404 at {url}: metrics are not "
                                "served there (SGLang needs --enable-metrics; vLLM serves "
                                "/metrics on its API port)", clock())
        return ScrapeResult("http_error", None, f"HTTP {exc.code} {exc.reason} at {url}",
                            clock())
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, ConnectionRefusedError):
            return ScrapeResult("refused", None, f"connection refused at {url}", clock())
        if isinstance(reason, (TimeoutError, socket.timeout)):
            return ScrapeResult("timeout", None, f"no answer from {url} in {timeout:g} s",
                                clock())
        return ScrapeResult("http_error", None, f"{url}: {reason}", clock())
    except TimeoutError:
        return ScrapeResult("timeout", None, f"no answer from {url} in {timeout:g} s", clock())
    except (ConnectionError, OSError) as exc:
        return ScrapeResult("refused" if isinstance(exc, ConnectionRefusedError)
                            else "http_error", None, f"{url}: {exc}", clock())
    if len(raw) > MAX_BODY:
        return ScrapeResult("http_error", None, f"{url}: answer over {MAX_BODY:,} bytes",
                            clock())
    return ScrapeResult("ok", raw.decode(charset, errors="replace"), "", clock())


def get_json(url: str, timeout: float = 2.0) -> dict[str, Any] | None:
    """A small JSON endpoint (/version, /server_info), or None on any failure: the release is
    a nicety, the scrape does not depend on it."""
    result = fetch(url, timeout)
    if result.state != "ok" or result.body is None:
        return None
    try:
        payload = json.loads(result.body)
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None


def origin(url: str) -> str:
    """scheme://host:port of the metrics URL (the version endpoints live at its root)."""
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


Fetch = Callable[[str, float, Callable[[], float]], ScrapeResult]


class Scraper:
    """Scrapes one URL every `interval` seconds (1-5), doubling the wait after a failure.

    `fetcher`: how one scrape is taken (default: HTTP from here, `fetch`; `kvtui ssh` passes
    one that speaks HTTP over a direct-tcpip channel of its SSH connection)."""

    def __init__(self, url: str, interval: float = 2.0, *, timeout: float = TIMEOUT,
                 clock: Callable[[], float] = time.monotonic,
                 fetcher: Fetch | None = None) -> None:
        self.url = url
        self.interval = clamp_interval(interval)
        self.timeout = timeout
        self.clock = clock
        self.fetcher: Fetch = fetcher or fetch
        self.last_ok: ScrapeResult | None = None
        self.failures = 0

    def next_delay(self) -> float:
        if not self.failures:
            return self.interval
        return float(min(BACKOFF_MAX, self.interval * 2 ** self.failures))

    def scrape(self) -> ScrapeResult:
        result = self.fetcher(self.url, self.timeout, self.clock)
        if result.state == "ok":
            self.failures = 0
            self.last_ok = result
            return result
        self.failures += 1
        if self.last_ok is not None:
            ago = result.at - self.last_ok.at
            return ScrapeResult("stale", None, f"last good scrape {ago:.1f} s ago; now: "
                                f"{result.detail}", result.at)
        return result


class ScrapeSink(Protocol):
    """Whoever takes the scrapes as typed events: a pipeline `Session` (its `feed_scrape` and
    `scrape_failed`), or a recorder in front of one."""

    def feed_scrape(self, scrape: Scrape, source: str | None = None) -> None: ...

    def scrape_failed(self, state: str, detail: str, at: float = 0.0,
                      source: str | None = None) -> None: ...


def deliver(result: ScrapeResult, sink: ScrapeSink, source: str) -> None:
    """One scrape's result into the sink: parsed (with `prometheus_client`'s parser), or its
    failure state (`bad_response` when the body is not the exposition format)."""
    from kvtui.core.metrics.exposition import parse

    if result.state != "ok" or result.body is None:
        sink.scrape_failed(result.state, result.detail, result.at, source)
        return
    try:
        scrape = parse(result.body, result.at)
    except ValueError as exc:
        sink.scrape_failed("bad_response", f"{source}: {exc}", result.at, source)
        return
    sink.feed_scrape(scrape, source)


class MetricsPoller:
    """Scrapes on a thread of its own every interval (1-5 s, doubled after each failure up to
    BACKOFF_MAX) and hands each result to `sink` until closed. The scrape times are wall-clock
    seconds (`time.time`), so a recorded session's scrapes keep their spacing on replay."""

    def __init__(self, scraper: Scraper, sink: ScrapeSink, source: str | None = None, *,
                 record: Callable[[ScrapeResult, str], None] | None = None) -> None:
        self.scraper = scraper
        self.sink = sink
        self.source = source or scraper.url
        self.record = record  # a recorder's (kvtui.sources.record), given each result first
        self.stop = threading.Event()
        self._thread: threading.Thread | None = None

    def once(self) -> ScrapeResult:
        result = self.scraper.scrape()
        if self.record is not None:
            self.record(result, self.source)
        deliver(result, self.sink, self.source)
        return result

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                self.once()
            except Exception as exc:  # a scrape must never take the log view down
                self.sink.scrape_failed("http_error", f"{type(exc).__name__}: {exc}",
                                        self.scraper.clock(), self.source)
                self.scraper.failures += 1
            self.stop.wait(self.scraper.next_delay())

    def start(self) -> MetricsPoller:
        self._thread = threading.Thread(target=self.run, name="kvtui-metrics", daemon=True)
        self._thread.start()
        return self

    def close(self, timeout: float = 2.0) -> None:
        self.stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
