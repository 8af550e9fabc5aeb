"""Rotation over a real sshd: every line kept through chains, late writes, copytruncate, denied
files and FIFOs (issue 16). Each test waits for conditions, never for a fixed time."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import subprocess
from pathlib import Path

import pytest
from _sshutil import Collector, pids_matching

from kvtui.sources.ssh.follow import RemoteFollower, Target


def _append(path, lines) -> None:
    with open(path, "a") as f:
        f.write("".join(f"{x}\n" for x in lines))


def _follower(connector, path, **kw) -> RemoteFollower:
    kw.setdefault("keepalive", 1.0)
    kw.setdefault("backoff", (0.2, 1.0))
    kw.setdefault("quiet", 3.0)
    return RemoteFollower(connector, Target("file", str(path)), **kw)


def _own(own_sshd, ssh_env, make_connector):
    with open(ssh_env["known"], "a") as f:
        f.write(own_sshd.known_hosts_line())
    return make_connector("gpu", port=own_sshd.port)


def test_two_rotations_during_one_disconnect_keep_the_middle_file(make_connector, own_sshd,
                                                                  ssh_env, tmp_path):
    """Regression: .log -> .log.1 -> .log.2 with a new file between, all while disconnected:
    the middle file's lines were never delivered (and the notice said "read the rest")."""
    log = tmp_path / "srv.log"
    _append(log, ["a1", "a2"])
    src = _follower(_own(own_sshd, ssh_env, make_connector), log)
    with Collector(src) as c:
        c.wait(lambda: c.texts() == ["a1", "a2"] and c.notices("live"), what="first file")
        own_sshd.kill_all()
        c.wait(lambda: c.notices("reconnecting"), what="reconnecting")
        _append(log, ["a3"])
        os.rename(log, tmp_path / "srv.log.1")  # first rotation
        _append(log, ["b1", "b2"])
        os.rename(tmp_path / "srv.log.1", tmp_path / "srv.log.2")  # second rotation
        os.rename(log, tmp_path / "srv.log.1")
        _append(log, ["c1"])
        own_sshd.start()
        c.wait(lambda: len(c.lines()) == 6, timeout=30, what="all three files")
        assert c.texts() == ["a1", "a2", "a3", "b1", "b2", "c1"]
        assert [x.line_no for x in c.lines()] == list(range(1, 7))
        assert [x.offset for x in c.lines()][3:] == [0, 3, 0]
        rotated = " ".join(n.message for n in c.notices("rotated"))
        assert "srv.log.2" in rotated and "srv.log.1" in rotated
        _append(log, ["c2"])
        c.wait(lambda: c.texts()[-1:] == ["c2"], what="following the newest file")


def test_rename_and_create_with_late_writes_to_the_old_file(make_connector, tmp_path):
    """logrotate `create` + a postrotate signal: the writer appends to the renamed file until it
    reopens. Regression: those late lines (about 1 s per rotation) were lost."""
    log = tmp_path / "late.log"
    _append(log, ["r1", "r2"])
    with Collector(_follower(make_connector("gpu"), log)) as c:
        c.wait(lambda: c.texts() == ["r1", "r2"] and c.notices("live"), what="live")
        with open(log, "a", buffering=1) as old:
            os.rename(log, tmp_path / "late.log.1")
            _append(log, ["n1"])  # the new file exists and has a line already
            for i in range(8):  # each late line written once the previous one came through
                old.write(f"late{i}\n")
                c.wait(lambda i=i: c.texts()[-1:] == [f"late{i}"], what=f"late line {i}")
        c.wait(lambda: "n1" in c.texts(), what="the new file after the old one went quiet")
        assert c.texts() == ["r1", "r2", *[f"late{i}" for i in range(8)], "n1"]
        assert c.notices("rotated")


def test_copytruncate_live_keeps_what_the_copy_holds_and_says_what_is_lost(make_connector,
                                                                           tmp_path):
    """copytruncate with lines the follower had not read yet: they are read from the copy; a
    line written between the copy and the truncation is lost, and that loss is announced."""
    log = tmp_path / "ct.log"
    _append(log, [f"[2026-01-01 00:00:0{i}] line {i} of the first generation" for i in range(3)])
    with Collector(_follower(make_connector("gpu"), log)) as c:
        c.wait(lambda: len(c.lines()) == 3 and c.notices("live"), what="live")
        pids = pids_matching("kvtui-follow", str(log))
        assert pids
        for pid in pids:  # hold the follower so the rotation happens between two of its reads
            os.kill(pid, signal.SIGSTOP)
        try:
            _append(log, ["x1 unread before the copy", "x2 unread before the copy"])
            shutil.copyfile(log, tmp_path / "ct.log.1")
            _append(log, ["x3 between copy and truncate"])
            with open(log, "r+") as f:
                f.truncate(0)
            _append(log, ["y1 after the truncation"])
        finally:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)
        c.wait(lambda: "y1 after the truncation" in c.texts(), timeout=20, what="after")
        texts = c.texts()
        assert texts[3:] == ["x1 unread before the copy", "x2 unread before the copy",
                             "y1 after the truncation"]
        said = " ".join(n.message for n in c.notices("truncated"))
        assert "copytruncate" in said and "ct.log.1" in said and "lost" in said


def test_truncate_and_rewrite_with_the_same_first_bytes_while_disconnected(
        make_connector, own_sshd, ssh_env, tmp_path):
    """Regression: a file truncated and rewritten past the old offset, keeping its first bytes,
    while disconnected, was resumed in the middle of the new content. The bytes before the
    offset are compared now."""
    head = "[2026-01-01 00:00:00] server_args=ServerArgs(" + "x" * 1100 + ")"
    log = tmp_path / "same-head.log"
    _append(log, [head, "old 1", "old 2"])
    src = _follower(_own(own_sshd, ssh_env, make_connector), log)
    with Collector(src) as c:
        c.wait(lambda: len(c.lines()) == 3 and c.notices("live"), what="live")
        own_sshd.kill_all()
        c.wait(lambda: c.notices("reconnecting"), what="reconnecting")
        new = [head, *[f"new content line {i}" for i in range(10)]]
        with open(log, "w") as f:  # same inode, same first 1 KiB, longer than before
            f.write("".join(x + "\n" for x in new))
        own_sshd.start()
        c.wait(lambda: len(c.lines()) == 3 + len(new), timeout=30, what="the rewritten file")
        assert c.texts()[3:] == new
        assert any("truncated or rewritten" in n.message for n in c.notices("truncated"))


def test_copytruncate_while_disconnected_reads_the_rest_from_the_copy(make_connector, own_sshd,
                                                                      ssh_env, tmp_path):
    log = tmp_path / "ctd.log"
    _append(log, ["first generation 1", "first generation 2"])
    src = _follower(_own(own_sshd, ssh_env, make_connector), log)
    with Collector(src) as c:
        c.wait(lambda: len(c.lines()) == 2 and c.notices("live"), what="live")
        own_sshd.kill_all()
        c.wait(lambda: c.notices("reconnecting"), what="reconnecting")
        _append(log, ["x1 written while we were away"])
        shutil.copyfile(log, tmp_path / "ctd.log-20260101")
        with open(log, "r+") as f:
            f.truncate(0)
        _append(log, ["y1 new generation"])
        own_sshd.start()
        c.wait(lambda: len(c.lines()) == 4, timeout=30, what="copy, then the new content")
        assert c.texts()[2:] == ["x1 written while we were away", "y1 new generation"]
        said = " ".join(n.message for n in c.notices("truncated"))
        assert "copytruncate" in said and "ctd.log-20260101" in said


@pytest.fixture
def capless_sshd(make_sshd):
    """An sshd whose sessions run as root without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH, so
    file modes apply to them (as they would to the unprivileged user a server runs as)."""
    if not shutil.which("setpriv"):
        pytest.skip("setpriv (util-linux) not installed")
    return make_sshd("capless", prefix=["setpriv", "--bounding-set",
                                        "-dac_override,-dac_read_search", "--inh-caps=-all"])


def test_permission_denied_after_rotation_is_retried(make_connector, capless_sshd, tmp_path):
    """Regression: a new log created unreadable (mode fixed a moment later) stopped following
    for good. Now the follower says so and retries until it can read it."""
    log = tmp_path / "denied.log"
    _append(log, ["before"])
    log.chmod(0o644)
    src = _follower(make_connector("gpu", port=capless_sshd.port), log, quiet=0.5)
    with Collector(src) as c:
        c.wait(lambda: c.texts() == ["before"] and c.notices("live"), what="live")
        os.rename(log, tmp_path / "denied.log.1")
        fd = os.open(log, os.O_WRONLY | os.O_CREAT, 0o000)
        os.write(fd, b"after 1\n")
        os.close(fd)
        c.wait(lambda: any("permission denied" in n.message for n in c.notices("stale")),
               timeout=20, what="permission denied said")
        assert not c.notices("error")
        log.chmod(0o644)
        c.wait(lambda: c.texts() == ["before", "after 1"], timeout=20, what="read once allowed")
        assert any("again" in n.message for n in c.notices("live"))
        _append(log, ["after 2"])
        c.wait(lambda: c.texts()[-1:] == ["after 2"], what="following the new file")


def _fifo(tmp_path) -> Path:
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    return fifo


def test_fifo_is_refused_clearly_and_leaves_no_process(make_connector, tmp_path):
    """Regression: the remote follower blocked in open() on a FIFO, the TUI showed nothing, and
    every reconnect left one more blocked process on the host."""
    fifo = _fifo(tmp_path)
    src = _follower(make_connector("gpu"), fifo)
    with Collector(src) as c:
        c.wait(lambda: c.notices("error"), timeout=20, what="a clear refusal")
        msg = c.notices("error")[-1].message
        assert "FIFO" in msg and "not a regular file" in msg
        c.thread.join(10)
        assert not c.thread.is_alive()  # refused for good: no reconnect loop
    c.wait(lambda: not pids_matching("kvtui-follow", str(fifo)), what="no follower left")


def test_check_on_a_fifo_exits_2(ssh_env, tmp_path):
    fifo = _fifo(tmp_path)
    proc = subprocess.run(
        [os.sys.executable, "-m", "kvtui", "ssh", "-F", str(ssh_env["config"]), "gpu",
         "--log", str(fifo), "--check", "--no-checkpoint"],
        capture_output=True, text=True, timeout=60, env=dict(os.environ))
    assert proc.returncode == 2
    assert "FIFO" in proc.stderr and "Traceback" not in proc.stderr
    assert not pids_matching("kvtui-follow", str(fifo))


def test_copytruncate_of_the_new_file_while_the_renamed_one_is_still_read(make_connector,
                                                                          tmp_path):
    """Found by bench_ssh_soak: the new file was copied and truncated while the follower was
    still reading the renamed one; its lines (now only in the copy) were lost, unannounced."""
    log = tmp_path / "mix.log"
    _append(log, ["r1"])
    with Collector(_follower(make_connector("gpu"), log)) as c:
        c.wait(lambda: c.texts() == ["r1"] and c.notices("live"), what="live")
        with open(log, "a", buffering=1) as old:
            os.rename(log, tmp_path / "mix.log.1")
            _append(log, ["n1", "n2"])
            old.write("late0\n")
            c.wait(lambda: c.texts()[-1:] == ["late0"], what="the renamed file still read")
            shutil.copyfile(log, tmp_path / "mix.log.2")  # copytruncate of the new file
            _append(log, ["lost between copy and truncate"])
            with open(log, "r+") as f:
                f.truncate(0)
            _append(log, ["m1"])
            old.write("late1\n")  # the renamed file is still being written
            c.wait(lambda: c.texts()[-1:] == ["late1"], what="late1")
        c.wait(lambda: "m1" in c.texts(), timeout=30, what="the new file after the copy")
        assert c.texts() == ["r1", "late0", "late1", "n1", "n2", "m1"]
        said = " ".join(n.message for n in c.notices("truncated"))
        assert "copytruncate" in said and "lost" in said
