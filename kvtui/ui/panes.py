"""The read-only panes of the main screen: header verdict, alerts, facts, timeline.

Each pane renders from the latest report snapshot (built off the event loop, read through
`kvtui.ui.report_view`) into `Text` objects. Values that come from the log (model paths,
evidence lines, alert details that quote the log) are passed through `kvtui.ui.text.clean`,
never through markup.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import regex
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from kvtui.core.deployment import rank_span
from kvtui.core.render import describe_subpools, group_pools
from kvtui.core.units import fmt_bytes_gib
from kvtui.sources.base import INLINE, MESSAGES
from kvtui.sources.replay import parse_ts
from kvtui.ui import report_view as rv
from kvtui.ui.accuracy import accuracy_text
from kvtui.ui.provenance import LOG, tag
from kvtui.ui.text import (
    clean,
    fmt_gib,
    fmt_int,
    fmt_num,
    gist,
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


# Kept for the app's imports; the reads themselves live in report_view.
sorted_alerts = rv.alerts
worst_severity = rv.worst_severity


def model_name(report: rv.Shown) -> str:
    return clean(rv.model_name(report), 80)


def _sep() -> Text:
    """Between header groups: a visible bar, so no rendering can glue two words together."""
    return Text(" │ ", style="dim")


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
        self.report: rv.Shown = None
        self.lines = 0
        self.speed: str | None = None  # a replay's pace: "x50", "instant"
        self.log_time: str | None = None  # the newest timestamp the log has reached

    def set_state(self, state: str, message: str = "") -> None:
        if state == "restart" or state in MESSAGES:
            return  # a replay restart, or a message: the state shown stays what it was
        self.state = state
        self.state_message = message
        self.redraw()

    def redraw(self) -> None:
        """Update only when the text changed: an idle app must not repaint 15 times a second.
        One row whatever the text, so no layout is needed."""
        text = fit_header(self.parts(), self.size.width or 10_000)
        if text != self._last_text:
            self._last_text = text
            self.update(text, layout=False)

    def on_resize(self) -> None:
        self.redraw()

    def build(self) -> Text:
        """The whole header, every part in its longest form."""
        return fit_header(self.parts(), 10_000)

    def parts(self) -> list[HeaderPart]:
        """The header's parts in the order shown, each in the forms it can take (longest
        first): the KV verdict, the source state (with a replay's speed), the run shown and
        when the server restarted (once the log holds more than one start), the deployment,
        the log's time, then which source and how many lines. `GIVE_WAY` says which is shortened
        first on a narrow terminal; a new part (the run, say) is one more entry here and
        there."""
        r = rv.report_of(self.report)
        parts = [HeaderPart("brand", (Text(" kvtui ", style="bold reverse"), Text()))]
        if r and rv.unrecognised(r):
            # no engine's line (yet): not a KV verdict of unknowns
            parts.append(HeaderPart("verdict", (
                Text("no SGLang or vLLM line recognised", style="bold yellow"),
                Text("no engine line", style="bold yellow"))))
        elif r:
            conf, eff, scales = rv.kv_verdict(r)
            sev = rv.worst_severity(r)
            tail = Text()
            tail.append(clean(eff, 20), style=severity_style(sev) or "bold green")
            if scales == "missing":
                tail.append(" (no scales)", style=severity_style(sev) or "yellow")
            full = Text("KV ")
            full.append(clean(conf, 20), style="bold")
            full.append(" -> ")
            parts.append(HeaderPart("verdict", (full + tail, Text("KV ") + tail)))
        label, style = STATE_LABELS.get(self.state, (self.state, "bold"))
        if self.state == "replaying" and self.progress is not None:
            label = f"replaying {self.progress * 100:.0f}%"
        elif self.state == "loading" and self.load is not None:
            eta = self.load.eta
            label = (f"loading {self.load.fraction * 100:.0f}%"
                     + (f", {eta:.0f} s left" if eta is not None else ""))
        state = Text(label, style=style)
        if self.speed and self.state in ("replaying", "paused"):
            state.append(f" {self.speed}", style=style)
        if self.state in INLINE and self.state_message:
            state.append(" " + clean(self.state_message, 60), style=style)
        parts.append(HeaderPart("state", (state,)))
        run = run_label(r) if r else None
        if r and run:
            parts.append(HeaderPart("run", (Text(run, style="bold magenta"),
                                            Text(run_label(r, short=True) or run,
                                                 style="bold magenta"))))
        if r and not rv.unrecognised(r):
            tp = Text(rv.tp(r))
            parts.append(HeaderPart("deployment", (
                Text(model_name(r), style="bold") + Text(f" · {rv.tp(r)}"), tp, Text())))
        if self.log_time:
            clock = _clock(self.log_time)
            parts.append(HeaderPart("time", (Text("log time ", style="dim") + Text(clock),
                                             Text(clock))))
        parts.append(HeaderPart("source", tuple(Text(f) for f in source_forms(
            self.source_title))))
        parts.append(HeaderPart("count", (Text(f" · {self._count()}", style="dim"), Text()),
                                attached=True))
        return parts

    def _count(self) -> str:
        """How much of the log is in: its lines, or while a big file is folded in bulk (its
        lines are counted at the end), the bytes read so far."""
        if self.state == "loading" and self.load is not None and self.load.total:
            done, total = self.load.done, self.load.total
            return f"{fmt_bytes_gib(done).removesuffix(' GiB')} of {fmt_bytes_gib(total)} read"
        return f"{self.lines:,} lines"


@dataclass(frozen=True, slots=True)
class HeaderPart:
    """One part of the header in the forms it can take, longest first (an empty Text: the
    part gives way entirely). `attached`: no separator before it (the line count after the
    source)."""

    key: str
    forms: tuple[Text, ...]
    attached: bool = False


# Which part gives way next while the header is wider than the terminal, the least needed
# first. The state, the run (once the server restarted), the log's time and the source (the
# file, or the SSH host, which is what matters over SSH) are shortened but never dropped: at 80
# columns the header keeps them.
GIVE_WAY = ("brand", "count", "deployment", "source", "run", "deployment", "time",
            "verdict", "source")


def fit_header(parts: list[HeaderPart], width: int) -> Text:
    """The header in `width` columns: parts shortened in `GIVE_WAY` order, by rule (never a
    number cut in half); only if all that is not enough, an ellipsis at the end."""
    chosen = {p.key: 0 for p in parts}

    def join() -> Text:
        t = Text(no_wrap=True, overflow="ellipsis")
        first = True
        for p in parts:
            form = p.forms[min(chosen[p.key], len(p.forms) - 1)]
            if not form.plain:
                continue
            if p.key == "brand":
                t.append_text(form)
                t.append(" ")
                continue
            if not first and not p.attached:
                t.append_text(_sep())
            first = False
            t.append_text(form)
        return t

    text = join()
    for key in GIVE_WAY:
        if text.cell_len <= width:
            break
        part = next((p for p in parts if p.key == key), None)
        if part is not None and chosen[key] < len(part.forms) - 1:
            chosen[key] += 1
            text = join()
    if text.cell_len > width:
        # Cut here, not by the renderer: it would wrap the tail onto a hidden second row.
        text.truncate(width, overflow="ellipsis")
    return text


def source_forms(title: str) -> list[str]:
    """A source's title, then shorter: an SSH source (`host:path`) keeps its host, a file its
    name without the directories."""
    full = clean(title, 60)
    m = regex.fullmatch(r"([^/\s:]+):(.+)", title)
    if m is not None:
        host, path = clean(m.group(1), 40), m.group(2)
        base = clean(path.rstrip("/").rsplit("/", 1)[-1], 40)
        return [full, f"{host}:{base}", host]
    base = clean(title.rstrip("/").rsplit("/", 1)[-1], 60)
    short = base if len(base) <= 32 else base[:15] + "…" + base[-16:]
    return [full, base, short]


def run_label(r: rv.Shown, *, short: bool = False) -> str | None:
    """"run 2 · restarted 11:00:00" once the log holds more than one server start (the run
    shown is the last one); None for a log of one start."""
    runs = rv.runs(r)
    if len(runs) < 2:
        return None
    last = runs[-1]
    ts = last.start.ts if last.start is not None else last.opened_ts
    when = _clock(ts) if ts else None
    if short:
        return f"run {last.index}" + (f" ↻{when}" if when else "")
    return f"run {last.index}" + (f" · restarted {when}" if when else " · restarted")


class AlertsPane(OptionList):
    """Severity-ordered alerts; Enter opens the detail, `g` jumps to the evidence line."""

    # g (jump to the evidence) is the app's key: it works from any pane.

    class Open(Message):
        def __init__(self, alert: rv.Alert) -> None:
            super().__init__()
            self.alert = alert

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(markup=False, **kwargs)
        self.alerts: list[rv.Alert] = []
        self._key: tuple[Any, ...] | None = None  # None: nothing shown yet

    def show(self, report: rv.Shown) -> None:
        alerts = sorted_alerts(report)
        earlier = rv.earlier_alerts(report)
        key = tuple((a.rule, a.severity, a.title, a.evidence.line if a.evidence else None,
                     a.evidence.count if a.evidence else None, a.fix) for a in alerts) + tuple(
            (n, a.rule, a.resolved_by) for n, a in earlier)
        if key == self._key:
            self.alerts = alerts  # the detail view reads the newest wording
            return
        self._key = key
        highlighted = self.highlighted
        self.alerts = alerts
        self.clear_options()
        # An earlier run's alert that the last run no longer raises stays listed below the
        # current ones, with the restart that resolved it (not selectable: its run is over).
        history = [Option(self._earlier_prompt(n, a), disabled=True) for n, a in earlier]
        if not alerts:
            none = rv.unrecognised(report)
            self.add_option(Option(Text(f"no alerts: {none}" if none else "no alerts (yet)",
                                        style="dim"), disabled=True))
            self.add_options(history)
            return
        self.add_options([Option(self._prompt(a)) for a in alerts])
        self.add_options(history)
        if highlighted is not None and highlighted < len(alerts):
            self.highlighted = highlighted
        elif alerts:
            self.highlighted = 0

    @staticmethod
    def _prompt(a: rv.Alert) -> Text:
        sev = str(a.severity or "info")
        t = Text()
        t.append(f"{sev.upper():<8} ", style=severity_style(sev))
        t.append(clean(str(a.title or a.rule or "?"), 200), style="bold")
        ev = rv.evidence(a)
        if ev is not None and ev.line:
            seen = f", seen {ev.count} times" if (ev.count or 1) > 1 else ""
            t.append(f"\n  evidence: line {ev.line}{seen}", style="dim")
        fix = a.fix
        if fix:
            t.append("\n  fix: ", style="dim")
            t.append(gist(clean(str(fix), 400)), style="green")
        return t

    @staticmethod
    def _earlier_prompt(run: int, a: Any) -> Text:
        t = Text()
        if a.resolved_by is not None:
            t.append("RESOLVED ", style="bold green")
        else:
            t.append("EARLIER  ", style="bold yellow")
        t.append(clean(str(a.title or a.rule), 200))
        ev = rv.evidence(a)
        where = f"run {run}" + (f", line {ev.line}" if ev is not None and ev.line else "")
        t.append(f"\n  {where}: ", style="dim")
        if a.resolved_by is not None:
            t.append(clean(a.resolved_by.describe(), 300), style="green")
        else:
            t.append("the restart has not said yet (still starting up)", style="dim")
        return t

    def current(self) -> rv.Alert | None:
        if self.highlighted is None or self.highlighted >= len(self.alerts):
            return None
        return self.alerts[self.highlighted]

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option_index < len(self.alerts):
            self.post_message(self.Open(self.alerts[event.option_index]))


def facts_text(r: rv.Shown) -> Text:
    """The accuracy checklist, then pools per rank, capacity, weights and bytes/token, as
    inert text."""
    t = Text()
    failed = rv.failure(r)
    if failed is not None:
        t.append(clean(failed, 300), style="bold red")
        return t
    none = rv.unrecognised(r)
    if none is not None:
        t.append(f"Engine    {none}", style="yellow")
        return t
    kv = rv.kv_cache(r)
    if kv is None:
        t.append("waiting for startup lines…", style="dim")
        return t
    accuracy_text(t, r)
    t.append("KV cache  ", style="bold")
    t.append(f"configured {clean(str(kv.configured_dtype or '?'), 20)}  ")
    t.append(f"effective {clean(str(kv.effective_dtype or '?'), 20)}")
    if kv.effective_basis:
        t.append(f" (from {clean(str(kv.effective_basis), 30)})", style="dim")
    t.append(f"  scales {clean(kv.scales_said, 30)}")
    tag(t, LOG)
    t.append("\n")

    cap = rv.capacity(r)
    t.append("Capacity  ", style="bold")
    if cap is not None:
        lim = rv.running_limit(r)
        limit = f"  {lim.name}={lim.describe(fmt_int, unknown='—')}" if lim is not None else ""
        t.append(f"{rv.figure(r, 'max_total_num_tokens', fmt_int(cap.max_total_num_tokens))}"
                 f"{limit}  {rv.term(r, 'context_len')}={fmt_int(cap.context_len)}")
        if cap.available_gpu_mem_gib is not None:
            t.append(f"  avail {fmt_gib(cap.available_gpu_mem_gib)}")
        if cap.kv_budget_reserved_gib:  # taken out of the KV budget before sizing
            t.append(f"  reserved {fmt_gib(cap.kv_budget_reserved_gib)}")
        tag(t, LOG)
        t.append("\n")
    else:
        t.append("—\n", style="dim")

    w = rv.weights(r)
    t.append("Weights   ", style="bold")
    if w is not None:
        if w.ranks:
            t.append(f"{clean(str(w.model_class or '?'), 60)}  ")
            if w.quant:
                t.append(f"{clean(str(w.quant), 60)}  ")
            t.append(f"usage {fmt_gib(w.usage_gib)}/GPU  avail after "
                     f"{fmt_gib(w.avail_gib)}  ranks {fmt_int(w.ranks)}")
        if w.draft_ranks:  # a speculative-decoding draft's own load
            t.append(f"{'  ' if w.ranks else ''}draft "
                     f"{clean(str(w.draft_model_class or '?'), 60)}  ")
            if w.draft_quant:
                t.append(f"{clean(str(w.draft_quant), 60)}  ")
            t.append(f"usage {fmt_gib(w.draft_usage_gib)}/GPU")
        tag(t, LOG)
        t.append("\n")
    else:
        t.append("—\n", style="dim")
    _pools_text(t, r)
    rt = rv.runtime(r)
    if rt is not None and rt.decode_batches:
        t.append("Runtime   ", style="bold")
        t.append(f"decode batches {fmt_int(rt.decode_batches)}  peak usage "
                 f"{fmt_num(rt.peak_token_usage)}  peak running "
                 f"{fmt_int(rt.peak_running_req)}  peak queue "
                 f"{fmt_int(rt.peak_queue_req)}  retractions "
                 f"{fmt_int(rt.retractions)}")
        tag(t, LOG)
        t.append("\n")
    return t


def _pools_text(t: Text, r: rv.Shown) -> None:
    pools = rv.pools(r)
    computed = rv.computed_bytes_per_token(r)
    padding = rv.pool_padding_rows(r)
    t.append(f"Pools ({len(pools)} on {len({p.rank for p in pools})} ranks)", style="bold")
    if computed is not None:
        t.append(f"  computed {computed:,.0f} B/token", style="dim")
    tag(t, LOG)
    t.append("\n")
    for names, p in group_pools(pools)[:32]:
        label = clean(str(p.label or ""), 24)
        t.append(f"  {clean(rank_span(names), 24):<8} ", style="cyan")
        if label:
            t.append(f"{label} ")
        t.append(f"{p.kind or '?'} ")
        if p.kind == "mamba":
            t.append(f"slots {fmt_int(p.slots)}  conv {fmt_gib(p.conv_gib)}"
                     f"  ssm {fmt_gib(p.ssm_gib)}\n")
            continue
        if p.kind == "subpools":
            t.append(f"{clean(str(p.dtype or '?'), 16)}  {clean(describe_subpools(p), 200)}\n")
            continue
        t.append(f"{clean(str(p.dtype or '?'), 16)}  {fmt_int(p.tokens)} tok")
        size = p.kv_gib
        if size is None and (p.k_gib is not None or p.v_gib is not None):
            size = (p.k_gib or 0.0) + (p.v_gib or 0.0)
        t.append(f"  {fmt_gib(size)}")
        if p.configured:
            t.append("  set by the operator", style="dim")
        bpt = p.bytes_per_token
        if bpt is not None:
            t.append(f"  measured {fmt_num(bpt, 0)} B/tok")
            if computed and padding is not None and p.tokens:
                # like with like: the pool line over the rows it holds, against the spec's row
                per_row = bpt * p.tokens / (p.tokens + padding)
                dev = (per_row - computed) / computed * 100
                t.append(f" ({dev:+.1f}%)", style="green" if abs(dev) < 2 else "yellow")
        t.append("\n")


class FactsPane(VerticalScroll):
    """Scrollable facts text."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._body = Static(facts_text(None), markup=False, id="facts-body")

    def compose(self) -> ComposeResult:
        yield self._body

    _last: Text | None = None
    extra: Text | None = None  # facts of another source (the metrics pane's: /metrics)

    def show(self, report: rv.Shown) -> None:
        """Repaint only when the text changed, and lay out only when it can change height:
        a running server changes a few figures per report, not the shape of the text. The body
        is held, not queried: a report may arrive before it is mounted."""
        text = facts_text(report)
        if self.extra is not None:
            text.append_text(self.extra)
        if text == self._last:
            return
        layout = self._last is None or _shape(text) != _shape(self._last)
        self._last = text
        self._body.update(text, layout=layout)


def _shape(text: Text) -> list[list[int]]:
    """Word lengths per line: two texts with the same shape wrap to the same height."""
    return [[len(w) for w in line.split(" ")] for line in text.plain.split("\n")]


BLOCKS = " ▁▂▃▄▅▆▇█"
FILL_COLUMNS = 3


@functools.lru_cache(maxsize=16384)
def _ts_seconds(ts: str) -> float | None:
    """parse_ts, remembered: the timeline redraws while a log streams, and its points repeat
    the same second many times."""
    return parse_ts(ts)


def _columns(pts: list[Any], cols: int, rng: tuple[float, float] | None = None) -> list[int]:
    """The column of each point: by its timestamp when the points carry usable ones (so an idle
    minute shows as a gap and the time axis is true), else by position. `rng` is the axis'
    span when another series (the metrics') widens it beyond the log's."""
    n = len(pts)
    secs = [_ts_seconds(p.ts) if p.ts else None for p in pts]
    known = [x for x in secs if x is not None]
    if len(known) >= 2 and known[-1] > known[0]:
        t0, span = known[0], known[-1] - known[0]
        if rng is not None:
            t0, span = rng[0], rng[1] - rng[0]
        out, last = [], 0
        for x in secs:
            if x is not None:
                last = min(cols - 1, max(0, int((x - t0) / span * (cols - 1) + 0.5)))
            out.append(last)
        return out
    return [min(cols - 1, i * cols // max(1, n)) for i in range(n)]


def sparkline(values: list[float | None], width: int, top: float | None = None,
              columns: list[int] | None = None) -> Text:
    """Values into `width` columns (max per column) drawn as block characters; `columns`
    gives each value's column (default: spread evenly by position)."""
    t = Text(no_wrap=True)
    vals = [v for v in values if v is not None]
    if width <= 0 or not vals:
        t.append("·" * max(0, width), style="dim")
        return t
    peak = top if top is not None else max(vals)
    n = len(values)
    cols = min(width, n) if columns is None else width
    where = columns if columns is not None else [min(cols - 1, i * cols // n) for i in range(n)]
    best: list[float | None] = [None] * cols
    for v, c in zip(values, where, strict=False):
        if v is not None and (best[c] is None or v > best[c]):  # type: ignore[operator]
            best[c] = v
    # A column with no sample between two close ones (the server logs every N batches) shows
    # the value before it; a longer silence stays a visible gap.
    prev, since = None, 0
    for c in range(cols):
        if best[c] is not None:
            prev, since = best[c], 0
        elif prev is not None and since < FILL_COLUMNS:
            since += 1
            nxt = next((best[k] for k in range(c + 1, min(cols, c + 1 + FILL_COLUMNS))
                        if best[k] is not None), None)
            if nxt is not None:
                best[c] = prev
    # One span per run of equal style, not one per column: the pane redraws while a log
    # streams, and a few spans render much faster than a hundred.
    run: list[str] = []
    run_style = ""
    for v in best:
        if v is None:
            ch, style = " ", ""
        else:
            level = 0 if peak <= 0 else min(8, max(1 if v > 0 else 0, round(v / peak * 8)))
            ch = BLOCKS[level]
            style = "red" if top == 1.0 and v >= 0.95 else (
                "yellow" if top == 1.0 and v >= 0.8 else "cyan")
        if style != run_style and run:
            t.append("".join(run), style=run_style)
            run = []
        run.append(ch)
        run_style = style
    if run:
        t.append("".join(run), style=run_style)
    return t


def _clock(ts: str | None) -> str:
    """HH:MM:SS of a log timestamp (the date is in the axis label when it is known)."""
    if not ts:
        return "?"
    # Any stamp `parsers.prefix` reads holds its time of day as H:MM:SS ("2026-11-24 09:14:20",
    # "...T09:14:20.123Z", vLLM's "03-02 14:05:11"); the date is wherever else it is.
    m = _TIME_OF_DAY.search(ts)
    return clean(m.group() if m else ts[:8], 8)


_TIME_OF_DAY = regex.compile(r"\d{1,2}:\d{2}:\d{2}")


def _duration(seconds: float) -> str:
    s = round(seconds)
    if s < 120:
        return f"{s}s"
    if s < 7200:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def _percent(v: float | None) -> str:
    return "—" if v is None else f"{v * 100:.0f}%"


class TimelinePane(Static):
    """KV token use, running and queued requests, generation throughput over the log's time;
    retractions marked. Each row names its unit; the last row is the time axis."""

    LABEL_W = 17
    VALUE_W = 9

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("", markup=False, **kwargs)
        self.points: list[Any] = []
        self.metric_points: list[Any] = []  # kvtui.core.metrics.timeline.MetricPoint
        self._drawn: tuple[Any, ...] | None = None

    def show(self, points: list[Any] | None) -> None:
        if points is not None:
            self.points = points
        self._draw()

    def show_metrics(self, points: list[Any]) -> None:
        """The /metrics series on the log's clock: two more rows, so the pane grows by two."""
        self.metric_points = points
        if points and self.styles.height is not None and self.styles.height.value == 8:
            self.styles.height = 10
        self._drawn = None
        self._draw()

    def on_resize(self) -> None:
        self._draw()

    def _draw(self) -> None:
        """A fixed-height pane: repaint (never lay out) and only when something changed."""
        width = max(20, self.size.width or 80)
        pts = self.points
        height = self.scrollable_content_region.height or 6
        key = (width, height, len(pts), pts[-1] if pts else None)
        if key == self._drawn:
            return
        self._drawn = key
        self.update(self.build(width, height), layout=False)

    def build(self, width: int, height: int = 6) -> Text:
        """The rows, and the time axis last; shorter than six rows, the series give way from
        the bottom, never the axis (issue 39: it was the row cut at 24 rows)."""
        pts = self.points
        label_w, value_w = self.LABEL_W, self.VALUE_W
        span = max(4, width - label_w - value_w - 1)
        t = Text(no_wrap=True, overflow="crop")
        if not pts:
            t.append("timeline: no decode batches yet", style="dim")
            return t
        mpts = self.metric_points
        rng = _metric_range(pts, mpts)
        cols = _columns(pts, span, rng)
        usage = [p.token_usage for p in pts]
        running = [float(p.running_req) if p.running_req is not None else None for p in pts]
        queue = [float(p.queue_req) if p.queue_req is not None else None for p in pts]
        gen = [p.gen_throughput for p in pts]
        # Retraction markers carry no values: the figures shown are the last batch's.
        last = next((p for p in reversed(pts) if not p.retraction), pts[-1])
        rows: list[tuple[str, list[float | None], float | None, str, list[int]]] = [
            ("KV tokens used %", usage, 1.0, _percent(last.token_usage), cols),
            ("running requests", running, None, fmt_int(last.running_req), cols),
            ("queued requests", queue, None, fmt_int(last.queue_req), cols),
            ("generated tok/s", gen, None, fmt_num(last.gen_throughput, 0), cols),
        ]
        if rng is not None:  # the /metrics series, on the same axis
            assert mpts
            mcols = [max(0, min(span - 1, int((m.seconds - rng[0]) / (rng[1] - rng[0])
                                              * (span - 1) + 0.5))) for m in mpts]
            rows[1:1] = [("KV % (/metrics)", [m.kv_usage for m in mpts], 1.0,
                          _percent(mpts[-1].kv_usage), mcols)]
            rows[4:4] = [("queued /metrics", [m.queued for m in mpts], None,
                          fmt_num(mpts[-1].queued, 0), mcols)]
        room = max(1, height - 1)  # rows above the axis
        for name, vals, top, cur, at in rows[:room]:
            t.append(f"{name:<{label_w}}", style="bold")
            t.append_text(sparkline(vals, span, top, at))
            t.append(f" {cur:>{value_w}}\n")
        if room > len(rows):
            marks = [c for c, p in zip(cols, pts, strict=True) if p.retraction]
            t.append(f"{'retractions':<{label_w}}", style="bold")
            line = [" "] * span
            for c in marks:
                line[c] = "▼"
            t.append("".join(line), style="bold red")
            t.append(f" {len(marks):>{value_w}}", style="red" if marks else "dim")
        else:
            t.rstrip()
        t.append_text(self._axis(pts, span, rng))
        return t

    def _axis(self, pts: list[Any], span: int, rng: tuple[float, float] | None = None) -> Text:
        """The time axis: start, middle and end of the log's clock, and the span it covers."""
        first = next((p.ts for p in pts if p.ts), None)
        last = next((p.ts for p in reversed(pts) if p.ts), None)
        t = Text("\n", no_wrap=True)
        t0, t1 = (_ts_seconds(first) if first else None), (_ts_seconds(last) if last else None)
        if rng is not None:  # widened by the /metrics series
            t0, t1 = rng
            first, last = _seconds_text(t0, first), _seconds_text(t1, first)
        label = "log time"
        if t0 is not None and t1 is not None and t1 > t0:
            label = f"time ({_duration(t1 - t0)})"
        t.append(f"{label:<{self.LABEL_W}}", style="bold")
        ruler = [" "] * span
        ticks: list[tuple[int, str]] = [(0, _clock(first))]
        end = _clock(last)
        if t0 is not None and t1 is not None and t1 > t0 and span >= 40:
            mid = _clock(_seconds_text(t0 + (t1 - t0) / 2, first))
            if mid not in (ticks[0][1], end):
                ticks.append((span // 2, mid))
        ticks.append((span - len(end), end))
        for col, text in ticks:
            col = max(0, min(span - len(text), col - (len(text) // 2 if 0 < col < span - len(
                text) else 0)))
            if all(c == " " for c in ruler[max(0, col - 1):col + len(text) + 1]):
                ruler[col:col + len(text)] = list(text)
        t.append("".join(ruler), style="dim")
        return t


def _metric_range(pts: list[Any], mpts: list[Any]) -> tuple[float, float] | None:
    """The axis over the log's points and the metric points together; None when there are no
    metric points or the log's points carry no clock to set them against."""
    if not mpts:
        return None
    known = [x for p in pts if p.ts and (x := _ts_seconds(p.ts)) is not None]
    if len(known) < 2:
        return None
    t0 = min(known[0], min(m.seconds for m in mpts))
    t1 = max(known[-1], max(m.seconds for m in mpts))
    return (t0, t1) if t1 > t0 else None


def _seconds_text(seconds: float, like: str | None) -> str:
    """A timestamp text for `seconds` in the same form as `like` (dated or time-only)."""
    from datetime import datetime

    if like and len(like) >= 19 and like[4] == "-":
        return datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M:%S")
    s = int(seconds) % 86400
    return f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"
