"""Reading the remote follower's framed stdout: find its start, cut frames, decompress data.

The stream starts with `MAGIC`. Anything before it is what a login script printed on stdout
(`echo Welcome` in .bashrc). That text is kept, so the client can skip it and say what it was, or
quote it exactly when the follower never starts. Data frames are decompressed here, in bounded
pieces (a zstd frame holds at most YMAX bytes), so a hostile host cannot make one frame cost
unbounded memory.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from typing import Any

from kvtui.sources.ssh.remote_script import MAGIC

BANNER_MAX = 64 << 10  # bytes accepted before MAGIC
PIECE = 4 << 20  # largest decompressed piece handed on at once
YMAX = 8 << 20  # a zstd frame holds at most this much (the follower's BLOCK is 4 MiB)


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
        self._zstd: Any = None

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
                    yield b"D", self._unzstd(payload)
                else:
                    yield kind, payload
        finally:
            del buf[:pos]

    def pending_text(self) -> bytes:
        """What arrived but is not a frame yet (for "exactly what was received")."""
        return bytes(self._buf[:200])

    def _unzstd(self, payload: bytes) -> bytes:
        if self._zstd is None:
            import zstandard

            self._zstd = zstandard.ZstdDecompressor()
        try:
            return bytes(self._zstd.decompress(payload, max_output_size=YMAX))
        except Exception as exc:  # zstandard.ZstdError: a broken or oversized frame
            raise StreamError(f"bad zstd frame from the host: {exc}") from None

    def _inflate(self, payload: bytes) -> Iterator[bytes]:
        data = self._zlib.decompress(payload, PIECE)
        while data:
            yield data
            tail = self._zlib.unconsumed_tail
            data = self._zlib.decompress(tail, PIECE) if tail else b""
