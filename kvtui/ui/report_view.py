"""The UI's reads of the report, in one place.

Why a module of small accessors: the report is a plain dict today and will become typed
dataclasses; every widget that reaches into it goes through these functions, so that change
touches this file and not every pane. Each accessor is total: a missing or odd field gives
None (or an empty value), never an exception, because a report can be partial while a log
streams in.
"""

from __future__ import annotations

from typing import Any

from kvtui.core import severity

Report = dict[str, Any] | None
Alert = dict[str, Any]


def _section(report: Report, name: str) -> dict[str, Any]:
    value = (report or {}).get(name)
    return value if isinstance(value, dict) else {}


def _num(value: Any) -> int | float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def failure(report: Report) -> str | None:
    """The message of a report that could not be built (only an "error" key), else None."""
    if report and "error" in report and len(report) == 1:
        return str(report["error"])
    return None


# -- alerts ------------------------------------------------------------------------------------
def alerts(report: Report) -> list[Alert]:
    """Alerts, most severe first, then by evidence line."""
    items = [a for a in (report or {}).get("alerts") or [] if isinstance(a, dict)]
    return sorted(items, key=lambda a: (severity.rank(a.get("severity")),
                                        evidence(a).get("line") or 0))


def worst_severity(report: Report) -> str | None:
    found = alerts(report)
    return found[0].get("severity") if found else None


def evidence(alert: Alert) -> dict[str, Any]:
    ev = alert.get("evidence")
    return ev if isinstance(ev, dict) else {}


def evidence_lines(report: Report) -> set[tuple[str, int]]:
    """(source, line) of every alert's evidence: the log pane marks and filters on them."""
    out = set()
    for a in alerts(report):
        ev = evidence(a)
        line = ev.get("line")
        if isinstance(line, int) and line > 0:
            out.add((str(ev.get("source")), line))
    return out


def alert_key(alert: Alert) -> tuple[Any, ...]:
    """What makes an alert "new" for the next-alert search: its rule and severity."""
    return (alert.get("rule"), alert.get("severity"))


# -- deployment --------------------------------------------------------------------------------
def kv_verdict(report: Report) -> tuple[str, str, str | None]:
    """(configured dtype, effective dtype, scales state) of the KV cache; "?" when unknown."""
    kv = _section(report, "kv_cache")
    return (str(kv.get("configured_dtype") or "?"), str(kv.get("effective_dtype") or "?"),
            kv.get("scales"))


def model_name(report: Report) -> str:
    model = _section(report, "model")
    return str(model.get("served_name") or model.get("path") or model.get("model_class") or "?")


def tp(report: Report) -> int | None:
    value = _section(report, "parallel").get("tp")
    return value if isinstance(value, int) else None


def context_len(report: Report) -> int | None:
    value = _section(report, "capacity").get("context_len")
    return value if isinstance(value, int) and value > 0 else None


def last_log_time(report: Report) -> str | None:
    """The timestamp of the newest runtime line the report has folded."""
    ts = _section(report, "runtime").get("last_ts")
    return str(ts) if ts else None


def computed_bytes_per_token(report: Report) -> float | None:
    """Bytes/token the calculator derives from the model spec (the what-if's current row)."""
    cur = _section(report, "whatif").get("current")
    value = _num(cur.get("theoretical_bytes_per_token")) if isinstance(cur, dict) else None
    return float(value) if value is not None else None
