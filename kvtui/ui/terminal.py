"""Whether the TUI can run here at all.

Why refuse instead of trying: Textual reads keys from stdin and draws to stdout. Without a
terminal (stdin from /dev/null or a pipe, cron, CI) its input loop sees end-of-file on every
wake-up and spins a core while it draws to nowhere, and nothing ever ends it. A clear message
and exit status 2 are better, and the headless commands do the same analysis.
"""

from __future__ import annotations

import sys


def terminal_problem() -> str | None:
    """None when stdin and stdout are terminals; else what is missing, in words."""
    for name, stream in (("input (stdin)", sys.stdin), ("output (stdout)", sys.stdout)):
        try:
            ok = stream is not None and stream.isatty()
        except (AttributeError, ValueError):  # closed or replaced streams
            ok = False
        if not ok:
            return (f"the TUI needs a terminal, and its {name} is not one; for the same "
                    "analysis without a terminal use `kvtui check FILE` (or `kvtui ssh HOST "
                    "--check`)")
    return None
