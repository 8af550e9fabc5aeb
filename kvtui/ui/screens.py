"""Modal screens: alert detail, full line, help, and the one-line prompt (search, regex, time).

All log-derived content is shown as `Text` built by `kvtui.ui.text`, never as markup.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from kvtui.ui import report_view as rv
from kvtui.ui.ingest import LogEntry
from kvtui.ui.pane_registry import PANES
from kvtui.ui.text import clean, severity_style

DETAIL_MAX = 100_000  # characters of one line shown in the line detail (the rest: copy)

# An alert's `confidence`, said in words (the help's "Words" section says more).
CERTAINTY = {
    "high": "kvtui is sure: the log (and the checkpoint, if read) settles it",
    "medium": "likely, not certain: the log alone cannot settle it (kvtui ssh can read the "
              "checkpoint)",
    "low": "possible: inferred from indirect signs",
}


class AlertDetailScreen(ModalScreen[str | None]):
    """Why the alert fired, the fix, and the raw evidence lines. `g` jumps to the evidence."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "dismiss(None)", "Close"),
        Binding("g", "dismiss('goto')", "Go to evidence"),
        Binding("c", "dismiss('copy')", "Copy evidence"),
    ]

    def __init__(self, alert: rv.Alert, context: list[LogEntry]) -> None:
        super().__init__()
        self.alert = alert
        self.context = context

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="detail-box"):
            yield Static(self.build(), markup=False)
            yield Label(Text("g: go to evidence in the log · c: copy · Esc: close",
                             style="dim"))

    def build(self) -> Text:
        a = self.alert
        sev = str(a.severity or "info")
        t = Text()
        t.append(f" {sev.upper()} ", style=severity_style(sev) + " reverse")
        t.append("  ")
        t.append(clean(str(a.title or a.rule or "?"), 300), style="bold")
        t.append(f"\nrule {clean(str(a.rule or '?'), 60)}", style="dim")
        sure = CERTAINTY.get(str(a.confidence))
        if sure:
            t.append(f" · {sure}", style="dim")
        t.append("\n\n")
        t.append("\n".join(clean(p, 4000) for p in str(a.detail or "").split("\n")))
        if a.fix:
            t.append("\n\nFix\n", style="bold green")
            t.append(clean(str(a.fix), 2000), style="green")
        ev = rv.evidence(a)
        t.append("\n\nEvidence\n", style="bold")
        if ev is not None:
            where = f"{clean(str(ev.source or '?'), 120)}:{ev.line}"
            if ev.rank:
                where += f" {clean(str(ev.rank), 30)}"
            if (ev.count or 1) > 1:
                where += f" (seen {ev.count} times)"
            t.append(where + "\n", style="cyan")
            t.append(clean(str(ev.text or ""), 2000), style="bold")
        else:
            t.append("no evidence line", style="dim")
        if self.context:
            t.append("\n\nIn the log\n", style="bold")
            line = ev.line if ev is not None else None
            for e in self.context:
                mark = "▶" if e.line_no == line else " "
                t.append(f"{mark}{e.line_no:>8} ", style="dim")
                t.append(clean(e.text, 400) + "\n",
                         style="bold" if e.line_no == line else "")
        return t


class LineDetailScreen(ModalScreen[None]):
    """The whole of one line, wrapped (bounded: a 1 MB line stays cheap to show)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,enter", "dismiss(None)", "Close")]

    def __init__(self, entry: LogEntry) -> None:
        super().__init__()
        self.entry = entry

    def compose(self) -> ComposeResult:
        e = self.entry
        head = Text(f"{clean(e.source, 120)}:{e.line_no}  ({len(e.text):,} chars)"
                    f"  kind: {e.kind or '-'}", style="bold")
        body = Text(clean(e.text, DETAIL_MAX))
        if len(e.text) > DETAIL_MAX:
            body.append(f"\n… {len(e.text) - DETAIL_MAX:,} more characters (c copies the "
                        "whole line)", style="dim")
        with VerticalScroll(id="detail-box"):
            yield Static(head, markup=False)
            yield Static(body, markup=False)


# The pane keys' line is read from the pane registry, so a new pane's key is in the help too.
_PANE_KEYS = " ".join(str(i) for i in range(1, len(PANES) + 1))
_PANE_NAMES = ", ".join(r.title.lower() for r in PANES)
HELP = """\
Keys
  q / ctrl+c    quit                      ?            this help
  ctrl+p        command palette           tab          next pane or field
  PANE_KEYS
  escape        back to the pane from a what-if field or a menu
  e / E         export Markdown / JSON (same content as `kvtui check`), written
                next to the log (or --export-dir DIR; else ~/.local/share/kvtui/exports)
  R             runs: every server start; enter shows one's facts, alerts, what-if
  C             compare the last run with the one before (`c` in the runs list)

Alerts
  enter         detail: explanation, fix, raw evidence lines
  g             jump to the evidence line in the log

Log
  up/down pgup/pgdn home   move the cursor (stops following)
  end           follow the live tail again ("+N new lines" while away)
  /  n  N       search (regex, case-insensitive): the newest match, then newer /
                older; the title says "match i of N" and a toast says when it wraps
  f             cycle filter: all / recognized / alerts / regex (once r set one)
  r             set a regex filter
  w             toggle wrap
  c             copy the line (terminal clipboard, OSC 52)
  enter         show the whole line
  The pane keeps the newest --log-window lines (20,000); search the whole file
  with grep.

Replay
  space         play / pause              .            step one line
  ]             next recognized event     }            next alert
  t             jump to a time            + / -        faster / slower
  0             restart from the beginning
  The header shows the replay's speed (x50: fifty log seconds per second) and
  the time the log has reached.

What-if
  3 shows the pane; enter steps into the form (the KV dtype), tab moves on, escape
  steps out. A field entered selects its value: typing replaces it. Empty fields
  mean "as logged" (the greyed value); a value you typed is highlighted; a value
  `kvtui whatif` would refuse is said under its field. The answer updates as you
  type:
  KV tokens     how many tokens the KV cache holds with the target setting
  max running   SGLang's max_running_requests: requests that can run at once
  reqs of 32K   requests of that length that fit in the KV cache ("fit"), and
                how many of them can run at once ("run"), capped by max running
  lengths       request lengths to size for; the server's context_len first
  reqs          N requests of the longest length: do they fit, and if not, what
                it takes (GiB missing per GPU, mem_fraction_static, TP)

Words
  scales        FP8 KV caches need per-layer scaling factors (k_scale/v_scale);
                "no scales" means SGLang used 1.0, which loses precision
  Accuracy      the Facts pane's first section: each setting that can cost
                the model accuracy (KV cache, weights, context length, prompts
                cut, chat template, parsers, sampling defaults): ok, stated (a
                trade-off chosen, or one the log cannot call), warning,
                critical, or ? (the log does not say)
  certainty     alerts: "sure": the log settles it; "likely": the log alone
                cannot (the checkpoint would); "possible": indirect signs
  estimate      a figure derived from the memory lines of the log rather than
                read from it (changing TP or mem_fraction_static)
  approximate   a dtype that stores a scale per block of values (mxfp8,
                nvfp4): its bytes per token are close to, not exactly, SGLang's
  (0.5.5+)      "from SGLang 0.5.5 on"
  docs/calculator.md and docs/alerts.md explain every figure and alert.
"""
HELP = HELP.replace("  PANE_KEYS\n", f"  {_PANE_KEYS:<13} {_PANE_NAMES} (work from every pane)\n")


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss(None)", "Close"),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="detail-box"):
            yield Static(help_renderable(HELP), markup=False)


KEY_WIDTH = 14


def help_renderable(text: str) -> Group:
    """HELP laid out for the width it gets: a heading, then rows of (keys, what they do) whose
    second column wraps at the box's width, and paragraphs that wrap as a whole.

    Why not the text as written: it is broken for about 88 columns, and a narrower box (80
    columns: 66 inside) wrapped each of those lines again (issue 39: "wrapped twice"). The
    source stays readable text: a row is two parts 3+ spaces apart (two rows on one line are
    four parts), a line indented past the key column continues the row above, any other
    indented line continues its paragraph."""
    out: list[Any] = []
    grid: Table | None = None
    para: list[str] | None = None
    last: list[str] | None = None  # the description being continued

    def close() -> None:
        nonlocal grid, para, last
        if grid is not None:
            out.append(grid)
        if para is not None:
            out.append(Text("  " + " ".join(para)))
        grid, para, last = None, None, None

    for line in text.splitlines():
        if not line.strip():
            close()
            out.append(Text(""))
            continue
        if not line.startswith(" "):
            close()
            out.append(Text(line, style="bold"))
            continue
        if line.startswith(" " * KEY_WIDTH) and last is not None:
            last.append(line.strip())
            continue
        parts = re.split(r"\s{3,}", line.strip())
        if len(parts) == 1:
            if grid is not None:
                close()
            para = (para or []) + [parts[0]]
            continue
        if para is not None:
            close()
        if grid is None:
            grid = Table.grid(padding=(0, 1))
            grid.add_column(width=KEY_WIDTH - 1, style="bold")  # a long key wraps, whole
            grid.add_column(ratio=1)
        for key, desc in zip(parts[0::2], parts[1::2], strict=False):
            last = [desc]
            grid.add_row(Text("  " + key), _Joined(last))
    close()
    while out and isinstance(out[-1], Text) and not out[-1].plain:
        out.pop()
    return Group(*out)


class _Joined:
    """A description whose continuation lines arrive after its row was added: rendered as
    one paragraph (Rich wraps it once, at the column's width)."""

    def __init__(self, words: list[str]) -> None:
        self.words = words

    def __rich_console__(self, console: Any, options: Any) -> Any:
        yield Text(" ".join(self.words))

    def __rich_measure__(self, console: Any, options: Any) -> Any:
        return Text(" ".join(self.words)).__rich_measure__(console, options)


class PromptScreen(ModalScreen[str | None]):
    """One line of input (search text, regex filter, time to jump to)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, title: str, placeholder: str = "", value: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.placeholder = placeholder
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt-box"):
            yield Label(Text(self.title_text, style="bold"))
            yield Input(value=self.value, placeholder=self.placeholder, id="prompt-input")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)
