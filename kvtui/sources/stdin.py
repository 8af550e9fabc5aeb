"""Follow standard input live (`kubectl logs -f POD | kvtui tail -`).

Two things make stdin differ from a file: it cannot be re-read or sought (no bulk fold of the
past, no rotation), and the TUI needs the keyboard, which Textual reads from fd 0. So
`take_stdin()` moves the pipe to a new descriptor and puts the controlling terminal (/dev/tty)
on fd 0 before the app starts, the way less and fzf do; `StdinFollower` then reads the pipe.
End of input is a state ("at end"), not an error: the view stays up for reading.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import threading

from kvtui.sources.base import Emit, Item, SourceLine, SourceNotice
from kvtui.sources.lines import LineSplitter

READ_SIZE = 1 << 20
BATCH_LINES = 5000
STDIN_NAME = "<stdin>"


class NoTerminal(Exception):
    """Keys cannot be read: no controlling terminal, or stdin is the terminal itself."""


def take_stdin() -> int:
    """Move the piped stdin to a new fd (returned) and put the terminal on fd 0 for the keys."""
    if os.isatty(0):
        raise NoTerminal("standard input is the terminal: pipe a log in, e.g. "
                         "`kubectl logs -f POD | kvtui tail -`")
    try:
        tty = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError as exc:
        raise NoTerminal(f"no terminal to read keys from (/dev/tty: {exc.strerror}); for a "
                         "report without one use `kvtui check -`") from None
    data = os.dup(0)
    os.dup2(tty, 0)
    os.close(tty)
    return data


class StdinFollower:
    """A `LineSource` over a readable pipe descriptor (by default the one `take_stdin` gave)."""

    def __init__(self, fd: int, *, name: str = STDIN_NAME, close: bool = True) -> None:
        self.fd = fd
        self.name = name
        self.close = close
        self.line_no = 0

    def run(self, emit: Emit, stop: threading.Event) -> None:
        splitter = LineSplitter(0)
        sel = selectors.DefaultSelector()
        try:
            os.set_blocking(self.fd, False)
            sel.register(self.fd, selectors.EVENT_READ)
            emit([SourceNotice(self.name, "live", "reading standard input")])
            while not stop.is_set():
                if not sel.select(0.2):
                    continue
                try:
                    chunk = os.read(self.fd, READ_SIZE)
                except BlockingIOError:
                    continue
                self._emit_lines(emit, splitter.feed(chunk) if chunk else splitter.flush())
                if not chunk:
                    emit([SourceNotice(self.name, "at_end", "end of input: the writer closed "
                                       "the pipe; the view stays as it is")])
                    return
        except OSError as exc:
            emit([SourceNotice(self.name, "error", f"standard input: {exc.strerror or exc}")])
        finally:
            sel.close()
            if self.close:
                with contextlib.suppress(OSError):
                    os.close(self.fd)

    def _emit_lines(self, emit: Emit, pairs: list[tuple[int, str]]) -> None:
        batch: list[Item] = []
        for offset, text in pairs:
            self.line_no += 1
            batch.append(SourceLine(self.name, self.line_no, offset, text))
            if len(batch) >= BATCH_LINES:
                emit(batch)
                batch = []
        if batch:
            emit(batch)
