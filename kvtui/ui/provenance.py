"""Where each fact the Facts pane shows came from: the log, the server's /metrics, or the
checkpoint kvtui read. The tag is dim text after the fact, so a figure is never taken for
another source's (the log's pool beside /metrics' pool of another server, say)."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from kvtui.core.report_types import Report

LOG, METRICS, CHECKPOINT = "log", "metrics", "checkpoint"
# The checklist items whose verdict reads the checkpoint when kvtui has read it: the weights'
# format and the context against the model's window (kvtui.core.accuracy.judge_weights,
# judge_context take it), and the KV cache item, which says what the KV alerts say (they read
# its KV scales: kvtui.core.alerts._scale_verdict).
READS_CHECKPOINT = frozenset({"weights", "context", "kv_cache"})


def tag(t: Text, *sources: str) -> None:
    """Append the sources of the fact just written (before its line break)."""
    t.append(f"  · {' + '.join(sources)}", style="dim italic")


def checkpoint_read(r: Any) -> bool:
    """Did the report read any of the checkpoint (kvtui.core.alerts._checkpoint_read, on the
    report's JSON of it)?"""
    ck = r.checkpoint if isinstance(r, Report) else None
    if not ck:
        return False
    return ck.get("source") is not None and bool(
        ck.get("has_config") or ck.get("has_k_scale") is not None
        or ck.get("kv_scales") is not None)


def item_sources(item: Any, r: Any) -> tuple[str, ...]:
    """A checklist item's sources: the log (always: the checklist judges the log's run), and the
    checkpoint where its verdict reads it and it was read."""
    if item.item in READS_CHECKPOINT and checkpoint_read(r):
        return (LOG, CHECKPOINT)
    return (LOG,)
