"""Alerts that need both the log and `/metrics` (issue #37 point 4).

Pure functions of the log's `Report` and the scrapes as a time-ordered `Sequence[Snapshot]`
(whoever holds them: the pipeline's metric series, a test's recorded sequence). They speak the
vocabulary of `kvtui.core.alerts`: an `Alert` with a rule name, a severity of
`kvtui.core.severity`, a title, a detail with the figures of both sides, the log line that
shows the log's side (`evidence`, None when the log has no such line) and the fix. The
metrics' side travels in `extra["metrics"]` (series values and the scrape span), the log's
figures in `extra["log"]`.

The metrics' own alerts (`kvtui.core.metrics.alerts`, the engines' `alerts`) are reused, not
restated: a rule here adds what the log says about the same thing.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from kvtui.core import dtypes
from kvtui.core.metrics import alerts as metric_alerts
from kvtui.core.metrics import catalogue
from kvtui.core.metrics.snapshot import Snapshot
from kvtui.core.metrics.window import delta, quantile, window
from kvtui.core.report_types import Alert, Report

# A measured bytes-per-token is the same figure as another within this (both are pool memory
# over pool tokens; the padding page moves them apart by far less on a pool of useful size):
# the tolerance `kvtui.engines.sglang.metrics.CELL_MATCH` matches cells with.
SAME_BYTES = 0.02
# Latency "rising as the pool saturates": the last window's p95 at least this many times the
# first window's while the fullest KV pool ended at or above NEAR_FULL having risen by at least
# ROSE. Thresholds of this alert, not engine rules (both engines admit until the pool is full).
LATENCY_FACTOR = 2.0
NEAR_FULL = 0.90
ROSE = 0.10
# the latency histograms read for the rule, in the order tried (TTFT waits for KV first)
RISING: tuple[str, ...] = ("ttft", "queue", "e2e")


def _fullest(snap: Snapshot) -> float | None:
    usages = [p.usage for p in snap.pools or () if p.kind != "mamba" and p.usage is not None]
    return max(usages) if usages else None


def _p95(old: Snapshot, new: Snapshot, name: str) -> tuple[float | None, float]:
    """One histogram's p95 and count between two scrapes (the rules run at every scrape over
    the whole series: one histogram, not the window's every percentile)."""
    hist = new.histograms.get(name)
    if hist is None:
        return None, 0.0
    d = delta(hist, old.histograms.get(name))
    if d is None or d.count <= 0:
        return None, 0.0
    return quantile(0.95, d), d.count


def _span(snapshots: Sequence[Snapshot]) -> float:
    return snapshots[-1].at - snapshots[0].at if len(snapshots) > 1 else 0.0


def _log_usage(report: Report) -> str:
    rt = report.runtime
    if rt.last_token_usage is None:
        return "the log has no batch line with a token usage"
    queue = "" if rt.last_queue_req is None else f", #queue-req {rt.last_queue_req:,}"
    at = f" at {rt.last_ts}" if rt.last_ts else ""
    return (f"the log's last batch line{at} says token usage {rt.last_token_usage:.2f}{queue} "
            f"(peak {rt.peak_token_usage or 0:.2f})")


def _log_alert(report: Report, rule: str) -> Alert | None:
    return next((a for a in report.alerts if a.rule == rule), None)


# -- the KV dtype the metrics imply against the log's ---------------------------------------------
def _sglang_bytes(report: Report) -> float | None:
    """The log's measured bytes per token per GPU (its pool line: K + V over the tokens)."""
    if report.whatif is not None and report.whatif.current.bytes_per_token:
        return report.whatif.current.bytes_per_token
    sizes = [p.bytes_per_token for p in report.pools if p.bytes_per_token]
    return sizes[0] if len(sizes) == 1 else None


def _cell_dtype(report: Report, measured: float) -> str | None:
    """The one dtype whose cell (the log's what-if, the engine's own arithmetic for the
    logged model) is within SAME_BYTES of `measured`; None for none or several."""
    if report.whatif is None:
        return None
    found = {dtypes.normalize(s.dtype) for s in report.whatif.scenarios
             if s.bytes_per_token and abs(measured - s.bytes_per_token)
             <= SAME_BYTES * s.bytes_per_token}
    found.discard(None)
    if len(found) == 2 and found <= dtypes.FP8 - {"mxfp8"}:
        return "fp8"  # e4m3 and e5m2 are one size: the bytes tell FP8, not which
    return found.pop() if len(found) == 1 else None


def kv_dtype_mismatch(report: Report, snapshots: Sequence[Snapshot]) -> Alert | None:
    """vLLM exports its resolved dtype (`cache_config_info{cache_dtype}`); SGLang only bytes
    per token (`kv_cache_memory_usage_gb / max_total_num_tokens`, approximate:
    kvtui.engines.sglang.metrics), compared with the log's own measure and matched to the
    log's what-if cells. SGLang's measure is taken only when both sides have one full pool: on
    a hybrid pool its memory covers every buffer of the allocator, not the full cell."""
    if not snapshots or report.engine is None:
        return None
    snap = snapshots[-1]
    if snap.engine != report.engine:
        return None
    log_dtype = dtypes.normalize(report.kv_cache.effective_dtype)
    configured = dtypes.normalize(report.kv_cache.configured_dtype)
    ev = report.kv_cache.effective_evidence
    metrics: dict[str, Any] = {"model": snap.model, "scrapes": len(snapshots)}
    if snap.kv_cache_dtype is not None:
        said = dtypes.normalize(snap.kv_cache_dtype)
        metrics["cache_dtype"] = snap.kv_cache_dtype
        if said is None or log_dtype is None:
            return None
        if said == "auto":
            # "auto" is the model's dtype unless the checkpoint declares a KV quantization
            # (resolved before CacheConfig is built: vllm-0.34.0 wheel:
            # vllm/utils/torch_utils.py:518-536): it contradicts only a log started with an
            # explicit low-precision dtype
            if not dtypes.is_low_precision(configured):
                return None
            mine = "cache_dtype=\"auto\" (the model's dtype)"
        elif said == log_dtype or (said.startswith("fp8") and said not in dtypes.CANONICAL
                                   and dtypes.is_fp8(log_dtype)):
            # a model's own FP8 spelling ("fp8_ds_mla": vllm-0.34.0 wheel:
            # vllm/model_executor/models/config.py:92-199) is FP8 as the log's is
            return None
        else:
            mine = f"cache_dtype=\"{snap.kv_cache_dtype}\""
        side = f"vllm:cache_config_info has {mine}"
    else:
        if snap.bytes_per_token is None or report.engine != "sglang":
            return None
        if {p.kind for p in snap.pools or ()} - {"full"} or len(report.pools) != 1:
            return None
        logged = _sglang_bytes(report)
        if logged is None:
            return None
        measured = snap.bytes_per_token
        metrics["bytes_per_token"] = round(measured, 1)
        if abs(measured - logged) <= SAME_BYTES * logged:
            return None
        said = _cell_dtype(report, measured) or "unknown"
        shown = "no dtype's cell of the logged model" if said == "unknown" else f"the {said} cell"
        side = (f"sglang:kv_cache_memory_usage_gb / max_total_num_tokens gives "
                f"≈{measured:,.0f} B/token per GPU ({shown}), the log's pool "
                f"{logged:,.0f} B/token")
        metrics["implied_dtype"] = None if said == "unknown" else said
    detail = (f"{side}; the log's KV cache is {log_dtype or 'unknown'}"
              f"{f' (configured {configured})' if configured and configured != log_dtype else ''}."
              " The metrics and the log describe different servers: the server restarted with "
              "other settings after this log was kept, or the log is another server's.")
    fix = ("Read the log of the server that serves this /metrics (the current run's), or point "
           "--metrics at the server whose log this is; then the KV alerts apply to what "
           "is serving.")
    return Alert("metrics-kv-dtype-mismatch", "warning",
                 f"/metrics implies KV {said}, the log {log_dtype}", detail, ev, fix,
                 extra={"metrics": metrics,
                        "log": {"effective_dtype": log_dtype, "configured_dtype": configured}})


# -- saturation with a growing queue ------------------------------------------------------------
def saturated_queue(report: Report, snapshots: Sequence[Snapshot]) -> Alert | None:
    """The metrics-only `saturated_queue_growing` (kvtui.core.metrics.alerts.general) on the
    latest window that raises it, beside what the log's batch lines say."""
    for old, new in reversed(list(pairwise(snapshots))):
        usage = _fullest(new)
        if usage is None or usage < metric_alerts.SATURATED or new.queued is None \
                or old.queued is None or new.queued <= old.queued:
            continue  # what general() asks, checked before its window is computed
        w = window(new, old)
        found = [a for a in metric_alerts.general(new, old, w)
                 if a.kind == "saturated_queue_growing"]
        if not found:
            continue
        logged = _log_alert(report, "pool-saturated")
        log_side = (f"The log shows it too ({logged.detail})" if logged is not None else
                    f"The log's kept window does not ({_log_usage(report)})")
        detail = (f"/metrics: {found[0].message}. {log_side}. Requests wait for KV space: "
                  "time to first token grows with the queue.")
        fix = ("More KV capacity (the memory flag, TP, an FP8 KV cache with calibrated scales) "
               "or replicas, or admit less load; the timeline shows when it started.")
        return Alert("metrics-saturated-queue", "warning",
                     "KV pool saturated and the queue growing (/metrics)", detail,
                     logged.evidence if logged else None, fix,
                     extra={"metrics": {"usage": _fullest(new), "queued": new.queued,
                                        "queue_growth": w.queue_growth,
                                        "window_s": w.seconds},
                            "log": {"last_token_usage": report.runtime.last_token_usage,
                                    "last_queue_req": report.runtime.last_queue_req,
                                    "pool_saturated": logged is not None}})
    return None


# -- retractions the log does not show ----------------------------------------------------------
def _counted(snapshots: Sequence[Snapshot], name: str) -> tuple[float | None, float]:
    """The counter's last total (since the server started) and its increase over the scrapes
    (a reset, a server restart, starts the sum again from the new total)."""
    values = [s.counters.get(name) for s in snapshots]
    seen = [v for v in values if v is not None]
    if not seen:
        return None, 0.0
    grown = 0.0
    for before, after in pairwise(seen):
        grown += after - before if after >= before else after
    return seen[-1], grown


def unlogged_retractions(report: Report, snapshots: Sequence[Snapshot]) -> Alert | None:
    """SGLang's `num_retracted_requests_total` or vLLM's `num_preemptions_total` beyond the
    requests the log's retraction / preemption lines count (`runtime.retracted_reqs`)."""
    if not snapshots:
        return None
    snap = snapshots[-1]
    name = "retracted" if "retracted" in snap.counters else "preempted"
    total, grown = _counted(snapshots, name)
    if total is None:
        return None
    logged = report.runtime.retracted_reqs
    if total <= logged:
        return None
    verb = "retracted" if name == "retracted" else "preempted"
    metric = ("sglang:num_retracted_requests_total" if name == "retracted"
              else "vllm:num_preemptions_total")
    during = (f", {grown:,.0f} of them in the {_span(snapshots):.0f} s of scrapes"
              if grown and len(snapshots) > 1 else "")
    log_side = ("the log shows none" if not logged else
                f"the log's lines count {logged:,}")
    detail = (f"{metric} counts {total:,.0f} requests {verb} since the server started"
              f"{during}; {log_side}. The kept log window started after them (rotated or "
              "trimmed), or the log is another server's. Each one lost its KV and was "
              "recomputed: latency and throughput suffer.")
    fix = ("Keep the whole log of the run (or read it from the start) to see when the pool ran "
           "out; give the KV cache more room or admit less work, as for kv-retraction.")
    ev = _log_alert(report, "kv-retraction")
    return Alert("metrics-retractions-unlogged", "warning" if not logged else "info",
                 f"{total - logged:,.0f} {verb} requests not in the log (/metrics)", detail,
                 ev.evidence if ev else None, fix,
                 extra={"metrics": {"counter": metric, "total": total, "in_scrapes": grown,
                                    "scrapes": len(snapshots)},
                        "log": {"retracted_reqs": logged}})


# -- latency rising as the pool saturates -------------------------------------------------------
def latency_rising(report: Report, snapshots: Sequence[Snapshot]) -> Alert | None:
    """The first and last windows that observed requests: p95 up LATENCY_FACTOR times while
    the fullest KV pool rose by ROSE to NEAR_FULL or more."""
    pairs = list(pairwise(snapshots))
    for name in RISING:
        def seen(order: list[tuple[Snapshot, Snapshot]], name: str = name
                 ) -> tuple[Snapshot, float] | None:
            for old, new in order:
                p, _ = _p95(old, new, name)
                if p is not None and _fullest(new) is not None:
                    return new, p
            return None

        head, tail = seen(pairs), seen(pairs[::-1])
        if head is None or tail is None or head[0] is tail[0]:
            continue
        (first, p_first), (last, p_last) = head, tail
        u_first, u_last = _fullest(first), _fullest(last)
        assert u_first is not None and u_last is not None
        if not (p_first > 0 and p_last >= LATENCY_FACTOR * p_first and u_last >= NEAR_FULL
                and u_last - u_first >= ROSE):
            continue
        logged = _log_alert(report, "pool-saturated")
        detail = (f"/metrics: {name} p95 rose from {p_first:.3g} s to {p_last:.3g} s over "
                  f"{last.at - first.at:.0f} s while the fullest KV pool went from "
                  f"{u_first:.0%} to {u_last:.0%}; {_log_usage(report)}"
                  f"{' and it raised pool-saturated' if logged else ''}. Requests are waiting "
                  "for KV cache, not for compute.")
        fix = ("More KV capacity (the memory flag, TP, an FP8 KV cache with calibrated scales) "
               "or replicas, or cap the admitted load (max running requests) so latency "
               "stays bounded.")
        return Alert("metrics-latency-saturation", "warning",
                     f"{name} p95 x{p_last / p_first:.1f} as the KV pool filled (/metrics)",
                     detail, logged.evidence if logged else None, fix,
                     extra={"metrics": {"histogram": name, "p95_first": p_first,
                                        "p95_last": p_last, "usage_first": u_first,
                                        "usage_last": u_last},
                            "log": {"peak_token_usage": report.runtime.peak_token_usage}})
    return None


# -- SGLang's token_usage against its per-pool gauges -------------------------------------------
def token_usage(report: Report, snapshots: Sequence[Snapshot]) -> list[Alert]:
    """The engine's own token_usage alerts (kvtui.engines.sglang.metrics: which gauge to trust)
    on the last scrape, with the log's batch-line usage beside them: SGLang's batch line prints
    each pool's usage, and kvtui's log usage is their fullest, as the gauge is defined."""
    if not snapshots:
        return []
    new = snapshots[-1]
    old = snapshots[-2] if len(snapshots) > 1 else None
    try:
        engine = catalogue.load(new.engine)
    except ValueError:
        return []
    out = []
    for a in engine.alerts(new, old):
        if not a.kind.startswith("token_usage"):
            continue
        detail = f"/metrics: {a.message}. Beside it, {_log_usage(report)}."
        fix = ("Read KV pressure from the per-pool gauges (full_token_usage, swa_token_usage, "
               "kv_*_tokens) and state slots from mamba_usage; do not alert on "
               "sglang:token_usage alone.")
        out.append(Alert(f"metrics-{a.kind.replace('_', '-')}", a.severity,
                         "sglang:token_usage is not the KV usage (/metrics)", detail, None, fix,
                         extra={"metrics": {"kind": a.kind, **dict(new.gauges)},
                                "log": {"last_token_usage": report.runtime.last_token_usage}}))
    return out


# The rules read the scrapes of the last WINDOW_S seconds: they run at every scrape (the TUI)
# and a session keeps up to 600 scrapes; five minutes hold a saturation episode and its queue.
WINDOW_S = 300.0


def recent(snapshots: Sequence[Snapshot]) -> Sequence[Snapshot]:
    """The snapshots within WINDOW_S of the newest (time-ordered in, time-ordered out)."""
    if not snapshots:
        return snapshots
    last = snapshots[-1].at
    return [s for s in snapshots if last - s.at <= WINDOW_S]


def cross_alerts(report: Report, snapshots: Sequence[Snapshot]) -> list[Alert]:
    """Every rule above over the recent scrapes, most severe first (kvtui.core.severity)."""
    from kvtui.core import severity

    snapshots = recent(snapshots)
    found = [kv_dtype_mismatch(report, snapshots), saturated_queue(report, snapshots),
             unlogged_retractions(report, snapshots), latency_rising(report, snapshots)]
    out = [a for a in found if a is not None] + token_usage(report, snapshots)
    return sorted(out, key=lambda a: severity.rank(a.severity))
