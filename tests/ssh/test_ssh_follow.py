"""Following over a real sshd: append, awkward paths, rotation, truncation, reconnect, cleanup."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import threading
import time

import pytest
from _sshutil import Collector, pids_matching

from kvtui.sources.ssh.commands import client_argv, dies_with_channel
from kvtui.sources.ssh.follow import RemoteFollower, Target

AWKWARD = "dir with 'quotes'; and $(spaces)"


def _append(path, lines) -> None:
    with open(path, "a") as f:
        f.write("".join(f"{x}\n" for x in lines))


def _follower(connector, path, **kw) -> RemoteFollower:
    kw.setdefault("keepalive", 1.0)
    kw.setdefault("backoff", (0.2, 1.0))
    return RemoteFollower(connector, Target("file", str(path)), **kw)


def test_follow_append_awkward_path(make_connector, tmp_path):
    d = tmp_path / AWKWARD
    d.mkdir()
    log = d / 'server "x"; echo pwned >&2.log'
    _append(log, ["a1", "a2"])
    with Collector(_follower(make_connector("gpu"), log)) as c:
        c.wait(lambda: c.notices("live"), what="live")
        assert c.texts() == ["a1", "a2"]
        _append(log, ["b1", "b2", "b3"])
        c.wait(lambda: len(c.lines()) == 5, what="appended lines")
        lines = c.lines()
        assert [x.text for x in lines] == ["a1", "a2", "b1", "b2", "b3"]
        assert [x.line_no for x in lines] == [1, 2, 3, 4, 5]
        assert [x.offset for x in lines] == [0, 3, 6, 9, 12]
        assert lines[0].source.endswith(str(log))
        assert [n.state for n in c.notices()][:3] == ["connecting", "loading", "live"]
    assert not c.notices("error")


def test_partial_line_waits_for_newline(make_connector, tmp_path):
    log = tmp_path / "p.log"
    log.write_text("one\ntw")
    with Collector(_follower(make_connector("gpu"), log)) as c:
        c.wait(lambda: c.notices("live"))
        assert c.texts() == ["one"]
        with open(log, "a") as f:
            f.write("o\n")
        c.wait(lambda: len(c.lines()) == 2)
        assert c.texts() == ["one", "two"]


def test_last_n_lines(make_connector, tmp_path):
    log = tmp_path / "n.log"
    _append(log, [f"l{i}" for i in range(1, 101)])
    with Collector(_follower(make_connector("gpu"), log, lines=3)) as c:
        c.wait(lambda: c.notices("live"))
        assert c.texts() == ["l98", "l99", "l100"]
    with Collector(_follower(make_connector("gpu"), log, lines=0)) as c:
        c.wait(lambda: c.notices("live"))
        _append(log, ["new"])
        c.wait(lambda: c.texts() == ["new"])


def test_rotation_by_rename(make_connector, tmp_path):
    log = tmp_path / "r.log"
    _append(log, ["r1", "r2"])
    with Collector(_follower(make_connector("gpu"), log)) as c:
        c.wait(lambda: c.notices("live"))
        with open(log, "a") as old:
            os.rename(log, tmp_path / "r.log.1")
            old.write("r3\n")  # the writer still has the old file open for a moment
            old.flush()
            _append(log, ["n1", "n2"])
        c.wait(lambda: len(c.lines()) == 5, what="lines after rotation")
        assert c.texts() == ["r1", "r2", "r3", "n1", "n2"]
        assert c.notices("rotated")
        after = c.lines()[3:]
        assert [x.offset for x in after] == [0, 3]  # offsets restart in the new file
        assert [x.line_no for x in after] == [4, 5]  # numbering continues


def test_rotation_by_truncation(make_connector, tmp_path):
    log = tmp_path / "t.log"
    _append(log, ["first line of the old content", "second"])
    with Collector(_follower(make_connector("gpu"), log)) as c:
        c.wait(lambda: c.notices("live"))
        with open(log, "r+") as f:
            f.truncate(0)
        time.sleep(0.3)
        _append(log, ["new1", "new2"])
        c.wait(lambda: len(c.lines()) == 4, what="lines after truncation")
        assert c.texts()[2:] == ["new1", "new2"]
        assert c.notices("truncated")
        assert [x.offset for x in c.lines()[2:]] == [0, 5]


def test_truncate_and_refill_quickly_is_still_noticed(make_connector, tmp_path):
    log = tmp_path / "t2.log"
    _append(log, ["[2026-01-01 00:00:00] old line number one, long enough for a head check"])
    with Collector(_follower(make_connector("gpu"), log)) as c:
        c.wait(lambda: c.notices("live"))
        with open(log, "w") as f:  # truncate and refill past the old size before any poll
            f.write("".join(f"[2026-01-02 00:00:0{i}] new content line {i}\n" for i in range(5)))
        c.wait(lambda: len(c.lines()) == 6, what="refilled lines")
        assert c.notices("truncated")
        assert c.texts()[1].startswith("[2026-01-02 00:00:00] new content line 0")


def test_no_follower_left_on_host_after_disconnect(make_connector, tmp_path):
    log = tmp_path / "cleanup-marker.log"
    _append(log, ["x"])
    c = Collector(_follower(make_connector("gpu"), log))
    with c:
        c.wait(lambda: c.notices("live"))
        assert pids_matching("kvtui-follow", str(log)), "follower should run while connected"
    deadline = time.monotonic() + 5
    while pids_matching("kvtui-follow", str(log)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pids_matching("kvtui-follow", str(log)) == []


def test_cmd_source_dies_with_channel(make_connector, tmp_path):
    d = tmp_path / AWKWARD
    d.mkdir()
    log = d / "cmd; x.log"
    _append(log, ["c1", "c2"])
    command = f"tail -n +1 -f {shlex.quote(str(log))}"
    src = RemoteFollower(make_connector("gpu"), Target("cmd", command), keepalive=1.0)
    with Collector(src) as c:
        c.wait(lambda: len(c.lines()) == 2)
        _append(log, ["c3"])
        c.wait(lambda: len(c.lines()) == 3)
        assert c.texts() == ["c1", "c2", "c3"]
        assert pids_matching("tail", str(log))
    deadline = time.monotonic() + 5
    while pids_matching("tail", str(log)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pids_matching("tail", str(log)) == [], "tail left running on the host"


def test_dies_with_channel_quotes_everything():
    cmd = dies_with_channel(["docker", "logs", "a b; rm -rf /"])
    assert shlex.split(cmd)[-1] == "a b; rm -rf /"


def _writer(path, n, rate, stop: threading.Event, done: threading.Event) -> None:
    try:
        with open(path, "a", buffering=1) as f:
            for i in range(n):
                if stop.is_set():
                    return
                f.write(f"seq {i:06d}\n")
                time.sleep(1 / rate)
    finally:
        done.set()


def test_reconnect_after_sshd_dies_every_line_once(make_connector, own_sshd, ssh_env, tmp_path):
    with open(ssh_env["known"], "a") as f:
        f.write(own_sshd.known_hosts_line())
    log = tmp_path / "seq.log"
    log.write_text("")
    stop, done = threading.Event(), threading.Event()
    total = 600
    src = _follower(make_connector("gpu", port=own_sshd.port), log)
    with Collector(src) as c:
        c.wait(lambda: c.notices("live"))
        t = threading.Thread(target=_writer, args=(log, total, 300, stop, done), daemon=True)
        t.start()
        c.wait(lambda: len(c.lines()) > 100, what="some lines before the cut")
        own_sshd.kill_all()  # host gone: listener and sessions
        c.wait(lambda: c.notices("reconnecting"), timeout=10, what="reconnecting state")
        msg = c.notices("reconnecting")[-1].message
        assert "reconnecting" in msg and "last data" in msg
        time.sleep(1.0)  # down for a while; the log keeps growing
        own_sshd.start()
        done.wait(10)
        c.wait(lambda: len(c.lines()) >= total, timeout=20, what="all lines after restart")
        time.sleep(0.3)
        texts = c.texts()
    stop.set()
    assert texts == [f"seq {i:06d}" for i in range(total)]  # each exactly once, in order
    assert [x.line_no for x in c.lines()] == list(range(1, total + 1))
    assert src.reconnects >= 1
    assert any("resumed at byte" in n.message for n in c.notices("live"))


@pytest.mark.parametrize("blocks", [False, True])
def test_partial_line_across_reconnect_is_not_doubled(make_connector, own_sshd, ssh_env,
                                                      tmp_path, blocks):
    """Regression: the unterminated tail was kept across a reconnect and received again
    (`half-half-line`), and the resume offset drifted by its length."""
    with open(ssh_env["known"], "a") as f:
        f.write(own_sshd.known_hosts_line())
    log = tmp_path / "p.log"
    log.write_text("a1\nhalf-")
    src = _follower(make_connector("gpu", port=own_sshd.port), log)
    with Collector(src, blocks=blocks) as c:
        c.wait(lambda: c.notices("live"), what="live")
        own_sshd.kill_all()
        c.wait(lambda: c.notices("reconnecting"), timeout=10, what="reconnecting")
        with open(log, "a") as f:
            f.write("line\nb2\n")
        own_sshd.start()
        size = log.stat().st_size
        c.wait(lambda: any("resumed at byte" in n.message for n in c.notices("live"))
               and src._r.cursor.consumed == size, timeout=20, what="resumed to the end")
        c.wait(lambda: len(c.lines()) == 3, what="three lines")
        assert src._r.cursor.consumed == size  # not size + len("half-")
        assert c.texts() == ["a1", "half-line", "b2"]
        if not blocks:
            assert [x.offset for x in c.lines()] == [0, 3, 13]
        # and a second resume starts at the right place too
        seen = len(c.notices("reconnecting"))
        own_sshd.kill_all()
        c.wait(lambda: len(c.notices("reconnecting")) > seen, timeout=10,
               what="second drop")
        _append(log, ["c3"])
        own_sshd.start()
        c.wait(lambda: len(c.lines()) == 4, timeout=20, what="second resume")
        assert c.texts() == ["a1", "half-line", "b2", "c3"]
        assert src._r.cursor.consumed == log.stat().st_size
    assert src.reconnects >= 2


def test_watchdog_notices_silent_peer(make_connector, own_sshd, ssh_env, tmp_path):
    """A peer that stops answering (SIGSTOP: TCP stays up) is noticed within ~3 keepalives."""
    with open(ssh_env["known"], "a") as f:
        f.write(own_sshd.known_hosts_line())
    log = tmp_path / "quiet.log"
    _append(log, ["q1"])
    src = _follower(make_connector("gpu", port=own_sshd.port), log, keepalive=0.5)
    frozen: list[int] = []
    try:
        with Collector(src) as c:
            c.wait(lambda: c.notices("live"))
            frozen = own_sshd.session_pids()
            for pid in frozen:
                os.kill(pid, signal.SIGSTOP)
            t0 = time.monotonic()
            c.wait(lambda: c.notices("reconnecting"), timeout=8, what="watchdog")
            assert time.monotonic() - t0 < 5
            _append(log, ["q2"])
            c.wait(lambda: c.texts() == ["q1", "q2"], timeout=15, what="resumed on a new session")
    finally:
        for pid in frozen:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_resume_after_rotation_while_disconnected(make_connector, own_sshd, ssh_env, tmp_path):
    with open(ssh_env["known"], "a") as f:
        f.write(own_sshd.known_hosts_line())
    log = tmp_path / "rot.log"
    _append(log, ["a1", "a2"])
    src = _follower(make_connector("gpu", port=own_sshd.port), log)
    with Collector(src) as c:
        c.wait(lambda: c.notices("live"))
        own_sshd.kill_all()
        c.wait(lambda: c.notices("reconnecting"))
        _append(log, ["a3"])  # written before the rotation, while we were away
        os.rename(log, tmp_path / "rot.log.1")
        _append(log, ["b1"])
        own_sshd.start()
        c.wait(lambda: len(c.lines()) == 4, timeout=15, what="rest of old file and new file")
        assert c.texts() == ["a1", "a2", "a3", "b1"]
        assert c.notices("rotated")


def test_missing_file_waits_then_follows(make_connector, tmp_path):
    log = tmp_path / "later.log"
    with Collector(_follower(make_connector("gpu"), log)) as c:
        c.wait(lambda: c.notices("missing"))
        _append(log, ["hello"])
        c.wait(lambda: c.texts() == ["hello"])


def test_stop_at_end_reads_history_and_returns(make_connector, tmp_path):
    log = tmp_path / "h.log"
    _append(log, ["h1", "h2"])
    with open(log, "a") as f:
        f.write("h3 no newline")
    src = _follower(make_connector("gpu"), log, stop_at_end=True)
    c = Collector(src)
    c.thread.start()
    c.thread.join(15)
    assert not c.thread.is_alive()
    assert c.texts() == ["h1", "h2", "h3 no newline"]


def test_stop_at_end_missing_file_is_an_error(make_connector, tmp_path):
    src = _follower(make_connector("gpu"), tmp_path / "nope.log", stop_at_end=True)
    c = Collector(src)
    c.thread.start()
    c.thread.join(15)
    assert not c.thread.is_alive()
    assert "no such file" in c.notices("error")[-1].message


def test_docker_stdout_and_stderr_are_merged_on_the_host():
    """`docker logs` runs with 2>&1: one stream in docker's order, not two read in turns."""
    import subprocess
    import sys

    from kvtui.sources.clients import DockerLogs, KubectlLogs

    assert client_argv(KubectlLogs("p"), None) == KubectlLogs("p").argv(None)  # not merged
    argv = client_argv(DockerLogs("sgl"), None)
    assert argv[:4] == ["sh", "-c", 'exec "$@" 2>&1', "sh"]
    assert argv[4:7] == ["docker", "logs", "--timestamps"] and argv[-1] == "sgl"
    code = ("import sys; print('o1', flush=True); "
            "print('e1', file=sys.stderr, flush=True); print('o2')")
    done = subprocess.run([*argv[:4], sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=30)
    assert done.stdout.split() == ["o1", "e1", "o2"] and done.stderr == ""


def test_bulk_texts_match_line_splitter():
    """`feed_texts` (the headless path) gives exactly `feed`'s texts and resume offsets,
    whatever the chunking, with NUL holes, CRLF, invalid UTF-8 and over-long lines."""
    import random

    from kvtui.sources.lines import LineSplitter

    rng = random.Random(3)
    alphabet = [b"a", b"\n", b"\r", b"\xc3\xa9", b"\xff", b"\xe2\x82", b"x" * 70000,
                "€".encode(), b"\x00" * 5, b"y" * 300000]
    for _ in range(200):
        data = b"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        a, b = LineSplitter(), LineSplitter()
        ra: list[str] = []
        rb: list[str] = []
        i = 0
        while i < len(data):
            n = rng.randint(1, 50000)
            ra += [t for _, t in a.feed(data[i:i + n])]
            rb += b.feed_texts(data[i:i + n])
            assert a.consumed == b.consumed and a.pending == b.pending
            assert len(b._carry) <= LineSplitter.CARRY_MAX
            i += n
        ra += [t for _, t in a.flush()]
        rb += [t for _, t in b.flush()]
        assert ra == rb


def _history(path, megabytes: int) -> list[str]:
    import random

    rng = random.Random(7)
    lines = [f"[2026-01-01 00:00:{i % 60:02d} TP{i % 8}] Decode batch, #running-req: "
             f"{rng.randint(1, 256)}, #token: {rng.randint(1, 10**6)}, token usage: "
             f"{rng.random():.2f}, gen throughput (token/s): {rng.random() * 9000:.2f}"
             for i in range(megabytes * 7000)]
    path.write_text("".join(x + "\n" for x in lines))
    return lines


@pytest.mark.parametrize("zstd_on_host", [True, False])
def test_history_goes_as_zstd_where_the_host_has_it(make_connector, tmp_path, zstd_on_host):
    """Issue 14: zstd level 1 on the wire when the host has the `zstd` binary (or Python
    3.14's compression.zstd), zlib-1 otherwise; the lines are the same either way."""
    import shutil
    import sys

    if zstd_on_host and not shutil.which("zstd"):
        pytest.skip("no zstd binary on this host")
    log = tmp_path / "history.log"
    lines = _history(log, 20)
    python = tmp_path / "python-without-zstd"
    python.write_text(f"#!/bin/sh\nPATH=/nonexistent exec {sys.executable} \"$@\"\n")
    python.chmod(0o755)
    src, c = _read_to_end(make_connector, log, sys.executable if zstd_on_host else str(python))
    assert c.texts() == lines
    assert src.codec == ("zstd+zlib" if zstd_on_host else "zlib")
    assert src.bytes_received < log.stat().st_size / 4


def _frame(kind: bytes, payload: bytes) -> bytes:
    return kind + len(payload).to_bytes(4, "big") + payload


def test_zstd_frames_cut_anywhere_decode_exactly():
    """Issue 14: one zstd frame per burst of backlog, cut into Y frames anywhere (inside a
    block header too); frames with and without checksums and content sizes, back to back."""
    import random

    import zstandard

    from kvtui.sources.ssh.frames import FrameReader
    from kvtui.sources.ssh.remote_follower import MAGIC

    rng = random.Random(3)
    data = b"".join(b"line %d %s\n" % (i, b"x" * rng.randint(0, 300)) for i in range(60000))
    co = zstandard.ZstdCompressor(level=1, write_checksum=True).compressobj()
    stream = co.compress(data[:5 << 20]) + co.flush()  # no content size: as from a pipe
    stream += zstandard.ZstdCompressor(level=1).compress(data[5 << 20:])  # one of 3.14's
    cuts = sorted(rng.sample(range(1, len(stream)), 400))
    wire = MAGIC + b"".join(_frame(b"Y", stream[a:b])
                            for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True))
    r = FrameReader()
    got = [p for i in range(0, len(wire), 7777) for k, p in r.feed(wire[i:i + 7777])
           if k == b"D"]
    assert b"".join(got) == data


def test_a_zstd_bomb_is_decoded_in_bounded_pieces():
    """A few KB of zstd can make a GiB (RLE blocks): it is decoded a few blocks at a time,
    never more than PIECE at once, and the consumer takes each piece before the next is made."""
    import zstandard

    from kvtui.sources.ssh.frames import PIECE, FrameReader, StreamError
    from kvtui.sources.ssh.remote_follower import MAGIC

    co = zstandard.ZstdCompressor(level=1).compressobj()
    bomb = b"".join(co.compress(b"\0" * (64 << 20)) for _ in range(16)) + co.flush()
    assert len(bomb) < 1 << 20
    frames = FrameReader().feed(MAGIC + _frame(b"Y", bomb))
    total = 0
    for kind, piece in frames:
        assert kind == b"D" and 0 < len(piece) <= PIECE
        total += len(piece)
    assert total == 1 << 30
    with pytest.raises(StreamError, match="no frame"):
        list(FrameReader().feed(MAGIC + _frame(b"Y", b"not zstd at all")))
    # a frame asking for a 1 GiB window: refused, not allocated
    huge = zstandard.ZstdCompressor(
        compression_params=zstandard.ZstdCompressionParameters(window_log=30)
    ).compressobj()
    big_window = huge.compress(b"y" * 1000) + huge.flush()
    with pytest.raises(StreamError):
        list(FrameReader().feed(MAGIC + _frame(b"Y", big_window)))


def _python_with_zstd(tmp_path, script: str):
    """A `python` for the host whose PATH finds a `zstd` of the test's own first."""
    import sys

    bindir = tmp_path / "zbin"
    bindir.mkdir(parents=True)
    (bindir / "zstd").write_text("#!/bin/sh\n" + script)
    (bindir / "zstd").chmod(0o755)
    python = tmp_path / "python-with-test-zstd"
    python.write_text(f"#!/bin/sh\nPATH={bindir}:$PATH exec {sys.executable} \"$@\"\n")
    python.chmod(0o755)
    return str(python)


def _read_to_end(make_connector, log, python: str, timeout: float = 120):
    """`log` read to its end (`--check`'s way) by a follower the host runs with `python`:
    (the follower, what it delivered)."""
    src = RemoteFollower(make_connector("gpu"), Target("file", str(log), python=python),
                         stop_at_end=True, keepalive=1.0)
    c = Collector(src, blocks=True)
    c.thread.start()
    c.thread.join(timeout)
    assert not c.thread.is_alive()
    return src, c


def _read_with_zstd(make_connector, tmp_path, log, script: str):
    """`log` read to its end by a follower whose host runs `script` as its `zstd`."""
    return _read_to_end(make_connector, log, _python_with_zstd(tmp_path, script))


def test_a_backlog_goes_through_one_zstd_per_burst(make_connector, tmp_path):
    """Issue 14 (SSH load): the host's zstd binary compresses a burst of backlog (up to
    64 MiB) as one process; one per 4 MiB spent about as much CPU again on its start-ups."""
    import shutil

    real = shutil.which("zstd")
    if not real:
        pytest.skip("no zstd binary on this host")
    log = tmp_path / "history.log"
    lines = _history(log, 20)
    runs = tmp_path / "runs"
    src, c = _read_with_zstd(make_connector, tmp_path, log,
                             f'echo run >> {runs}\nexec {real} "$@"\n')
    assert c.texts() == lines
    assert src.codec == "zstd+zlib"
    assert runs.read_text().count("run") == 1  # 17 MiB: one burst (it was 4 processes)
    assert src.bytes_received < log.stat().st_size / 4


def test_a_burst_without_sendfile_reads_the_same_lines(make_connector, tmp_path):
    """The follower hands a burst's bytes to zstd by the kernel (sendfile into its pipe) where
    it can; on a host where it cannot (no os.sendfile, or a kernel that refuses a pipe) the
    follower copies them itself: every line once, in order, all the same."""
    import shutil
    import sys

    if not shutil.which("zstd"):
        pytest.skip("no zstd binary on this host")
    log = tmp_path / "history.log"
    lines = _history(log, 20)
    python = tmp_path / "python-without-sendfile"
    # run as `python -S -c BOOT ARGS...`: drop os.sendfile, then run BOOT with ARGS
    python.write_text(f"#!{sys.executable} -S\nimport os, sys\ndel os.sendfile\n"
                      "code, sys.argv = sys.argv[3], ['-c'] + sys.argv[4:]\nexec(code)\n")
    python.chmod(0o755)
    src, c = _read_to_end(make_connector, log, str(python))
    assert c.texts() == lines
    assert src.codec == "zstd+zlib"
    assert src.bytes_received < log.stat().st_size / 4


def test_a_zstd_that_fails_mid_burst_is_said_and_the_read_goes_on(make_connector, tmp_path):
    """A zstd that dies after part of its frame went out: what it sent cannot be completed, so
    the read goes on from the last whole line in a new session with zlib, and says so; every
    line once, and the read stays a load (no "reconnected", no "live" before its end: the TUI
    ends its fast load on "live"). One that fails before any output: zlib from then on in the
    same session."""
    import shutil

    real = shutil.which("zstd")
    if not real:
        pytest.skip("no zstd binary on this host")
    log = tmp_path / "history.log"
    lines = _history(log, 20)

    def read(name: str, script: str) -> tuple[RemoteFollower, Collector]:
        return _read_with_zstd(make_connector, tmp_path / name, log, script)

    for name, script, how in (
            ("whole", f"head -c 3000000 | {real} -1 -q -c\nexit 1\n", "(exit 1)"),  # a frame, then
            ("cut", f"{real} -1 -q -c | head -c 700000\nexit 2\n", "(exit 2)"),  # half a frame
            ("kill", f"{real} -1 -q -c | head -c 900000\nkill -9 $$\n", "killed by signal 9")):
        src, c = read(name, script)
        assert not c.notices("error"), name
        said = [n.message for n in c.notices("info") if "zstd failed" in n.message]
        assert len(said) == 1 and how in said[0] and "with zlib" in said[0], (name, said)
        assert c.texts() == lines, name  # every line once: none lost or repeated at the failure
        assert src.codec == "zlib" and src.reconnects == 0, name  # same connection, zlib
        states = [n.state for n in c.notices() if n.state not in ("info", "connecting")]
        assert states == ["loading", "live"], (name, states)  # live only at the end
    src, c = read("none", "exit 1\n")
    assert not c.notices("error")
    assert c.texts() == lines


def test_a_host_that_says_its_codec_failed_twice_is_not_retried(make_connector, tmp_path):
    """zstd is offered once: a host that reports a failed codec again (it was not offered)
    ends the read with an error, instead of a new session at once, for ever."""
    import sys

    log = tmp_path / "x.log"
    log.write_text("a\n")
    runs = tmp_path / "runs"
    fake = tmp_path / "fake.py"
    fake.write_text(
        "import json, struct, sys\n"
        f"open({str(runs)!r}, 'a').write('run\\n')\n"
        "p = json.dumps({'state': 'codec', 'message': 'zstd failed (exit 1)'}).encode()\n"
        "sys.stdout.buffer.write(b'\\x00KVTUI-FOLLOW-2\\x00N' + struct.pack('>I', len(p)) + p)\n")
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\nexec {sys.executable} {fake}\n")
    python.chmod(0o755)
    _, c = _read_to_end(make_connector, log, str(python), timeout=60)
    assert runs.read_text().count("run") == 2  # zstd offered, then zlib only: then no more
    errors = c.notices("error")
    assert errors and "failed again" in errors[-1].message


def test_frames_are_decoded_one_at_a_time():
    """4 MiB received can hold hundreds of MB of a long line: nothing is decoded before the
    frame ahead of it has been handed on."""
    import zlib

    from kvtui.sources.ssh.frames import FrameReader
    from kvtui.sources.ssh.remote_follower import MAGIC

    z = zlib.compressobj(1)
    chunk = b"x" * (1 << 20)
    payloads = [z.compress(chunk) + z.flush(zlib.Z_SYNC_FLUSH) for _ in range(300)]
    wire = MAGIC + b"".join(b"Z" + len(p).to_bytes(4, "big") + p for p in payloads)
    frames = FrameReader().feed(wire)
    first = next(frames)
    assert first == (b"D", chunk)
    assert frames.gi_frame is not None  # a generator: the other 299 MiB are still compressed
    assert sum(len(p) for _, p in frames) == 299 << 20


def _follower_output(command: str, path_env: str) -> bytes:
    """What the host's follower writes when the user's login shell runs `command` with PATH
    `path_env` (sshd runs `$SHELL -c command`), read to its end frame (stop-at-end) before its
    stdin closes (it would end at once on that EOF)."""
    import subprocess

    from kvtui.sources.ssh.frames import FrameReader

    proc = subprocess.Popen(["/bin/bash", "-c", command], env={"PATH": path_env},
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdin is not None
    out, reader, kinds = b"", FrameReader(), []
    while b"E" not in kinds:
        chunk = proc.stdout.read1(1 << 16)
        if not chunk:
            break
        out += chunk
        kinds += [kind for kind, _ in reader.feed(chunk)]
    proc.stdin.close()
    proc.wait(60)
    err = proc.stderr.read() if proc.stderr is not None else b""
    assert proc.returncode == 0 and b"E" in kinds, (kinds, err)
    return out


def test_the_default_python3_is_not_a_version_managers_shim(make_connector, tmp_path):
    """A pyenv or asdf shim works out which python the user meant, in 70 ms of shell per
    start (the interpreter itself takes 10): the follower needs only the standard library, so
    with the default `python3` the first python3 on PATH outside a `*/shims` directory that is
    Python 3.6 or later runs it; the shim only when there is no other; `--python EXE` exactly
    as given."""
    import sys

    from kvtui.sources.ssh.remote_follower import MAGIC

    def script(path, body: str) -> None:
        path.write_text("#!/bin/sh\n" + body)
        path.chmod(0o755)

    shims, empty, old, real, tools = (tmp_path / d for d in ("shims", "venv bin", "old", "bin",
                                                              "tools"))
    for d in (shims, empty, old, real, tools):
        d.mkdir()
    called = tmp_path / "ran"
    script(shims / "python3", f"echo shim >> '{called}'\nexec '{sys.executable}' \"$@\"\n")
    (empty / "python3").mkdir()  # a directory of that name is no interpreter
    script(old / "python3", f"echo old >> '{called}'\nexit 1\n")  # says it is older than 3.6
    (real / "python3").symlink_to(sys.executable)
    (tools / "sh").symlink_to("/bin/sh")  # the login shell finds sh on PATH
    log = tmp_path / "server.log"
    log.write_text("one\ntwo\n")

    def command(**kw) -> str:
        src = _follower(make_connector("gpu"), log, stop_at_end=True, compress=False)
        src.target = Target("file", str(log), **kw)
        return src._file_command()

    out = _follower_output(command(), f"{tools}:{shims}/:{empty}:{old}:{real}")
    assert out.startswith(MAGIC) and b"one\ntwo\n" in out
    assert called.read_text() == "old\n"  # asked its version, passed over; no shim
    called.unlink()
    out = _follower_output(command(), f"{tools}:{shims}:{old}")
    assert out.startswith(MAGIC) and called.read_text() == "old\nshim\n"  # no other: the shim
    assert shlex.split(command(python=str(real / "python3")))[0] == str(real / "python3")
