"""Child processes of the test process, and a bounded wait that turns a hang into a failure."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

GUARD = 120.0  # seconds: a hang fails the test instead of hanging the suite


def children() -> set[int]:
    """This process's child processes, zombies included (Linux /proc)."""
    me = str(os.getpid())
    out = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        if stat[stat.rfind(")") + 2:].split()[1] == me:
            out.add(int(name))
    return out


def finishes(fn: Callable[[], Any]) -> Any:
    """`fn()` on a thread, which must end within GUARD seconds (a bounded wait, not a timing)."""
    box: list[Any] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            box.append(fn())
        except BaseException as exc:
            errors.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(GUARD)
    assert not t.is_alive(), "the fold hung on a worker that died or was stuck"
    if errors:
        raise errors[0]
    return box[0]
