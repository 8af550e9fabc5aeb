"""Reading whole log files (plain, .gz, or stdin) as decoded lines, for check/events/replay.

Errors are turned into `LogOpenError` with a one-line message, so commands can exit 2 without a
traceback on a missing, unreadable or directory path.
"""

from __future__ import annotations

import codecs
import gzip
import io
import os
import sys
import zlib
from collections.abc import Iterator
from typing import IO

from kvtui.core.pipeline.inputs import Input, RangedFile
from kvtui.sources.lines import MAX_LINE_CHARS, clean_lines


class LogOpenError(Exception):
    """A log path that cannot be read; str(err) is the one-line message for the user."""


def check_readable(path: str) -> None:
    if path == "-":
        return
    if not os.path.exists(path):
        raise LogOpenError(f"{path}: no such file")
    if os.path.isdir(path):
        from kvtui.sources.record import found

        kept = found(path)  # a `--record DIR` recording: its log is what is read
        if kept is None:
            raise LogOpenError(f"{path}: is a directory, not a log file")
        path = kept.log
    if not os.access(path, os.R_OK):
        raise LogOpenError(f"{path}: permission denied")


def open_text(path: str) -> IO[str]:
    """Open a log for reading as text: invalid UTF-8 replaced, any newline convention kept."""
    check_readable(path)
    try:
        if path == "-":
            return io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace",
                                    newline="\n")
        if path.endswith(".gz"):
            return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="replace",
                                    newline="\n")
        return open(path, encoding="utf-8", errors="replace", newline="\n",
                    buffering=1 << 20)
    except OSError as exc:
        raise LogOpenError(f"{path}: {exc.strerror or exc}") from None


def iter_batches(path: str, chunk_chars: int = 1 << 22) -> Iterator[list[str]]:
    """Yield the log's lines in lists (newline stripped, each bounded to MAX_LINE_CHARS).

    Reading big blocks and splitting them in C costs a fraction of Python's per-line file
    iteration, which matters on multi-million-line logs.
    """
    if path != "-" and not path.endswith(".gz"):
        yield from iter_byte_range(path, 0, None, chunk_chars)
        return
    f = open_text(path)
    try:
        yield from _split_blocks(iter(lambda: f.read(chunk_chars), ""))
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise LogOpenError(f"{path}: {exc}") from None
    finally:
        f.close()


def iter_byte_range(path: str, start: int, end: int | None,
                    chunk_bytes: int = 1 << 22) -> Iterator[list[str]]:
    """Lines of a plain file between two byte offsets that sit at line starts (end None: EOF).

    Used for whole files and for the chunks `kvtui check` reads on several cores; both split
    the same way, so a chunked read yields exactly the lines of a sequential one.
    """
    check_readable(path)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    try:
        with open(path, "rb") as f:
            f.seek(start)
            remaining = None if end is None else end - start

            def blocks() -> Iterator[str]:
                nonlocal remaining
                while remaining is None or remaining > 0:
                    size = chunk_bytes if remaining is None else min(chunk_bytes, remaining)
                    data = f.read(size)
                    if not data:
                        break
                    if remaining is not None:
                        remaining -= len(data)
                    yield decoder.decode(data)
                tail = decoder.decode(b"", final=True)
                if tail:
                    yield tail

            yield from _split_blocks(blocks())
    except OSError as exc:
        raise LogOpenError(f"{path}: {exc.strerror or exc}") from None


def _split_blocks(blocks: Iterator[str]) -> Iterator[list[str]]:
    """Blocks of text -> lists of lines, split exactly as `LineSplitter` splits bytes: NUL
    bytes dropped, and a line longer than the carry bound kept by its head and counted once
    (the rest of it, up to its newline, is skipped), so every reader numbers lines alike.

    Why a second splitter beside `kvtui.sources.lines.LineSplitter`: that one takes bytes and
    keeps each line's byte offset (what a follower resumes from, a replay seeks to); this one
    takes text a whole file's reader decoded in large blocks and keeps no offsets, the bulk
    path `kvtui check` folds millions of lines through (one `str.split` a block). Held to the
    same lines by tests/test_line_readers.py (`test_block_reader_and_byte_splitter_agree`).
    The host's follower (`kvtui.sources.ssh.remote_follower`) splits nothing: it sends bytes,
    which the client's `LineSplitter` splits."""
    carry = ""
    skipping = False
    for chunk in blocks:
        if "\x00" in chunk:
            chunk = chunk.replace("\x00", "")
        if skipping:
            nl = chunk.find("\n")
            if nl < 0:
                continue
            chunk, skipping = chunk[nl + 1 :], False
        if carry:
            chunk = carry + chunk
        lines = chunk.split("\n")
        carry = lines.pop()
        if len(carry) > MAX_LINE_CHARS * 4:  # an endless line: keep its head, skip the rest
            lines.append(carry[:MAX_LINE_CHARS])
            carry, skipping = "", True
        if lines:
            yield clean_lines(lines, "\r" in chunk)
    if carry:
        yield clean_lines([carry], "\r" in carry)


def line_start_offsets(path: str, parts: int, end: int | None = None) -> list[int]:
    """Byte offsets that cut a plain file (or its first `end` bytes) into `parts` pieces of
    similar size, each at a line start (the first is 0; duplicates dropped for tiny files)."""
    size = os.path.getsize(path) if end is None else end
    cuts = [0]
    with open(path, "rb") as f:
        for i in range(1, parts):
            f.seek(size * i // parts)
            f.readline()
            pos = f.tell()
            if cuts[-1] < pos < size:
                cuts.append(pos)
    return cuts


# Bytes handed to one C call (a read, a find, a count) while a file is scanned. Why bounded: a
# C call holds the GIL for as long as it runs, and the scan runs on the TUI's ingest thread
# right after the first verdict is published; one `find` over a memory map of a 400 MB file
# held it for half a second, so the event loop could not draw that verdict until the scan was
# over (a time that grew with the file). Between pieces the interpreter hands the GIL on.
SCAN_PIECE = 1 << 20


def read_pieces(path: str, start: int, end: int) -> Iterator[bytes]:
    """The bytes of [start, end) of a plain file, in pieces of at most `SCAN_PIECE` (fewer at
    its end when the file is shorter than `end`)."""
    piece = SCAN_PIECE
    with open(path, "rb", buffering=0) as f:
        f.seek(start)
        left = end - start
        while left > 0:
            data = f.read(min(piece, left))
            if not data:
                return
            left -= len(data)
            yield data


def scan_lines(path: str, markers: tuple[bytes, ...], end: int) -> list[int]:
    """Byte offsets of the lines (starting before `end`) that hold any of `markers` (wholly
    within the first `end` bytes), in order.

    One pass over the file in pieces (`read_pieces`), each searched for every marker by
    `bytes.find` at memory speed, so the server starts of a multi-GB log are found in a
    fraction of a second without reading it line by line, and without holding the GIL for more
    than a piece. A piece keeps the last `len(longest marker) - 1` bytes of the one before, so
    a marker cut by a piece boundary is found whole.
    """
    if end <= 0 or not markers:
        return []
    keep = max(map(len, markers)) - 1
    found: set[int] = set()
    buf = b""  # the bytes from `base` on still to be searched (the kept tail, then a piece)
    base = 0
    line = 0  # where the line holding the byte at `base` starts
    for piece in read_pieces(path, 0, end):
        buf += piece
        for marker in markers:
            at = buf.find(marker)
            while at >= 0:
                nl = buf.rfind(b"\n", 0, at)
                found.add(base + nl + 1 if nl >= 0 else line)
                at = buf.find(marker, at + len(marker))
        cut = max(0, len(buf) - keep)  # a match starting before `cut` fitted in this buffer
        nl = buf.rfind(b"\n", 0, cut)
        if nl >= 0:
            line = base + nl + 1
        base += cut
        buf = buf[cut:]
    return sorted(found)


def count_lines(path: str, start: int, end: int) -> int:
    """How many lines start in [start, end) of a plain file (both offsets at line starts);
    counted piece by piece (`read_pieces`: the GIL is handed on between them)."""
    if end <= start:
        return 0
    return sum(piece.count(b"\n") for piece in read_pieces(path, start, end))


def ranged_file(path: str, size: int | None = None) -> RangedFile:
    """A plain file (its first `size` bytes, at a line start; None: all of it) as the pipeline's
    byte-range capability."""
    return RangedFile(path=path, size=os.path.getsize(path) if size is None else size,
                      read=iter_byte_range, cuts=line_start_offsets, scan=scan_lines,
                      count_lines=count_lines)


def log_input(path: str) -> Input:
    """A log path as a pipeline input: `-` is stdin, a `.gz` is read in order, a plain file also
    offers byte ranges (so a big one is folded on every core)."""
    name = "<stdin>" if path == "-" else path
    ranged = None
    if path != "-" and not path.endswith(".gz") and os.path.isfile(path):
        ranged = ranged_file(path)
    return Input(name=name, blocks=lambda: iter_batches(path), ranged=ranged)


def iter_lines(path: str) -> Iterator[str]:
    """Yield the lines of a log without their newline, each bounded to MAX_LINE_CHARS."""
    for batch in iter_batches(path):
        yield from batch
