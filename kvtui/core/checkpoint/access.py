"""The file access the checkpoint reader needs, and the limits it keeps while using it.

One implementation of the format logic serves a local directory and one on an SSH host: each
side provides `CheckpointFiles` (kvtui.sources.checkpoint_files, kvtui.sources.ssh.checkpoint),
a directory of files that open for ranged reads. Every byte goes through a `Ledger`, which
counts it and stops the reading with `LimitReached` once the time or byte budget is spent, so a
slow link or a huge checkpoint gives a clear message rather than a hang.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol


class RandomAccessFile(Protocol):
    """One open file: its size and reads at an offset (seek + read)."""

    def size(self) -> int: ...

    def read_at(self, offset: int, size: int) -> bytes:
        """Up to `size` bytes from `offset` (fewer only at the end of the file)."""
        ...

    def close(self) -> None: ...


class CheckpointFiles(Protocol):
    """A checkpoint directory. Missing files are None / False; other failures raise OSError."""

    label: str  # where it is, for notes and the report ("/models/x", "gpu:/models/x")

    def open(self, name: str) -> RandomAccessFile | None: ...

    def exists(self, name: str) -> bool: ...

    def list(self) -> list[str]:
        """The names of the files in the directory."""
        ...


@dataclass(frozen=True)
class ReadBudget:
    """Limits of one inspection. Headers of a 1T-parameter checkpoint are a few MiB and its
    scales a few KiB, so the byte limit only stops something that is not a checkpoint."""

    seconds: float = 30.0
    max_bytes: int = 256 << 20  # everything read: JSON, headers, scale data
    max_json_bytes: int = 64 << 20  # one config / index file
    max_scale_bytes: int = 64 << 10  # a "scale" bigger than this is a weight: never read


class LimitReached(Exception):
    """The time or byte budget is spent; the message says which and how far reading got."""


class Ledger:
    """Counts what is read and enforces the budget before each read."""

    def __init__(self, budget: ReadBudget, clock: Callable[[], float] = time.monotonic) -> None:
        self.budget = budget
        self.clock = clock
        self.start = clock()
        self.bytes = 0
        self.reads = 0
        self.files_opened = 0

    @property
    def seconds(self) -> float:
        return max(0.0, self.clock() - self.start)

    def check(self, upcoming: int = 0, what: str = "") -> None:
        elapsed = self.seconds
        if elapsed > self.budget.seconds:
            raise LimitReached(
                f"stopped after {elapsed:.1f} s (time limit {self.budget.seconds:g} s, "
                f"{self.bytes:,} bytes read): the host or disk is slow; the verdict covers "
                "only what was read")
        if self.bytes + upcoming > self.budget.max_bytes:
            raise LimitReached(
                f"stopped before reading {what or 'more'} ({upcoming:,} bytes): it would pass "
                f"the {self.budget.max_bytes:,}-byte limit ({self.bytes:,} read); this is a "
                "huge or unusual checkpoint, and the verdict covers only what was read")

    def open(self, files: CheckpointFiles, name: str) -> RandomAccessFile | None:
        self.check(0, name)
        f = files.open(name)
        if f is not None:
            self.files_opened += 1
        return f

    def read(self, f: RandomAccessFile, offset: int, size: int, what: str) -> bytes:
        self.check(size, what)
        data = f.read_at(offset, size)
        self.bytes += len(data)
        self.reads += 1
        return data
