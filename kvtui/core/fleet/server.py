"""One server of a fleet as the cross-server rules read it: its name, its role, its report from
the one pipeline, and the few live figures the report does not hold (the load over time, the
age of its last line, its KV-transfer failures).

The load samples are the seam for `/metrics` (issue 37): today they come from the log's batch
lines (`log_samples`, the runtime fold's timeline); a metrics series gives the same
`Sample`s where the server exports them, and no rule changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from kvtui.core.evidence import Evidence
from kvtui.core.report_types import Report
from parsers.prefix import ts_seconds

if TYPE_CHECKING:
    from kvtui.core.fleet.router import RouterFacts
    from kvtui.core.pipeline import Session
    from kvtui.core.runtime import TimelinePoint

ROLES: tuple[str, ...] = ("prefill", "decode", "replica", "node", "router")
# a router's log is no engine's: it is read for the requests it saw fail (kvtui.core.fleet.router)
ROUTER = "router"


class Sample(NamedTuple):
    """One load reading: when (seconds of the log's clock), KV usage (0..1), running, queued,
    and the line it came from (0: not from a line)."""

    t: float
    usage: float | None
    running: int | None
    queued: int | None
    line: int = 0


def log_samples(points: Iterable[TimelinePoint]) -> tuple[Sample, ...]:
    """The load as the log's batch lines print it (the runtime fold's bounded timeline); points
    without a timestamp cannot be lined up with another server's and are left out."""
    out = []
    for p in points:
        if p.ts is None or p.retraction:
            continue
        t = ts_seconds(p.ts)
        if t is not None:
            out.append(Sample(t, p.token_usage, p.running_req, p.queue_req, p.line))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Server:
    """One entry of the fleet. `name` is the `host` value (or the file) as the user gave it,
    so two aliases of one address are two servers. `last_line_age`: seconds since the source
    last delivered a line, measured by the reader (None: not measured, e.g. a file)."""

    name: str
    role: str | None
    report: Report
    samples: tuple[Sample, ...] = ()
    last_line_age: float | None = None
    transfer_failures: int = 0
    transfer_evidence: tuple[Evidence, ...] = ()
    connection: str = "ok"  # ok | connecting | unreachable | lost
    # the release the log itself prints (vLLM's "version X"; SGLang prints none), None when
    # not logged: what the version rule compares (a dated label is a range, not a release)
    version_logged: str | None = None
    # a router's entry: what its log said (its report is an empty one: no engine line is read)
    router: RouterFacts | None = None
    # what else the entry's host is reached by: its ssh_config HostName and the addresses that
    # resolves to from here (`kvtui.sources.fleet.addresses_of`). A router names the servers
    # it routes to by URL, mostly by address, where the fleet file names them by alias.
    addresses: tuple[str, ...] = ()

    @property
    def http_port(self) -> int | None:
        """The port the server listens on for HTTP (what a router's URL names): the engine's
        reading of its logged arguments (`Engine.http_port`), None when no engine line was
        read or the engine says none."""
        from kvtui.core.engine import load

        if self.report.engine is None:
            return None
        args = self.report.server_args
        return load(self.report.engine).http_port(args if isinstance(args, dict) else {})

    @property
    def is_router(self) -> bool:
        return self.role == ROUTER

    @property
    def model(self) -> str | None:
        return self.report.model.name

    @property
    def version(self) -> str | None:
        """The release as shown: the logged one, else "~" and the label the log's lines date
        it to (the report's RunSummary.engine_version, kvtui.core.runs)."""
        if self.version_logged:
            return self.version_logged
        runs = self.report.runs
        dated = runs[-1].engine_version if runs else None
        return f"~{dated}" if dated else None

    @property
    def kv_dtype(self) -> str | None:
        kv = self.report.kv_cache
        return kv.effective_dtype or kv.configured_dtype


def server_of(name: str, role: str | None, session: Session, *,
              last_line_age: float | None = None, transfer_failures: int = 0,
              transfer_evidence: tuple[Evidence, ...] = (),
              connection: str = "ok", router: RouterFacts | None = None,
              addresses: tuple[str, ...] = ()) -> Server:
    """A fleet entry from one server's session (its report and the load its log printed); a
    router's entry gets an empty session and its `router` facts."""
    return Server(name=name, role=role, report=session.report(),
                  samples=log_samples(session.state.current.runtime.timeline),
                  last_line_age=last_line_age, transfer_failures=transfer_failures,
                  transfer_evidence=transfer_evidence, connection=connection,
                  version_logged=session.state.current.engine_version, router=router,
                  addresses=addresses)
