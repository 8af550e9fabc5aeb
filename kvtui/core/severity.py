"""Alert severities: the one vocabulary, most severe first.

The JSON report, the text renderer, the deploy gate (`kvtui check --fail-on`) and the TUI all
order, label and compare alerts through this module, so they can never disagree about which of
two alerts is worse.
"""

from __future__ import annotations

SEVERITIES: tuple[str, ...] = ("critical", "warning", "info")
# 0 is the most severe; an unknown severity sorts after every known one.
ORDER: dict[str, int] = {s: i for i, s in enumerate(SEVERITIES)}
# Fixed-width labels for plain-text output.
MARK: dict[str, str] = {s: s.upper().ljust(8) for s in SEVERITIES}


def rank(severity: str | None) -> int:
    """Sort key: most severe first, unknown last."""
    return ORDER.get(severity or "", len(SEVERITIES))


def at_least(severity: str | None, threshold: str) -> bool:
    """Is `severity` as severe as `threshold` or more?"""
    return rank(severity) <= ORDER[threshold]
