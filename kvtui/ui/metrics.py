"""The metrics pane: what the server's `/metrics` says beside its log.

It reads a time-ordered `Sequence[Snapshot]` (the session's metric series; any holder of
scrapes will do) and the log's report, and draws usage per pool, the queue, retractions /
preemptions per second, latency percentiles over a sliding window (histogram deltas,
`kvtui.core.metrics.window`), throughput, hit rate, and the alerts that need both sides
(`kvtui.core.metrics.cross`). Label values come from the server: every text is a `Text` built
piece by piece and shown with markup off.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from kvtui.core import severity
from kvtui.core.metrics import cross
from kvtui.core.metrics.snapshot import LATENCIES, Snapshot
from kvtui.core.metrics.window import Window, hit_rate, window
from kvtui.core.report_types import Report
from kvtui.ui.provenance import METRICS, tag
from kvtui.ui.text import clean, severity_style

# The percentiles and rates are over the scrapes of the last WINDOW_S seconds (the newest
# against the oldest scrape still inside it): long enough for a few requests to finish at 1 Hz,
# short enough to follow a burst.
WINDOW_S = 60.0
# What each scrape state means to the reader (kvtui.sources.metrics' vocabulary).
STATES: dict[str, str] = {
    "ok": "scraping",
    "not_enabled": "not enabled on the server (HTTP 404: SGLang needs --enable-metrics)",
    "refused": "refused (nothing listens at that address)",
    "timeout": "no answer (timeout)",
    "http_error": "the server answered with an error",
    "bad_url": "not an http(s) URL",
    "bad_response": "not the Prometheus text format",
    "stale": "stale: the latest scrapes failed, the figures are the last good scrape's",
    "recorded": "recorded: each scrape is shown once the replay passes the line it was taken at",
}
# The states that are no failure (said plainly, not in red).
CALM = frozenset({"ok", "recorded"})
EMPTY = ("No metrics source for this session. kvtui reads the server's Prometheus /metrics "
         "beside the log when it is given one (`--metrics URL`); `kvtui metrics URL` reads "
         "one headless.")


def sliding(snapshots: Sequence[Snapshot], seconds: float = WINDOW_S
            ) -> tuple[Snapshot, Snapshot | None]:
    """The newest scrape and the oldest one within `seconds` of it (None: only one)."""
    new = snapshots[-1]
    old = None
    for snap in reversed(snapshots[:-1]):
        if new.at - snap.at > seconds:
            break
        old = snap
    return new, old


def _n(x: float | int | None, approx: bool = False) -> str:
    if x is None:
        return "-"
    return ("≈" if approx else "") + f"{x:,.0f}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def _secs(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x * 1000:.0f}ms" if x < 10 else f"{x:.1f}s"


def _rate(w: Window, name: str) -> str:
    r = w.rates.get(name)
    return "-" if r is None else f"{r:,.2f}/s"


def metrics_text(snapshots: Sequence[Snapshot] | None, report: Report | None = None,
                 state: str | None = None, detail: str | None = None) -> Text:
    """The pane's text. `snapshots` None: no metrics source was configured; empty: one is,
    and nothing was scraped yet. `state` is the scraper's (`ok`, `refused`, ...)."""
    t = Text()
    if snapshots is None:
        t.append(EMPTY, style="dim")
        return t
    if state is not None and state != "ok":
        t.append("source ", style="bold")
        t.append(STATES.get(state, clean(state, 40)),
                 style="dim" if state in CALM else "yellow" if state == "stale" else "red")
        if detail:
            t.append(f"\n  {clean(detail, 300)}", style="dim")
        t.append("\n")
    if not snapshots:
        t.append("waiting for the first scrape", style="dim")
        return t
    new, old = sliding(snapshots)
    w = window(new, old)
    head = f"{new.engine}"
    if new.model:
        head += f" {clean(new.model, 80)}"
    t.append(head, style="bold")
    span = "one scrape" if w.seconds is None else f"{len(snapshots)} scrapes"
    t.append(f"  ({span}{f', metric set {new.releases}' if new.releases else ''})\n",
             style="dim")
    if report is not None:
        found = cross.cross_alerts(report, snapshots)
        if found:
            t.append("log + metrics (alerts)\n", style="bold")
        for a in found:
            t.append(f"  {severity.MARK.get(a.severity, a.severity).strip()} ",
                     style=severity_style(a.severity))
            t.append(f"{clean(a.title, 200)}\n")
    dtype = new.kv_cache_dtype
    if dtype is not None:
        t.append(f"KV dtype  {clean(dtype, 40)}\n")
    elif new.bytes_per_token is not None:
        t.append(f"KV        ≈{new.bytes_per_token:,.0f} B/token per GPU (dtype not exported)\n")
    t.append(f"{'pool':<6}{'used':>10}{'evictable':>10}{'avail':>10}{'usage':>6}\n",
             style="bold")
    for p in new.pools or ():
        approx = set(p.approximate)
        name = p.kind if p.unit == "tokens" else f"{p.kind}*"
        t.append(f"{name:<6}{_n(p.used, 'used' in approx):>10}{_n(p.evictable):>10}"
                 f"{_n(p.available, 'available' in approx):>10}")
        usage = _pct(p.usage)
        style = "red" if p.usage is not None and p.usage >= 0.95 else ""
        t.append(f"{usage:>6}\n", style=style)
    if not new.pools:
        t.append("  not exported\n", style="dim")
    elif any(p.unit == "slots" for p in new.pools):
        t.append("  * state slots (one a request), not tokens\n", style="dim")
    t.append(f"requests  running {_n(new.running)}  queued {_n(new.queued)}")
    if w.queue_growth:
        t.append(f" ({w.queue_growth:+,.0f})", style="yellow" if w.queue_growth > 0 else "")
    t.append("\n")
    span_s = "" if w.seconds is None else f" over {w.seconds:.0f}s"
    for counter, label in (("retracted", "retracted"), ("preempted", "preempted")):
        if counter in new.counters:
            t.append(f"{label:<10}{_rate(w, counter)}{span_s}  "
                     f"({_n(new.counters[counter])} since start)\n")
    if w.seconds is not None and ("prompt_tokens" in new.counters
                                  or "generation_tokens" in new.counters):
        t.append(f"tok/s     prompt {_rate(w, 'prompt_tokens').removesuffix('/s')}  "
                 f"gen {_rate(w, 'generation_tokens').removesuffix('/s')}\n")
    elif "gen_throughput" in new.gauges:
        t.append(f"tok/s     gen {new.gauges['gen_throughput']:,.1f} (engine's last)\n")
    rate = hit_rate(new, old)
    t.append(f"hit rate  {'-' if rate is None else f'{rate:.1%}'}\n")
    if any(name in new.histograms for name in LATENCIES):
        t.append(f"latency   p50/p95/p99 "
                 f"{'since start' if w.seconds is None else span_s.strip()}\n", style="bold")
    for name in LATENCIES:
        if name not in new.histograms:
            continue
        pct = w.percentiles.get(name)
        count = w.counts.get(name)
        if pct is None:
            shown = "- (counter reset)"
        elif not count:
            shown = "no requests"
        else:
            shown = (f"{_secs(pct.get('p50'))} / {_secs(pct.get('p95'))} / "
                     f"{_secs(pct.get('p99'))} ({count:,.0f})")
        t.append(f"  {name:<6}{shown}\n")
    t.rstrip()
    return t


def metrics_facts(snapshots: Sequence[Snapshot] | None) -> Text | None:
    """The Facts pane's lines from /metrics (tagged so: beside the log's own figures for the
    same things), from the newest scrape; None without a metrics source or a scrape."""
    if not snapshots:
        return None
    new = snapshots[-1]
    t = Text()
    t.append("Metrics   ", style="bold")
    parts = [new.engine]
    if new.kv_cache_dtype is not None:
        parts.append(f"KV dtype {clean(new.kv_cache_dtype, 40)}")
    elif new.bytes_per_token is not None:
        parts.append(f"≈{new.bytes_per_token:,.0f} B/token per GPU")
    for p in new.pools or ():
        size = "" if p.tokens is None else f" {p.tokens:,} {p.unit}"
        parts.append(f"{p.kind}{size} at {_pct(p.usage)}")
    parts.append(f"running {_n(new.running)}  queued {_n(new.queued)}")
    t.append("  ".join(parts))
    tag(t, METRICS)
    t.append("\n")
    return t


class MetricsPane(VerticalScroll):
    """Scrollable metrics text (repainted only when it changed)."""

    can_focus = True

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.border_title = "Metrics"
        self.configured = False  # a metrics source was given to this session
        self._body = Static(metrics_text(None), markup=False, id="metrics-body")
        self._last: Text | None = None

    def compose(self) -> ComposeResult:
        yield self._body

    def show(self, snapshots: Sequence[Snapshot] | None, report: Any = None,
             state: str | None = None, detail: str | None = None) -> None:
        self.configured = snapshots is not None
        text = metrics_text(snapshots, report if isinstance(report, Report) else None,
                            state, detail)
        if text == self._last:
            return
        self._last = text
        self._body.update(text)
