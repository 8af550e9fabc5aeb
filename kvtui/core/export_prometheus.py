"""kvtui's verdicts as Prometheus series (issue 38 point 4): what `kvtui check --format
prometheus` writes for node_exporter's textfile collector and what `kvtui exporter` serves.

One collector over a report (called again at every scrape by the exporter), so the file and the
endpoint can never name a series differently. Every series is prefixed `kvtui_` and carries the
`server` label (the log's or the host's name); facts the log did not state are left out rather
than exported as 0. Exposition through `prometheus_client` (docs/fleet.md has the rules).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, InfoMetricFamily
from prometheus_client.registry import Collector

from kvtui.core import severity
from kvtui.core.fleet.load import current_load
from kvtui.core.report_types import Alert, KVCacheFacts, Report


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What one scrape exports: a server's report, how old its last line is (seconds, None:
    not measured), and the cross-server alerts that name it (a fleet's)."""

    server: str
    report: Report
    last_line_age: float | None = None
    extra_alerts: tuple[Alert, ...] = ()


def _gauge(name: str, doc: str, value: float | None, server: str,
           labels: dict[str, str] | None = None) -> GaugeMetricFamily | None:
    if value is None:
        return None
    names = ["server", *(labels or {})]
    g = GaugeMetricFamily(name, doc, labels=names)
    g.add_metric([server, *(labels or {}).values()], float(value))
    return g


def scales_state(kv: KVCacheFacts) -> str:
    """The `state` label of `kvtui_kv_scales`: one word of a fixed set an alert rule can
    match (`loaded`, `missing`, `unknown`, `n/a` for a 16-bit cache, which has none to load),
    never the text's sentence ("none needed (bf16)")."""
    if kv.scales in (None, "unknown") and kv.scales_said != str(kv.scales or "?"):
        return "n/a"  # the text says "none needed (<16-bit dtype>)"
    return kv.scales if kv.scales in ("loaded", "missing") else "unknown"


def families(snap: Snapshot) -> Iterator[GaugeMetricFamily | InfoMetricFamily]:
    r, s = snap.report, snap.server
    info = InfoMetricFamily("kvtui_server", "The engine, its release and the model the log "
                            "names", labels=["server"])
    info.add_metric([s], {"engine": r.engine or "", "version": (r.runs[-1].engine_version or "")
                          if r.runs else "", "model": r.model.name or ""})
    yield info
    kv = r.kv_cache
    dtype = InfoMetricFamily("kvtui_kv_cache_dtype", "KV cache dtype: as configured and as the "
                             "engine resolved it", labels=["server"])
    dtype.add_metric([s], {"configured": kv.configured_dtype or "",
                           "effective": kv.effective_dtype or ""})
    yield dtype
    scales = GaugeMetricFamily("kvtui_kv_scales", "KV scales state (1 for the current state): "
                               "loaded, missing (scales of 1.0), unknown, or n/a (16-bit KV)",
                               labels=["server", "state"])
    scales.add_metric([s, scales_state(kv)], 1.0)
    yield scales
    load = current_load(r)
    pool = r.runs[-1].pool_size if r.runs else (
        r.capacity.max_total_num_tokens if r.capacity else None)
    for g in (
        _gauge("kvtui_pool_tokens", "KV pool size in tokens (the pool line, else the capacity "
               "line)", pool, s),
        _gauge("kvtui_concurrency_at_context_len", "Requests of the full context length the "
               "pool holds at once", r.whatif.current.concurrency_at_context_len
               if r.whatif is not None else None, s),
        _gauge("kvtui_token_usage", "KV usage (0..1): the fullest pool's from the server's "
               "/metrics where scraped, else the log's last batch line", load.usage, s),
        _gauge("kvtui_running_requests", "Running requests (/metrics where scraped, else the "
               "log's last batch line)", load.running, s),
        _gauge("kvtui_queued_requests", "Queued requests (/metrics where scraped, else the "
               "log's last batch line)", load.queued, s),
        _gauge("kvtui_last_line_age_seconds", "Seconds since the log's last line arrived",
               snap.last_line_age, s),
    ):
        if g is not None:
            yield g
    scraped = r.metrics.get("state") if isinstance(r.metrics, dict) else None
    if isinstance(scraped, str):
        up = GaugeMetricFamily("kvtui_metrics_scrape", "The server's own /metrics as kvtui "
                               "last read it (1 for the current state): ok, stale, "
                               "not_enabled, refused, timeout, http_error, bad_response",
                               labels=["server", "state"])
        up.add_metric([s, scraped], 1.0)
        yield up
    alerts = GaugeMetricFamily("kvtui_alert", "An alert kvtui raises now (1 per rule)",
                               labels=["server", "rule", "severity"])
    every = [*r.alerts, *snap.extra_alerts]
    for a in every:
        alerts.add_metric([s, a.rule, a.severity], 1.0)
    yield alerts
    counts = GaugeMetricFamily("kvtui_alerts", "Alerts kvtui raises now, by severity",
                               labels=["server", "severity"])
    for sev in severity.SEVERITIES:
        counts.add_metric([s, sev], float(sum(1 for a in every if a.severity == sev)))
    yield counts


class ReportCollector(Collector):
    """Collects `families` of the snapshots `get` returns at each scrape."""

    def __init__(self, get: Callable[[], list[Snapshot]]) -> None:
        self.get = get

    def collect(self) -> Iterator[GaugeMetricFamily | InfoMetricFamily]:
        for snap in self.get():
            yield from families(snap)


def registry_of(get: Callable[[], list[Snapshot]]) -> CollectorRegistry:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(ReportCollector(get))
    return reg


def exposition(snaps: list[Snapshot]) -> bytes:
    """The text exposition format of `snaps`."""
    return bytes(generate_latest(registry_of(lambda: snaps)))


def write_atomically(path: str, data: bytes) -> None:
    """Write `data` to `path` through a temporary file in the same directory and a rename, so
    node_exporter's textfile collector never reads half a file."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".kvtui-", suffix=".prom.tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
