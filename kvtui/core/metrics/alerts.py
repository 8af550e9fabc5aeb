"""Alerts that `/metrics` alone can raise (the ones that need the log too wait for the
pipeline's typed metric events). Severities are the one vocabulary of `kvtui.core.severity`,
so `kvtui metrics --fail-on` gates exactly like `kvtui check --fail-on`.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtui.core.metrics.snapshot import Snapshot
from kvtui.core.metrics.window import Window

# Usage at or above this with a growing queue: new requests wait for KV. Not an engine rule, a
# threshold of this alert (both engines admit until the pool is full, so "near" is a choice).
SATURATED = 0.95


@dataclass(frozen=True, slots=True)
class MetricAlert:
    severity: str
    kind: str
    message: str


def _kv_usage(snap: Snapshot) -> tuple[str, float] | None:
    """The fullest KV pool (Mamba state slots are not KV)."""
    usages = [(p.kind, p.usage) for p in snap.pools or () if p.kind != "mamba"]
    known = [(kind, usage) for kind, usage in usages if usage is not None]
    if not known:
        return None
    return max(known, key=lambda kv: kv[1])


def general(new: Snapshot, old: Snapshot | None, window: Window) -> list[MetricAlert]:
    out: list[MetricAlert] = []
    fullest = _kv_usage(new)
    if fullest and fullest[1] >= SATURATED and new.queued:
        kind, usage = fullest
        if old is None:
            out.append(MetricAlert(
                "info", "near_saturation",
                f"the {kind} KV pool is at {usage:.0%} with {new.queued:.0f} requests queued "
                "(one scrape: run without --once to see whether the queue grows)"))
        elif window.queue_growth and window.queue_growth > 0:
            out.append(MetricAlert(
                "warning", "saturated_queue_growing",
                f"the {kind} KV pool is at {usage:.0%} and the queue grew by "
                f"{window.queue_growth:.0f} to {new.queued:.0f} in {window.seconds:.1f} s: "
                "requests are waiting for KV cache"))
    for counter, what in (("retracted", "retracted"), ("preempted", "preempted")):
        rate = window.rates.get(counter)
        if rate and window.seconds:
            out.append(MetricAlert(
                "warning", f"{counter}_in_window",
                f"{rate * window.seconds:.0f} requests {what} in {window.seconds:.1f} s "
                "(the KV pool ran out while decoding: their work is redone)"))
    return out
