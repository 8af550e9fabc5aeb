"""ProxyCommand as a socket for paramiko, done so that failures are visible and cheap.

paramiko's own `ProxyCommand` has two faults that matter for a follower that lives for days:
its `recv` loops on `select` when the command has exited (EOF reads as "ready, 0 bytes"), so a
drop behind a proxy spins a core until the keepalive gives up, and it pipes the command's stderr
without ever reading it, so the proxy's own message ("Could not resolve hostname bastion") is
lost and the user sees a paramiko traceback. Here EOF ends the transport at once, stderr is kept
(the last few KiB) for the error message, and the child is reaped on close.
"""

from __future__ import annotations

import contextlib
import os
import select
import shlex
import subprocess
import threading
import time

STDERR_KEEP = 4096


class ProxySocket:
    """The socket-like object `paramiko.Transport` needs, over a ProxyCommand's stdin/stdout."""

    def __init__(self, command_line: str) -> None:
        self.cmd = command_line
        self.process = subprocess.Popen(
            shlex.split(command_line), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, bufsize=0, start_new_session=True)
        self.timeout: float | None = None
        self._stderr = bytearray()
        self._lock = threading.Lock()
        self._eof = False
        self._reader = threading.Thread(target=self._read_stderr, name="kvtui-proxy-stderr",
                                        daemon=True)
        self._reader.start()

    def _read_stderr(self) -> None:
        err = self.process.stderr
        assert err is not None
        while True:
            try:
                data = err.read(65536)
            except (OSError, ValueError):
                return
            if not data:
                return
            with self._lock:
                self._stderr += data
                del self._stderr[:-STDERR_KEEP]

    # -- what paramiko calls -----------------------------------------------------------------

    def send(self, content: bytes) -> int:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(content)
        except (OSError, ValueError):
            raise OSError(f"ProxyCommand ended: {self.describe()}") from None
        return len(content)

    def recv(self, size: int) -> bytes:
        """Up to `size` bytes; b"" once the command's stdout is closed (EOF: no spinning)."""
        stdout = self.process.stdout
        assert stdout is not None
        if self._eof:
            return b""
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        while True:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                ready, _, _ = select.select([stdout], [], [], wait)
                data = os.read(stdout.fileno(), size) if ready else None
            except (OSError, ValueError):  # closed under us (by `close`): the end, quietly
                data = b""
            if data is not None:
                if not data:
                    self._eof = True
                return data
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError()

    def settimeout(self, timeout: float | None) -> None:
        self.timeout = timeout

    def close(self) -> None:
        proc = self.process
        if proc.poll() is None:
            with contextlib.suppress(OSError):
                proc.terminate()
            try:
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(OSError):
                    proc.kill()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=2)
        for pipe in (proc.stdin, proc.stdout):
            with contextlib.suppress(OSError):
                if pipe is not None:
                    pipe.close()

    @property
    def ended(self) -> bool:
        """The command exited or closed its stdout: the link through it is gone."""
        return self._eof or self.closed

    @property
    def closed(self) -> bool:
        return self.process.poll() is not None

    @property
    def _closed(self) -> bool:  # paramiko looks for this on socket-likes
        return self.closed

    # -- for messages ------------------------------------------------------------------------

    def stderr_text(self) -> str:
        # give the reader thread a moment to collect what a dying command printed
        self._reader.join(0.5 if self.process.poll() is not None else 0.05)
        with self._lock:
            return self._stderr.decode("utf-8", "replace").strip()

    def describe(self) -> str:
        """What the command said and how it ended, in one line."""
        rc = self.process.poll()
        if rc is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                rc = self.process.wait(timeout=0.5)
        err = " / ".join(line.strip() for line in self.stderr_text().splitlines()[-3:]
                         if line.strip())
        status = "still running" if rc is None else f"exit status {rc}"
        return f"`{self.cmd}` ({status})" + (f": {err}" if err else ", nothing on stderr")
