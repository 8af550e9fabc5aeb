"""A server's load now (KV usage, running, queued) and where it was read.

Why one place: the fleet's row, its `check` text and the exporter's gauges show the same
figures. The server's `/metrics` says them at the moment of the scrape and counts what the log
leaves out (evictable tokens, every pool), so they come from the newest scrape where the session
has one (`Report.metrics`, kvtui.core.metrics.series); else from the log's last batch line.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from kvtui.core.report_types import Report


class Load(NamedTuple):
    usage: float | None  # the fullest KV pool's (0..1); Mamba state slots are not KV
    running: float | None
    queued: float | None
    source: str  # "metrics" | "log"


def current_load(report: Report) -> Load:
    facts = (report.metrics or {}).get("facts")
    if isinstance(facts, dict):
        pools: list[dict[str, Any]] = [p for p in facts.get("pools") or ()
                                       if p.get("kind") != "mamba"]
        usages = [float(p["usage"]) for p in pools if p.get("usage") is not None]
        req = facts.get("requests") or {}
        if usages or req.get("running") is not None:
            return Load(max(usages) if usages else None, req.get("running"),
                        req.get("queued"), "metrics")
    rt = report.runtime
    return Load(rt.last_token_usage, rt.last_running_req, rt.last_queue_req, "log")
