"""The fleet screen (issue 38): one row per server, the cross-server alerts below, Enter opens
that server's full view.

Each server is followed on a thread of its own (`LiveServer`: its source's lines folded by the
one pipeline, its transfer failures, its connection state and the time of its last line); the
screen reads them once a second, builds each report (memoised per line count) and evaluates
the fleet's alerts (`kvtui.core.fleet.evaluate`).

Why the full view is a separate app run and not a screen of this one: the single-host view is
an `App` (kvtui.ui.app.KvApp, its panes, bindings and ingest built around one source), so Enter
ends this app with the server's name and `run_fleet_app` runs a KvApp on a fresh source for
that server (every pane as `kvtui ssh HOST` shows them); quitting it (q) comes back here, while
the fleet's own followers keep reading in the background.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Footer, Static

from kvtui.core import severity
from kvtui.core.fleet import Server, TransferWatch, evaluate, log_samples
from kvtui.core.fleet.config import Entry
from kvtui.core.fleet.load import current_load
from kvtui.core.fleet.router import RouterWatch
from kvtui.core.fleet.server import ROUTER
from kvtui.core.pipeline.shared import SharedSession
from kvtui.core.report_types import Alert
from kvtui.core.text import inert
from kvtui.sources.fleet import ReadOptions

COLUMNS: tuple[str, ...] = ("server", "role", "engine", "version", "model", "KV conf -> eff",
                            "scales", "pool", "usage", "run/queue", "alerts", "conn", "age")

SourceFactory = Callable[[Entry], tuple[Any, str]]  # entry -> (LineSource, what it follows)
# entry, the server's sink -> a started metrics poller (its `close()`), or None: no /metrics
MetricsFactory = Callable[[Entry, Any], Any]


class LiveServer(SharedSession):
    """One fleet entry followed live: its session, fed on the follower's thread (and its
    /metrics on a poller's: the row's usage and queue then come from them,
    `kvtui.core.fleet.load`)."""

    def __init__(self, entry: Entry, factory: SourceFactory,
                 clock: Callable[[], float] = time.monotonic,
                 metrics: MetricsFactory | None = None,
                 addresses: Callable[[Entry], tuple[str, ...]] | None = None) -> None:
        super().__init__(clock)
        self.entry = entry
        self.factory = factory
        self.metrics = metrics
        self.addresses = addresses  # the host's other names (`Server.addresses`), once known
        self.watch = TransferWatch()
        # a router's log is no engine's: only the requests it saw fail are read
        self.router = RouterWatch() if entry.role == ROUTER else None
        self.state = "connecting"
        self.message = ""
        self.follows = ""

    def run(self, stop: threading.Event) -> None:
        try:
            source, self.follows = self.factory(self.entry)
        except Exception as exc:  # unreachable, discovery could not choose: this row's state
            self.state, self.message = "unreachable", f"{type(exc).__name__}: {exc}"
            return
        poller = self.metrics(self.entry, self) if self.metrics is not None else None
        try:
            source.run(self.emit, stop)
        finally:
            if poller is not None:
                poller.close()
        if self.state not in ("error", "unreachable"):
            self.state = "ended"

    def emit(self, items: list[Any]) -> None:
        from kvtui.sources.base import SourceLine, SourceNotice

        with self.lock:
            for item in items:
                if isinstance(item, SourceLine):
                    if self.router is not None:
                        self.router.feed(item.source, item.line_no, item.text)
                        self.last_line = self.clock()
                    else:
                        self.feed_line(item.source, item.line_no, item.text)
                        self.watch.feed(item.source, item.line_no, item.text)
                elif isinstance(item, SourceNotice) and item.state != "info":
                    self.state, self.message = item.state, item.message

    def server(self) -> Server:
        with self.lock:
            samples = log_samples(self.session.state.current.runtime.timeline)
            conn = {"error": "lost", "unreachable": "unreachable"}.get(self.state, "ok")
            return Server(self.entry.host, self.entry.role, self.report(), samples,
                          self.line_age(), self.watch.count, self.watch.evidence, conn,
                          self.session.state.current.engine_version,
                          self.router.facts() if self.router is not None else None,
                          self.addresses(self.entry) if self.addresses is not None else ())


class LiveFleet:
    """Every entry followed on its own thread (all at once: a follower mostly waits)."""

    def __init__(self, entries: Sequence[Entry], factory: SourceFactory,
                 clock: Callable[[], float] = time.monotonic,
                 metrics: MetricsFactory | None = None,
                 addresses: Callable[[Entry], tuple[str, ...]] | None = None) -> None:
        self.servers = [LiveServer(e, factory, clock, metrics, addresses) for e in entries]
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []

    def start(self) -> None:
        for s in self.servers:
            t = threading.Thread(target=s.run, args=(self.stop,), daemon=True,
                                 name=f"kvtui-fleet-{s.entry.host}")
            t.start()
            self.threads.append(t)

    def close(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=5)

    def snapshot(self) -> tuple[list[Server], list[Alert]]:
        servers = [s.server() for s in self.servers]
        return servers, evaluate(servers)


# -- the rows -----------------------------------------------------------------------------------
def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:,.0f}"


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 120:
        return f"{seconds:.0f}s"
    return f"{seconds / 60:.0f}m" if seconds < 7200 else f"{seconds / 3600:.0f}h"


def row(live: LiveServer, s: Server, fleet_alerts: Sequence[Alert]) -> tuple[Text, ...]:
    """One row's cells (log text made inert, never markup)."""
    r = s.report
    kv = r.kv_cache
    load = current_load(r)
    mark = " m" if load.source == "metrics" else ""  # read from /metrics, not the log
    mine = [*r.alerts, *(a for a in fleet_alerts
                         if any(x["server"] == s.name for x in a.extra.get("servers", ())))]
    worst = min((severity.rank(a.severity) for a in mine), default=None)
    alerts = Text(str(len(mine)) if mine else "0")
    if worst is not None:
        alerts.stylize({0: "bold red", 1: "yellow"}.get(worst, "cyan"))
    conn = live.state if s.connection == "ok" else s.connection
    if s.is_router:  # no engine's log: what it saw fail is in the alerts that name it
        cells = (s.name, s.role or "-", "router", *("-",) * 7)
        out = [Text(inert(c, 60, one_line=True)) for c in cells]
        return (*out, alerts, Text(inert(conn, 20, one_line=True)), Text(_age(s.last_line_age)))
    cells = (s.name, s.role or "-", r.engine or "-", s.version or "-", r.model.name or "-",
             f"{kv.configured_dtype or '-'} -> {kv.effective_dtype or '-'}", kv.scales_said,
             _num(r.runs[-1].pool_size if r.runs else None),
             "-" if load.usage is None else f"{load.usage:.0%}{mark}",
             f"{_num(load.running)}/{_num(load.queued)}{mark}")
    out = [Text(inert(c, 60, one_line=True)) for c in cells]
    return (*out, alerts, Text(inert(conn, 20, one_line=True)), Text(_age(s.last_line_age)))


def alerts_text(alerts: Sequence[Alert]) -> Text:
    if not alerts:
        return Text("Across servers: no alert")
    t = Text(f"Across servers ({len(alerts)})\n")
    for a in alerts:
        style = {"critical": "bold red", "warning": "yellow"}.get(a.severity, "cyan")
        t.append(severity.MARK.get(a.severity, a.severity), style=style)
        t.append(f" {inert(a.title, 300, one_line=True)}\n")
    return t


class FleetApp(App[str]):
    """One row per server; Enter returns the chosen server's name (its full view follows)."""

    TITLE = "kvtui fleet"
    CSS = """
    #fleet { height: 1fr; }
    #fleet-alerts { height: auto; max-height: 40%; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit_fleet", "Quit"),
        Binding("ctrl+c", "quit_fleet", "Quit", show=False, priority=True),
        Binding("enter", "open", "Open server"),
    ]

    def __init__(self, fleet: LiveFleet, *, tick: float = 1.0, cursor: int = 0) -> None:
        super().__init__()
        self.fleet = fleet
        self.tick = tick
        self.cursor_at = cursor

    def compose(self) -> ComposeResult:
        table: DataTable[Text] = DataTable(id="fleet", cursor_type="row", zebra_stripes=True)
        yield table
        yield Static("", id="fleet-alerts", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#fleet", DataTable)
        for c in COLUMNS:
            table.add_column(c, key=c)
        for live in self.fleet.servers:
            table.add_row(*([Text("")] * len(COLUMNS)), key=live.entry.host)
        self.refresh_rows()
        if self.cursor_at:
            table.move_cursor(row=min(self.cursor_at, len(self.fleet.servers) - 1))
        table.focus()
        if self.tick > 0:
            self.set_interval(self.tick, self.refresh_rows)

    def refresh_rows(self) -> None:
        table = self.query_one("#fleet", DataTable)
        servers, alerts = self.fleet.snapshot()
        for live, s in zip(self.fleet.servers, servers, strict=True):
            for col, cell in zip(COLUMNS, row(live, s, alerts), strict=True):
                table.update_cell(live.entry.host, col, cell, update_width=True)
        self.query_one("#fleet-alerts", Static).update(alerts_text(alerts))

    def action_open(self) -> None:
        table = self.query_one("#fleet", DataTable)
        if self.fleet.servers:
            self.exit(self.fleet.servers[table.cursor_row].entry.host)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.exit(str(event.row_key.value))

    def action_quit_fleet(self) -> None:
        self.exit("")


# -- running it ---------------------------------------------------------------------------------
@dataclass
class _Ssh:
    """Sources over SSH for the fleet's entries (`kvtui fleet`, `kvtui ssh H1 H2`): connecting
    and discovery run at most `parallel` hosts at a time (`--parallel`), following then runs on
    every host at once (a follower mostly waits)."""

    opts: ReadOptions
    parallel: int = 8

    def __post_init__(self) -> None:
        self.gate = threading.BoundedSemaphore(max(1, self.parallel))
        self.connections: dict[str, Any] = {}  # entry's host -> the connection follow opened
        self.known_as: dict[str, tuple[str, ...]] = {}  # entry's host -> `addresses_of`

    def follow(self, entry: Entry, *, again: bool = False) -> tuple[Any, str]:
        """The entry's follower on a new connection; `again` (Enter: the server's full view):
        on the connection the fleet's follower of it runs on while that one lives, another
        channel of it (one SSH connection per host), else on a new one."""
        from kvtui.sources.fleet import addresses_of, connector_for, describe, target_for
        from kvtui.sources.ssh.follow import RemoteFollower

        with self.gate:
            known = self.connections.get(entry.host) if again else None
            if known is not None and known[1].is_active():
                (connector, conn), fresh = known, False
            else:
                connector = connector_for(entry, self.opts)
                conn, fresh = connector.connect(), True
            try:
                target, model_path = target_for(entry, conn, self.opts)
            except BaseException:
                if fresh:
                    conn.close()
                raise
        if not again:
            self.connections[entry.host] = (connector, conn)
            self.known_as[entry.host] = addresses_of(connector)
        return RemoteFollower(connector, target, connection=conn, host_label=entry.host,
                              model_path=model_path), describe(target)

    def addresses(self, entry: Entry) -> tuple[str, ...]:
        return self.known_as.get(entry.host, ())

    def metrics(self, entry: Entry, sink: Any) -> Any:
        """The entry's /metrics (`metrics_port`) scraped every 2 s through a direct-tcpip
        channel of the connection `follow` opened for it, while that one lives (the follower
        closes it when it drops, and follows on a connection of its own: the scrapes then open
        one of theirs); None without a port, as `fleet --check` (`kvtui.sources.fleet`)."""
        if entry.metrics_port is None or entry.host not in self.connections:
            return None
        from kvtui.sources.metrics import MetricsPoller, Scraper
        from kvtui.sources.ssh.metrics import channel_fetcher, reconnecting

        connector, first = self.connections[entry.host]
        port = entry.metrics_port
        scraper = Scraper(f"ssh://{entry.host}/metrics", 2.0, clock=time.time,
                          fetcher=channel_fetcher(reconnecting(connector, first),
                                                  lambda: (port, "metrics_port")))
        return MetricsPoller(scraper, sink, f"{entry.host} /metrics over SSH").start()


def run_fleet_app(entries: list[Entry], args: argparse.Namespace, opts: ReadOptions) -> int:
    from kvtui.ui.app import run_app
    from kvtui.ui.terminal import terminal_problem

    problem = terminal_problem()
    if problem is not None:
        print(f"kvtui: {problem}", file=sys.stderr)
        return 2
    ssh = _Ssh(opts, args.parallel)
    fleet = LiveFleet(entries, ssh.follow, metrics=ssh.metrics, addresses=ssh.addresses)
    fleet.start()
    cursor = 0
    try:
        while True:
            chosen = FleetApp(fleet, cursor=cursor).run()
            if not chosen:
                return 0
            entry = next(e for e in entries if e.host == chosen)
            cursor = entries.index(entry)
            try:
                source, follows = ssh.follow(entry, again=True)
            except Exception as exc:  # shown on the row; the fleet stays open
                print(f"kvtui: {inert(chosen)}: {inert(str(exc))}",
                      file=sys.stderr)
                continue
            run_app(source, f"{entry.host}: {follows}", log_window=20000)
    finally:
        fleet.close()
