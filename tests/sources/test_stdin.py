"""`kvtui tail -`: standard input followed live, keys from the terminal, end of input a state.

The Pilot test runs the app on a pipe; the pty test runs the real command with a pipe on stdin and
a pseudo-terminal as its controlling terminal, and quits it with a key typed on that terminal.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

from kvtui.sources.base import SourceLine, SourceNotice
from kvtui.sources.stdin import StdinFollower
from kvtui.ui.app import KvApp

ROOT = Path(__file__).resolve().parents[2]
QWEN = ROOT / "sample_logs" / "qwen35-397b-nvfp4-tp8-fp8.log"
ANSI = re.compile(r"\x1b\[[0-9;?<>=$]*[a-zA-Z~]")


def test_stdin_lines_offsets_and_end_of_input() -> None:
    r, w = os.pipe()
    items: list[object] = []
    stop = threading.Event()
    t = threading.Thread(target=StdinFollower(r).run, args=(items.extend, stop), daemon=True)
    t.start()
    os.write(w, b"one\ntw")
    os.write(w, b"o\nthree without newline")
    os.close(w)
    t.join(10)
    assert not t.is_alive()
    lines = [i for i in items if isinstance(i, SourceLine)]
    assert [(ln.line_no, ln.offset, ln.text) for ln in lines] == [
        (1, 0, "one"), (2, 4, "two"), (3, 8, "three without newline")]
    states = [i.state for i in items if isinstance(i, SourceNotice)]
    assert states == ["live", "at_end"]  # the end of input is no error


async def test_tui_on_a_pipe_keeps_keys_and_shows_the_end() -> None:
    r, w = os.pipe()
    app = KvApp(StdinFollower(r), "<stdin>")
    data = QWEN.read_bytes()
    async with app.run_test(size=(120, 40)) as pilot:
        half = data.index(b"\n", len(data) // 2) + 1
        os.write(w, data[:half])  # a pipe buffer holds it; the rest comes while keys are used
        await pilot.press("2")
        assert app.shown_pane == "facts"
        os.write(w, data[half:])
        await pilot.press("1")
        assert app.shown_pane == "alerts"
        os.close(w)
        for _ in range(400):
            await pilot.pause(0.05)
            if app.ingest.idle and app.header_bar.state == "at_end":
                break
        await pilot.pause(0.2)
        assert app.header_bar.state == "at_end"
        assert app.ingest.lines == data.count(b"\n")
        rules = [a.rule for a in app.alerts_pane.alerts]
        assert "kv-fp8-unscaled" in rules


def _pty_run(script: bytes, keys_after: tuple[str, ...],
             timeout: float = 60.0) -> tuple[int | None, str]:
    """Run `kvtui tail -` with `script` on stdin and a pty as its terminal; type `q` once the
    screen shows every string of `keys_after`. Returns (exit code, everything it drew).
    (Typed at the first of them, the `q` could end the app between two frames: the header had
    drawn "at end" and the alerts pane not yet its alert.)"""
    master, slave = os.openpty()
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    r, w = os.pipe()

    def become_terminal() -> None:  # after setsid: the pty is this session's terminal
        fcntl.ioctl(1, termios.TIOCSCTTY, 0)

    env = dict(os.environ, TERM="xterm-256color", COLUMNS="120", LINES="40")
    proc = subprocess.Popen([sys.executable, "-m", "kvtui", "tail", "-"], stdin=r, stdout=slave,
                            stderr=slave, start_new_session=True, preexec_fn=become_terminal,
                            env=env, cwd=ROOT)
    os.close(r)
    os.close(slave)
    os.write(w, script)
    os.close(w)
    screen = bytearray()
    typed = False
    end = time.monotonic() + timeout
    try:
        while time.monotonic() < end and proc.poll() is None:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    screen += os.read(master, 65536)
                except OSError:
                    break
            if not typed and all(k.encode() in screen for k in keys_after):
                os.write(master, b"q")
                typed = True
        rc = proc.wait(10) if typed else None
        while select.select([master], [], [], 0.5)[0]:  # what it wrote as it ended (an error)
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            screen += chunk
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return rc, screen.decode("utf-8", errors="replace")


def test_tail_stdin_reads_keys_from_the_terminal() -> None:
    rc, screen = _pty_run(QWEN.read_bytes(), keys_after=("at end", "FP8"))
    tail = ANSI.sub("", screen)[-2000:]
    assert "at end" in screen and "FP8" in screen, tail  # the header: end of input, the verdict
    assert rc == 0  # `q` typed on the terminal quit the app while stdin was the pipe


def test_tail_stdin_without_a_terminal_says_so() -> None:
    done = subprocess.run([sys.executable, "-m", "kvtui", "tail", "-"], input=b"x\n",
                          capture_output=True, start_new_session=True, cwd=ROOT, timeout=60)
    assert done.returncode == 2
    assert b"no terminal to read keys from" in done.stderr
