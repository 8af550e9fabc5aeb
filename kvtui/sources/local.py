"""Follow a local log file live, the way `tail -F` does, and say so when the file changes under us.

Why not just read until EOF in a loop: log files get rotated while a deploy runs. logrotate either
renames the file and creates a new one (the open descriptor keeps pointing at the old inode), or
copies it and truncates it in place (same inode, size drops). Both are detected on every wake-up
by comparing the path's inode and size with what we have open, and both are reported inline as a
`SourceNotice` so the user is never looking at a silently stale view.

Each file of the rotation keeps its own line numbers, and the rotation notice says where the
lines read so far now are (`moved_to`: `server.log.1`, found by inode for a rename and by the
first bytes for a copy), so evidence keeps naming the file and line that hold it. A renamed file
is a rotation in progress, not an error: it is read until the new file appears.

watchfiles wakes us on change; `yield_on_timeout` also wakes us periodically, so a missed event
(network filesystems, inotify limits) costs at most one poll interval, never a stuck view.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from typing import IO

from kvtui.sources.base import Emit, History, Item, SourceLine, SourceNotice
from kvtui.sources.lines import LineSplitter
from kvtui.sources.readers import ranged_file

READ_CHUNK = 1 << 20
# Upper bound on lines handed over in one batch, so a huge backlog still streams in slices.
BATCH_LINES = 5000
# Bytes read from the end when starting at the end: enough to show recent context.
TAIL_CONTEXT_BYTES = 64 * 1024
# The file's first bytes, kept to recognise its copy after a copy-truncate rotation.
HEAD_BYTES = 1024


def _context_start(fh: IO[bytes], size: int, context: int) -> int:
    """A line start about `context` bytes before the end (0 for a short file)."""
    if size <= context:
        return 0
    fh.seek(size - context)
    head = fh.read(context)
    cut = head.find(b"\n")
    return size - context + (cut + 1 if cut >= 0 else len(head))


class LocalFollower:
    """A `LineSource` for one local file: from its end (default) or from its start."""

    def __init__(self, path: str, *, from_start: bool = False, poll_ms: int = 500,
                 force_polling: bool | None = None, tail_context: int = TAIL_CONTEXT_BYTES
                 ) -> None:
        self.path = path
        self.name = path
        self.from_start = from_start
        self.poll_ms = poll_ms
        self.force_polling = force_polling
        self.tail_context = tail_context
        self.line_no = 0
        self._fh: IO[bytes] | None = None
        self._inode: int | None = None
        self._splitter = LineSplitter()
        self._vanished = False
        self._start: tuple[int, int] | None = None  # (byte offset, lines before it): skip_to
        # An I/O error episode (ESTALE, EIO, ...): reported once, retried on every wake-up.
        self._failing = False
        self._resume: tuple[int, int] | None = None  # (inode, position) to reopen at
        self._first_open_pending = False  # the very first open failed: tail rules still apply
        self._head = b""  # the open file's first bytes (up to HEAD_BYTES)
        self._renamed_to: str | None = None  # the open file was renamed away (rotation)

    # -- the thread body ---------------------------------------------------------------------
    def run(self, emit: Emit, stop: threading.Event) -> None:
        try:
            self._guarded(self._start_following, emit)
            for _changes in self._wakeups(stop):
                if stop.is_set():
                    break
                self._guarded(self._check, emit)
        except Exception as exc:  # a source must report, never take the app down
            emit([SourceNotice(self.name, "error", f"follow failed: {exc}")])
        finally:
            self._close()
            emit([SourceNotice(self.name, "closed", "")])

    def _start_following(self, emit: Emit) -> None:
        self._first_open_pending = True  # stays set if the open raises: retried as the first
        self._open(first=True, emit=emit)
        self._first_open_pending = False
        if self._fh is not None:
            self._drain(emit)
            emit([SourceNotice(self.name, "live", "following")])

    def _guarded(self, step: Callable[[Emit], None], emit: Emit) -> None:
        """Run one wake-up's work; an unexpected OSError (ESTALE on NFS, EIO, ENOTDIR, ...) is
        reported once per episode, the handle closed, and the next wake-up tries again."""
        try:
            step(emit)
        except OSError as exc:
            if self._fh is not None and self._inode is not None:
                self._resume = (self._inode, self._splitter.consumed + self._splitter.pending)
            self._close()
            if not self._failing:
                self._failing = True
                emit([SourceNotice(self.name, "error", f"{self.path}: "
                                   f"{exc.strerror or exc}; retrying")])
            return
        if self._failing and self._fh is not None:
            self._failing = False
            emit([SourceNotice(self.name, "live", "following again")])

    def _wakeups(self, stop: threading.Event):  # type: ignore[no-untyped-def]
        """watchfiles on the parent directory (so rename and re-create are seen), else polling."""
        parent = os.path.dirname(os.path.abspath(self.path)) or "."
        try:
            import watchfiles

            yield from watchfiles.watch(
                parent, stop_event=stop, rust_timeout=self.poll_ms, yield_on_timeout=True,
                debounce=50, step=20, recursive=False, raise_interrupt=False,
                force_polling=self.force_polling, watch_filter=None,
            )
        except Exception:
            # watchfiles unavailable or the directory cannot be watched: plain polling.
            while not stop.wait(self.poll_ms / 1000):
                yield set()

    # -- file handling -----------------------------------------------------------------------
    def _open(self, *, first: bool, emit: Emit) -> None:
        try:
            fh = open(self.path, "rb")  # noqa: SIM115 - kept open across wake-ups
        except FileNotFoundError:
            self._lost(emit, "file vanished; waiting for it to reappear")
            return
        except PermissionError:
            self._lost(emit, "permission denied")
            return
        except IsADirectoryError:
            emit([SourceNotice(self.name, "error", f"{self.path}: is a directory")])
            self._vanished = True
            return
        st = os.fstat(fh.fileno())
        self._fh = fh
        self._inode = st.st_ino
        self._vanished = False
        start = 0
        if first and self._start is not None and self._start[0] <= st.st_size:
            start, self.line_no = self._start
        elif first and not self.from_start:
            start = _context_start(fh, st.st_size, self.tail_context)
        self._start = None
        fh.seek(start)
        self._splitter = LineSplitter(start)
        self._head = os.pread(fh.fileno(), HEAD_BYTES, 0)
        self._renamed_to = None

    def _lost(self, emit: Emit, why: str) -> None:
        """Say once that the file cannot be read, until it can be again."""
        if not self._vanished:
            self._vanished = True
            emit([SourceNotice(self.name, "error", f"{self.path}: {why}")])

    def local_paths(self) -> tuple[str, ...]:
        """The followed file (`LocalFiles`)."""
        return (self.path,)

    def history(self) -> History | None:
        """Starting at the end, the bytes before the context window still hold the start-up
        lines (server args, KV dtype, pools) every fact comes from: offer them for a bulk fold."""
        if self.from_start:
            return None
        try:
            with open(self.path, "rb") as fh:
                end = _context_start(fh, os.fstat(fh.fileno()).st_size, self.tail_context)
        except OSError:
            return None
        if end <= 0:
            return None
        return History(ranged_file(self.path, end), fill_log=False, always=True)

    def skip_to(self, offset: int, lines: int) -> None:
        """Follow from `offset` (a line start), numbering lines after the `lines` before it."""
        self._start = (offset, lines)

    # -- rotation: where the lines read so far are now -------------------------------------------
    def _renamed(self, emit: Emit) -> bool:
        """The path is gone but the open file still has a name in the directory: a rename
        rotation whose new file is not there yet. Said once, as a rotation."""
        if self._renamed_to is None:
            moved = self._where_now()
            if not moved:
                return False
            self._renamed_to = moved
            emit([SourceNotice(self.name, "rotated", f"{self.path} renamed to {moved}; "
                               "waiting for the new file")])
        return True

    def _where_now(self, inode: int | None = None) -> str | None:
        """The name the open file (or `inode`) has now in the log's directory, if any."""
        ino, dev = inode, None
        if ino is None:
            if self._fh is None:
                return None
            try:
                st = os.fstat(self._fh.fileno())
            except OSError:
                return None
            if st.st_nlink == 0:
                return None  # deleted, not renamed
            ino, dev = st.st_ino, st.st_dev
        parent = os.path.dirname(self.path)
        try:
            with os.scandir(parent or ".") as entries:
                for entry in entries:
                    if entry.inode() == ino and entry.is_file(follow_symlinks=False) and (
                            dev is None or entry.stat(follow_symlinks=False).st_dev == dev):
                        return os.path.join(parent, entry.name)
        except OSError:
            return None
        return None

    def _copy_of_head(self) -> str | None:
        """After a copy-truncate: the sibling file (`server.log.1`, `server.log-2026...`) that
        starts with the bytes this file started with, newest first."""
        head = self._head
        if not head:
            return None
        parent = os.path.dirname(self.path)
        base = os.path.basename(self.path)
        found: list[tuple[float, str]] = []
        try:
            with os.scandir(parent or ".") as entries:
                for entry in entries:
                    if entry.name == base or not entry.name.startswith(base) or \
                            not entry.is_file(follow_symlinks=False):
                        continue
                    with contextlib.suppress(OSError), open(entry.path, "rb") as fh:
                        if fh.read(len(head)) == head:
                            found.append((entry.stat().st_mtime, os.path.join(parent,
                                                                              entry.name)))
        except OSError:
            return None
        return max(found)[1] if found else None

    def _gone(self) -> str:
        return f"{self.path} (deleted)"

    def _new_file(self, emit: Emit, state: str, moved_to: str | None, message: str) -> None:
        """The lines so far now live in `moved_to`; the new file is numbered from line 1."""
        emit([SourceNotice(self.name, state, message, moved_to=moved_to or self._gone())])
        self.line_no = 0

    def _close(self) -> None:
        if self._fh is not None:
            with contextlib.suppress(OSError):
                self._fh.close()
        self._fh = None

    def _drain(self, emit: Emit) -> None:
        """Read everything new from the open descriptor and emit it in bounded batches."""
        fh = self._fh
        if fh is None:
            return
        batch: list[Item] = []
        try:
            while True:
                chunk = fh.read(READ_CHUNK)
                if not chunk:
                    break
                for offset, text in self._splitter.feed(chunk):
                    self.line_no += 1
                    batch.append(SourceLine(self.name, self.line_no, offset, text))
                    if len(batch) >= BATCH_LINES:
                        emit(batch)
                        batch = []
        finally:
            if batch:  # lines already split are emitted even when a later read fails
                emit(batch)
            if len(self._head) < HEAD_BYTES:
                self._head = os.pread(fh.fileno(), HEAD_BYTES, 0)

    def _flush_partial(self, emit: Emit) -> None:
        """A rotated-away file will not grow again: its unterminated last line is complete."""
        rest = self._splitter.flush()
        if rest:
            offset, text = rest[0]
            self.line_no += 1
            emit([SourceLine(self.name, self.line_no, offset, text)])

    def _check(self, emit: Emit) -> None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            if self._fh is not None:
                self._drain(emit)  # whatever was written before the rename/delete
                if self._renamed(emit):
                    return  # a rename rotation: the writer may still add to the old file
            self._lost(emit, "file vanished; waiting for it to reappear")
            return
        except PermissionError:
            self._lost(emit, "permission denied")
            return

        # Back after an I/O error: carry on where we were if it is still the same file.
        if self._fh is None and self._resume is not None and not self._reopen(emit):
            return
        if self._fh is None:
            # First appearance, or reappearance after vanishing: read it from the start.
            was_vanished = self._vanished
            first, self._first_open_pending = self._first_open_pending, False
            self._open(first=first, emit=emit)
            if self._fh is not None:
                if was_vanished and self.line_no:
                    self._new_file(emit, "rotated", self._gone(), "file re-created; reading it "
                                   "from the start")
                elif was_vanished:
                    emit([SourceNotice(self.name, "rotated", "file re-created; reading it from "
                                       "the start")])
                self._drain(emit)
                emit([SourceNotice(self.name, "live", "following")])
            return

        assert self._fh is not None
        if st.st_ino != self._inode:
            # Rotation by rename: finish the old file, then follow the new one from its start.
            self._drain(emit)
            self._flush_partial(emit)
            moved = self._renamed_to or self._where_now()
            self._close()
            self._open(first=False, emit=emit)
            self._new_file(emit, "rotated", moved, f"{self.path} rotated"
                           + (f" to {moved}" if moved else " (the old file was deleted)")
                           + "; following the new file from its start")
            self._drain(emit)
            emit([SourceNotice(self.name, "live", "following")])
            return

        position = self._splitter.consumed + self._splitter.pending
        if st.st_size < position:
            # Copy-truncate: same inode, the file got shorter. The unterminated line we held
            # will not be completed in this copy: emit it, then start over from byte 0.
            self._flush_partial(emit)
            copy = self._copy_of_head()
            self._fh.seek(0)
            self._splitter = LineSplitter(0)
            self._new_file(emit, "truncated", copy or f"{self.path} (before truncation)",
                           f"file truncated ({position} -> {st.st_size} bytes)"
                           + (f", its lines copied to {copy}" if copy else "")
                           + "; reading from the start")
            self._head = os.pread(self._fh.fileno(), HEAD_BYTES, 0)
            self._drain(emit)
            emit([SourceNotice(self.name, "live", "following")])
            return

        if st.st_size > position:
            self._drain(emit)

    def _reopen(self, emit: Emit) -> bool:
        """Reopen after an I/O error. The same inode: seek back to where reading stopped and
        return True (the size checks that follow catch a truncation meanwhile). Another file:
        it was rotated while we could not read; follow the new one from its start (False)."""
        assert self._resume is not None
        inode, position = self._resume
        fh = open(self.path, "rb")  # noqa: SIM115 - kept open across wake-ups
        try:
            same = os.fstat(fh.fileno()).st_ino == inode
            if same:
                fh.seek(position)
        except BaseException:
            fh.close()
            raise
        self._resume = None
        if same:
            self._fh = fh
            self._inode = inode
            return True
        fh.close()
        self._flush_partial(emit)
        moved = self._where_now(inode) or self._gone()
        self._open(first=False, emit=emit)
        if self._fh is not None:
            self._new_file(emit, "rotated", moved, "file replaced while it could not be "
                           "read; following the new file from its start")
            self._drain(emit)
            emit([SourceNotice(self.name, "live", "following")])
        return False
