"""Whether the TUI can run here at all.

Why refuse instead of trying: Textual reads keys from stdin and draws to stdout. Without a
terminal (stdin from /dev/null or a pipe, cron, CI) its input loop sees end-of-file on every
wake-up and spins a core while it draws to nowhere, and nothing ever ends it. A clear message
and exit status 2 are better, and the headless commands do the same analysis.
"""

from __future__ import annotations

import sys
from typing import Any


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


# A lone Escape byte is the Escape key only once nothing follows it (it also starts every
# escape sequence). Textual waits ESCDELAY for that (100 ms: textual 8.2.8 constants.py:155),
# and its input thread checks the wait only when its `select(0.1)` wakes (drivers/
# linux_driver.py:458), so Escape took 100-200 ms in a terminal where other keys take 30-80
# (issue 39). Terminals send a sequence in one write, so 10 ms is ample (neovim's ttimeoutlen
# is 50, tmux 3.5's escape-time 10); a user's own ESCDELAY is kept.
ESCAPE_DELAY_MS = 10


def quick_escape_driver() -> type[Any] | None:
    """Textual's POSIX driver with an input loop that wakes when a pending Escape is due,
    and a shorter ESCDELAY unless the user set one (None off POSIX: the stock driver)."""
    import os

    if os.name != "posix":
        return None
    try:
        import selectors
        from codecs import getincrementaldecoder

        from textual import constants
        from textual._time import get_time
        from textual._xterm_parser import XTermParser
        from textual.drivers.linux_driver import LinuxDriver
    except ImportError:  # a Textual that moved these: its own driver still works
        return None
    if "ESCDELAY" not in os.environ:
        setattr(constants, "ESCAPE_DELAY", ESCAPE_DELAY_MS / 1000)  # noqa: B010 (a Final)

    class QuickEscapeDriver(LinuxDriver):
        def run_input_thread(self) -> None:
            """LinuxDriver.run_input_thread (textual 8.2.8 drivers/linux_driver.py:418-463)
            with one change: the select waits only until a pending Escape is due."""
            selector = selectors.SelectSelector()
            selector.register(self.fileno, selectors.EVENT_READ)
            parser = XTermParser(self._debug)
            decode = getincrementaldecoder("utf-8")().decode

            def process(events: list[Any], final: bool = False) -> None:
                for i, (_key, mask) in enumerate(events):
                    if mask & selectors.EVENT_READ:
                        data = decode(os.read(self.fileno, 1024 * 4),
                                      final=final and i == len(events) - 1)
                        if not data:
                            break
                        for event in parser.feed(data):
                            self.process_message(event)
                for event in parser.tick():
                    self.process_message(event)

            def wait() -> float:
                due = getattr(parser, "_timeout_time", None)
                return 0.1 if due is None else min(0.1, max(0.0, due - get_time()))

            try:
                while not self.exit_event.is_set():
                    process(selector.select(wait()))
                selector.unregister(self.fileno)
                process(selector.select(0.1), final=True)
            finally:
                selector.close()

    return QuickEscapeDriver
