"""The deploy gate's exit codes: what `check`, `compare`, `metrics`, `fleet --check` and the
exporter's textfile all return, so a CI step reads one code whichever command it ran.

Why in the core: the commands share it, and a command that imports another command for it
made an import circle (check <-> exporter).
"""

from __future__ import annotations

from kvtui.core import severity
from kvtui.core.report_types import Report

EXIT_ALERT, EXIT_ERROR, EXIT_UNRECOGNISED = 1, 2, 3


def exit_code(report: Report, fail_on: str) -> int:
    if fail_on == "never":
        return 0
    return int(any(severity.at_least(a.severity, fail_on) for a in report.alerts))


def gate(reports: list[Report], fail_on: str) -> int:
    """The exit code of a check over several files: an alert anywhere wins, then a file that
    was not an LLM-server log at all."""
    if any(exit_code(r, fail_on) for r in reports):
        return EXIT_ALERT
    return EXIT_UNRECOGNISED if any(r.unrecognised for r in reports) else 0
