"""Bytes -> lines with offsets, shared by every source (local file, SSH channel, replay).

Why a class of its own: lines arrive in arbitrary chunks (32 KiB SSH reads, watchfiles wakeups),
a line may straddle chunks, and resuming after a reconnect needs the exact byte offset of the
first unconsumed byte. The splitter owns that carry buffer and the offset arithmetic.
"""

from __future__ import annotations

# Lines longer than this are cut for display and parsing; the byte offsets stay exact.
MAX_LINE_CHARS = 65536


def decode_line(raw: bytes) -> str:
    """Decode one raw line: invalid UTF-8 replaced, CR stripped, length bounded."""
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    if len(raw) > MAX_LINE_CHARS * 4:
        raw = raw[: MAX_LINE_CHARS * 4]
    text = raw.decode("utf-8", errors="replace")
    if len(text) > MAX_LINE_CHARS:
        text = text[:MAX_LINE_CHARS]
    return text


def clean_lines(lines: list[str], has_cr: bool) -> list[str]:
    """A block's lines made safe to keep: CR of CRLF endings dropped, each bounded in length.

    The block-wise readers (local files, the SSH text stream) call this once per block, so the
    per-line checks only run when the block needs them.
    """
    if has_cr:
        lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    if lines and max(map(len, lines)) > MAX_LINE_CHARS:
        lines = [ln[:MAX_LINE_CHARS] for ln in lines]
    return lines


class LineSplitter:
    """Feed byte chunks, get complete lines as (offset, text).

    `offset` is the byte offset of each line's first byte, counted from `start_offset`.
    `consumed` is the offset just past the last complete line: the place to resume from.
    """

    __slots__ = ("_carry", "consumed")

    def __init__(self, start_offset: int = 0) -> None:
        self._carry = b""
        self.consumed = start_offset

    def feed(self, chunk: bytes) -> list[tuple[int, str]]:
        if not chunk:
            return []
        data = self._carry + chunk if self._carry else chunk
        last_nl = data.rfind(b"\n")
        if last_nl < 0:
            self._carry = data
            return []
        complete, self._carry = data[: last_nl + 1], data[last_nl + 1 :]
        out: list[tuple[int, str]] = []
        offset = self.consumed
        for raw in complete.split(b"\n")[:-1]:
            out.append((offset, decode_line(raw)))
            offset += len(raw) + 1
        self.consumed = offset
        return out

    def flush(self) -> list[tuple[int, str]]:
        """Return the trailing partial line (at EOF of a finished file) as a line."""
        if not self._carry:
            return []
        raw, self._carry = self._carry, b""
        off = self.consumed
        self.consumed += len(raw)
        return [(off, decode_line(raw))]

    @property
    def pending(self) -> int:
        """Bytes held back because their line is not complete yet."""
        return len(self._carry)
