"""The fleet sample logs (sample_logs/fleet/generate.py), loaded once, and fleet entries built
from them through the one pipeline."""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

from kvtui.core.fleet import Server, TransferWatch, server_of
from kvtui.core.fleet.router import RouterWatch
from kvtui.core.pipeline import Session

ROOT = Path(__file__).resolve().parents[2]
FLEET = ROOT / "sample_logs" / "fleet"


@cache
def generator() -> ModuleType:
    sys.path.insert(0, str(ROOT / "sample_logs"))
    try:
        spec = importlib.util.spec_from_file_location("fleet_generate", FLEET / "generate.py")
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.pop(0)
    return mod


@cache
def text(name: str) -> str:
    return str(generator().SAMPLES[name]())


def server(name: str, role: str | None, *, host: str | None = None,
           last_line_age: float | None = None, log: str | None = None,
           connection: str = "ok") -> Server:
    """A fleet entry named `host` (default: the log's name) from the sample log `name` (or the
    text `log`), read by the pipeline and the transfer watch as `kvtui fleet` reads it (a
    router's by the router watch alone, as `kvtui.sources.fleet.read_entry` does)."""
    lines = (log if log is not None else text(name)).splitlines()
    session = Session()
    if role == "router":
        router = RouterWatch()
        router.feed_lines(name, lines)
        session.end()
        return server_of(host or name, role, session, last_line_age=last_line_age,
                         connection=connection, router=router.facts())
    session.feed_lines(name, lines)
    session.end()
    watch = TransferWatch()
    watch.feed_lines(name, lines)
    return server_of(host or name, role, session, last_line_age=last_line_age,
                     transfer_failures=watch.count, transfer_evidence=watch.evidence,
                     connection=connection)
