"""Bytes -> lines with offsets, shared by every source (local file, SSH channel, replay).

Why a class of its own: lines arrive in arbitrary chunks (32 KiB SSH reads, watchfiles wakeups),
a line may straddle chunks, and resuming after a reconnect needs the exact byte offset of the
first unconsumed byte. The splitter owns that carry buffer and the offset arithmetic.
"""

from __future__ import annotations

# Lines longer than this are cut for display and parsing; the byte offsets stay exact.
MAX_LINE_CHARS = 65536


def decode_line(raw: bytes) -> str:
    """Decode one raw line: invalid UTF-8 replaced, CR and NUL bytes dropped, length bounded.

    NUL bytes never belong to a text log; they appear as the hole a copy-truncate rotation
    leaves when the writer keeps its old offset, and are dropped so the next real line survives.
    """
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    if len(raw) > MAX_LINE_CHARS * 4:
        raw = raw[: MAX_LINE_CHARS * 4]
    if b"\x00" in raw:
        raw = raw.replace(b"\x00", b"")
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


def lines_of(raw: bytes | memoryview) -> list[str]:
    """The texts of complete lines given as their bytes, each ending in "\n" (what
    `LineSplitter.feed_raw` returns): one decode for them all, then split and cleaned. Equal to
    decoding them one by one: "\n" never occurs inside a UTF-8 sequence, and a replacement
    character is never a newline."""
    if not raw:
        return []
    text = str(memoryview(raw)[:-1], "utf-8", "replace")
    return clean_lines(text.split("\n"), "\r" in text)


class LineSplitter:
    """Feed byte chunks, get complete lines as (offset, text).

    `offset` is the byte offset of each line's first byte, counted from `start_offset`.
    `consumed` is the offset just past the last complete line: the place to resume from.

    Memory is bounded whatever arrives: of a line longer than `CARRY_MAX` bytes only the head is
    kept (the line still counts once), and NUL bytes are not kept at all, so a rotation hole of
    zeros costs nothing and the line written after it comes through intact.
    """

    CARRY_MAX = MAX_LINE_CHARS * 4

    __slots__ = ("_carry", "_carry_len", "_over", "consumed")

    def __init__(self, start_offset: int = 0) -> None:
        self._carry = b""  # the kept head of the current partial line (no NULs)
        self._carry_len = 0  # its raw length in the file
        self._over = False  # the partial line passed CARRY_MAX: the rest is dropped
        self.consumed = start_offset

    def feed(self, chunk: bytes) -> list[tuple[int, str]]:
        if not chunk:
            return []
        if self._over or self._carry_len != len(self._carry) or b"\x00" in chunk:
            return self._feed_slow(chunk)  # the kept carry is not the raw bytes any more
        data = self._carry + chunk if self._carry else chunk
        last_nl = data.rfind(b"\n")
        if last_nl < 0:
            self._keep(data)
            return []
        complete, rest = data[: last_nl + 1], data[last_nl + 1 :]
        out: list[tuple[int, str]] = []
        offset = self.consumed
        for raw in complete.split(b"\n")[:-1]:
            out.append((offset, decode_line(raw)))
            offset += len(raw) + 1
        self.consumed = offset
        self._carry, self._carry_len = b"", 0
        self._keep(rest)
        return out

    def feed_texts(self, chunk: bytes) -> list[str]:
        """`feed` without the offsets: the texts of the completed lines, one decode per chunk.

        For readers that only need the text (a headless check): several times cheaper than a
        decode and a tuple per line, and bounded exactly like `feed` (the carry is capped and an
        over-long line still counts once), so a 200 MB line costs a few chunks of memory on
        every path. The texts equal `feed`'s (see `lines_of`).
        """
        got = self.feed_raw(chunk)
        return lines_of(got) if isinstance(got, bytes) else got

    def feed_raw(self, chunk: bytes) -> bytes | list[str]:
        """`feed_texts` with the decoding left to whoever folds the lines (`lines_of`, maybe in
        another process): the completed lines' bytes, each ending in "\n", on the fast path;
        their texts when the chunk needs the line-by-line path (a NUL byte, an over-long line
        being dropped). The reader of a remote stream then spends no time on lines a worker
        decodes anyway."""
        if not chunk:
            return b""
        if self._over or self._carry_len != len(self._carry) or b"\x00" in chunk:
            return [text for _, text in self._feed_slow(chunk)]
        last_nl = chunk.rfind(b"\n")  # the carry holds none
        carry = self._carry
        if last_nl < 0:
            self._keep(carry + chunk if carry else chunk)
            return b""
        end = last_nl + 1
        self.consumed += len(carry) + end
        if carry:  # one copy of the lines (a slice and then a concatenation were two)
            done = b"".join((carry, memoryview(chunk)[:end]))
        else:
            done = chunk if end == len(chunk) else chunk[:end]
        self._carry, self._carry_len = b"", 0
        self._keep(chunk[end:])
        return done

    def _keep(self, data: bytes) -> None:
        """`data` is the whole partial line so far (no newline in it)."""
        self._carry_len = len(data)
        if len(data) > self.CARRY_MAX:
            data, self._over = data[: self.CARRY_MAX], True
        self._carry = data

    def _feed_slow(self, chunk: bytes) -> list[tuple[int, str]]:
        """Line by line, for chunks with NUL bytes or while an over-long line is being dropped."""
        out: list[tuple[int, str]] = []
        pos = 0
        while True:
            nl = chunk.find(b"\n", pos)
            piece = chunk[pos:] if nl < 0 else chunk[pos:nl]
            self._carry_len += len(piece)
            if not self._over:
                if b"\x00" in piece:
                    piece = piece.replace(b"\x00", b"")
                self._carry += piece
                if len(self._carry) > self.CARRY_MAX:
                    self._carry, self._over = self._carry[: self.CARRY_MAX], True
            if nl < 0:
                return out
            out.append((self.consumed, decode_line(self._carry)))
            self.consumed += self._carry_len + 1
            self._carry, self._carry_len, self._over = b"", 0, False
            pos = nl + 1

    def flush(self) -> list[tuple[int, str]]:
        """Return the trailing partial line (at EOF of a finished file) as a line."""
        if not self._carry_len:
            return []
        off, kept = self.consumed, self._carry
        self.consumed += self._carry_len
        self._carry, self._carry_len, self._over = b"", 0, False
        # A trailing run of NUL bytes alone is no line (the block reader agrees).
        return [(off, decode_line(kept))] if kept else []

    @property
    def pending(self) -> int:
        """Bytes held back because their line is not complete yet."""
        return self._carry_len
