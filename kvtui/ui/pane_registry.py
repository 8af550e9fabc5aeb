"""The main screen's panes, one row each: what the app builds, places, binds and feeds.

Why a table: a pane used to be added at six places in `kvtui/ui/app.py` (the key binding, the
pane bar, compose, the widget held at mount, the layout's list of upper panes and the tick that
feeds it). The app now reads all six from `PANES` below, so a new pane is its widget plus one
row here (docs/ARCHITECTURE.md, "where to add: a pane"). The row's position gives its digit key
(1, 2, ...) and its place in the pane bar.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from textual.widget import Widget

from kvtui.core.report_types import Report
from kvtui.ui.ingest import Drained
from kvtui.ui.logview import LogView
from kvtui.ui.metrics import MetricsPane
from kvtui.ui.panes import AlertsPane, FactsPane, TimelinePane
from kvtui.ui.whatif import WhatIfPane


class AppSettings(Protocol):
    """What a pane's factory reads of the app (a protocol: the app imports this table, so the
    table names no app class)."""

    log_window: int

Place = Literal["top", "below", "log"]


@dataclass(frozen=True)
class PaneRow:
    """One pane of the main screen."""

    key: str  # the widget's id and the `pane('key')` action's argument
    title: str  # border title, pane-bar label and key description
    make: Callable[[AppSettings], Widget]  # builds the widget (given the app, for its settings)
    # What the pane shows from one tick's drain; called on the ticks that bring a report.
    # None: the app feeds it itself (the log: its lines come on every tick, not with a report).
    feed: Callable[[Any, Drained], None] | None
    # "top": side by side above the timeline on a wide screen, one at a time on a narrow one;
    # "below": its own row under them (on a narrow screen only while it is the one shown);
    # "log": the log's place at the bottom (always shown).
    place: Place = "top"
    footer: bool = False  # its key is shown in the footer (else only in the pane bar and help)
    # While shown: twice its neighbours' width on a wide screen, and the log's rows on a short
    # narrow one (the what-if's form and answer on screen together, issue 39).
    grows: bool = False
    # Shown only while it is the pane chosen, on a wide screen too (the metrics pane: a wide
    # layout without a metrics source stays as it was).
    when_chosen: bool = False
    # The pane bar lists it only when this holds of the widget (None: always).
    listed: Callable[[Any], bool] | None = None


def _whatif_feed(pane: WhatIfPane, d: Drained) -> None:
    pane.show(d.calc, d.report.whatif_unmodelled if isinstance(d.report, Report) else None)


PANES: tuple[PaneRow, ...] = (
    PaneRow("alerts", "Alerts", lambda app: AlertsPane(id="alerts", classes="pane"),
            lambda pane, d: pane.show(d.report)),
    PaneRow("facts", "Facts", lambda app: FactsPane(id="facts", classes="pane"),
            lambda pane, d: pane.show(d.report)),
    PaneRow("whatif", "What-if", lambda app: WhatIfPane(id="whatif", classes="pane"),
            _whatif_feed, footer=True, grows=True),
    PaneRow("log", "Log", lambda app: LogView(id="log", max_lines=app.log_window), None,
            place="log"),
    PaneRow("timeline", "Timeline", lambda app: TimelinePane(id="timeline", classes="pane"),
            lambda pane, d: pane.show(d.timeline), place="below"),
    # Fed by `KvApp.show_metrics` when a scrape comes (`Drained.metrics`), not with a report.
    PaneRow("metrics", "Metrics", lambda app: MetricsPane(id="metrics", classes="pane"), None,
            when_chosen=True, listed=lambda pane: bool(pane.configured)),
)


def rows(place: Place) -> tuple[PaneRow, ...]:
    return tuple(r for r in PANES if r.place == place)
