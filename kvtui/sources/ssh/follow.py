"""`RemoteFollower`: a LineSource that follows a log on an SSH host across disconnects.

The loop is: connect (fresh client) -> start the remote follower -> read frames until stop, end or
loss -> on loss say so at once ("reconnecting in n s, last data n s ago"), back off exponentially
with jitter, and resume from the byte offset of the first line not yet emitted. Because the resume
point is the end of the last *complete* line, a line is never emitted twice nor skipped; the remote
side checks inode, size and the file's first bytes to notice truncation or replacement.
"""

from __future__ import annotations

import base64
import contextlib
import json
import random
import re
import shlex
import struct
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import paramiko

from kvtui.sources.base import Emit, Item, SourceLine, SourceNotice
from kvtui.sources.lines import LineSplitter, clean_lines, decode_line
from kvtui.sources.ssh.connect import Connection, Connector, SSHError
from kvtui.sources.ssh.remote_script import FOLLOWER

# The follower travels as one line of base64: the user's login shell parses the command first,
# and csh-family shells cannot take a newline inside quotes.
_BOOT = ("import base64,zlib;exec(zlib.decompress(base64.b64decode('"
         + base64.b64encode(zlib.compress(FOLLOWER.encode(), 9)).decode() + "')))")
RECV_SIZE = 4 << 20
WINDOW = 16 << 20


def dies_with_channel(argv: list[str]) -> str:
    """A remote command line running argv that ends when the SSH channel closes.

    Without a PTY, closing the channel does not signal the remote process (paramiko #785, #203).
    The wrapper starts argv in the background, in its own process group when `setsid` exists
    (so a `sh -c 'a | b'` dies whole), and blocks reading the channel's stdin (saved as fd 3:
    a background job's own stdin is /dev/null); EOF, i.e. channel closed or connection lost,
    kills the group. Every argument is shlex-quoted.
    """
    script = ('exec 3<&0; '
              'if command -v setsid >/dev/null 2>&1; then setsid "$@" </dev/null & '
              'else "$@" </dev/null & fi; pid=$!; '
              '( cat <&3 >/dev/null; kill -TERM -- "-$pid" "$pid" ) >/dev/null 2>&1 & '
              'watcher=$!; exec 3<&-; '
              'wait "$pid"; rc=$?; kill "$watcher" 2>/dev/null; exit "$rc"')
    return "sh -c " + shlex.quote(script) + " sh " + " ".join(shlex.quote(a) for a in argv)


@dataclass
class Target:
    """What to follow: a file (exact offsets) or a command's output (docker, journal, cmd)."""

    kind: str  # "file" | "docker" | "journal" | "cmd"
    value: str  # path, container, unit or shell command
    python: str = "python3"  # interpreter for the file follower

    @property
    def label(self) -> str:
        return {"file": "", "docker": "docker:", "journal": "journal:", "cmd": "cmd:"}[
            self.kind] + self.value


@dataclass
class _Resume:
    ino: int | None = None
    dev: int | None = None
    head_len: int = 0
    head: str = ""
    splitter: Any = None  # LineSplitter, or _TextSplitter in texts mode
    line_no: int = 0
    started: bool = False  # history already requested once
    last_ts: tuple[str, int] | None = None  # docker: newest timestamp seen
    ts_boundary: tuple[str, int] | None = None  # docker: last_ts when the previous stream ended
    cursor: str | None = None  # journal: last cursor seen
    extra: dict[str, Any] = field(default_factory=dict)


class _WholeLines:
    """Carry the partial last line between chunks; hand each run of complete lines on.

    `consumed` is exact at line boundaries, which is all a reconnect needs to resume.
    """

    __slots__ = ("_carry", "consumed")

    def __init__(self, start_offset: int = 0) -> None:
        self._carry = b""
        self.consumed = start_offset

    def feed(self, chunk: bytes) -> list[str]:
        data = self._carry + chunk if self._carry else chunk
        last_nl = data.rfind(b"\n")
        if last_nl < 0:
            self._carry = data
            return []
        self._carry = data[last_nl + 1:]
        self.consumed += last_nl + 1
        return self._complete(data, last_nl)

    def flush(self) -> list[str]:
        if not self._carry:
            return []
        raw, self._carry = self._carry, b""
        self.consumed += len(raw)
        return self._last(raw)

    def _complete(self, data: bytes, last_nl: int) -> list[str]:
        """`data[:last_nl]` are complete lines."""
        raise NotImplementedError

    def _last(self, raw: bytes) -> list[str]:
        """The unterminated last line at the end of the file."""
        raise NotImplementedError


class _TextSplitter(_WholeLines):
    """LineSplitter's results without per-line offsets: one decode and split per chunk.

    For headless reads (`--check`), where nobody looks at a line's offset, this is several times
    cheaper than LineSplitter plus a SourceLine per line. The text of every line is the same
    as `decode_line` gives ("\n" never occurs inside a UTF-8 sequence, so decoding a chunk of
    whole lines at once equals decoding line by line).
    """

    __slots__ = ()

    def _complete(self, data: bytes, last_nl: int) -> list[str]:
        text = data[:last_nl].decode("utf-8", errors="replace")
        return clean_lines(text.split("\n"), "\r" in text)

    def _last(self, raw: bytes) -> list[str]:
        return [decode_line(raw)]


class _SpoolSplitter(_WholeLines):
    """For big headless reads: complete lines go to a local file, to be analysed on all cores.

    Same interface as the splitters (feed/flush/consumed), so resume-by-offset still works;
    it hands back no lines.
    """

    __slots__ = ("out",)

    def __init__(self, start_offset: int, out: Any) -> None:
        super().__init__(start_offset)
        self.out = out

    def _complete(self, data: bytes, last_nl: int) -> list[str]:
        self.out.write(memoryview(data)[:last_nl + 1])
        return []

    def _last(self, raw: bytes) -> list[str]:
        self.out.write(raw)
        return []


class _Lost(Exception):
    """The stream ended for a reason worth a reconnect."""


class _Fatal(Exception):
    """The stream cannot work (e.g. no python3 on the host); no point retrying."""


_DOCKER_TS = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d) ")


class RemoteFollower:
    """Follow `target` on the host behind `connector`; implements `LineSource`."""

    def __init__(self, connector: Connector, target: Target, *, lines: int | None = None,
                 stop_at_end: bool = False, connection: Connection | None = None,
                 keepalive: float | None = None, backoff: tuple[float, float] = (1.0, 30.0),
                 compress: bool = True, rng: Callable[[], float] = random.random,
                 host_label: str | None = None, model_path: str | None = None,
                 on_checkpoint: Callable[[Connection, str], str | None] | None = None,
                 on_texts: Callable[[list[str], int], None] | None = None,
                 spool: Any = None) -> None:
        self.connector = connector
        self.target = target
        self.lines = lines  # None: the whole log so far
        self.stop_at_end = stop_at_end
        self._given = connection  # first attempt uses it (shared with checkpoint inspection)
        self.keepalive = keepalive or float(connector.spec.server_alive_interval or 5)
        self.dead_after = 3 * self.keepalive  # like ServerAliveCountMax=3
        self.backoff = backoff
        self.compress = compress
        self.rng = rng
        host = host_label or connector.spec.alias
        self.name = f"{host}:{target.label}"
        self.state = "idle"
        self.reconnects = 0
        self.bytes_received = 0
        self.last_data = time.monotonic()
        self._r = _Resume()
        self.model_path = model_path  # from discovery, else from the log's server_args
        self.on_checkpoint = on_checkpoint
        # texts mode (headless): file lines go to on_texts(texts, first_line_no) in bulk instead
        # of SourceLines through emit; notices still go through emit
        self.on_texts = on_texts
        # spool mode (big headless reads): the file's bytes are copied into this binary file
        # instead of being split; `spool_broken` says a rotation/truncation made the copy unusable
        self.spool = spool
        self.spool_broken = False
        self._inspected: str | None = None

    # -- LineSource --------------------------------------------------------------------------

    def history(self) -> None:
        """A remote file streams everything itself (no local bytes to fold in bulk)."""
        return None

    def skip_to(self, offset: int, lines: int) -> None:
        raise NotImplementedError("a remote follower offers no history")

    def run(self, emit: Emit, stop: threading.Event) -> None:
        attempt = 0
        reason = ""
        while not stop.is_set():
            self._notice(emit, "connecting" if not self._r.started else "reconnecting",
                         f"connecting to {self.connector.spec.label}" if not self._r.started
                         else f"reconnecting ({reason}), last data "
                              f"{time.monotonic() - self.last_data:.0f} s ago")
            conn: Connection | None = None
            owned = True  # a lent connection is closed on loss, but left open when done
            finished = False
            try:
                if self._given is not None:
                    conn, owned, self._given = self._given, False, None
                else:
                    conn = self.connector.connect()
                    if self.connector.messages:
                        self._notice(emit, "info", "; ".join(self.connector.messages))
                        self.connector.messages.clear()
                conn.start_pinger(self.keepalive)
                progressed = self._stream(conn, emit, stop)
                if progressed is None:  # finished (stop_at_end, command exited, or stopped)
                    finished = True
                    return
                if progressed:
                    attempt = 0
                reason = "stream ended"
            except SSHError as exc:
                if exc.fatal:
                    self._notice(emit, "error", str(exc))
                    return
                reason = str(exc)
            except _Fatal as exc:
                self._notice(emit, "error", str(exc))
                return
            except _Lost as exc:
                reason = str(exc)
            except (paramiko.SSHException, OSError, EOFError) as exc:
                reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            finally:
                if conn is not None and (owned or not finished):
                    conn.close()
            if stop.is_set():
                break
            if self.stop_at_end and not self._r.started:
                self._notice(emit, "error", reason)
                return
            delay = min(self.backoff[1], self.backoff[0] * (2 ** attempt))
            delay *= 0.5 + self.rng()  # jitter: many clients do not reconnect in lockstep
            attempt += 1
            self.reconnects += 1
            self._wait_reconnect(emit, stop, delay, reason)
        self._notice(emit, "closed", "stopped")

    # -- helpers -----------------------------------------------------------------------------

    def _notice(self, emit: Emit, state: str, message: str = "") -> None:
        if state not in ("info", "checkpoint"):
            self.state = state
        emit([SourceNotice(self.name, state, message)])

    def _wait_reconnect(self, emit: Emit, stop: threading.Event, delay: float,
                        reason: str) -> None:
        end = time.monotonic() + delay
        while not stop.is_set():
            left = end - time.monotonic()
            if left <= 0:
                return
            self._notice(emit, "reconnecting",
                         f"reconnecting in {left:.0f} s, last data "
                         f"{time.monotonic() - self.last_data:.0f} s ago ({reason})")
            stop.wait(min(1.0, left))

    def _open_channel(self, conn: Connection, command: str) -> paramiko.Channel:
        chan = conn.transport.open_session(window_size=WINDOW, max_packet_size=32768,
                                           timeout=self.connector.timeout)
        chan.settimeout(0.5)
        chan.exec_command(command)
        return chan

    def _watchdog(self, conn: Connection, last_frame: float) -> None:
        if not conn.is_active():
            raise _Lost("connection closed")
        if conn.unanswered_for() > self.dead_after:
            raise _Lost(f"host silent for {conn.unanswered_for():.0f} s (keepalive unanswered)")
        if time.monotonic() - last_frame > self.dead_after + self.keepalive:
            raise _Lost(f"no data or heartbeat for {time.monotonic() - last_frame:.0f} s")

    def _stream(self, conn: Connection, emit: Emit, stop: threading.Event) -> bool | None:
        if self.target.kind == "file":
            return self._stream_file(conn, emit, stop)
        return self._stream_command(conn, emit, stop)

    # -- file: framed protocol ---------------------------------------------------------------

    def _file_command(self) -> str:
        r = self._r
        if r.splitter is not None and r.ino is not None:
            offset, nlines = r.splitter.consumed, -1
            ino, dev = str(r.ino), str(r.dev)
        else:
            offset = -1
            nlines = -1 if self.lines is None else self.lines
            ino = dev = ""
        args = ["kvtui-follow", self.target.value, str(offset), str(nlines), ino, dev,
                str(r.head_len), r.head or "-", "1" if self.stop_at_end else "0",
                f"{self.keepalive:g}", "1" if self.compress else "0"]
        return " ".join(shlex.quote(a) for a in [self.target.python, "-c", _BOOT, *args])

    def _splitter(self, offset: int) -> Any:
        if self.spool is not None:
            return _SpoolSplitter(offset, self.spool)
        return _TextSplitter(offset) if self.on_texts is not None else LineSplitter(offset)

    def _emit_lines(self, emit: Emit, pairs: list[Any], extra: list[Item]) -> None:
        items: list[Item] = extra
        n = self._r.line_no
        if self.on_texts is not None and pairs and isinstance(pairs[0], str):
            if items:
                emit(items)
            self._r.line_no = n + len(pairs)
            self.on_texts(pairs, n + 1)
            if self.on_checkpoint is not None:
                for text in pairs:
                    if "model_path" in text:
                        self._note_model_path(text)
            return
        name = self.name
        items.extend([SourceLine(name, i, off, text)
                      for i, (off, text) in enumerate(pairs, n + 1)])
        self._r.line_no = n + len(pairs)
        if self.on_checkpoint is not None:
            for _, text in pairs:
                if "model_path" in text:
                    self._note_model_path(text)
        if items:
            emit(items)

    def _note_model_path(self, text: str) -> None:
        from parsers.sglang import parse_line

        ev = parse_line(text)
        if ev is not None and ev.kind == "server_args":
            path = ev.get("model_path")
            if isinstance(path, str) and path:
                self.model_path = path

    def _maybe_inspect(self, conn: Connection, emit: Emit) -> None:
        """Once live, read the checkpoint of the model the log names, on this connection."""
        hook = self.on_checkpoint
        path = self.model_path
        if hook is None or not path or path == self._inspected:
            return
        self._inspected = path
        try:
            message = hook(conn, path)
        except Exception as exc:  # best effort: never let inspection kill the stream
            message = f"checkpoint inspection failed: {exc}"
        if message:
            # reported as "live" (it is): a state of its own would replace "live" in a header
            self._notice(emit, "live", f"following {self.target.label}; checkpoint: {message}")

    def _stream_file(self, conn: Connection, emit: Emit, stop: threading.Event) -> bool | None:
        r = self._r
        if r.splitter is not None:
            # The remote follower restarts at `consumed` (the end of the last complete line), so
            # it sends the unterminated tail again: drop the carry, or it would be doubled and
            # `consumed` would drift past the real resume point.
            r.splitter = self._splitter(r.splitter.consumed)
        chan = self._open_channel(conn, self._file_command())
        buf = bytearray()
        unz = zlib.decompressobj()
        progressed = False
        last_frame = time.monotonic()
        err = bytearray()
        resumed = r.splitter is not None
        try:
            while not stop.is_set():
                while chan.recv_stderr_ready():
                    err += chan.recv_stderr(65536)
                try:
                    chunk = chan.recv(RECV_SIZE)
                except TimeoutError:
                    self._watchdog(conn, last_frame)
                    continue
                if not chunk:
                    while chan.recv_stderr_ready():
                        err += chan.recv_stderr(65536)
                    msg = err.decode("utf-8", "replace").strip()
                    if not progressed and ("not found" in msg or "No such file" in msg) and \
                            "python" in msg.lower():
                        raise _Fatal(f"{self.target.python} is not available on the host: "
                                     f"{msg.splitlines()[-1]}")
                    if msg:
                        raise _Lost(msg.splitlines()[-1][:300])
                    if self.stop_at_end and r.started and self.state == "live":
                        return None
                    raise _Lost("remote follower ended")
                last_frame = time.monotonic()
                self.bytes_received += len(chunk)
                buf += chunk
                pos = 0
                items: list[Item] = []
                pairs: list[Any] = []
                n = len(buf)
                while n - pos >= 5:
                    kind = buf[pos:pos + 1]
                    (size,) = struct.unpack_from(">I", buf, pos + 1)
                    if n - pos - 5 < size:
                        break
                    payload = bytes(buf[pos + 5:pos + 5 + size])
                    pos += 5 + size
                    if kind in (b"Z", b"D"):
                        data = unz.decompress(payload) if kind == b"Z" else payload
                        if data and r.splitter is not None:
                            pairs.extend(r.splitter.feed(data))
                            self.last_data = last_frame
                        continue
                    # a control frame: emit the lines before it first, in order
                    if pairs:
                        self._emit_lines(emit, pairs, items)
                        pairs, items = [], []
                    if kind == b"H":
                        h = json.loads(payload)
                        # same file: keep the splitter (its carry is the stream's current
                        # partial line; on a resume it was already reset at the start)
                        if r.splitter is None or h["ino"] != r.ino or h["dev"] != r.dev:
                            r.splitter = self._splitter(h["offset"])
                        r.ino, r.dev = h["ino"], h["dev"]
                        r.head_len, r.head = h["head_len"], h["head"]
                        if not r.started:
                            r.started = True
                            self._notice(emit, "loading", f"reading {self.target.value}")
                        elif resumed:
                            resumed = False
                            self._notice(emit, "live",
                                         f"reconnected; resumed at byte {r.splitter.consumed}")
                        progressed = True
                    elif kind == b"E":
                        self._notice(emit, "live", f"following {self.target.value}")
                        if self.stop_at_end:
                            self._flush_tail(emit)
                            return None
                        self._maybe_inspect(conn, emit)
                    elif kind == b"N":
                        note = json.loads(payload)
                        state = note.get("state", "info")
                        if state == "error":
                            raise _Fatal(note.get("message", "remote follower failed"))
                        if state in ("rotated", "truncated") and self.spool is not None:
                            self.spool_broken = True
                        if state in ("rotated", "truncated") and r.splitter is not None:
                            tail = r.splitter.flush() if state == "rotated" else []
                            if tail:
                                self._emit_lines(emit, tail, [])
                            if state == "truncated":
                                r.splitter = self._splitter(0)
                            if state == "rotated":
                                r.ino = None  # the next H frame names the new file
                        emit([SourceNotice(self.name, state, note.get("message", ""))])
                        if state in ("rotated", "truncated") and self.state == "live":
                            # the event is said inline; the connection itself is still live
                            emit([SourceNotice(self.name, "live",
                                               f"following {self.target.value}")])
                    elif kind == b"K":
                        pass
                del buf[:pos]
                if pairs:
                    self._emit_lines(emit, pairs, items)
                elif items:
                    emit(items)
                if self.state == "live" and self.model_path != self._inspected:
                    self._maybe_inspect(conn, emit)
                self._watchdog(conn, last_frame)
            return None
        finally:
            with contextlib.suppress(Exception):
                chan.close()

    def _flush_tail(self, emit: Emit) -> None:
        """At the end of a --check read, a last line without newline still counts."""
        if self._r.splitter is not None:
            tail = self._r.splitter.flush()
            if tail:
                self._emit_lines(emit, tail, [])

    # -- docker / journal / cmd: plain output streams ----------------------------------------

    def _command_argv(self) -> list[str]:
        t, r = self.target, self._r
        follow = not self.stop_at_end
        if t.kind == "docker":
            argv = ["docker", "logs", "--timestamps"]
            if follow:
                argv.append("--follow")
            if r.last_ts is not None:
                argv += ["--since", r.extra["since"]]
            elif self.lines is not None:
                argv += ["--tail", str(self.lines)]
            # the container's stdout and stderr as one stream, in docker's order: read as two
            # channels they interleave arbitrarily
            return ["sh", "-c", 'exec "$@" 2>&1', "sh", *argv, t.value]
        if t.kind == "journal":
            argv = ["journalctl", "--no-pager", "-o", "json", "-u", t.value]
            if follow:
                argv.append("--follow")
            if r.cursor is not None:
                argv += ["--after-cursor", r.cursor]
            elif self.lines is not None:
                argv += ["--lines", str(self.lines)]
            elif follow:
                argv += ["--lines", "all"]
            return argv
        return ["sh", "-c", t.value]

    def _stream_command(self, conn: Connection, emit: Emit,
                        stop: threading.Event) -> bool | None:
        r = self._r
        if r.started and self.target.kind == "cmd":
            self._notice(emit, "info", "command restarted after reconnect; output may repeat")
        chan = self._open_channel(conn, dies_with_channel(self._command_argv()))
        out, err = LineSplitter(), LineSplitter()
        self._begin_command_stream()
        r.started = True
        self._notice(emit, "live", f"following {self.target.label}")
        time.monotonic()
        try:
            while not stop.is_set():
                got = False
                pairs: list[tuple[int, str]] = []
                while chan.recv_stderr_ready():
                    pairs.extend(err.feed(chan.recv_stderr(65536)))
                    got = True
                try:
                    chunk = chan.recv(RECV_SIZE)
                except TimeoutError:
                    chunk = None
                if chunk:
                    got = True
                    pairs.extend(out.feed(chunk))
                if got:
                    self.last_data = time.monotonic()
                texts = self._filter_command_lines(pairs)
                if texts:
                    self._emit_lines(emit, [(-1, t) for t in texts], [])
                elif self.model_path != self._inspected:
                    self._maybe_inspect(conn, emit)  # when the output pauses
                if chunk == b"":
                    while chan.recv_stderr_ready():
                        texts = self._filter_command_lines(err.feed(chan.recv_stderr(65536)))
                        self._emit_lines(emit, [(-1, t) for t in texts], [])
                    rest = self._filter_command_lines(out.flush() + err.flush())
                    self._emit_lines(emit, [(-1, t) for t in rest], [])
                    end = time.monotonic() + 2
                    while not chan.exit_status_ready() and time.monotonic() < end:
                        time.sleep(0.02)
                    rc = chan.recv_exit_status() if chan.exit_status_ready() else None
                    if not conn.is_active():
                        raise _Lost("connection closed")
                    self._notice(emit, "closed" if rc == 0 else "error",
                                 f"{self.target.label} ended (exit status {rc})")
                    return None
                if not got:
                    # command output has no heartbeat, so only the keepalive decides liveness
                    if not conn.is_active():
                        raise _Lost("connection closed")
                    if conn.unanswered_for() > self.dead_after:
                        raise _Lost(f"host silent for {conn.unanswered_for():.0f} s")
            return None
        finally:
            with contextlib.suppress(Exception):
                chan.close()

    def _filter_command_lines(self, pairs: list[tuple[int, str]]) -> list[str]:
        kind = self.target.kind
        if kind == "docker":
            return self._docker_lines([t for _, t in pairs])
        if kind == "journal":
            return self._journal_lines([t for _, t in pairs])
        return [t for _, t in pairs]

    def _begin_command_stream(self) -> None:
        """A (re)started command stream: docker's `--since` repeats what was already seen."""
        self._r.ts_boundary = self._r.last_ts

    def _docker_lines(self, texts: list[str]) -> list[str]:
        """Strip docker's --timestamps prefix, dropping lines already seen before a reconnect.

        Only the overlap at a resume is dropped: lines at or before the newest timestamp of the
        previous stream, until the first newer line. After that every line is kept, whatever its
        timestamp (stdout and stderr, or a clock step, need not be monotonic).
        """
        r = self._r
        out = []
        for text in texts:
            m = _DOCKER_TS.match(text)
            if not m:
                out.append(text)
                continue
            key = (m.group(1) + m.group(3), int((m.group(2) or "0").ljust(9, "0")))
            if r.ts_boundary is not None:
                if key <= r.ts_boundary:
                    continue
                r.ts_boundary = None
            if r.last_ts is None or key > r.last_ts:
                r.last_ts = key
                r.extra["since"] = text[:m.end() - 1]
            out.append(text[m.end():])
        return out

    def _journal_lines(self, texts: list[str]) -> list[str]:
        r = self._r
        out = []
        for text in texts:
            try:
                rec = json.loads(text)
            except ValueError:
                out.append(text)
                continue
            cursor = rec.get("__CURSOR")
            if isinstance(cursor, str):
                r.cursor = cursor
            msg = rec.get("MESSAGE")
            if isinstance(msg, list):
                msg = bytes(b & 0xFF for b in msg if isinstance(b, int)).decode("utf-8",
                                                                                "replace")
            if isinstance(msg, str):
                out.extend(msg.splitlines() or [""])
        return out
