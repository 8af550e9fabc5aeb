"""The read-only panes of the main screen: header verdict, alerts, facts, timeline.

Each pane renders from the latest report snapshot (a plain dict built off the event loop) into
`Text` objects. Values that come from the log (model paths, evidence lines, alert details that
quote the log) are passed through `kvtui.ui.text.clean`, never through markup.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from kvtui.core import severity
from kvtui.sources.base import INLINE, MESSAGES
from kvtui.ui.text import (
    clean,
    fmt_gib,
    fmt_int,
    fmt_num,
    severity_style,
)

STATE_LABELS = {
    "replaying": ("replaying", "bold green"),
    "live": ("live", "bold green"),
    "paused": ("paused", "bold yellow"),
    "at_end": ("at end", "bold cyan"),
    "rotated": ("rotated", "bold yellow"),
    "truncated": ("truncated", "bold yellow"),
    "reconnecting": ("reconnecting", "bold yellow"),
    "connecting": ("connecting", "yellow"),
    "error": ("error", "bold white on red"),
    "closed": ("closed", "dim"),
    "stale": ("stale", "bold yellow"),
    "loading": ("loading", "bold cyan"),
    "restarted": ("restarted", "bold yellow"),
    "restart": ("restarted", "bold yellow"),
}


def sorted_alerts(report: dict[str, Any] | None) -> list[dict[str, Any]]:
    alerts = [a for a in (report or {}).get("alerts") or [] if isinstance(a, dict)]
    return sorted(alerts, key=lambda a: (severity.rank(a.get("severity")),
                                         (a.get("evidence") or {}).get("line") or 0))


def worst_severity(report: dict[str, Any] | None) -> str | None:
    alerts = sorted_alerts(report)
    return alerts[0].get("severity") if alerts else None


def model_name(report: dict[str, Any] | None) -> str:
    model = (report or {}).get("model") or {}
    name = model.get("served_name") or model.get("path") or model.get("model_class") or "?"
    return clean(str(name), 80)


class HeaderBar(Static):
    """Source, its state, and the KV verdict: configured -> effective dtype by severity."""

    DEFAULT_CSS = """
    HeaderBar { height: 1; background: $panel; color: $text; }
    """

    def __init__(self, title: str, **kwargs: Any) -> None:
        super().__init__("", markup=False, **kwargs)
        self._last_text: Text | None = None
        self.source_title = title
        self.state = "connecting"
        self.state_message = ""
        self.progress: float | None = None
        self.load: Any = None  # kvtui.core.pipeline.Progress while a big file is folded
        self.report: dict[str, Any] | None = None
        self.lines = 0

    def set_state(self, state: str, message: str = "") -> None:
        if state == "restart" or state in MESSAGES:
            return  # a replay restart, or a message: the state shown stays what it was
        self.state = state
        self.state_message = message
        self.redraw()

    def redraw(self) -> None:
        """Update only when the text changed: an idle app must not repaint 15 times a second."""
        text = self.build()
        if text != self._last_text:
            self._last_text = text
            self.update(text)

    def build(self) -> Text:
        """Most important first, so a narrow terminal cuts the least important: the KV verdict,
        the source state, the deployment, then which source and how many lines."""
        r = self.report or {}
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(" kvtui ", style="bold reverse")
        t.append(" ")
        if r:
            kv = r.get("kv_cache") or {}
            conf = kv.get("configured_dtype") or "?"
            eff = kv.get("effective_dtype") or "?"
            sev = worst_severity(r)
            t.append("KV ")
            t.append(clean(str(conf), 20), style="bold")
            t.append(" -> ")
            t.append(clean(str(eff), 20), style=severity_style(sev) or "bold green")
            if kv.get("scales") == "missing":
                t.append(" (no scales)", style=severity_style(sev) or "yellow")
            t.append("  ")
        label, style = STATE_LABELS.get(self.state, (self.state, "bold"))
        if self.state == "replaying" and self.progress is not None:
            label = f"replaying {self.progress * 100:.0f}%"
        elif self.state == "loading" and self.load is not None:
            eta = self.load.eta
            label = (f"loading {self.load.fraction * 100:.0f}%"
                     + (f", {eta:.0f} s left" if eta is not None else ""))
        t.append(f"[{label}]", style=style)
        if self.state in INLINE and self.state_message:
            t.append(" " + clean(self.state_message, 60), style=style)
        if r:
            t.append("  ")
            t.append(model_name(r), style="bold")
            tp = (r.get("parallel") or {}).get("tp")
            t.append(f" TP={tp if tp is not None else '?'}")
        t.append("  │ ", style="dim")
        t.append(clean(self.source_title, 60))
        t.append(f"  {self.lines:,} lines", style="dim")
        return t


class AlertsPane(OptionList):
    """Severity-ordered alerts; Enter opens the detail, `g` jumps to the evidence line."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("g", "goto_evidence", "Evidence"),
    ]

    class Open(Message):
        def __init__(self, alert: dict[str, Any]) -> None:
            super().__init__()
            self.alert = alert

    class Goto(Message):
        def __init__(self, alert: dict[str, Any]) -> None:
            super().__init__()
            self.alert = alert

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(markup=False, **kwargs)
        self.alerts: list[dict[str, Any]] = []
        self._key: tuple[Any, ...] = ()

    def show(self, report: dict[str, Any] | None) -> None:
        alerts = sorted_alerts(report)
        key = tuple((a.get("rule"), a.get("severity"), a.get("title"),
                     (a.get("evidence") or {}).get("line"),
                     (a.get("evidence") or {}).get("count"), a.get("fix")) for a in alerts)
        if key == self._key:
            self.alerts = alerts  # the detail view reads the newest wording
            return
        self._key = key
        highlighted = self.highlighted
        self.alerts = alerts
        self.clear_options()
        if not alerts:
            self.add_option(Option(Text("no alerts (yet)", style="dim"), disabled=True))
            return
        self.add_options([Option(self._prompt(a)) for a in alerts])
        if highlighted is not None and highlighted < len(alerts):
            self.highlighted = highlighted
        elif alerts:
            self.highlighted = 0

    @staticmethod
    def _prompt(a: dict[str, Any]) -> Text:
        sev = str(a.get("severity") or "info")
        t = Text()
        t.append(f"{sev.upper():<8} ", style=severity_style(sev))
        t.append(clean(str(a.get("title") or a.get("rule") or "?"), 200), style="bold")
        ev = a.get("evidence") or {}
        if ev.get("line"):
            t.append(f"  line {ev['line']}", style="dim")
            if (ev.get("count") or 1) > 1:
                t.append(f" (x{ev['count']})", style="dim")
        fix = a.get("fix")
        if fix:
            t.append("\n  fix: ", style="dim")
            fix_text = clean(str(fix), 400)
            cut = fix_text.find(". ")
            t.append(fix_text[:cut + 1] if 0 < cut < 160 else fix_text[:160], style="green")
        return t

    def current(self) -> dict[str, Any] | None:
        if self.highlighted is None or self.highlighted >= len(self.alerts):
            return None
        return self.alerts[self.highlighted]

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option_index < len(self.alerts):
            self.post_message(self.Open(self.alerts[event.option_index]))

    def action_goto_evidence(self) -> None:
        a = self.current()
        if a is not None:
            self.post_message(self.Goto(a))


def facts_text(r: dict[str, Any] | None) -> Text:
    """Pools per rank, capacity, weights and bytes/token, as inert text."""
    t = Text()
    if not r:
        t.append("waiting for startup lines…", style="dim")
        return t
    if "error" in r and len(r) == 1:
        t.append(clean(str(r["error"]), 300), style="bold red")
        return t
    kv = r.get("kv_cache") or {}
    t.append("KV cache  ", style="bold")
    t.append(f"configured {clean(str(kv.get('configured_dtype') or '?'), 20)}  ")
    t.append(f"effective {clean(str(kv.get('effective_dtype') or '?'), 20)}")
    basis = kv.get("effective_basis")
    if basis:
        t.append(f" (from {clean(str(basis), 30)})", style="dim")
    t.append(f"  scales {clean(str(kv.get('scales') or '?'), 20)}\n")

    cap = r.get("capacity") or {}
    t.append("Capacity  ", style="bold")
    if cap:
        t.append(f"max_total_num_tokens={fmt_int(cap.get('max_total_num_tokens'))}  "
                 f"max_running_requests={fmt_int(cap.get('max_running_requests'))}  "
                 f"context_len={fmt_int(cap.get('context_len'))}")
        if cap.get("available_gpu_mem_gib") is not None:
            t.append(f"  avail {fmt_gib(cap.get('available_gpu_mem_gib'))}")
        t.append("\n")
    else:
        t.append("—\n", style="dim")

    w = r.get("weights") or {}
    t.append("Weights   ", style="bold")
    if w:
        t.append(f"{clean(str(w.get('model_class') or '?'), 60)}  ")
        if w.get("quant"):
            t.append(f"{clean(str(w.get('quant')), 60)}  ")
        t.append(f"usage {fmt_gib(w.get('usage_gib'))}/GPU  avail after "
                 f"{fmt_gib(w.get('avail_gib'))}  ranks {fmt_int(w.get('ranks'))}\n")
    else:
        t.append("—\n", style="dim")

    pools = r.get("pools") or []
    computed = _computed_bpt(r)
    t.append(f"Pools ({len(pools)} on {len({p.get('rank') for p in pools})} ranks)",
             style="bold")
    if computed is not None:
        t.append(f"  computed {computed:,.0f} B/token", style="dim")
    t.append("\n")
    for ranks, p in _group_pools(pools)[:32]:
        label = clean(str(p.get("label") or ""), 24)
        t.append(f"  {clean(ranks, 24):<8}", style="cyan")
        if label:
            t.append(f"{label} ")
        t.append(f"{p.get('kind') or '?'} ")
        if p.get("kind") == "mamba":
            t.append(f"slots {fmt_int(p.get('slots'))}  conv {fmt_gib(p.get('conv_gib'))}"
                     f"  ssm {fmt_gib(p.get('ssm_gib'))}\n")
            continue
        t.append(f"{clean(str(p.get('dtype') or '?'), 16)}  {fmt_int(p.get('tokens'))} tok")
        size = p.get("kv_gib")
        if size is None and (p.get("k_gib") is not None or p.get("v_gib") is not None):
            size = (p.get("k_gib") or 0.0) + (p.get("v_gib") or 0.0)
        t.append(f"  {fmt_gib(size)}")
        bpt = p.get("bytes_per_token")
        if bpt is not None:
            t.append(f"  measured {fmt_num(bpt, 0)} B/tok")
            if computed:
                dev = (bpt - computed) / computed * 100
                t.append(f" ({dev:+.1f}%)", style="green" if abs(dev) < 2 else "yellow")
        t.append("\n")
    rt = r.get("runtime") or {}
    if rt.get("decode_batches"):
        t.append("Runtime   ", style="bold")
        t.append(f"decode batches {fmt_int(rt.get('decode_batches'))}  peak usage "
                 f"{fmt_num(rt.get('peak_token_usage'))}  peak running "
                 f"{fmt_int(rt.get('peak_running_req'))}  peak queue "
                 f"{fmt_int(rt.get('peak_queue_req'))}  retractions "
                 f"{fmt_int(rt.get('retractions'))}\n")
    return t


def _group_pools(pools: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """Identical pools on several ranks collapse into one row ("TP0-7")."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for p in pools:
        key = (p.get("label"), p.get("kind"), p.get("dtype"), p.get("tokens"), p.get("k_gib"),
               p.get("v_gib"), p.get("kv_gib"), p.get("slots"), p.get("conv_gib"),
               p.get("ssm_gib"))
        groups.setdefault(key, []).append(p)
    out = []
    for members in groups.values():
        ranks = [str(m.get("rank") or "-") for m in members]
        out.append((_rank_span(ranks), members[0]))
    return out


def _rank_span(ranks: list[str]) -> str:
    if len(ranks) == 1:
        return ranks[0]
    nums = []
    for r in ranks:
        if r.startswith("TP") and r[2:].isdigit():
            nums.append(int(r[2:]))
        else:
            return f"{ranks[0]}+{len(ranks) - 1}"
    if nums == list(range(nums[0], nums[0] + len(nums))):
        return f"TP{nums[0]}-{nums[-1]}"
    return f"{ranks[0]}+{len(ranks) - 1}"


def _computed_bpt(r: dict[str, Any]) -> float | None:
    """Bytes/token the calculator derives from the model spec (the report's whatif.current)."""
    w = r.get("whatif")
    cur = w.get("current") if isinstance(w, dict) else None
    v = cur.get("theoretical_bytes_per_token") if isinstance(cur, dict) else None
    if isinstance(v, int | float) and not isinstance(v, bool):
        return float(v)
    return None


class FactsPane(VerticalScroll):
    """Scrollable facts text."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._body = Static(facts_text(None), markup=False, id="facts-body")

    def compose(self) -> ComposeResult:
        yield self._body

    def show(self, report: dict[str, Any] | None) -> None:
        # The body is held, not queried: a report may arrive before it is mounted.
        self._body.update(facts_text(report))


BLOCKS = " ▁▂▃▄▅▆▇█"


def sparkline(values: list[float | None], width: int, top: float | None = None) -> Text:
    """Bucket values into `width` columns (max per bucket) and draw block characters."""
    t = Text(no_wrap=True)
    vals = [v for v in values if v is not None]
    if width <= 0 or not vals:
        t.append("·" * max(0, width), style="dim")
        return t
    peak = top if top is not None else max(vals)
    n = len(values)
    cols = min(width, n)
    for c in range(cols):
        lo, hi = c * n // cols, max(c * n // cols + 1, (c + 1) * n // cols)
        bucket = [v for v in values[lo:hi] if v is not None]
        if not bucket:
            t.append(" ")
            continue
        v = max(bucket)
        level = 0 if peak <= 0 else min(8, max(1 if v > 0 else 0, round(v / peak * 8)))
        style = "red" if top == 1.0 and v >= 0.95 else ("yellow" if top == 1.0 and v >= 0.8
                                                         else "cyan")
        t.append(BLOCKS[level], style=style)
    return t


class TimelinePane(Static):
    """Token usage, running and queued requests, gen throughput; retractions marked."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("", markup=False, **kwargs)
        self.points: list[Any] = []

    def show(self, points: list[Any] | None) -> None:
        if points is not None:
            self.points = points
        self.update(self.build(max(20, self.size.width or 80)))

    def on_resize(self) -> None:
        self.update(self.build(max(20, self.size.width or 80)))

    def build(self, width: int) -> Text:
        pts = self.points
        label_w = 16
        span = max(4, width - label_w - 14)
        t = Text(no_wrap=True, overflow="crop")
        if not pts:
            t.append("timeline: no decode batches yet", style="dim")
            return t
        rows: list[tuple[str, list[float | None], float | None, str]] = []
        usage = [p.token_usage for p in pts]
        running = [float(p.running_req) if p.running_req is not None else None for p in pts]
        queue = [float(p.queue_req) if p.queue_req is not None else None for p in pts]
        gen = [p.gen_throughput for p in pts]
        # Retraction markers carry no values: the figures shown are the last batch's.
        last = next((p for p in reversed(pts) if not p.retraction), pts[-1])
        rows.append(("token usage", usage, 1.0, fmt_num(last.token_usage)))
        rows.append(("running req", running, None, fmt_int(last.running_req)))
        rows.append(("queued req", queue, None, fmt_int(last.queue_req)))
        rows.append(("gen tok/s", gen, None, fmt_num(last.gen_throughput, 0)))
        for i, (name, vals, top, cur) in enumerate(rows):
            t.append(f"{name:<{label_w}}", style="bold")
            t.append_text(sparkline(vals, span, top))
            t.append(f" {cur:>10}")
            if i < len(rows) - 1:
                t.append("\n")
        marks = [i for i, p in enumerate(pts) if p.retraction]
        t.append("\n")
        t.append(f"{'retractions':<{label_w}}", style="bold")
        n = len(pts)
        cols = min(span, n)
        line = [" "] * cols
        for i in marks:
            line[min(cols - 1, i * cols // n)] = "▼"
        t.append("".join(line), style="bold red")
        t.append(f" {len(marks):>10}", style="red" if marks else "dim")
        first, last_ts = pts[0].ts, pts[-1].ts
        if first and last_ts:
            t.append(f"\n{'':<{label_w}}{clean(str(first), 30)} → {clean(str(last_ts), 30)}",
                     style="dim")
        return t
