"""The runs list and the compare view: every server start of the log, the facts, alerts and
what-if of the one selected, and that run against the one before it.

Why screens of their own: the main panes show the last run (what the server runs now); a
deploy session is a loop of restarts, so the earlier runs stay one key away (`R`), and `C`
compares a run with the one before it, as `kvtui compare` does. Each text is the headless
command's own (`render_text` of the run's report, `render_comparison`), shown as `Text`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from kvtui.core.pipeline import Session
from kvtui.core.report_types import RunSummary, scales_said
from kvtui.ui.panes import _clock
from kvtui.ui.text import clean, severity_style


def run_line(r: RunSummary, resolved: int) -> Text:
    """One run in the list: start time and line, engine release, KV dtype configured ->
    effective, scales, pool tokens, max running, alerts."""
    t = Text()
    t.append(f"#{r.index:<3}", style="bold")
    ts = r.start.ts if r.start is not None else r.opened_ts
    line = r.start.line if r.start is not None else r.opened_line
    where = (f"line {line:,}" if line is not None else "") + (
        "" if r.start is not None or r.index == 1
        else f" (no start line: a {clean(r.opened_by or 'line', 30)} line)")
    t.append(f"{_clock(ts) if ts else '--:--:--'}  {where}\n", style="dim")
    t.append(f"     {clean(r.engine_version or '?', 24)}  KV ")
    t.append(clean(r.configured_dtype or "?", 20), style="bold")
    t.append(" -> ")
    t.append(clean(r.effective_dtype or "?", 20), style="bold")
    t.append(f" (scales {clean(scales_said(r.scales, r.effective_dtype), 24)})")
    pool = f"{r.pool_size:,}" if r.pool_size is not None else "-"
    mrr = f"{r.max_running_requests:,}" if r.max_running_requests is not None else "-"
    t.append(f"\n     pool {pool} tokens · max running {mrr} · ")
    if not r.alerts:
        t.append("no alerts", style="green")
    for i, a in enumerate(r.alerts):
        if i:
            t.append(", ")
        t.append(clean(a.rule, 40), style=severity_style(a.severity) or "bold")
    if resolved:
        t.append(f" ({resolved} resolved by a later run)", style="green")
    return t


def run_text(session: Session, lock: Any, number: int) -> Text:
    """The report of run `number` as `kvtui check` prints it (facts, alerts, what-if)."""
    from kvtui.core.render import render_text

    with lock:
        report = session.run_report(number)
    return Text(render_text(report))


def compare_text(session: Session, lock: Any, number: int) -> Text:
    """Run `number` against the run before it, as `kvtui compare` prints it."""
    from kvtui.core.compare import RunRef, compare
    from kvtui.core.compare_render import render_comparison

    if number < 2:
        return Text("run 1 is the first server start: there is no run before it to compare "
                    "with")
    with lock:
        runs = session.state.settled().runs
        refs = [RunRef(label=f"run {n}", number=n, report=session.run_report(n),
                       run=runs[n - 1], engine=session.engine) for n in (number - 1, number)]
        comparison = compare(refs[0], refs[1], model=session.options.model,
                             checkpoint=session.options.checkpoint)
    return Text(render_comparison(comparison))


class TextScreen(ModalScreen[None]):
    """A run's report, or a comparison: read-only text that scrolls."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "dismiss(None)", "Close")]

    def __init__(self, title: str, body: Text) -> None:
        super().__init__()
        self.title_text = title
        self.body = body

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="detail-box"):
            yield Label(Text(self.title_text, style="bold"))
            yield Static(self.body, markup=False, id="text-body")
            yield Label(Text("Esc: close", style="dim"))


class RunsScreen(ModalScreen[None]):
    """Every server start of the log; Enter shows the selected run's facts, alerts and
    what-if, `c` compares it with the run before it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "dismiss(None)", "Close"),
        Binding("c", "compare", "Compare with the run before"),
    ]

    def __init__(self, runs: tuple[RunSummary, ...], session: Session, lock: Any) -> None:
        super().__init__()
        self.runs = runs
        self.session = session
        self.lock = lock

    def compose(self) -> ComposeResult:
        resolved = {r.index: sum(1 for a in r.alerts if a.resolved_by is not None)
                    for r in self.runs}
        with Vertical(id="detail-box"):
            yield Label(Text(f"Runs ({len(self.runs)} server start"
                             f"{'s' if len(self.runs) != 1 else ''}; the panes show the last)",
                             style="bold"))
            options = [Option(run_line(r, resolved[r.index])) for r in self.runs]
            yield OptionList(*options, id="runs-list", markup=False)
            yield Label(Text("enter: the run's facts, alerts and what-if · c: compare with the "
                             "run before · Esc: close", style="dim"))

    def on_mount(self) -> None:
        runs_list = self.query_one("#runs-list", OptionList)
        runs_list.highlighted = len(self.runs) - 1
        runs_list.focus()

    def _selected(self) -> int:
        highlighted = self.query_one("#runs-list", OptionList).highlighted
        return (highlighted if highlighted is not None else len(self.runs) - 1) + 1

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        number = event.option_index + 1
        self.app.push_screen(TextScreen(f"Run {number} of {len(self.runs)}",
                                        run_text(self.session, self.lock, number)))

    def action_compare(self) -> None:
        number = self._selected()
        if number < 2:  # as the main screen's C: no view titled "against run 0"
            self.app.notify("run 1 is the first server start: there is no run before it to "
                            "compare with", markup=False)
            return
        self.app.push_screen(TextScreen(f"Run {number} against run {number - 1}",
                                        compare_text(self.session, self.lock, number)))
