"""Helpers for the SSH tests: run a LineSource in a thread, find processes on 'the host'."""

from __future__ import annotations

import os
import threading
import time


class Collector:
    """Runs a LineSource in a thread and records everything it emits.

    With `blocks=True` it runs the follower's block delivery (`run_blocks`, what `--check`
    consumes) instead, and records the blocks' lines as SourceLines without offsets.
    With `netns` the thread enters that network namespace first (its sockets live there).
    """

    def __init__(self, source, *, blocks: bool = False, netns: str | None = None) -> None:
        self.source = source
        self.blocks = blocks
        self.netns = netns
        self.items: list = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        if self.netns is not None:
            enter_netns(self.netns)
        if self.blocks:
            self.source.run_blocks(self._deliver, self.stop)
        else:
            self.source.run(self._emit, self.stop)

    def _deliver(self, batch: list) -> None:
        from kvtui.sources.base import SourceLine
        from kvtui.sources.ssh.blocks import LineBlock

        items: list = []
        for d in batch:
            if isinstance(d, LineBlock):
                assert d.offsets is None  # nobody asked for them
                items.extend(SourceLine(d.source, n, -1, t)
                             for n, t in enumerate(d.texts, d.first_line_no))
            else:
                items.append(d)
        self._emit(items)

    def _emit(self, batch: list) -> None:
        with self.lock:
            self.items.extend(batch)

    def __enter__(self) -> Collector:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self, timeout: float = 10) -> None:
        self.stop.set()
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "source did not stop"

    def lines(self) -> list:
        from kvtui.sources.base import SourceLine

        with self.lock:
            return [i for i in self.items if isinstance(i, SourceLine)]

    def texts(self) -> list[str]:
        return [x.text for x in self.lines()]

    def notices(self, state: str | None = None) -> list:
        from kvtui.sources.base import SourceNotice

        with self.lock:
            return [i for i in self.items if isinstance(i, SourceNotice)
                    and (state is None or i.state == state)]

    def wait(self, predicate, timeout: float = 15, what: str = "condition") -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            time.sleep(0.05)
        seen = [(getattr(i, "state", None), getattr(i, "text", None) or i.message)
                for i in self.items][-15:]
        raise AssertionError(f"timed out waiting for {what}; got {seen}")


def enter_netns(name: str) -> None:
    """Move the calling thread (only it: network namespaces are per thread) into `name`."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/run/netns/{name}", os.O_RDONLY)
    try:
        if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
            raise OSError(ctypes.get_errno(), f"setns {name}")
    finally:
        os.close(fd)


def pids_matching(*markers: str) -> list[int]:
    """Processes on 'the host' (this machine) whose cmdline contains every marker."""
    out = []
    me = os.getpid()
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == me:
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if cmdline and all(m.encode() in cmdline for m in markers):
            out.append(int(d))
    return out
