"""The headless fleet report (`kvtui fleet --check`, `kvtui ssh H1 H2 --check`): each server's
report as `kvtui check` gives it, the cross-server alerts, and one exit code.

The exit code is `check`'s, over the fleet: an unreachable or unreadable server is an error (2:
a host that was not read never passes), else any alert at or above `--fail-on` on a server or
across servers is 1, else a server whose log no engine recognised is 3, else 0. A router's entry
(role "router") is read for the requests it saw fail, never as an engine's log: it is not
"unrecognised", and its report is `null` in the JSON (its `router` holds what it said).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kvtui.core import severity
from kvtui.core.fleet.router import RouterFacts
from kvtui.core.fleet.server import Server
from kvtui.core.gate import EXIT_ALERT, EXIT_ERROR, EXIT_UNRECOGNISED
from kvtui.core.report_types import Alert
from kvtui.core.text import inert


@dataclass(frozen=True, slots=True)
class Outcome:
    """One entry of the fleet after the read: its server (None when nothing was read), or
    why not."""

    host: str
    role: str | None
    server: Server | None
    error: str | None = None
    source: str | None = None  # what was followed: "file /var/log/x.log", "docker c1"

    @property
    def connection(self) -> str:
        return self.server.connection if self.server is not None else "unreachable"


def exit_code(outcomes: Sequence[Outcome], alerts: Sequence[Alert], fail_on: str) -> int:
    if any(o.server is None or o.error for o in outcomes):
        return EXIT_ERROR
    if fail_on != "never":
        every = [*alerts, *(a for o in outcomes if o.server for a in o.server.report.alerts)]
        if any(severity.at_least(a.severity, fail_on) for a in every):
            return EXIT_ALERT
    if any(o.server is not None and not o.server.is_router and o.server.report.unrecognised
           for o in outcomes):
        return EXIT_UNRECOGNISED
    return 0


def to_json(outcomes: Sequence[Outcome], alerts: Sequence[Alert], code: int) -> dict[str, Any]:
    from kvtui import __version__

    return {"kvtui_version": __version__,
            "servers": [{"server": o.host, "role": o.role, "connection": o.connection,
                         "source": o.source, "error": o.error,
                         "last_line_age": o.server.last_line_age if o.server else None,
                         "transfer_failures": o.server.transfer_failures if o.server else 0,
                         "router": (o.server.router.to_json() if o.server is not None
                                    and o.server.router is not None else None),
                         "report": (o.server.report.to_json() if o.server is not None
                                    and not o.server.is_router else None)}
                        for o in outcomes],
            "alerts": [a.to_json() for a in alerts], "exit_code": code}


def _router_text(facts: RouterFacts) -> str:
    """A router's entry: the servers it pairs and the requests it saw fail, per server."""
    out = ["Router     (no engine's log: read for the requests it saw fail)"]
    if facts.prefill_urls or facts.decode_urls:
        out.append(f"Pairs      prefill {', '.join(inert(u, 200) for u in facts.prefill_urls)}"
                   f" -> decode {', '.join(inert(u, 200) for u in facts.decode_urls)}")
    out.append(f"Failures   {facts.failures} request line(s) with a 5xx or no answer")
    for t in facts.targets:
        out.append(f"  {t.side} {inert(t.url, 200)}: {t.said}")
        if t.evidence:
            ev = t.evidence[-1]
            out.append(f"    line {ev.line}: {inert(ev.text, 400)}")
    return "\n".join(out)


def render_text(outcomes: Sequence[Outcome], alerts: Sequence[Alert], code: int,
                fail_on: str) -> str:
    from kvtui.core.render import render_text as one

    out: list[str] = []
    for i, o in enumerate(outcomes, 1):
        role = f" ({o.role})" if o.role else ""
        out.append(f"=== server {i} of {len(outcomes)}: {inert(o.host, 200)}{role} ===")
        if o.source:
            out.append(f"source: {inert(o.source, 400)}")
        if o.server is None or o.error:
            out.append(f"ERROR: {inert(o.error or 'not read', 1000)}")
        if o.server is not None and o.server.router is not None:
            out.append(_router_text(o.server.router))
        elif o.server is not None:
            out.append(one(o.server.report).rstrip("\n"))
    out.append(f"=== across servers: {len(alerts)} alert(s) ===")
    for a in alerts:
        out.append(f"  {severity.MARK.get(a.severity, a.severity)} {a.rule}: {inert(a.title)}")
        for para in a.detail.split("\n"):
            out.append(f"      {inert(para, 1200)}")
        if a.fix:
            out.append(f"      fix: {inert(a.fix, 1200)}")
    out.append("Gate")
    for o in outcomes:
        if o.server is None or o.error:
            verdict = f"ERROR {o.connection}"
        elif o.server.is_router:
            n = o.server.router.failures if o.server.router is not None else 0
            verdict = f"router: {n} failed request line(s)" if n else "router: no failure"
        else:
            own = [a for a in o.server.report.alerts]
            verdict = ", ".join(f"{a.severity.upper()} {a.rule}" for a in own) or "no alerts"
        out.append(f"  {inert(o.host, 200)}: {verdict}")
    if alerts:
        out.append("  fleet: " + ", ".join(f"{a.severity.upper()} {a.rule}" for a in alerts))
    out.append(f"exit {code} (--fail-on {fail_on})")
    return "\n".join(out) + "\n"
