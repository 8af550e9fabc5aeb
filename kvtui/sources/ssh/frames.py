"""Reading the remote follower's framed stdout: find its start, cut frames, decompress data.

The stream starts with `MAGIC`. Anything before it is what a login script printed on stdout
(`echo Welcome` in .bashrc). That text is kept, so the client can skip it and say what it was, or
quote it exactly when the follower never starts. Data frames are decompressed here, in bounded
pieces (at most PIECE bytes at once), so a hostile host cannot make a frame cost unbounded
memory.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from typing import Any

from kvtui.sources.ssh.remote_follower import MAGIC

BANNER_MAX = 64 << 10  # bytes accepted before MAGIC
PIECE = 4 << 20  # largest decompressed piece handed on at once
BLOCK_MAX = 128 << 10  # what one zstd block makes at most (RFC 8878 3.1.1.2.3)
PIECE_BLOCKS = PIECE // BLOCK_MAX  # zstd blocks decoded at once
WINDOW_MAX = 8 << 20  # largest zstd window accepted (level 1 of a stream uses 512 KiB)
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def zstd_available() -> bool:
    """Whether this client can decode zstd frames (the `zstandard` package)."""
    try:
        import zstandard  # noqa: F401
    except ImportError:
        return False
    return True


class StreamError(Exception):
    """The stream cannot be the follower's (str() says what arrived instead)."""


class FrameReader:
    """Feed received bytes, get `(kind, payload)` frames; data frames come back as b"D"."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self.synced = False
        self.banner = b""  # what came before MAGIC (bounded)
        self._zlib = zlib.decompressobj()
        self._zstd: ZstdStream | None = None

    def feed(self, chunk: bytes) -> Iterator[tuple[bytes, bytes]]:
        """The frames complete so far, one at a time: a data frame is decompressed only when
        the one before has been handed on (4 MiB received can hold 200 MB of a long line)."""
        buf = self._buf
        buf += chunk
        if not self.synced:
            at = buf.find(MAGIC)
            if at < 0:
                if len(buf) > BANNER_MAX:
                    raise StreamError(
                        f"the host sent {len(buf)} bytes on stdout without the follower's start "
                        f"marker, beginning {bytes(buf[:200])!r}")
                return
            self.banner = bytes(buf[:at])
            del buf[:at + len(MAGIC)]
            self.synced = True
        pos = 0
        try:
            while len(buf) - pos >= 5:
                kind = bytes(buf[pos:pos + 1])
                (size,) = struct.unpack_from(">I", buf, pos + 1)
                if len(buf) - pos - 5 < size:
                    break
                payload = bytes(buf[pos + 5:pos + 5 + size])
                pos += 5 + size
                if kind == b"Z":
                    for piece in self._inflate(payload):
                        yield b"D", piece
                elif kind == b"Y":
                    if self._zstd is None:
                        self._zstd = ZstdStream()
                    for piece in self._zstd.feed(payload):
                        yield b"D", piece
                else:
                    yield kind, payload
        finally:
            del buf[:pos]

    def pending_text(self) -> bytes:
        """What arrived but is not a frame yet (for "exactly what was received")."""
        return bytes(self._buf[:200])

    def _inflate(self, payload: bytes) -> Iterator[bytes]:
        data = self._zlib.decompress(payload, PIECE)
        while data:
            yield data
            tail = self._zlib.unconsumed_tail
            data = self._zlib.decompress(tail, PIECE) if tail else b""


class ZstdStream:
    """Zstd frames received in pieces cut anywhere (one frame may span many Y frames: the host's
    `zstd` binary compresses a whole burst of backlog as one), decompressed in bounded pieces.

    `zstandard`'s decompressobj returns all that its input makes, and a few bytes can make a
    lot (a 4-byte RLE block makes 128 KiB), so it is fed whole blocks, at most PIECE_BLOCKS at
    once: each block's 3-byte header says how much input it takes (RFC 8878 3.1.1.2), and no
    block makes more than BLOCK_MAX. A frame's window is bounded too (WINDOW_MAX), so a hostile
    host can make no piece, and no decoder, cost unbounded memory.
    """

    def __init__(self) -> None:
        import zstandard

        self._dctx = zstandard.ZstdDecompressor(max_window_size=WINDOW_MAX)
        self._buf = bytearray()
        self._dobj: Any = None  # the frame being decoded (None: a frame header is next)
        self._end = 0  # bytes of _buf that are whole blocks (or header), not fed yet
        self._blocks = 0  # whole blocks in _buf[:_end]
        self._checksum = False  # the frame ends with a 4-byte checksum
        self._last = False  # its last block is in _buf[:_end]: the checksum (if any) is next

    def feed(self, data: bytes) -> Iterator[bytes]:
        self._buf += data
        buf = self._buf
        while True:
            if self._dobj is None:
                if not self._header():
                    break
            elif self._last:  # the frame's checksum, if it has one, then the next frame
                tail = 4 if self._checksum else 0
                if len(buf) - self._end < tail:
                    break
                self._end += tail
                yield from self._flush()
                self._dobj = None
            elif not self._block():
                break
            elif self._blocks >= PIECE_BLOCKS:
                yield from self._flush()
        if self._blocks:  # what is whole so far, not held back for more
            yield from self._flush()

    def _header(self) -> bool:
        """A frame header is complete at the start of _buf: the frame's decoder made."""
        buf = self._buf
        if len(buf) < 5:
            return False
        if bytes(buf[:4]) != ZSTD_MAGIC:
            raise StreamError(f"bad zstd data from the host: {bytes(buf[:8])!r} is no frame")
        fhd = buf[4]
        single = fhd >> 5 & 1
        size = 5 + (0 if single else 1) + (0, 1, 2, 4)[fhd & 3] + \
            ((1 if single else 0), 2, 4, 8)[fhd >> 6]
        if len(buf) < size:
            return False
        self._checksum = bool(fhd >> 2 & 1)
        self._dobj = self._dctx.decompressobj()
        self._end, self._blocks, self._last = size, 0, False
        return True

    def _block(self) -> bool:
        """The next whole block taken into _buf[:_end]."""
        buf, at = self._buf, self._end
        if len(buf) - at < 3:
            return False
        head = buf[at] | buf[at + 1] << 8 | buf[at + 2] << 16
        kind, size = head >> 1 & 3, head >> 3
        if kind == 3 or size > BLOCK_MAX:
            raise StreamError(f"bad zstd block from the host (type {kind}, size {size})")
        take = 3 + (1 if kind == 1 else size)
        if len(buf) - at < take:
            return False
        self._end += take
        self._blocks += 1
        self._last = bool(head & 1)
        return True

    def _flush(self) -> Iterator[bytes]:
        unit = bytes(self._buf[:self._end])
        del self._buf[:self._end]
        self._end, self._blocks = 0, 0
        try:
            out = self._dobj.decompress(unit)
        except Exception as exc:  # zstandard.ZstdError: broken data
            raise StreamError(f"bad zstd data from the host: {exc}") from None
        if out:
            yield out
