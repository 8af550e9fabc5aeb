"""The one way a test turns log lines into a report: one `Session`, fed, then read.

Why one: two dozen test files each wrote their own three-line "lines to report" helper, so a
change to how a Session is fed (options, source names, the end of input) meant editing all of
them. They call `session_of` instead and keep only what is their own (which alert, which
field, which report form).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kvtui.core.pipeline import Options, Session


def session_of(lines: Iterable[str], name: str = "inline", **options: Any) -> Session:
    """A Session with `Options(**options)` fed `lines` as the one source `name`."""
    s = Session(Options(**options))
    s.feed_lines(name, lines)
    return s
