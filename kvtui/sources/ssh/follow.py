"""`RemoteFollower`: follow a log on an SSH host across disconnects, rotations and failures.

The loop is: connect (fresh client) -> start the remote follower -> read frames until stop, end or
loss -> on loss say so at once ("reconnecting in n s, last data n s ago"), back off exponentially
with jitter (reset once a session has stayed healthy for a while), and resume from the byte offset
of the first line not yet delivered. Because the resume point is the end of the last *complete*
line, a line is never delivered twice nor skipped; the host checks the file's identity (inode,
first bytes) and the bytes before the offset to notice rotation, truncation or a rewrite.

Delivery is one path (`kvtui.sources.ssh.blocks`): blocks of complete lines plus notices, in
stream order. `run_blocks` hands them on as they are (a headless check folds each block with one
call); `run`, the `LineSource` form the TUI consumes, turns them into `SourceLine`s.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import json
import random
import shlex
import struct
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

import paramiko

from kvtui.core.text import inert
from kvtui.sources.base import Emit, SourceNotice
from kvtui.sources.clients import (
    Client,
    DockerLogs,
    EnvelopeReader,
    Instance,
    JournalLogs,
    KubectlLogs,
    client_note,
)
from kvtui.sources.lines import LineSplitter
from kvtui.sources.ssh.blocks import Cursor, Deliver, Delivered, LineBlock, as_items
from kvtui.sources.ssh.commands import MarkerGate, client_argv, dies_with_channel, launch_failure
from kvtui.sources.ssh.connect import Connection, Connector, SSHError
from kvtui.sources.ssh.frames import FrameReader, StreamError, zstd_available


@functools.cache
def boot() -> str:
    """The `python3 -S -c` program that runs the follower on the host: the module
    `kvtui.sources.ssh.remote_follower`'s own source (read as package data, so an installed
    wheel sends the same), compressed, as one line of base64: the user's login shell parses
    the command first, and csh-family shells cannot take a newline inside quotes. Run so, the
    module is `__main__`."""
    source = resources.files("kvtui.sources.ssh").joinpath("remote_follower.py").read_bytes()
    return ("import base64,zlib;exec(zlib.decompress(base64.b64decode('"
            + base64.b64encode(zlib.compress(source, 9)).decode() + "')))")


# The follower needs nothing but the standard library, so any python3 will run it; but a
# version manager's shim (pyenv's, asdf's: a shell script that works out which interpreter the
# user meant) costs more than the interpreter's own start (70 ms against 10 here, per start).
# So with the default `python3` a POSIX sh runs the first python3 on the host's PATH outside a
# `*/shims` directory that is Python 3.6 or later (one more start of 10 ms to ask it: an old
# system python or macOS's Xcode stub is passed over), and the shim only when there is no
# other. The user's login shell (any family) runs just `sh -c SCRIPT python3 ARGS...`: `sh`
# found on PATH, as a restricted shell (rbash) allows.
_PYTHON3 = ('set -f; IFS=:; for d in $PATH; do case $d in */shims|*/shims/) continue;; esac; '
            'p="$d/python3"; [ -f "$p" ] && [ -x "$p" ] && "$p" -S -c "import sys; '
            'sys.exit(sys.version_info < (3, 6))" 2>/dev/null && exec "$p" "$@"; done; '
            'exec python3 "$@"')
RECV_SIZE = 4 << 20
# The channel's window: what the host may send ahead of what was read. It bounds the received
# bytes this process buffers (a big log's host sends faster than the fold reads); 4 MiB of
# compressed lines per round trip is more than a fold takes even at 100 ms.
WINDOW = 4 << 20
BLOCK_LINES = 20000  # a block is handed on once it holds this many lines
QUIET = 2.0  # s a renamed log must stay unchanged before the follower moves to the new file
HEALTHY_AFTER = 30.0  # s of a working session after which the reconnect backoff starts over
GIVE_UP_AFTER = 30.0  # s a stop-at-end read (`--check`) waits for a lost host to come back
PRELUDE_BYTES = 256 << 10  # the start-up region read ahead (SGLang's is a few hundred lines)
PRELUDE_GAP = 4 << 20  # read ahead only when the stream is this far from it
PROBE_TIMEOUT = 10.0  # s a question to a log client on the host may take
MESSAGES_KEPT = 20  # the client's last words kept to explain its exit
# where the host's follower looks for logrotate's `olddir` (rotated files moved elsewhere):
# logrotate's own configuration (logrotate(8): /etc/logrotate.conf includes /etc/logrotate.d)
ROTATE_CONF = ("/etc/logrotate.conf", "/etc/logrotate.d")


CLIENT_KINDS = ("docker", "kubectl", "journal")


def visible(text: str) -> str:
    """`text` as it may be shown or written as JSON: a path's bytes that are not UTF-8 (kept as
    lone surrogates by surrogateescape, so the host gets the name back byte for byte) as
    `\\xNN`, never U+FFFD; any other lone surrogate (not encodable anywhere) as U+FFFD."""
    if not any("\ud800" <= c <= "\udfff" for c in text):
        return text
    return "".join(c if not "\ud800" <= c <= "\udfff" else
                   f"\\x{ord(c) - 0xdc00:02x}" if "\udc80" <= c <= "\udcff" else "\ufffd"
                   for c in text)


@dataclass
class Target:
    """What to follow: a file (exact offsets), a log client's output (docker, kubectl,
    journal: `kvtui.sources.clients`' recipes, run on the host) or a shell command's output."""

    kind: str  # "file" | "docker" | "kubectl" | "journal" | "cmd"
    value: str  # path, container, pod, unit or shell command
    python: str = "python3"  # interpreter for the file follower
    namespace: str | None = None  # kubectl only
    container: str | None = None  # kubectl only
    previous: bool = False  # kubectl only: the crashed instance before the current one

    def client(self, *, follow: bool = True, tail: int | None = None) -> Client | None:
        """The recipe for a client target (None for a file or a plain command)."""
        if self.kind == "docker":
            return DockerLogs(self.value, follow=follow, tail=tail)
        if self.kind == "kubectl":
            return KubectlLogs(self.value, self.namespace, self.container, self.previous,
                               follow=follow, tail=tail)
        if self.kind == "journal":
            return JournalLogs(self.value, follow=follow, tail=tail)
        return None

    @property
    def label(self) -> str:
        """For people: a name's bytes that are not UTF-8 as \\xNN (see `visible`)."""
        recipe = self.client()
        if recipe is not None:
            return visible(recipe.label)
        return visible({"file": "", "cmd": "cmd:"}[self.kind] + self.value)


@dataclass
class _Resume:
    ino: int | None = None
    dev: int | None = None
    head_len: int = 0
    head: str = ""
    cursor: Cursor | None = None
    chain: Any = None  # the host's state while it reads rotated files, handed back on resume
    mtime: int | None = None  # the file's mtime (host clock, ns) when the host started it
    done: Any = None  # the files the host had read (identities, first KiB), handed back
    line_no: int = 0
    started: bool = False  # history already requested once


class _Lost(Exception):
    """The stream ended for a reason worth a reconnect."""


class _Fatal(Exception):
    """The stream cannot work (e.g. no python3 on the host); no point retrying."""


class _CodecFailed(Exception):
    """The host's zstd failed in the middle of a burst: its frame cannot be completed, so the
    read goes on from the last whole line in a new session that does not use it."""


class _Heartbeat:
    """Sends a byte up the channel every `period` s, so the remote side can tell a live client
    from a connection that died without an EOF (it exits after `idle_exit` s of silence)."""

    def __init__(self, chan: paramiko.Channel, period: float) -> None:
        self._chan = chan
        self._period = period
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="kvtui-ssh-beat", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._done.wait(self._period):
            try:
                self._chan.send(b".")
            except TimeoutError:
                continue
            except Exception:
                return

    def stop(self) -> None:
        self._done.set()


def _clip(data: bytes, limit: int = 300) -> str:
    """Bytes from the host made printable: decoded, escapes and control characters made inert."""
    return inert(data.decode("utf-8", "replace").strip(), limit)


class RemoteFollower:
    """Follow `target` on the host behind `connector`; `run` implements `LineSource`."""

    def __init__(self, connector: Connector, target: Target, *, lines: int | None = None,
                 stop_at_end: bool = False, connection: Connection | None = None,
                 keepalive: float | None = None, backoff: tuple[float, float] = (1.0, 30.0),
                 compress: bool = True, rng: Callable[[], float] = random.random,
                 host_label: str | None = None, model_path: str | None = None,
                 on_checkpoint: Callable[[Connection, str], str | None] | None = None,
                 model_path_probe: Callable[[], str | None] | None = None,
                 healthy_after: float = HEALTHY_AFTER, give_up_after: float = GIVE_UP_AFTER,
                 quiet: float = QUIET, prelude_markers: tuple[str, ...] = (),
                 prelude_anchors: tuple[str, ...] = (), prelude_bytes: int = PRELUDE_BYTES,
                 prelude_gap: int = PRELUDE_GAP,
                 rotate_conf: tuple[str, ...] = ROTATE_CONF) -> None:
        self.connector = connector
        self.target = target
        self.lines = lines  # None: the whole log so far
        self.stop_at_end = stop_at_end
        self._given = connection  # first attempt uses it (shared with checkpoint inspection)
        self.keepalive = keepalive or float(connector.spec.server_alive_interval or 5)
        self.dead_after = 3 * self.keepalive  # like ServerAliveCountMax=3
        # the client's heartbeat to the remote side, and how long that side waits without one
        self.beat = min(self.keepalive, 2.0)
        self.idle_exit = 4 * self.beat + 2
        self.backoff = backoff
        self.healthy_after = healthy_after
        self.give_up_after = give_up_after
        self.quiet = quiet
        # read ahead (first session only): the host finds the last line holding one of these
        # strings (the consumer knows what starts a server) and sends `prelude_bytes` from
        # there first, when the stream would reach it only `prelude_gap` bytes or more later;
        # it searches the whole file only for the anchors (markers every start prints), if any
        self.prelude_markers = prelude_markers
        self.prelude_anchors = prelude_anchors
        self.prelude_bytes = prelude_bytes
        self.prelude_gap = prelude_gap
        self.compress = compress
        self.rotate_conf = rotate_conf
        self.rng = rng
        host = host_label or connector.spec.alias
        self.host = host
        self.name = f"{host}:{target.label}"
        self.state = "idle"
        self.reconnects = 0
        self.bytes_received = 0
        self.codec: str | None = None  # what the host's follower compresses with
        self.zstd_failed = False  # the host's zstd failed mid-burst: zlib from then on
        self._codec_restart = False  # this session only changes the codec of the one before
        # what the file held past the read position when the first session began (None: not
        # known, a command's output): how big the read of what is logged so far will be
        self.expected_bytes: int | None = None
        self.last_data = time.monotonic()
        self.last_delay: float | None = None  # the latest reconnect delay chosen (before jitter)
        self._r = _Resume()
        self._offsets = False  # per-line offsets in blocks (the LineSource form needs them)
        self.model_path = model_path  # from discovery, or what `model_path_probe` says
        self.on_checkpoint = on_checkpoint
        # the consumer knows what the log says; the follower only asks it for the model path
        self.model_path_probe = model_path_probe
        self._inspected: str | None = None
        self._session_since: float | None = None  # when the current session started delivering
        self.healthy = False  # the current session has worked for `healthy_after` s
        self._waiting = False  # the host said "missing" / "stale": say "live" when data is back
        self._resuming = False  # this session continues an earlier one
        self._banner_said = False
        self._pending: list[str] = []
        self._pending_offsets: list[int] = []
        self._pending_at = -1
        # a log client run on the host (the local source's recipe and envelope reader)
        self.client = target.client(follow=not stop_at_end, tail=lines)
        self.reader = None if self.client is None else EnvelopeReader(
            self.client.envelope, bare_is_message=self.client.merge_stderr)
        self._client_checked = False
        self._client_starts = 0  # sessions in which the client really started
        self._instance: Instance | None = None
        self._messages: list[str] = []

    # -- delivery ----------------------------------------------------------------------------

    def history(self) -> None:
        """A remote file streams everything itself (no local bytes to fold in bulk)."""
        return None

    def skip_to(self, offset: int, lines: int) -> None:
        raise NotImplementedError("a remote follower offers no history")

    def run(self, emit: Emit, stop: threading.Event) -> None:
        """`LineSource.run`: `SourceLine`s and `SourceNotice`s."""
        self._offsets = True
        self.run_blocks(lambda batch: emit(as_items(batch)), stop)

    def run_blocks(self, deliver: Deliver, stop: threading.Event) -> None:
        """Blocks of lines and notices until `stop` is set or the source ends."""
        attempt = 0
        reason = ""
        lost_at: float | None = None  # a stop-at-end read: when the host went away
        while not stop.is_set():
            self._notice(deliver, "connecting" if not self._r.started else "reconnecting",
                         f"connecting to {self.connector.spec.label}" if not self._r.started
                         else f"reconnecting ({reason}), last data "
                              f"{time.monotonic() - self.last_data:.0f} s ago")
            conn: Connection | None = None
            owned = True  # a lent connection is closed on loss, but left open when done
            finished = False
            self.healthy = False
            self._session_since = None
            try:
                if self._given is not None:
                    conn, owned, self._given = self._given, False, None
                else:
                    conn = self.connector.connect()
                    if self.connector.messages:
                        self._notice(deliver, "info", "; ".join(self.connector.messages))
                        self.connector.messages.clear()
                conn.start_pinger(self.keepalive)
                if self._stream(conn, deliver, stop) is None:
                    finished = True
                    return
                reason = "stream ended"
            except SSHError as exc:
                if exc.fatal:
                    self._notice(deliver, "error", str(exc))
                    return
                reason = str(exc)
            except _Fatal as exc:
                self._notice(deliver, "error", str(exc))
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
                self._notice(deliver, "error", reason)
                return
            if self.healthy:
                attempt = 0  # it worked for a good while: this drop is a new story
            if self.stop_at_end:
                now = time.monotonic()
                if lost_at is None or self._session_since is not None:
                    lost_at = now  # the last session got somewhere: the wait starts again
                if now - lost_at >= self.give_up_after:
                    self._notice(deliver, "error", self._give_up_message(reason))
                    return
            delay = min(self.backoff[1], self.backoff[0] * (2 ** attempt))
            self.last_delay = delay
            delay *= 0.5 + self.rng()  # jitter: many clients do not reconnect in lockstep
            if self.stop_at_end and lost_at is not None:
                delay = max(0.0, min(delay, lost_at + self.give_up_after - time.monotonic()))
            attempt += 1
            self.reconnects += 1
            self._wait_reconnect(deliver, stop, delay, reason)
        self._notice(deliver, "closed", "stopped")

    def _give_up_message(self, reason: str) -> str:
        where = ""
        cur = self._r.cursor
        if self.target.kind == "file" and cur is not None:
            where = f" at line {self._r.line_no}, byte {cur.consumed} of {self.target.label}"
        return (f"lost the connection to {self.connector.spec.label} mid-read{where} and it did "
                f"not come back within {self.give_up_after:g} s ({reason})")

    # -- helpers -----------------------------------------------------------------------------

    def _notice(self, deliver: Deliver, state: str, message: str = "") -> None:
        if state not in ("info", "checkpoint"):
            self.state = state
        deliver([SourceNotice(self.name, state, message)])

    def _wait_reconnect(self, deliver: Deliver, stop: threading.Event, delay: float,
                        reason: str) -> None:
        end = time.monotonic() + delay
        while not stop.is_set():
            left = end - time.monotonic()
            if left <= 0:
                return
            self._notice(deliver, "reconnecting",
                         f"reconnecting in {left:.0f} s, last data "
                         f"{time.monotonic() - self.last_data:.0f} s ago ({reason})")
            stop.wait(min(1.0, left))

    def _open_channel(self, conn: Connection, command: str) -> paramiko.Channel:
        chan = conn.transport.open_session(window_size=WINDOW, max_packet_size=32768,
                                           timeout=self.connector.timeout)
        chan.settimeout(0.5)
        # bytes: a path that is not UTF-8 (surrogateescape) goes to the host as its own bytes
        chan.exec_command(command.encode("utf-8", "surrogateescape"))
        return chan

    def _watchdog(self, conn: Connection, last_frame: float) -> None:
        if not conn.is_active():
            raise _Lost(conn.failure() or "connection closed")
        if conn.unanswered_for() > self.dead_after:
            raise _Lost(f"host silent for {conn.unanswered_for():.0f} s (keepalive unanswered)")
        if time.monotonic() - last_frame > self.dead_after + self.keepalive:
            raise _Lost(f"no data or heartbeat for {time.monotonic() - last_frame:.0f} s")

    def _stream(self, conn: Connection, deliver: Deliver, stop: threading.Event) -> bool | None:
        if self.target.kind != "file":
            return self._stream_command(conn, deliver, stop)
        while True:
            try:
                return self._stream_file(conn, deliver, stop)
            except _CodecFailed as exc:  # on the same connection, at once, without zstd
                if self.zstd_failed:  # zstd was not offered: no honest host says this
                    raise _Fatal(f"the host's follower failed again: {exc}") from None
                self.zstd_failed = self._codec_restart = True
                cur = self._r.cursor
                where = f" from byte {cur.consumed:,}" if cur is not None else ""
                self._notice(deliver, "info", f"{exc}; reading on{where} with zlib")

    def _session_progress(self) -> None:
        now = time.monotonic()
        if self._session_since is None:
            self._session_since = now
        elif now - self._session_since >= self.healthy_after:
            self.healthy = True

    def _maybe_inspect(self, conn: Connection, deliver: Deliver) -> None:
        """Once live, read the checkpoint of the model the log names, on this connection."""
        hook = self.on_checkpoint
        if hook is None:
            return
        if self.model_path_probe is not None:
            with contextlib.suppress(Exception):
                # what the log says wins over what discovery guessed from the command line
                self.model_path = self.model_path_probe() or self.model_path
        path = self.model_path
        if not path or path == self._inspected:
            return
        self._inspected = path
        try:
            message = hook(conn, path)
        except Exception as exc:  # best effort: never let inspection kill the stream
            message = f"checkpoint inspection failed: {exc}"
        if message:
            # reported as "live" (it is): a state of its own would replace "live" in a header
            self._notice(deliver, "live", f"following {self.target.label}; checkpoint: {message}")

    # -- blocks ------------------------------------------------------------------------------

    def _take(self, at: int, texts: list[str], offs: list[int] | None,
              out: list[Delivered]) -> None:
        """Lines of the current file, appended to the pending block (handed on when full)."""
        if not texts:
            return
        if not self._pending:
            self._pending_at = at
        self._pending.extend(texts)
        if offs is not None:
            self._pending_offsets.extend(offs)
        if len(self._pending) >= BLOCK_LINES:
            self._close_block(out)

    def _take_raw(self, at: int, got: bytes | list[str], out: list[Delivered]) -> None:
        """Lines as `Cursor.feed_raw` gives them: their bytes make a block of their own (a
        decoded piece's worth: at most `frames.PIECE`, 4 MiB)."""
        if isinstance(got, list):
            self._take(at, got, None, out)
        elif got:
            self._close_block(out)
            block = LineBlock(self.name, self._r.line_no + 1, at, raw=got)
            self._r.line_no += block.count
            out.append(block)

    def _close_block(self, out: list[Delivered]) -> None:
        if not self._pending:
            return
        texts, self._pending = self._pending, []
        offs = self._pending_offsets if self._offsets else None
        self._pending_offsets = []
        out.append(LineBlock(self.name, self._r.line_no + 1, self._pending_at, texts, offs))
        self._r.line_no += len(texts)

    def _flush_cursor(self, out: list[Delivered]) -> None:
        """The current file has ended: its unterminated last line counts."""
        cur = self._r.cursor
        if cur is not None:
            self._take(*cur.flush(), out)
        self._close_block(out)

    # -- file: framed protocol ---------------------------------------------------------------

    def _file_command(self) -> str:
        r = self._r
        opts: dict[str, Any] = {
            "offset": -1, "lines": -1 if self.lines is None else self.lines,
            "ino": None, "dev": None, "head_len": 0, "head": "", "win_len": 0, "win": "",
            "stop_at_end": self.stop_at_end, "hb": self.keepalive, "idle_exit": self.idle_exit,
            "quiet": self.quiet, "codecs": self._codecs(),
            "rotate_conf": list(self.rotate_conf)}
        if self.prelude_markers and not r.started:
            opts["prelude"] = {"markers": list(self.prelude_markers),
                               "anchors": list(self.prelude_anchors),
                               "bytes": self.prelude_bytes, "min_gap": self.prelude_gap}
        if r.cursor is not None and r.ino is not None:
            win_len, win = r.cursor.resume_window()
            opts.update(offset=r.cursor.consumed, ino=r.ino, dev=r.dev, head_len=r.head_len,
                        head=r.head, win_len=win_len, win=win, chain=r.chain, mtime=r.mtime,
                        done=r.done)
        args = ["kvtui-follow", self.target.value, json.dumps(opts, separators=(",", ":"))]
        python = ["sh", "-c", _PYTHON3, "python3"] if self.target.python == "python3" else [
            self.target.python]
        return " ".join(shlex.quote(a) for a in [*python, "-S", "-c", boot(), *args])

    def _codecs(self) -> list[str]:
        """What the follower may use, best first: zstd-1 (a third smaller than zlib-1 on
        SGLang logs and several times faster to decode) when `zstandard` is here."""
        if not self.compress:
            return ["none"]
        return ["zstd", "zlib"] if zstd_available() and not self.zstd_failed else ["zlib"]

    def _stream_file(self, conn: Connection, deliver: Deliver,
                     stop: threading.Event) -> bool | None:
        chan = self._open_channel(conn, self._file_command())
        beat = _Heartbeat(chan, self.beat)
        reader = FrameReader()
        err = bytearray()
        last_frame = time.monotonic()
        self._resuming = self._r.cursor is not None  # the first H frame says where we are
        self._banner_said = False
        try:
            while not stop.is_set():
                while chan.recv_stderr_ready():
                    err += chan.recv_stderr(65536)
                    del err[:-65536]
                try:
                    chunk = chan.recv(RECV_SIZE)
                except TimeoutError:
                    self._watchdog(conn, last_frame)
                    continue
                if not chunk:
                    why = conn.failure()
                    if why is not None:
                        raise _Lost(why)
                    while chan.recv_stderr_ready():
                        err += chan.recv_stderr(65536)
                    self._stream_ended(reader, bytes(err[-65536:]))
                    return None
                last_frame = time.monotonic()
                self.bytes_received += len(chunk)
                try:
                    done = self._frames(reader.feed(chunk), deliver, reader)
                except (StreamError, zlib.error) as exc:
                    raise _Fatal(inert(str(exc), 400)) from None
                if done:
                    return None
                if self.state == "live":
                    self._session_progress()
                    self._maybe_inspect(conn, deliver)
                self._watchdog(conn, last_frame)
            return None
        finally:
            beat.stop()
            with contextlib.suppress(Exception):
                chan.close()

    def _frames(self, frames: Any, deliver: Deliver, reader: FrameReader) -> bool:
        """The frames of one received chunk, handed on as they come; True at the read's end."""
        out: list[Delivered] = []
        for kind, payload in frames:
            if reader.banner and not self._banner_said:
                self._banner_said = True
                out.append(SourceNotice(self.name, "info", "the login shell printed this on "
                                        "stdout before the follower started (skipped): "
                                        f"{_clip(reader.banner)!r}"))
            if kind == b"D":
                cur = self._r.cursor
                if cur is not None:
                    if self._offsets:
                        self._take(*cur.feed(payload), out)
                    else:
                        self._take_raw(*cur.feed_raw(payload), out)
                    self.last_data = time.monotonic()
                    # handed on per frame: the first (small) one holds the start-up, and its
                    # consumer can fold and show it before the next arrives
                    self._close_block(out)
                    if out:
                        deliver(out)
                        out = []
                continue
            self._close_block(out)
            try:
                if self._control(kind, payload, out):
                    deliver(out)
                    return True
            except _CodecFailed:
                if out:  # every whole line before the failure, handed on before the new session
                    deliver(out)
                raise
        self._close_block(out)
        if out:
            deliver(out)
        return False

    def _stream_ended(self, reader: FrameReader, err: bytes) -> None:
        """The channel closed without an end frame: say why as exactly as we can."""
        msg = _clip(err.splitlines()[-1] if err.strip() else b"")
        if not reader.synced:
            if ("not found" in msg or "No such file" in msg) and "python" in msg.lower():
                raise _Fatal(f"{self.target.python} is not available on the host: {msg}")
            said = f"stdout {_clip(reader.banner or reader.pending_text())!r}" \
                if reader.banner or reader.pending_text() else "nothing on stdout"
            raise _Lost(f"the remote follower did not start: the host sent {said}"
                        + (f" and on stderr: {msg}" if msg else ""))
        raise _Lost(msg or "remote follower ended")

    def _control(self, kind: bytes, payload: bytes, out: list[Delivered]) -> bool:
        """One control frame; True when the read is complete (stop-at-end)."""
        if kind == b"H":
            self._hello(json.loads(payload), out)
        elif kind == b"E":
            if self.stop_at_end:
                self._flush_cursor(out)
                out.append(SourceNotice(self.name, "live", f"following {self.target.label}"))
                self.state = "live"
                return True
            self.state = "live"
            out.append(SourceNotice(self.name, "live", f"following {self.target.label}"))
        elif kind == b"V":
            self.codec = str(json.loads(payload).get("codec", "?"))
        elif kind == b"N":
            self._host_note(json.loads(payload), out)
        elif kind == b"C":
            self._r.chain = json.loads(payload)
        elif kind == b"P":
            out.append(self._prelude(payload))
        return False

    def _prelude(self, payload: bytes) -> LineBlock:
        """The read-ahead start-up region as a block of its own (bounded like any frame)."""
        offset, line_no = struct.unpack_from(">QQ", payload)
        raw = zlib.decompressobj().decompress(payload[16:], self.prelude_bytes + 1)
        cursor = Cursor(offset, offsets=self._offsets)
        _, texts, offs = cursor.feed(raw[:self.prelude_bytes])
        return LineBlock(self.name, line_no, offset, texts, offs, prelude=True)

    def _hello(self, h: dict[str, Any], out: list[Delivered]) -> None:
        r = self._r
        resumed, self._resuming = self._resuming, False
        same_read, self._codec_restart = self._codec_restart, False
        why = h.get("why")
        old = r.cursor
        if why == "start":
            keep = old is not None and h["offset"] == old.consumed and h["offset"] > 0
            r.cursor = Cursor(h["offset"], offsets=self._offsets,
                              window=old.window if keep and old is not None else b"")
        elif why == "next":
            self._flush_cursor(out)
            r.cursor = Cursor(h["offset"], offsets=self._offsets)
        elif r.cursor is None:  # "copy" / "head" keep the byte stream going
            r.cursor = Cursor(h["offset"], offsets=self._offsets)
        if why != "head":
            r.ino, r.dev = h["ino"], h["dev"]
            r.chain = h.get("chain")
            r.mtime, r.done = h.get("mtime"), h.get("done")
        r.head_len, r.head = h["head_len"], h["head"]
        self._session_progress()
        if not r.started:
            r.started = True
            if why == "start":
                self.expected_bytes = max(0, int(h.get("size", 0)) - int(h["offset"]))
            self.state = "loading"
            out.append(SourceNotice(self.name, "loading", f"reading {self.target.label}"))
        elif resumed and why == "start" and same_read:
            pass  # the read goes on where it was (loading, or live), only the codec changed
        elif resumed and why == "start":
            self.state = "live"
            at = r.cursor.consumed if r.cursor is not None else 0
            out.append(SourceNotice(self.name, "live", f"reconnected; resumed at byte {at}"))
        elif self._waiting and why in ("start", "next"):
            self.state = "live"
            out.append(SourceNotice(self.name, "live", f"following {self.target.label} again"))
        self._waiting = False

    def _host_note(self, note: dict[str, Any], out: list[Delivered]) -> None:
        state = str(note.get("state", "info"))
        text = str(note.get("message", ""))
        about = note.get("path")
        if isinstance(about, str) and about and text.startswith(about):
            # the host's words name the path; which host it is on is said here
            text = f"{about} (on {self.host}){text[len(about):]}"
        message = inert(visible(text), 600)
        if state == "error":
            raise _Fatal(message or "remote follower failed")
        if state == "codec":
            raise _CodecFailed(message or "the host's compressor failed")
        was_live = self.state == "live"
        if state in ("missing", "stale"):
            self._waiting = True
        if state not in ("info", "checkpoint"):
            self.state = state
        out.append(SourceNotice(self.name, state, message))
        if state in ("rotated", "truncated") and was_live:
            # the event is said inline; the connection itself is still live
            self.state = "live"
            out.append(SourceNotice(self.name, "live", f"following {self.target.label}"))

    # -- docker / kubectl / journal / cmd: plain output streams ------------------------------

    def _stream_command(self, conn: Connection, deliver: Deliver,
                        stop: threading.Event) -> bool | None:
        r = self._r
        client = self.client
        if client is not None:
            self._before_client(conn, client, deliver)
            argv = client_argv(client, self.reader.resume if self.reader else None)
        else:
            if r.started:
                self._notice(deliver, "info",
                             "command restarted after reconnect; output may repeat")
            argv = ["sh", "-c", self.target.value]
        chan = self._open_channel(conn, dies_with_channel(argv, self.idle_exit))
        beat = _Heartbeat(chan, self.beat)
        out_lines, err_lines = LineSplitter(), LineSplitter()
        gates = MarkerGate(), MarkerGate()
        self._messages = []
        live = False
        try:
            while not stop.is_set():
                got = False
                while chan.recv_stderr_ready():
                    self._client_words(deliver, gates[1].pass_lines(
                        err_lines.feed_texts(chan.recv_stderr(65536))))
                    got = True
                try:
                    chunk = chan.recv(RECV_SIZE)
                except TimeoutError:
                    chunk = None
                texts: list[str] = []
                if chunk:
                    got = True
                    texts = gates[0].pass_lines(out_lines.feed_texts(chunk))
                if gates[0].open and not live:
                    live = r.started = True
                    self._client_starts += 1
                    self._notice(deliver, "live", f"following {self.target.label}")
                if got:
                    self.last_data = time.monotonic()
                    self._session_progress()
                self._deliver_command_lines(deliver, texts)
                if not texts and live:
                    self._maybe_inspect(conn, deliver)  # when the output pauses
                if chunk == b"":
                    self._command_ended(conn, chan, deliver, (out_lines, err_lines), gates)
                    return None
                if not got:
                    # command output has no heartbeat, so only the keepalive decides liveness
                    if not conn.is_active():
                        raise _Lost(conn.failure() or "connection closed")
                    if conn.unanswered_for() > self.dead_after:
                        raise _Lost(f"host silent for {conn.unanswered_for():.0f} s")
            return None
        finally:
            beat.stop()
            with contextlib.suppress(Exception):
                chan.close()

    def _command_ended(self, conn: Connection, chan: paramiko.Channel, deliver: Deliver,
                       splitters: tuple[LineSplitter, LineSplitter],
                       gates: tuple[MarkerGate, MarkerGate]) -> None:
        out_lines, err_lines = splitters
        while chan.recv_stderr_ready():
            self._client_words(deliver, gates[1].pass_lines(
                err_lines.feed_texts(chan.recv_stderr(65536))))
        self._deliver_command_lines(deliver, gates[0].pass_lines(
            [t for _, t in out_lines.flush()]))
        self._client_words(deliver, gates[1].pass_lines([t for _, t in err_lines.flush()]))
        end = time.monotonic() + 2
        while not chan.exit_status_ready() and time.monotonic() < end:
            time.sleep(0.02)
        rc = chan.recv_exit_status() if chan.exit_status_ready() else None
        if not conn.is_active():
            raise _Lost(conn.failure() or "connection closed")
        if not gates[0].open:
            got = " | ".join(_clip(t.encode(), 120) for t in gates[0].dropped + gates[1].dropped)
            raise _Lost(f"the command did not start (exit status {rc}); the host sent: "
                        f"{got or 'nothing'}")
        client = self.client
        if client is None:
            self._notice(deliver, "closed" if rc == 0 else "error",
                         f"{self.target.label} ended (exit status {rc})")
            return None
        if rc == 0 and not client.follow:
            self._notice(deliver, "at_end", "end of the log (the client is done)")
            return None
        self._note_instance(conn, client, deliver)  # a stopped container says how it ended
        failure = launch_failure(client, rc, self.connector.spec.label) or (
            client.failure(rc, self._messages) if rc else None)
        if failure is not None and failure.fatal:
            raise _Fatal(failure.message)
        # a client that ended or died is started again from the last timestamp it gave
        raise _Lost(client.ended() if failure is None else failure.message)

    def _deliver_command_lines(self, deliver: Deliver, texts: list[str]) -> None:
        """Output lines as blocks; a client's through the local source's reader: envelope
        stripped, a resume's repeats dropped, its markers and own words made notices, each
        where it came between the lines."""
        client, reader = self.client, self.reader
        if client is None or reader is None:
            self._deliver_block(deliver, texts)
            return
        lines: list[str] = []
        for text in texts:
            got = reader.feed(text)
            if got is None:
                continue
            what, body = got
            if what == "line":
                lines.append(body)
                continue
            self._deliver_block(deliver, lines)
            lines = []
            if what == "marker":
                said = _clip(body.strip(" -").encode())
                self._notice(deliver, "info", f"{client.program}: {said}")
            else:
                self._client_words(deliver, [body])
        self._deliver_block(deliver, lines)

    def _deliver_block(self, deliver: Deliver, texts: list[str]) -> None:
        if texts:
            block = LineBlock(self.name, self._r.line_no + 1, -1, texts,
                              [-1] * len(texts) if self._offsets else None)
            self._r.line_no += len(texts)
            deliver([block])

    # -- log clients (docker, kubectl, journalctl) on the host -------------------------------

    def _client_words(self, deliver: Deliver, texts: list[str]) -> None:
        """What the command wrote about itself (its stderr): kept to explain its exit, shown
        as it comes; a plain command's stderr is its output too."""
        texts = [t for t in texts if t.strip()]
        if not texts:
            return
        if self.client is None:
            self._deliver_command_lines(deliver, texts)
            return
        self._messages.extend(texts)
        del self._messages[:-MESSAGES_KEPT]
        for text in texts[-3:]:
            self._notice(deliver, "info", _clip(client_note(self.client, text).encode(), 600))
        if self.state == "live":
            self._notice(deliver, "live", f"following {self.target.label}")

    def _before_client(self, conn: Connection, client: Client, deliver: Deliver) -> None:
        """Before the first start: the client's own check (systemd knows a unit journalctl
        would follow in silence) and the instance it reads; on a restart: a new instance is
        a new server start, said before its lines."""
        if not self._client_checked:
            self._client_checked = True
            argv = client.check_argv()
            answer = self._ask(conn, argv) if argv else None
            refused = client.checked(*answer) if answer is not None else None
            if refused is not None:
                raise _Fatal(refused.message)
            if client.follow:
                self._instance = self._probe(conn, client)
        elif self._client_starts:
            self._note_instance(conn, client, deliver)
        if self._client_starts and self.reader is not None:
            self.reader.restart()

    def _ask(self, conn: Connection, argv: list[str]) -> tuple[int, str] | None:
        """One question to the host (the recipe's probe or check): exit status and stdout,
        or None when it could not be asked or took longer than PROBE_TIMEOUT."""
        try:
            chan = self._open_channel(conn, dies_with_channel(argv))
        except (paramiko.SSHException, OSError, EOFError):
            return None
        out = LineSplitter()
        gate = MarkerGate()
        texts: list[str] = []
        end = time.monotonic() + PROBE_TIMEOUT
        try:
            while time.monotonic() < end:
                while chan.recv_stderr_ready():
                    chan.recv_stderr(65536)
                try:
                    chunk = chan.recv(65536)
                except TimeoutError:
                    continue
                if not chunk:
                    break
                texts += gate.pass_lines(out.feed_texts(chunk))
            else:
                return None
            texts += gate.pass_lines([t for _, t in out.flush()])
            deadline = time.monotonic() + 2
            while not chan.exit_status_ready() and time.monotonic() < deadline:
                time.sleep(0.02)
            if not gate.open or not chan.exit_status_ready():
                return None
            return chan.recv_exit_status(), "\n".join(texts)
        finally:
            with contextlib.suppress(Exception):
                chan.close()

    def _probe(self, conn: Connection, client: Client) -> Instance | None:
        argv = client.probe_argv()
        answer = self._ask(conn, argv) if argv else None
        if answer is None or answer[0] != 0:
            return None
        return client.instance(answer[1])

    def _note_instance(self, conn: Connection, client: Client, deliver: Deliver) -> None:
        """A container started again is a new server start: say so before its lines."""
        with contextlib.suppress(paramiko.SSHException, OSError, EOFError):
            now = self._probe(conn, client)
            if now is None:
                return
            before, self._instance = self._instance, now
            if before is not None and before.key != now.key:
                end = now.previous_end or before.ended
                how = f"; the previous instance ended: {end}" if end else ""
                count = f" (restart {now.restarts})" if now.restarts is not None else ""
                self._notice(deliver, "restarted", f"container started again{count}{how}; "
                             "what follows is a new server start")
