"""The kvtui Textual app: one screen for replayed, tailed and SSH-followed logs alike.

Threading contract (harlequin's): the source runs in its own thread inside `Ingest`, which parses
and folds every line and keeps bounded buffers; this app drains them on a 15 Hz timer and owns
every widget. So the UI cost per tick is bounded whatever the line rate, and a slow terminal never
slows ingestion. Connection state reaches the header from `SourceNotice`s: any source (local
follower, replay, the SSH follower) only has to emit notices such as "connecting", "live",
"reconnecting", "rotated", "error" for the header to show them.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import events, on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.color import Color
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.containers import Horizontal
from textual.widgets import Footer, Static

from kvtui.core.pipeline import Session
from kvtui.core.report_types import Report
from kvtui.sources.base import LineSource, ReplayControls, SourceNotice, replay_controls
from kvtui.ui import report_view as rv
from kvtui.ui.export import export_path
from kvtui.ui.ingest import Ingest, LogEntry
from kvtui.ui.logview import LogView
from kvtui.ui.metrics import MetricsPane, metrics_facts
from kvtui.ui.pane_registry import PANES as PANE_ROWS
from kvtui.ui.pane_registry import Place, rows
from kvtui.ui.panes import AlertsPane, FactsPane, HeaderBar, TimelinePane
from kvtui.ui.screens import (
    AlertDetailScreen,
    HelpScreen,
    LineDetailScreen,
    PromptScreen,
)
from kvtui.ui.text import clean
from kvtui.ui.whatif import WhatIfPane

TICK_HZ = 15
# Read from the pane registry (kvtui/ui/pane_registry.py), where a pane is added.
PANES = tuple(r.key for r in PANE_ROWS)
TOP_PANES = tuple(r.key for r in PANE_ROWS if r.place != "log")  # the ones `shown_pane` can be
WHATIF_ROWS = 36  # a narrow terminal shorter than this gives the what-if the log's rows

if TYPE_CHECKING:
    from kvtui.sources.record import RecordedScrape


class KvCommands(Provider):
    """Command palette entries for the app's actions."""

    def _commands(self) -> list[tuple[str, str, str]]:
        cmds = [
            ("Export analysis as Markdown", "export('md')", "same content as kvtui check"),
            ("Export analysis as JSON", "export('json')", "same content as kvtui check --json"),
            ("Log: toggle wrap", "log_wrap", "wrap long lines in the log pane"),
            ("Log: filter all lines", "log_filter('all')", ""),
            ("Log: filter recognized lines", "log_filter('recognized')", ""),
            ("Log: filter alert lines", "log_filter('alerts')", ""),
            ("Log: filter by regex…", "regex_filter", ""),
            ("Log: search…", "search", ""),
            ("Log: copy the selected line", "copy_line", "terminal clipboard (OSC 52)"),
            ("Log: follow the tail", "log_tail", ""),
            ("Runs: every server start", "runs", "the facts, alerts and what-if of each"),
            ("Runs: compare the last run with the one before", "compare_runs", ""),
            ("Help: keys", "help", ""),
        ]
        app = self.app
        if isinstance(app, KvApp) and app.is_replay:
            cmds += [
                ("Replay: play / pause", "toggle_pause", ""),
                ("Replay: step one line", "step", ""),
                ("Replay: next event", "next_event", ""),
                ("Replay: next alert", "next_alert", ""),
                ("Replay: jump to time…", "jump_time", ""),
                ("Replay: restart", "restart", ""),
            ]
        return cmds

    async def discover(self) -> Hits:
        for name, action, help_text in self._commands():
            yield DiscoveryHit(name, self._runner(action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, action, help_text in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), self._runner(action), help=help_text)

    def _runner(self, action: str) -> Any:
        async def run() -> None:
            await self.app.run_action(action)
        return run


class KvFooter(Footer):
    """Textual's footer, rebuilt only when the keys it shows change.

    The stock footer recomposes (unmounts and mounts every key) on each focus change; moving
    between panes whose shown keys are the same then cost a full layout while a log streams.
    """

    _shown: tuple[Any, ...] | None = None

    def bindings_changed(self, screen: Any) -> None:
        shown = tuple((b.key, b.description, enabled)
                      for (_, b, enabled, _) in screen.active_bindings.values() if b.show)
        if shown == self._shown and self._bindings_ready:
            return
        first = self._shown is None
        self._shown = shown
        if first or not self._bindings_ready:
            super().bindings_changed(screen)
            return
        # After the frame that shows the key's own effect: a footer rebuild lays the screen
        # out again, and leaving a what-if field (whose typing hid the letter keys) made
        # Escape wait for it (issue 39: 130-180 ms through a terminal).
        self.call_after_refresh(self._rebuild, screen)

    def _rebuild(self, screen: Any) -> None:
        if self.is_attached:
            Footer.bindings_changed(self, screen)


class KvApp(App[int]):
    """Header verdict, alerts, facts, what-if, timeline, and the raw log."""

    CSS_PATH = "app.tcss"
    TITLE = "kvtui"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (140, "-wide")]  # noqa: RUF012
    COMMANDS = App.COMMANDS | {KvCommands}

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        # ctrl+c quits from anywhere, as the help says (Textual's default only tells the user
        # to press ctrl+q); ctrl+q keeps working too.
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
        Binding("escape", "panes", "Panes", show=False),
        Binding("question_mark", "help", "Help"),
        *(Binding(str(i), f"pane('{r.key}')", r.title, show=r.footer)
          for i, r in enumerate(PANE_ROWS, 1)),
        Binding("slash", "search", "Search"),
        # Log and alert keys live here, not on their panes: they work from any pane, and the
        # footer shows the same keys whatever has the focus (a footer that changes with the
        # focus is rebuilt on every pane switch, which cost a layout while a log streams).
        Binding("g", "goto_evidence", "Evidence"),
        Binding("f", "log_cycle_filter", "Filter"),
        Binding("w", "log_wrap", "Wrap"),
        Binding("c", "copy_line", "Copy"),
        Binding("r", "regex_filter", "Regex", show=False),
        Binding("R", "runs", "Runs", show=False),
        Binding("C", "compare_runs", "Compare", show=False),
        Binding("e", "export('md')", "Export"),
        Binding("E", "export('json')", "JSON", show=False),
        Binding("space", "toggle_pause", "Play/Pause", show=False),
        Binding("full_stop", "step", "Step", show=False),
        Binding("right_square_bracket", "next_event", "Next event", show=False),
        Binding("right_curly_bracket", "next_alert", "Next alert", show=False),
        Binding("t", "jump_time", "Time", show=False),
        Binding("plus", "speed(2.0)", "Faster", show=False),
        Binding("minus", "speed(0.5)", "Slower", show=False),
        Binding("0", "restart", "Restart", show=False),
    ]

    def __init__(self, source: LineSource, title: str, *, session: Session | None = None,
                 log_window: int = 20000, export_dir: str | os.PathLike[str] | None = None,
                 tick_hz: float = TICK_HZ, metrics_offset: float | None = None,
                 paced_scrapes: Sequence[RecordedScrape] | None = None,
                 **_ignored: Any) -> None:
        from kvtui.ui.terminal import quick_escape_driver

        super().__init__(driver_class=quick_escape_driver())
        self.source = source
        self.controls = replay_controls(source)  # None: a live source (no play/pause/seek)
        self.source_title = title
        self.ingest = Ingest(source, session=session, ring=log_window, paced=paced_scrapes)
        self._switch_interval = sys.getswitchinterval()
        self._frozen = self._history_frozen = False  # gc.freeze done (see _freeze_heap)
        self.log_window: int = log_window
        self.export_dir = Path(export_dir) if export_dir is not None else None
        self.tick_hz = tick_hz
        # Seconds from the scrapes' clock to the log's (`kvtui.core.metrics.timeline`): given
        # by the command that knows both (a local tail: 0, wall clock on both sides), else None
        # and the Timeline leaves the metric series out rather than place them by guess.
        self.metrics_offset = metrics_offset
        self.report: rv.Shown = None
        self.shown_pane = "alerts"
        self._seek_alert_keys: set[tuple[Any, ...]] | None = None
        self._event_from: tuple[str, int] | None = None  # where a `]` seek started
        self.ticks = 0
        self.last_tick_ms = 0.0
        self._log_status_shown: tuple[str, str] | None = None
        self._focus_marked: Any = None
        self._panebar_shown: Text | None = None
        self.panes: dict[str, Any] = {}  # key -> widget, from the registry (held at mount)

    # -- layout ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield HeaderBar(self.source_title, id="header")
        yield Static("", id="panebar", markup=False)
        with Horizontal(id="top"):
            yield from self._made("top")
        yield from self._made("below")
        yield from self._made("log")
        yield KvFooter()

    def _made(self, place: Place) -> Iterable[Any]:
        for row in rows(place):
            widget = row.make(self)
            widget.border_title = row.title
            yield widget

    @property
    def is_replay(self) -> bool:
        return self.controls is not None

    def on_mount(self) -> None:
        # The source thread parses flat out; a short switch interval keeps keys snappy. It is
        # the process's setting, so on_unmount gives back the one of __init__ (a host process,
        # such as a test run, keeps its own).
        sys.setswitchinterval(0.001)
        # Held once: the tick must reach the panes even while a modal screen is on top.
        self.log_view = self.query_one(LogView)
        self.header_bar = self.query_one(HeaderBar)
        self.panes = {r.key: self.query_one(f"#{r.key}") for r in PANE_ROWS}
        # The app's own reads of these panes (alert seek, export, evidence) name them here.
        self.alerts_pane = self.query_one(AlertsPane)
        self.facts_pane = self.query_one(FactsPane)
        self.whatif_pane = self.query_one(WhatIfPane)
        self.timeline_pane = self.query_one(TimelinePane)
        self._show_pane("alerts", focus=True)
        waiting = self.ingest.paced_waiting()
        if waiting:  # a recording's scrapes, each fed where the replay reaches its line
            self.show_metrics([], "recorded", f"{waiting} scrape(s) in the recording")
        self.ingest.start()
        self.set_interval(1 / self.tick_hz, self._tick)
        self.call_after_refresh(self._freeze_heap)

    def _freeze_heap(self) -> None:
        """Take what the process holds now out of the cycle collector's walk (`gc.freeze`):
        once the first screen is up, and again when the history is in.

        Why: Textual's strips cache themselves (a strip already of the length asked for is
        stored in its own length cache: textual 8.2 strip.py:409), so every frame leaves
        garbage in cycles and, while a log is followed, the collector runs a full collection
        every second or two. A full collection walks every tracked object, about 100,000
        after start-up (modules, Textual's DOM and styles, the log pane): 60-115 ms on a
        2-core VM, so a key pressed during one waited that long (bench_tui's tail keys, max
        108-171 ms). Frozen (and with the log pane's smaller row cache), the walk covers only
        what came later: 18-59 ms, keys max 64-89 ms. Objects frozen are still freed when
        nothing refers to them; only cycles among them wait for `on_unmount`'s unfreeze,
        which gives a host process (a test run) its collector back; a host that froze
        objects of its own is left alone."""
        if not self._frozen and gc.get_freeze_count():
            self._history_frozen = True
            return  # the host process froze objects of its own: its collector is not ours
        gc.collect()
        gc.freeze()
        self._frozen = True

    def on_resize(self) -> None:
        self._apply_layout()

    def _apply_layout(self) -> None:
        if not self.panes:
            return  # a resize before on_mount: on_mount lays out
        narrow = self.size.width < 140
        # The upper panes are shown and hidden by an inline `display`, not a class: a class
        # change restyles a pane's whole subtree, and the what-if form's made key 3 cost
        # 100-160 ms at 80x24 (issue 39). The timeline's class (a small subtree) stays.
        top = rows("top")
        for row in top:
            pane = self.panes[row.key]
            want = (not narrow and not row.when_chosen) or row.key == self.shown_pane
            if pane.display != want:
                pane.display = want
        if narrow:
            for row in rows("below"):
                self.panes[row.key].set_class(self.shown_pane == row.key, "-shown")
        top_has = any(row.key == self.shown_pane for row in top)
        self.query_one("#top").set_class(narrow and not top_has, "-hidden")
        # The what-if's inputs and answer on screen together (issue 39): while it is the pane
        # shown, it takes the log's rows on a short narrow terminal (its 3/5 of 80x24 are 10
        # rows; form and answer need about 20) and twice the width of its neighbours on a wide
        # one. Inline styles: a class would restyle every subtree.
        grows = any(r.grows and r.key == self.shown_pane for r in PANE_ROWS)
        hide_log = narrow and grows and self.size.height < WHATIF_ROWS
        if self.log_view.display == hide_log:
            self.log_view.display = not hide_log
        for row in PANE_ROWS:
            if row.grows:
                width = "2fr" if row.key == self.shown_pane and not narrow else "1fr"
                if str(self.panes[row.key].styles.width) != width:
                    self.panes[row.key].styles.width = width
        bar = Text()
        for i, row in enumerate(PANE_ROWS, 1):
            if row.listed is not None and not row.listed(self.panes[row.key]):
                continue  # e.g. the metrics pane, listed once the session has a source
            style = "bold reverse" if row.key == self.shown_pane else "dim"
            bar.append(f" {i} {row.title} ", style=style)
            bar.append(" ")
        if bar != self._panebar_shown:
            self._panebar_shown = bar
            self.query_one("#panebar", Static).update(bar, layout=False)  # always one row

    def _show_pane(self, name: str, focus: bool = False) -> None:
        if name in TOP_PANES:
            self.shown_pane = name
        self._apply_layout()
        self.call_after_refresh(self.log_view.refollow)
        if focus:
            # The pane, never one of its fields: keys keep meaning "pane" until the user steps
            # into the what-if form on purpose (Tab or Enter there).
            pane = self.query_one(f"#{name}")
            (pane.focus_target() if isinstance(pane, WhatIfPane) else pane).focus()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self._mark_focus()

    def _pane_of(self, node: Any) -> Any:
        while node is not None and not (node.has_class("pane") or node is self.log_view):
            node = node.parent
        return node

    def _mark_focus(self) -> None:
        """Accent border on the pane that holds the focus, the usual border on the others.
        Inline styles change only the two panes involved (see app.tcss for why not CSS)."""
        focused = self._pane_of(self.focused)
        if focused is self._focus_marked:
            return
        colors = self.theme_variables
        for pane, color in ((self._focus_marked, colors.get("primary-darken-2")),
                            (focused, colors.get("accent"))):
            if pane is not None and color:
                # Edge by edge: a new colour on an existing edge repaints; setting `border`
                # as a whole would also lay the screen out again.
                edge = ("round", Color.parse(color))
                styles = pane.styles
                styles.border_top = styles.border_right = edge
                styles.border_bottom = styles.border_left = edge
        self._focus_marked = focused

    def action_pane(self, name: str) -> None:
        self._show_pane(name, focus=True)

    def action_panes(self) -> None:
        """Escape: back to the pane that holds the focus (from a what-if field, say)."""
        node = self._pane_of(self.focused)
        name = node.id if node is not None and node.id in PANES else self.shown_pane
        self._show_pane(str(name), focus=True)

    # -- the tick: drain the ingest -----------------------------------------------------------
    def _tick(self) -> None:
        t0 = time.perf_counter()
        if not self.log_view.is_attached:
            return
        d = self.ingest.drain()
        log = self.log_view
        header = self.header_bar
        if d.restarted:
            log.clear()
        for n in d.notices:
            self._on_notice(n, header)
        if d.entries:
            if d.dropped:
                log.dropped += d.dropped
            log.append(d.entries)
        if d.report is not None:
            self._apply_report(d.report, d.timeline)
            for row in PANE_ROWS:  # what each pane shows of this report (the registry's feed)
                if row.feed is not None:
                    row.feed(self.panes[row.key], d)
        if d.metrics:
            series = self.ingest.session.metrics
            self.show_metrics(series.snapshots, series.state.state, series.state.detail or None,
                              self.metrics_offset if self.metrics_offset is not None
                              else self.ingest.metrics_offset)
        header.lines = d.lines
        header.load = d.load
        status = self.controls.status() if self.controls is not None else None
        header.progress = status.progress if status is not None else None
        header.speed = status.pace if status is not None else None
        header.log_time = (status.log_time if status is not None and status.log_time
                           else rv.last_log_time(self.report))
        header.redraw()
        self.ticks += 1
        self.last_tick_ms = (time.perf_counter() - t0) * 1000

    def _on_notice(self, n: SourceNotice, header: HeaderBar) -> None:
        header.set_state(n.state, n.message)
        if n.moved_to:  # a rotation: the lines shown so far now live in another file
            for e in self.log_view._entries:
                if e.source == n.source and not e.notice:
                    e.source = n.moved_to
        if n.state == "error":
            self.notify(clean(n.message or "source error", 300), title="source",
                        severity="error", markup=False)
        if n.state in ("live", "at_end") and not self._history_frozen:
            self._history_frozen = True  # the history is in: what it left is long-lived
            self._freeze_heap()
        if n.state == "at_end" and self._event_from is not None and self.controls is not None:
            self._event_not_found(self.controls)
        elif n.state == "paused":
            self._event_from = None  # the `]` seek found its event (or was ended)
        if n.state in ("at_end", "restart"):
            # The alert seek is over: nothing left to find, or the replay starts again. A later
            # "paused" (a restart starting paused) must not resume it.
            before, self._seek_alert_keys = self._seek_alert_keys, None
            if before is not None and n.state == "at_end":
                self._check_alert_seek(before, final=True)
        elif n.state == "paused" and self._seek_alert_keys is not None:
            self._check_alert_seek(self._seek_alert_keys, final=False)

    def _apply_report(self, report: rv.Shown, timeline: list[Any] | None) -> None:
        self.report = report
        self.header_bar.report = report
        self.log_view.set_evidence(rv.evidence_lines(report))
        resolved = sum(1 for _, a in rv.earlier_alerts(report) if a.resolved_by is not None)
        title = f"Alerts ({len(rv.alerts(report))}" + (f", {resolved} resolved)" if resolved
                                                        else ")")
        if self.alerts_pane.border_title != title:
            self.alerts_pane.border_title = title

    def show_metrics(self, snapshots: Any, state: str | None = None, detail: str | None = None,
                     offset: float | None = None) -> None:
        """The session's metric series (a time-ordered Sequence[Snapshot], None: no metrics
        source), on the app's thread; the pane reads it beside the current report. `offset`
        puts a scrape's clock on the log's (kvtui.core.metrics.timeline): the Timeline draws
        the series only with it."""
        from kvtui.core.metrics.timeline import points

        self.query_one(MetricsPane).show(snapshots, self.report, state, detail)
        self.timeline_pane.show_metrics(
            points(snapshots, offset) if snapshots and offset is not None else [])
        self.facts_pane.extra = metrics_facts(snapshots)
        self.facts_pane.show(self.report)
        self._apply_layout()  # the pane bar lists the pane once there is a source

    @on(WhatIfPane.ModelChosen)
    def _model_chosen(self, event: WhatIfPane.ModelChosen) -> None:
        self._reanalyse(event.model)

    @work(thread=True, exclusive=True, group="model")
    def _reanalyse(self, model: str | None) -> None:
        """Rebuild report and calculator with the chosen model (off the event loop)."""
        if model:
            try:
                from kvtui.core.capacity import resolve_model

                resolve_model(model)
            except Exception as exc:
                self.call_from_thread(self.notify, f"model: {exc}", severity="warning",
                                      markup=False)
                return
        with self.ingest.report_lock:
            self.ingest.session.configure(model=model)
        self.ingest.refresh_report()

    # -- runs -------------------------------------------------------------------------------------
    def action_runs(self) -> None:
        """The runs list: every server start, each one's facts, alerts and what-if."""
        from kvtui.ui.runs import RunsScreen

        runs = rv.runs(self.report)
        if not runs:
            self.notify("no server start seen yet", markup=False)
            return
        self.push_screen(RunsScreen(runs, self.ingest.session, self.ingest.report_lock))

    def action_compare_runs(self) -> None:
        """The last run against the one before it (`kvtui compare` on the log)."""
        from kvtui.ui.runs import TextScreen, compare_text

        number = len(rv.runs(self.report))
        if number < 2:
            self.notify("one server start so far: nothing to compare with", markup=False)
            return
        self.push_screen(TextScreen(f"Run {number} against run {number - 1}",
                                    compare_text(self.ingest.session, self.ingest.report_lock,
                                                 number)))

    # -- log pane status --------------------------------------------------------------------------
    @on(LogView.Status)
    def _log_status(self) -> None:
        log = self.log_view
        status = log.status_text()
        if status == self._log_status_shown:
            return  # a new title repaints the whole pane: only when it says something new
        self._log_status_shown = status
        title, sub = status
        log.border_title = Text(title)
        log.border_subtitle = Text(sub, style="bold yellow") if sub else None

    @on(LogView.Copied)
    def _copied(self, event: LogView.Copied) -> None:
        self.copy_to_clipboard(event.entry.text)
        self.notify(f"copied line {event.entry.line_no} ({len(event.entry.text):,} chars)",
                    markup=False)

    @on(LogView.LineDetail)
    def _line_detail(self, event: LogView.LineDetail) -> None:
        self.push_screen(LineDetailScreen(event.entry))

    # -- alerts -----------------------------------------------------------------------------------
    @on(AlertsPane.Open)
    def _open_alert(self, event: AlertsPane.Open) -> None:
        alert = event.alert
        ev = rv.evidence(alert)
        context = self._context_lines(ev.source, ev.line) if ev is not None else []

        def done(result: str | None) -> None:
            if result == "goto":
                self._goto_evidence(alert)
            elif result == "copy":
                self.copy_to_clipboard(str(ev.text or "") if ev is not None else "")
                self.notify("copied the evidence line", markup=False)

        self.push_screen(AlertDetailScreen(alert, context), done)

    def _goto_evidence(self, alert: rv.Alert) -> None:
        ev = rv.evidence(alert)
        line = ev.line if ev is not None else None
        if ev is None or not line:
            self.notify("this alert has no evidence line", markup=False)
            return
        log = self.log_view
        if log.jump_to(ev.source, int(line)):
            log.focus()
        else:
            self.notify(f"line {line} is older than the {self.log_window:,} lines kept; "
                        "its text is in the alert detail", markup=False)

    def _context_lines(self, source: Any, line: Any, radius: int = 3) -> list[LogEntry]:
        if not isinstance(line, int):
            return []
        entries = self.log_view._entries
        for i in range(len(entries) - 1, -1, -1):
            e = entries[i]
            if not e.notice and e.line_no == line and (source is None or e.source == source):
                lo, hi = max(0, i - radius), min(len(entries), i + radius + 1)
                return [x for x in entries[lo:hi] if not x.notice]
        return []

    # -- actions: log ------------------------------------------------------------------------
    def action_search(self) -> None:
        def done(value: str | None) -> None:
            if value is None:
                return
            result = self.log_view.set_search(value)
            self.log_view.focus()
            if result is not None:
                self._say_search(result)
        self.push_screen(PromptScreen("Search the log (regex, n/N to move)"), done)

    @on(LogView.Searched)
    def _searched(self, event: LogView.Searched) -> None:
        self._say_search(event.result)

    def _say_search(self, result: Any) -> None:
        """Tell the user where the search is: a wrap round an end, or why nothing matched."""
        if result.total and result.wrapped:
            self.notify(f"search wrapped {result.wrapped} (match {result.index:,} of "
                        f"{result.total:,})", markup=False)
        elif not result.total:
            self.notify(self._no_match_text(), severity="warning", markup=False, timeout=8)

    def _no_match_text(self) -> str:
        """Why a search found nothing, in the user's words: which lines were searched and how
        to search the rest."""
        log = self.log_view
        if log.filter_mode != "all":
            return (f"no match among the {log.shown:,} lines the '{log.filter_mode}' filter "
                    "shows; press f until the filter says 'all' to search every kept line")
        older = self.ingest.lines - log.kept
        if older > 0:
            where = self.source.name or "the log file"
            return (f"no match in the newest {log.kept:,} lines (the pane keeps "
                    f"{self.log_window:,}; {older:,} older lines are not kept). To search the "
                    f"whole file: grep -n 'PATTERN' {where}, or reopen with --log-window N")
        return f"no match in the {log.kept:,} lines of the log"

    def action_regex_filter(self) -> None:
        def done(value: str | None) -> None:
            if value is None:
                return
            log = self.log_view
            msg = log.set_filter("regex", value) if value else log.set_filter("all")
            log.focus()  # the filter shows in the log, and f / n / w act there
            if msg:
                self.notify(msg, severity="warning", markup=False)
        self.push_screen(PromptScreen("Show only lines matching (regex; empty: all)"), done)

    def action_log_filter(self, mode: str) -> None:
        self.log_view.set_filter(mode)

    def action_log_cycle_filter(self) -> None:
        self.log_view.action_cycle_filter()

    def action_goto_evidence(self) -> None:
        alert = self.alerts_pane.current()
        if alert is None:
            self.notify("no alert selected", markup=False)
            return
        self._goto_evidence(alert)

    def action_log_wrap(self) -> None:
        self.log_view.action_toggle_wrap()

    def action_log_tail(self) -> None:
        self.log_view.action_bottom()

    def action_copy_line(self) -> None:
        self.log_view.action_copy_line()

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    # -- actions: replay -----------------------------------------------------------------------
    def _replay(self) -> ReplayControls | None:
        if self.controls is None:
            self.notify("only a replay can be paused or stepped", markup=False)
        return self.controls

    def action_toggle_pause(self) -> None:
        src = self._replay()
        if src is not None:
            self._seek_alert_keys = None  # play/pause ends a "next alert" search
            self._event_from = None
            paused = src.toggle_pause()
            self.header_bar.set_state("paused" if paused else "replaying")

    def action_step(self) -> None:
        src = self._replay()
        if src is not None:
            self._seek_alert_keys = self._event_from = None
            src.step(1)

    def action_next_event(self) -> None:
        src = self._replay()
        if src is None:
            return
        parse = self.ingest.session.parse

        def event(line: Any) -> bool:
            ev = parse(line.text)
            return ev is not None and ev.kind not in ("decode_batch", "prefill_batch")
        self._seek_alert_keys = None
        here = next((e for e in reversed(self.log_view._entries) if not e.notice), None)
        self._event_from = (here.source, here.line_no) if here is not None else None
        src.seek(event)

    def _event_not_found(self, src: ReplayControls) -> None:
        """`]` ran out of file (from a decode line, only batches may follow): go back to the
        line it started from, rather than leave the replay at its end (issue 39), and say so."""
        if self._event_from is None:
            return
        source, line_no = self._event_from
        self._event_from = None
        src.restart()

        def back(line: Any) -> bool:
            return bool(line.source == source and line.line_no >= line_no)
        src.seek(back)
        self.notify(f"no recognized event after line {line_no:,} (only decode and prefill "
                    "batches follow); staying there", markup=False, timeout=6)

    def action_next_alert(self) -> None:
        src = self._replay()
        if src is None:
            return
        self._event_from = None
        self._seek_alert_keys = self._alert_keys(self.report)
        self._seek_trigger(src)

    def _seek_trigger(self, src: ReplayControls) -> None:
        session = self.ingest.session
        parse = session.parse
        with self.ingest.report_lock:
            may_change = session.alert_watch()

        def trigger(line: Any) -> bool:
            ev = parse(line.text)
            return ev is not None and may_change(ev)
        src.seek(trigger)

    @staticmethod
    def _alert_keys(report: rv.Shown) -> set[tuple[Any, ...]]:
        return {rv.alert_key(a) for a in rv.alerts(report)}

    @work(thread=True, exclusive=True, group="seek", exit_on_error=False)
    def _check_alert_seek(self, before: set[tuple[Any, ...]], final: bool) -> None:
        """After a trigger line (or the end): build the report off the event loop, under the
        ingest's lock, then let the event loop decide whether the alerts changed. A failing
        rule ends the search with a warning; it never takes the app down."""
        report: rv.Shown = None
        error: str | None = None
        try:
            with self.ingest.report_lock:
                report = self.ingest.session.report()
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
        with contextlib.suppress(Exception):  # the app may be shutting down
            self.call_from_thread(self._alert_seek_checked, before, report, error, final)

    def _alert_seek_checked(self, before: set[tuple[Any, ...]], report: rv.Shown,
                            error: str | None, final: bool) -> None:
        """Event loop side of `_check_alert_seek`: select a new alert, or seek on."""
        current = self._seek_alert_keys is before  # False: the search was ended or replaced
        if error is not None:
            if current:
                self._seek_alert_keys = None
                self.notify(clean(f"next alert: report failed: {error}", 300),
                            severity="warning", markup=False)
            return
        new = [key for key in map(rv.alert_key, rv.alerts(report)) if key not in before]
        if final:
            # The replay reached its end (the search was already cleared): show what it found,
            # unless the user has started another search meanwhile.
            if new and self._seek_alert_keys is None:
                self._select_alert(new[0])
            return
        if not current:
            return
        if new:
            self._seek_alert_keys = None
            self._select_alert(new[0])
            return
        src = self.controls
        if src is None or src.status().state == "at_end":
            self._seek_alert_keys = None
            return
        self._seek_trigger(src)

    def _select_alert(self, key: tuple[Any, ...]) -> None:
        pane = self.alerts_pane
        for i, a in enumerate(pane.alerts):
            if rv.alert_key(a) == key:
                pane.highlighted = i
                self._goto_evidence(a)
                break

    def action_jump_time(self) -> None:
        src = self._replay()
        if src is None:
            return

        def done(value: str | None) -> None:
            if value:
                self._seek_alert_keys = self._event_from = None
            if value and not src.seek_time(value):
                self.notify(f"not a time: {value!r}", severity="warning", markup=False)
        self.push_screen(PromptScreen("Jump to time (HH:MM[:SS] or YYYY-MM-DD HH:MM:SS)"), done)

    def action_speed(self, factor: float) -> None:
        src = self._replay()
        if src is not None:
            src.set_speed(src.speed * factor)
            self.notify(f"replay speed {src.status().pace}", markup=False)

    def action_restart(self) -> None:
        src = self._replay()
        if src is not None:
            self._seek_alert_keys = None  # a restart ends a "next alert" search
            self._event_from = None
            src.restart()

    # -- export ---------------------------------------------------------------------------------
    def action_export(self, fmt: str) -> None:
        # The scenario is read here, on the UI thread that owns the pane.
        from kvtui.ui.scenario_export import scenario_doc

        pane = self.whatif_pane
        self._export(fmt, scenario_doc(pane.inputs, pane.result))

    @work(thread=True, exclusive=True, group="export")
    def _export(self, fmt: str, scenario: dict[str, Any] | None = None) -> None:
        try:
            with self.ingest.report_lock:
                report = self.ingest.session.report()
            path = export_path(self.source, self.export_dir, fmt)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render_export(report, fmt, scenario), encoding="utf-8")
            self.call_from_thread(self.notify, f"exported to {path}", title="export",
                                  markup=False, timeout=8)
        except Exception as exc:
            self.call_from_thread(self.notify, f"export failed: {exc}", severity="error",
                                  markup=False)

    # -- shutdown ---------------------------------------------------------------------------------
    async def action_quit(self) -> None:
        self.ingest.close(timeout=1.0)
        self.exit(0)

    def on_unmount(self) -> None:
        self.ingest.close(timeout=1.0)
        sys.setswitchinterval(self._switch_interval)
        if self._frozen:
            gc.unfreeze()


def render_export(report: Report, fmt: str, scenario: dict[str, Any] | None = None) -> str:
    """The same document `kvtui check` prints (its Markdown renderer, or its JSON), with the
    what-if scenario built in the pane after it (a `whatif_scenario` key, or a section)."""
    if fmt == "md":
        try:
            from kvtui.core.render import render_markdown

            text = render_markdown(report)
            if scenario is not None:
                from kvtui.ui.scenario_export import scenario_markdown

                text += scenario_markdown(scenario)
            return text
        except ImportError:
            pass
    doc = report.to_json()
    if scenario is not None:
        doc["whatif_scenario"] = scenario
    return json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n"


def run_app(source: LineSource, title: str, **opts: Any) -> int:
    """Open the TUI on any LineSource and block until the user quits; returns the exit code.

    Options: `session` (a pipeline Session configured with a model or checkpoint),
    `log_window` (lines kept in the log pane), `export_dir`. The header shows the state of the
    latest SourceNotice the source emitted (connecting, live, reconnecting, rotated, error, ...).
    """
    from kvtui.ui.terminal import terminal_problem

    problem = terminal_problem()
    if problem is not None:
        print(f"kvtui: {problem}", file=sys.stderr)
        return 2
    app = KvApp(source, title, **opts)
    result = app.run()
    return int(result or 0)


def entries_text(entries: Iterable[LogEntry]) -> str:
    return "\n".join(e.text for e in entries)
