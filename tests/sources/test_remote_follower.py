"""The host's follower (`kvtui.sources.ssh.remote_follower`) run here, without SSH: the exact
argv that `RemoteFollower` has the host's login shell run (`python3 -S -c BOOT kvtui-follow PATH
OPTIONS`, the options as the client builds them), against files in a temporary folder, its
stdout read with kvtui's own `FrameReader`.

A moment in which the host's follower does not run (a busy host) is made with SIGSTOP: the
files are rotated, truncated or compressed meanwhile, and SIGCONT lets it find what happened,
so each case has one outcome however the machine schedules the two processes. The tests under
tests/ssh/ run the same program through a real sshd.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import glob
import gzip
import json
import os
import select
import shlex
import shutil
import signal
import subprocess
import sys
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kvtui.sources.ssh import remote_follower
from kvtui.sources.ssh.config import HostSpec
from kvtui.sources.ssh.connect import Connector, Identities
from kvtui.sources.ssh.follow import RemoteFollower, Target, boot
from kvtui.sources.ssh.frames import FrameReader

ROOT = Path(__file__).resolve().parents[2]
MODULE = Path(remote_follower.__file__)
GUARD = 60.0  # s: turns a hang into a failure; no assertion is about time

Frame = tuple[bytes, bytes]


def _follower(path: Path, python: str = sys.executable, **kw: Any) -> RemoteFollower:
    connector = Connector(HostSpec(alias="host", hostname="127.0.0.1"),
                          Identities(use_agent=False))
    kw.setdefault("keepalive", 1.0)
    return RemoteFollower(connector, Target("file", str(path), python=python), **kw)


def _argv(path: Path, python: str = sys.executable, **kw: Any) -> list[str]:
    """The words of the command the client sends (what the login shell's `-c` would run)."""
    return shlex.split(_follower(path, python, **kw)._file_command())


class Host:
    """The follower running as a child, its frames read as they come."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.reader = FrameReader()
        self.raw = b""
        self.frames: list[Frame] = []
        self.eof = False

    def _read(self, guard_end: float) -> None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        ready, _, _ = select.select([fd], [], [], max(0.0, guard_end - time.monotonic()))
        if not ready:
            raise AssertionError(f"the follower hung; frames so far: {self.frames!r:.2000}")
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            self.eof = True
            return
        self.raw += chunk
        self.frames += list(self.reader.feed(chunk))

    def until(self, done: Callable[[Host], bool]) -> None:
        """Read frames until `done(self)` (the follower may send more meanwhile)."""
        end = time.monotonic() + GUARD
        while not done(self):
            if self.eof:
                raise AssertionError(f"the follower ended first: {self.frames!r:.2000}, "
                                     f"stderr {self.stderr()!r}")
            self._read(end)

    def to_eof(self) -> int:
        """Everything up to its exit (stdin kept open: EOF there would end it), its status."""
        end = time.monotonic() + GUARD
        while not self.eof:
            self._read(end)
        return self.proc.wait(GUARD)

    def data(self) -> bytes:
        return b"".join(p for k, p in self.frames if k == b"D")

    def kinds(self) -> list[bytes]:
        return [k for k, _ in self.frames]

    def notes(self, state: str) -> list[str]:
        return [json.loads(p)["message"] for k, p in self.frames
                if k == b"N" and json.loads(p)["state"] == state]

    def stderr(self) -> bytes:
        return self.proc.stderr.read() if self.eof and self.proc.stderr is not None else b""

    @contextlib.contextmanager
    def stopped(self) -> Iterator[None]:
        """The follower frozen (a busy host) while the body changes its files."""
        os.kill(self.proc.pid, signal.SIGSTOP)
        try:
            yield
        finally:
            os.kill(self.proc.pid, signal.SIGCONT)

    def close(self) -> None:
        """The client goes: stdin EOF ends the follower, with status 0."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.to_eof()
        assert self.proc.returncode == 0, self.stderr()
        assert self.stderr() == b""
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()


@contextlib.contextmanager
def hosting(argv: list[str]) -> Iterator[Host]:
    host = Host(argv)
    try:
        yield host
        host.close()
    finally:
        if host.proc.poll() is None:
            host.proc.kill()
            host.proc.wait()


def streams(frames: list[Frame]) -> list[tuple[dict[str, Any], bytes]]:
    """The byte streams in order: each H that starts one (not "head", which only says the
    file's first bytes grew) with the data read after it."""
    out: list[tuple[dict[str, Any], bytes]] = []
    for kind, payload in frames:
        if kind == b"H" and json.loads(payload)["why"] != "head":
            out.append((json.loads(payload), b""))
        elif kind == b"D":
            assert out, "data before any H frame"
            out[-1] = (out[-1][0], out[-1][1] + payload)
    return out


def lines(prefix: str, n: int, start: int = 1) -> bytes:
    return b"".join(b"%s%d some log text\n" % (prefix.encode(), i)
                    for i in range(start, start + n))


def _live(host: Host, log: Path) -> None:
    """Wait until the follower has sent all of `log` and said it caught up (E)."""
    want = log.read_bytes()
    host.until(lambda h: b"E" in h.kinds() and h.data() == want)


# -- what travels -------------------------------------------------------------------------------


def test_the_wire_carries_the_module_source_exactly(tmp_path: Path) -> None:
    """The `-c` program is the module file itself, compressed: what ruff, mypy and these tests
    check is what the host runs. One line (a csh-family login shell takes no newline inside
    quotes), and it is the program of the command the client sends."""
    program = boot()
    assert "\n" not in program
    encoded = program.split("b64decode('", 1)[1].split("'", 1)[0]
    assert zlib.decompress(base64.b64decode(encoded)) == MODULE.read_bytes()
    argv = _argv(tmp_path / "server.log")
    at = argv.index("-c")
    assert argv[at - 1:at + 3] == ["-S", "-c", program, "kvtui-follow"]
    assert argv[at + 3] == str(tmp_path / "server.log")


def test_the_module_parses_as_python_3_6() -> None:
    """The host may have Python 3.6: no syntax newer than that (positional-only parameters,
    the walrus, parenthesised context managers, match, ...). Best effort: `feature_version`
    refuses most newer syntax, not all; the test under an old interpreter below is the proof
    where one is installed."""
    ast.parse(MODULE.read_text(), feature_version=(3, 6))


def test_ruff_checks_the_module_as_an_old_python() -> None:
    """The project's ruff settings take the module as py37 (the oldest target ruff has), so
    its pyupgrade rules propose no syntax the host cannot run (here: `typing.List` is what
    3.6 has, `list[int]` is not); and it passes them."""

    def upgrades(name: str) -> str:
        return subprocess.run(
            [sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "UP",
             "--output-format", "concise", "--stdin-filename", name, "-"],
            input="from typing import List\n\nx = []  # type: List[int]\nprint(x)\n",
            cwd=ROOT, capture_output=True, text=True, timeout=GUARD).stdout

    assert "UP035" in upgrades("kvtui/sources/ssh/follow.py")  # the rest of kvtui: 3.11
    assert "UP035" not in upgrades(str(MODULE.relative_to(ROOT)))
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", str(MODULE)],
                          cwd=ROOT, capture_output=True, text=True, timeout=GUARD)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_importing_the_module_runs_nothing() -> None:
    """kvtui imports it (MAGIC): no argv read, no signal disposition changed, no output."""
    proc = subprocess.run([sys.executable, "-S", "-c", "import signal, sys; "
                           f"sys.path.insert(0, {str(MODULE.parent)!r}); "
                           "import remote_follower; "
                           "print(signal.getsignal(signal.SIGPIPE) == signal.SIG_IGN)"],
                          capture_output=True, text=True, timeout=GUARD)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "True\n", "")


# -- a read to the end --------------------------------------------------------------------------


def _snapshot(log: Path, python: str = sys.executable, **kw: Any) -> Host:
    """A stop-at-end read of `log` to the follower's exit."""
    host = Host(_argv(log, python, stop_at_end=True, **kw))
    try:
        assert host.to_eof() == 0, host.stderr()
        assert host.stderr() == b""
    finally:
        if host.proc.poll() is None:
            host.proc.kill()
        host.proc.wait()
        assert host.proc.stdin is not None
        host.proc.stdin.close()
    return host


def _awkward_bytes(size: int) -> bytes:
    """Log-like lines with bytes that are not UTF-8, CRs, NULs; no newline at the end."""
    import random

    rng = random.Random(11)
    out = bytearray()
    i = 0
    while len(out) < size:
        out += b"[TP%d] line %d \xff\xfe caf\xc3\xa9 \r %s\x00\n" % (
            i % 8, i, b"x" * rng.randint(0, 400))
        i += 1
    return bytes(out[:size])


@pytest.mark.parametrize("compress", [True, False])
def test_a_read_to_the_end_sends_every_byte(tmp_path: Path, compress: bool) -> None:
    """MAGIC, then V (the protocol version and the codec), H (the file from offset 0), the
    bytes exactly (5 MiB: the first 256 KiB chunk, then a backlog, through the zstd binary
    where this machine has it), E, and the follower's exit."""
    log = tmp_path / "server.log"
    content = _awkward_bytes(5 << 20)
    log.write_bytes(content)
    host = _snapshot(log, compress=compress)
    assert host.raw.startswith(remote_follower.MAGIC)
    assert host.kinds()[0] == b"V"
    codec = "none" if not compress else "zstd+zlib" if shutil.which("zstd") else "zlib"
    assert json.loads(host.frames[0][1]) == {"version": 2, "codec": codec}
    assert host.kinds()[1] == b"H"
    h = json.loads(host.frames[1][1])
    assert (h["why"], h["offset"], h["size"], h["name"]) == ("start", 0, len(content), str(log))
    assert (h["ino"], h["dev"]) == (log.stat().st_ino, log.stat().st_dev)
    assert host.data() == content
    assert host.kinds()[-1] == b"E" and host.kinds().count(b"E") == 1
    assert not host.notes("error")


def test_lines_n_starts_at_the_nth_last_line(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(lines("a", 10))
    host = _snapshot(log, lines=3)
    assert host.data() == lines("a", 3, start=8)
    assert streams(host.frames)[0][0]["offset"] == len(lines("a", 7))


def test_the_read_ahead_frame_follows_the_first_data_frame(tmp_path: Path) -> None:
    """P: the start-up region of the last server start (the last line holding an anchor,
    moved back to the first marker line of that start), sent right after the first data
    frame when the stream would reach it only later: its offset, its line number, and its
    complete lines, zlib-compressed."""
    log = tmp_path / "server.log"
    early = b"server_args=ServerArgs(first start)\n" + lines("d", 20000)
    start = b"server_args=ServerArgs(second start)\n" + lines("s", 5) + \
        b"Load weight end. type=X\n" + lines("t", 5)
    content = early + start + lines("e", 20000)
    log.write_bytes(content)
    prelude_bytes = 600
    host = _snapshot(log, prelude_markers=("server_args=", "Load weight end."),
                     prelude_anchors=("Load weight end.",), prelude_bytes=prelude_bytes,
                     prelude_gap=64 << 10)
    kinds = host.kinds()
    assert kinds.count(b"P") == 1
    assert kinds.index(b"P") == kinds.index(b"D") + 1
    payload = host.frames[kinds.index(b"P")][1]
    offset, line_no = int.from_bytes(payload[:8], "big"), int.from_bytes(payload[8:16], "big")
    assert offset == len(early)
    assert line_no == early.count(b"\n") + 1
    region = content[offset:offset + prelude_bytes]
    assert zlib.decompress(payload[16:]) == region[:region.rfind(b"\n") + 1]
    assert host.data() == content  # the stream itself is whole


def test_no_read_ahead_when_the_stream_gets_there_soon(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(lines("d", 100) + b"Load weight end.\n" + lines("e", 100))
    host = _snapshot(log, prelude_markers=("Load weight end.",), prelude_gap=64 << 10)
    assert b"P" not in host.kinds()


def test_anything_but_a_regular_file_is_refused(tmp_path: Path) -> None:
    """A FIFO would block `open` forever: refused with an N error and exit status 3."""
    fifo = tmp_path / "server.log"
    os.mkfifo(fifo)
    host = Host(_argv(fifo, stop_at_end=True))
    try:
        assert host.to_eof() == 3
    finally:
        assert host.proc.stdin is not None
        host.proc.stdin.close()
    assert host.kinds() == [b"V", b"N"]
    assert "is a FIFO (named pipe), not a regular file" in host.notes("error")[0]


# -- following ----------------------------------------------------------------------------------


def _follow(log: Path, **kw: Any) -> contextlib.AbstractContextManager[Host]:
    kw.setdefault("quiet", 0.2)
    return hosting(_argv(log, **kw))


def test_a_rename_rotation_is_followed_in_order(tmp_path: Path) -> None:
    """Lines appended before the rename and after it (the writer still has the old file open)
    are read from the renamed file, then the new file from its start: nothing lost, nothing
    twice."""
    log = tmp_path / "server.log"
    log.write_bytes(lines("a", 3))
    with _follow(log) as host:
        _live(host, log)
        with host.stopped():
            with log.open("ab") as f:
                f.write(lines("a", 2, start=4))
                os.rename(log, tmp_path / "server.log.1")
                f.write(lines("a", 2, start=6))  # a late write to the renamed file
            log.write_bytes(lines("b", 2))
        host.until(lambda h: h.data().endswith(lines("b", 2)))
        with log.open("ab") as f:
            f.write(lines("b", 1, start=3))
        host.until(lambda h: h.data().endswith(lines("b", 3)))
    got = streams(host.frames)
    assert [(h["why"], h["offset"], h["name"]) for h, _ in got] == [
        ("start", 0, str(log)), ("next", 0, str(log))]
    assert [data for _, data in got] == [lines("a", 7), lines("b", 3)]
    assert host.notes("rotated") == [f"{log} was rotated (now server.log.1); read it to its "
                                     "end; now following the new file"]


def test_two_rotations_while_away_are_read_oldest_first(tmp_path: Path) -> None:
    """The file read was rotated twice (server.log.2 now), the one between is server.log.1:
    the old file to its end, then server.log.1, then the new file."""
    log = tmp_path / "server.log"
    log.write_bytes(lines("a", 3))
    with _follow(log) as host:
        _live(host, log)
        with host.stopped():
            os.rename(log, tmp_path / "server.log.1")
            log.write_bytes(lines("b", 4))
            os.rename(tmp_path / "server.log.1", tmp_path / "server.log.2")
            os.rename(log, tmp_path / "server.log.1")
            log.write_bytes(lines("c", 2))
        host.until(lambda h: h.data().endswith(lines("c", 2)))
    got = streams(host.frames)
    assert [(h["why"], h["name"]) for h, _ in got] == [
        ("start", str(log)), ("next", str(tmp_path / "server.log.1")), ("next", str(log))]
    assert [data for _, data in got] == [lines("a", 3), lines("b", 4), lines("c", 2)]
    assert host.notes("rotated") == [
        f"{log} was rotated (now server.log.2); read it to its end, then the newer rotated "
        "file server.log.1; now following the new file"]


def test_a_compressed_rotation_is_read_decompressed(tmp_path: Path) -> None:
    """Between the file read and the new one, a rotation that was compressed (and removed)
    meanwhile: read from server.log.1.gz, decompressed on the host, in its place in order."""
    log = tmp_path / "server.log"
    log.write_bytes(lines("a", 3))
    with _follow(log) as host:
        _live(host, log)
        with host.stopped():
            os.rename(log, tmp_path / "server.log.1")
            log.write_bytes(lines("b", 50))
            os.rename(tmp_path / "server.log.1", tmp_path / "server.log.2")
            os.rename(log, tmp_path / "server.log.1")
            with gzip.open(tmp_path / "server.log.1.gz", "wb") as z:
                z.write((tmp_path / "server.log.1").read_bytes())
            (tmp_path / "server.log.1").unlink()
            log.write_bytes(lines("c", 2))
        host.until(lambda h: h.data().endswith(lines("c", 2)))
    got = streams(host.frames)
    assert [(h["why"], h["name"], h.get("packed", False)) for h, _ in got] == [
        ("start", str(log), False), ("next", str(tmp_path / "server.log.1.gz"), True),
        ("next", str(log), False)]
    assert [data for _, data in got] == [lines("a", 3), lines("b", 50), lines("c", 2)]
    assert host.notes("rotated") == [
        f"{log} was rotated (now server.log.2); read it to its end, then the newer rotated "
        "file server.log.1.gz; now following the new file"]


def test_a_truncation_is_announced_and_read_from_the_start(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(lines("a", 5))
    with _follow(log) as host:
        _live(host, log)
        with host.stopped():
            log.write_bytes(lines("b", 2))  # shorter than what was read
        host.until(lambda h: h.data().endswith(lines("b", 2)))
    got = streams(host.frames)
    assert [(h["why"], h["offset"]) for h, _ in got] == [("start", 0), ("next", 0)]
    assert [data for _, data in got] == [lines("a", 5), lines("b", 2)]
    assert host.notes("truncated") == [
        f"{log} was truncated; reading it from the start (lines written after byte "
        f"{len(lines('a', 5))} before the truncation are lost, if any)"]


def test_copytruncate_reads_the_rest_from_the_copy(tmp_path: Path) -> None:
    """logrotate's copytruncate: what was written before the copy and not read yet is read
    from the copy (the same byte stream goes on: H "copy" at the offset reached), then the
    truncated file from its start."""
    log = tmp_path / "server.log"
    log.write_bytes(lines("a", 3))
    with _follow(log) as host:
        _live(host, log)
        with host.stopped():
            with log.open("ab") as f:
                f.write(lines("a", 2, start=4))  # not read before the copy
            shutil.copyfile(log, tmp_path / "server.log.1")
            with log.open("r+b") as f:
                f.truncate(0)
            log.write_bytes(lines("b", 2))
        host.until(lambda h: h.data().endswith(lines("b", 2)))
    got = streams(host.frames)
    assert [(h["why"], h["offset"], h["name"]) for h, _ in got] == [
        ("start", 0, str(log)), ("copy", len(lines("a", 3)), str(tmp_path / "server.log.1")),
        ("next", 0, str(log))]
    assert [data for _, data in got] == [lines("a", 3), lines("a", 2, start=4), lines("b", 2)]
    assert host.data() == lines("a", 5) + lines("b", 2)
    assert host.notes("truncated") == [
        f"{log} was truncated in place (copytruncate); read its last lines from the copy "
        "server.log.1; lines written between the copy and the truncation, if any, are lost"]


# -- other interpreters ------------------------------------------------------------------------


def _pythons() -> dict[str, str]:
    """The Pythons 3.6 on of this machine other than the running one, by version: on PATH,
    in /usr/bin, /usr/local/bin, pyenv's and uv's folders (never a version manager's shim,
    which runs whatever version the folder selects)."""
    pyenv = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    found: dict[str, str] = {}
    for minor in range(6, 20):
        version = f"3.{minor}"
        if (3, minor) == sys.version_info[:2]:
            continue
        names = [shutil.which(f"python{version}") or ""]
        for pattern in (f"/usr/bin/python{version}", f"/usr/local/bin/python{version}",
                        f"{pyenv}/versions/{version}.*/bin/python{version}",
                        os.path.expanduser(f"~/.local/share/uv/python/cpython-{version}.*/bin/"
                                           f"python{version}")):
            names += sorted(glob.glob(pattern))
        for exe in names:
            if exe and "/shims/" not in exe and os.access(exe, os.X_OK):
                found.setdefault(version, exe)
    return found


PYTHONS = _pythons()
VERSIONS: list[str] = sorted(PYTHONS, key=lambda v: int(v.split(".")[1]))


@pytest.mark.parametrize("version", VERSIONS or ["none"])
def test_every_python_from_3_6_runs_it(tmp_path: Path, version: str) -> None:
    """The follower under each interpreter a host may have (3.6 is the oldest it supports):
    the same frames, the same bytes; with rotation followed. Runs where such interpreters are
    installed (here: pyenv's), skipped elsewhere."""
    if version == "none":
        pytest.skip("no other Python 3.6+ on this machine (looked on PATH, in /usr/bin, "
                    "/usr/local/bin and pyenv's and uv's folders)")
    python = PYTHONS[version]
    said = subprocess.run([python, "-S", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                          capture_output=True, text=True, timeout=GUARD)
    assert said.stdout.strip() == version, (python, said.stdout, said.stderr)
    log = tmp_path / "server.log"
    content = _awkward_bytes(1 << 20)
    log.write_bytes(content)
    host = _snapshot(log, python=python)
    assert host.kinds()[:2] == [b"V", b"H"] and host.kinds()[-1] == b"E"
    codec = json.loads(host.frames[0][1])["codec"]
    assert codec == ("zstd+zlib" if shutil.which("zstd") else "zlib"), codec
    assert host.data() == content
    log.write_bytes(lines("a", 3))
    with _follow(log, python=python) as live:
        _live(live, log)
        with live.stopped():
            os.rename(log, tmp_path / "server.log.1")
            log.write_bytes(lines("b", 2))
        live.until(lambda h: h.data().endswith(lines("b", 2)))
    assert live.data() == lines("a", 3) + lines("b", 2)
