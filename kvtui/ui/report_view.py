"""The UI's reads of the report, in one place.

Why one module: every widget that shows the analysis reads it through these functions, so a
change to the report (kvtui.core.report_types) touches this file and not every pane. What the
UI holds is a `Shown`: a typed `Report`, a `Failed` snapshot (a rule raised; the facts pane says
so instead of the app stopping), or None before the first report. Each accessor is total over
that: no report gives None (or an empty value), never an exception, because a report can be
partial while a log streams in.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtui.core import severity
from kvtui.core.deployment import parallel_label
from kvtui.core.engine import figure as engine_figure
from kvtui.core.engine import load
from kvtui.core.engine import term as engine_term
from kvtui.core.evidence import Evidence
from kvtui.core.report_types import (
    AccuracyItem,
    Alert,
    CapacityFacts,
    KVCacheFacts,
    PoolFacts,
    Report,
    RunAlert,
    RunningLimit,
    RunSummary,
    RuntimeFacts,
    WeightFacts,
)

__all__ = ["AccuracyItem", "Alert", "Failed", "PoolFacts", "Shown", "accuracy", "alert_key",
           "alerts", "capacity", "computed_bytes_per_token", "context_len", "earlier_alerts",
           "evidence", "evidence_lines", "failure", "figure", "kv_cache", "kv_verdict",
           "last_log_time", "model_name", "pool_padding_rows", "pools", "report_of",
           "running_limit", "runs", "runtime", "term", "tp", "unrecognised", "weights",
           "worst_severity"]


@dataclass(frozen=True, slots=True)
class Failed:
    """A report that could not be built: the message the facts pane shows instead."""

    message: str


Shown = Report | Failed | None


def report_of(shown: Shown) -> Report | None:
    return shown if isinstance(shown, Report) else None


def unrecognised(shown: Shown) -> str | None:
    """What `check` says of input in which no engine's line was recognised (an empty file,
    another program's log), or None: the panes say it instead of unknown facts."""
    report = report_of(shown)
    if report is None or not report.unrecognised:
        return None
    from kvtui.core.render import unrecognised_words

    return unrecognised_words()


def failure(shown: Shown) -> str | None:
    """The message of a report that could not be built, else None."""
    return shown.message if isinstance(shown, Failed) else None


# -- alerts ------------------------------------------------------------------------------------
def alerts(shown: Shown) -> list[Alert]:
    """Alerts, most severe first, then by evidence line."""
    report = report_of(shown)
    if report is None:
        return []
    return sorted(report.alerts, key=lambda a: (severity.rank(a.severity),
                                                a.evidence.line if a.evidence else 0))


def runs(shown: Shown) -> tuple[RunSummary, ...]:
    """Every server start of the log, numbered from 1 (the report's facts are the last's)."""
    report = report_of(shown)
    return report.runs if report is not None else ()


def earlier_alerts(shown: Shown) -> list[tuple[int, RunAlert]]:
    """(run number, alert) of the earlier runs' alerts that the last run does not raise: a
    restart resolved them, or a restart still starting up has not said yet. Kept on screen so
    nothing of an earlier run is dropped silently when the server restarts."""
    every = runs(shown)
    if len(every) < 2:
        return []
    now = {a.rule for a in every[-1].alerts}
    out: list[tuple[int, RunAlert]] = []
    seen: set[str] = set()
    for r in reversed(every[:-1]):  # the latest earlier run's copy of a rule
        for a in r.alerts:
            if a.rule not in now and a.rule not in seen:
                seen.add(a.rule)
                out.append((r.index, a))
    out.sort(key=lambda x: (severity.rank(x[1].severity), x[0]))
    return out


def worst_severity(shown: Shown) -> str | None:
    found = alerts(shown)
    return found[0].severity if found else None


def evidence(alert: Alert | RunAlert | None) -> Evidence | None:
    return alert.evidence if alert is not None else None


def evidence_lines(shown: Shown) -> set[tuple[str, int]]:
    """(source, line) of every alert's evidence: the log pane marks and filters on them."""
    out = set()
    for a in alerts(shown):
        ev = a.evidence
        if ev is not None and ev.line > 0:
            out.add((str(ev.source), ev.line))
    return out


def alert_key(alert: Alert) -> tuple[str, str]:
    """What makes an alert "new" for the next-alert search: its rule and severity."""
    return (alert.rule, alert.severity)


# -- deployment --------------------------------------------------------------------------------
def kv_cache(shown: Shown) -> KVCacheFacts | None:
    report = report_of(shown)
    return report.kv_cache if report is not None else None


def kv_verdict(shown: Shown) -> tuple[str, str, str | None]:
    """(configured dtype, effective dtype, scales state) of the KV cache; "?" when unknown."""
    kv = kv_cache(shown)
    if kv is None:
        return "?", "?", None
    return str(kv.configured_dtype or "?"), str(kv.effective_dtype or "?"), kv.scales


def model_name(shown: Shown) -> str:
    report = report_of(shown)
    return str((report.model.name if report is not None else None) or "?")


def tp(shown: Shown) -> str:
    """The TP size as the header shows it: `TP=8`, `TP>=6` (only rank tags imply it) or
    `TP=?` (`TP=? TPxPP>=4` when worker tags numbered over TP and PP prove their product)."""
    report = report_of(shown)
    if report is None:
        return "TP=?"
    label = parallel_label(report.parallel, "tp")
    if report.parallel.tp is None and report.parallel.world is not None:
        label += " " + parallel_label(report.parallel, "world")
    return label


def term(shown: Shown, key: str) -> str:
    """The name of the capacity figure `key` as the report's engine calls it (vLLM's
    max_model_len for context_len)."""
    report = report_of(shown)
    return engine_term(load(report.engine) if report and report.engine else None, key)


def figure(shown: Shown, key: str, value: str) -> str:
    """The capacity figure `key`, formatted as `value`, in the report's engine's words
    (`kvtui.core.engine.figure`: vLLM's "GPU KV cache size: N tokens")."""
    report = report_of(shown)
    return engine_figure(load(report.engine) if report and report.engine else None, key, value)


def capacity(shown: Shown) -> CapacityFacts | None:
    report = report_of(shown)
    return report.capacity if report is not None else None


def running_limit(shown: Shown) -> RunningLimit | None:
    """The engine's cap on requests running at once, under the engine's name: its own when the
    report carries one (vLLM's max_num_seqs, logged or its default), else the capacity line's
    max_running_requests (SGLang's). None before a capacity line."""
    cap = capacity(shown)
    if cap is None:
        return None
    if cap.running_limit is not None:
        return cap.running_limit
    return RunningLimit("max_running_requests", cap.max_running_requests, "logged")


def context_len(shown: Shown) -> int | None:
    cap = capacity(shown)
    value = cap.context_len if cap is not None else None
    return value if isinstance(value, int) and value > 0 else None


def accuracy(shown: Shown) -> tuple[AccuracyItem, ...]:
    """The accuracy checklist of the current run (empty before an engine is known)."""
    report = report_of(shown)
    return report.accuracy if report is not None else ()


def weights(shown: Shown) -> WeightFacts | None:
    report = report_of(shown)
    return report.weights if report is not None else None


def pools(shown: Shown) -> tuple[PoolFacts, ...]:
    report = report_of(shown)
    return report.pools if report is not None else ()


def runtime(shown: Shown) -> RuntimeFacts | None:
    report = report_of(shown)
    return report.runtime if report is not None else None


def last_log_time(shown: Shown) -> str | None:
    """The timestamp of the newest runtime line the report has folded."""
    rt = runtime(shown)
    return str(rt.last_ts) if rt is not None and rt.last_ts else None


def computed_bytes_per_token(shown: Shown) -> float | None:
    """Bytes per pool row the model spec gives for the pool line: what the engine prints
    (the what-if's calibration) where that differs from the budget cell (an FP8 DSA pool stores
    656 B per layer where SGLang < 0.5.17 budgets 576), else the budget cell."""
    report = report_of(shown)
    if report is None or report.whatif is None:
        return None
    value = report.whatif.current.compared_bytes_per_token
    return float(value) if value is not None else None


def pool_padding_rows(shown: Shown) -> int | None:
    """Rows a pool holds beyond its tokens (SGLang's padded page), as the what-if measured the
    pool line; None where that cannot be told for every pool alike (a hybrid SWA pool, whose
    measured sub-pool is not the one its token count names)."""
    report = report_of(shown)
    if report is None or report.whatif is None:
        return 0
    cur = report.whatif.current
    if cur.measured_rows is None:
        return 0
    if cur.tokens is None or cur.measured_rows < cur.tokens:
        return None
    return cur.measured_rows - cur.tokens
