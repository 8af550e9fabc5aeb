"""Rotations during a disconnect that used to lose lines still on the host's disk (issue 36
point 8), over a real sshd: two copytruncates in one disconnect (the copies in between were
skipped), a rotation compressed at once (logrotate `compress` without `delaycompress`: the file
was called "gone") and logrotate's `olddir` (the rotated file moved to another directory).

Each rotation is done the way logrotate does it, with the writer held only for the instant a
real writer would also be between two lines (copy + truncate, rename + reopen), so every line
the writer wrote is on disk somewhere and must arrive exactly once, in order. Waits are for
conditions (lines counted), never for a fixed time."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from _sshutil import Collector

from kvtui.sources.ssh.follow import RemoteFollower, Target


def _follower(connector, path, **kw) -> RemoteFollower:
    kw.setdefault("keepalive", 1.0)
    kw.setdefault("backoff", (0.2, 1.0))
    kw.setdefault("quiet", 1.0)
    return RemoteFollower(connector, Target("file", str(path)), **kw)


def _own(own_sshd, ssh_env, make_connector):
    with open(ssh_env["known"], "a") as f:
        f.write(own_sshd.known_hosts_line())
    return make_connector("gpu", port=own_sshd.port)


def _line(i: int) -> str:
    return f"[2026-01-01 00:00:00] line {i:07d} " + "x" * 40


class Writer:
    """Appends numbered lines to `path` (about 2,000 a second when `rate`), reopening it when
    told (logrotate's postrotate). `lock` is held per line: a rotation done under it happens
    between two lines, never inside one."""

    def __init__(self, path: Path, rate: float | None = 2000.0) -> None:
        self.path = path
        self.rate = rate
        self.count = 0
        self.lock = threading.Lock()
        self.f = open(path, "a")  # noqa: SIM115 (closed in __exit__)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def write(self, n: int) -> None:
        with self.lock:
            self.f.write("".join(_line(i) + "\n" for i in range(self.count, self.count + n)))
            self.f.flush()
            self.count += n

    def reopen(self) -> None:  # called with the lock held
        self.f.close()
        self.f = open(self.path, "a")  # noqa: SIM115 (closed in __exit__)

    def _run(self) -> None:
        while not self.stop.wait(0.01):
            self.write(20)  # 20 lines per 10 ms: about 2,000 lines/s

    def __enter__(self) -> Writer:
        if self.rate:
            self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        if self.thread.is_alive():
            self.thread.join(10)
        self.f.close()

    def wait_more(self, n: int, timeout: float = 30) -> None:
        """Until `n` more lines were written (the background writer, or written here)."""
        if not self.rate:
            self.write(n)
            return
        target = self.count + n
        deadline = time.monotonic() + timeout
        while self.count < target and time.monotonic() < deadline:
            time.sleep(0.01)
        assert self.count >= target, "the writer stalled"


def _shift(d: Path, base: str, ext: str = "", keep: int = 9) -> None:
    """logrotate's numbering: base.N -> base.N+1, oldest first."""
    for i in range(keep, 0, -1):
        p = d / f"{base}.{i}{ext}"
        if p.exists():
            os.rename(p, d / f"{base}.{i + 1}{ext}")


def copytruncate(log: Path, w: Writer) -> None:
    with w.lock:
        _shift(log.parent, log.name)
        shutil.copyfile(log, log.parent / f"{log.name}.1")
        with open(log, "r+") as f:
            f.truncate(0)


def compress(log: Path, w: Writer, tool: str) -> None:
    """`create` + `compress` without `delaycompress`: rename, reopen, then the compressor reads
    the rotated file on stdin into NAME.1.gz / .zst (as logrotate runs it) and it is removed."""
    ext = {"gzip": ".gz", "zstd": ".zst"}[tool]
    _shift(log.parent, log.name, ext)
    rotated = log.parent / f"{log.name}.1"
    with w.lock:
        os.rename(log, rotated)
        w.reopen()
    with open(rotated, "rb") as src, open(str(rotated) + ext, "wb") as dst:
        subprocess.run([tool, "-c", "-q"] if tool == "zstd" else [tool, "-c"], stdin=src,
                       stdout=dst, check=True, timeout=60)
    rotated.unlink()


def olddir(log: Path, w: Writer, old: Path) -> None:
    """`olddir`: the rotated file is renamed into another directory."""
    old.mkdir(exist_ok=True)
    _shift(old, log.name)
    with w.lock:
        os.rename(log, old / f"{log.name}.1")
        w.reopen()


def _run_disconnects(c: Collector, own_sshd, w: Writer, rotate, kills: int = 4,
                     rotations: int = 2) -> None:
    """`kills` times: once lines of the current file came through, kill every session, rotate
    `rotations` times with lines written before and between, restart the server."""
    for _ in range(kills):
        w.wait_more(100)
        seen = w.count
        c.wait(lambda seen=seen: len(c.lines()) >= seen, timeout=60, what="caught up")
        before = len(c.notices("reconnecting"))
        own_sshd.kill_all()
        c.wait(lambda before=before: len(c.notices("reconnecting")) > before,
               what="reconnecting")
        for _ in range(rotations):
            w.wait_more(300)
            rotate()
        w.wait_more(300)
        own_sshd.start()


def _assert_every_line_once(c: Collector, w: Writer) -> None:
    w.stop.set()
    if w.thread.is_alive():
        w.thread.join(10)
    total = w.count
    try:
        c.wait(lambda: len(c.lines()) >= total, timeout=90, what=f"all {total} lines")
    except AssertionError:
        raise AssertionError(_diagnosis(c, total)) from None
    texts = c.texts()
    assert len(texts) == total, f"{len(texts) - total} lines repeated"
    assert texts == [_line(i) for i in range(total)]


def _diagnosis(c: Collector, total: int) -> str:
    """Which numbers are missing or repeated, and what the follower said."""
    got = [int(t.split(" line ")[1].split()[0]) for t in c.texts() if " line " in t]
    missing, runs = sorted(set(range(total)) - set(got)), []
    for i in missing:
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    said = [f"{n.state}: {n.message[:300]}" for n in c.notices()
            if n.state in ("rotated", "truncated", "info") or "resumed" in n.message]
    return (f"{len(got)} of {total} lines; missing {len(missing)} in runs {runs[:10]}; "
            f"repeated {len(got) - len(set(got))}; notices: " + " | ".join(said))


@pytest.mark.parametrize("rate", [None, 2000.0], ids=["stepwise", "writer-2000-per-s"])
def test_two_copytruncates_in_one_disconnect_read_every_copy(make_connector, own_sshd, ssh_env,
                                                              tmp_path, rate):
    """Regression: after two copytruncates in one disconnect the copy made in between (now
    NAME.1, the older copy NAME.2) was skipped: 30,034 of 79,991 lines lost."""
    log = tmp_path / "ct.log"
    with Writer(log, rate) as w:
        w.write(50)
        with Collector(_follower(_own(own_sshd, ssh_env, make_connector), log)) as c:
            _run_disconnects(c, own_sshd, w, lambda: copytruncate(log, w))
            _assert_every_line_once(c, w)
            said = [n.message for n in c.notices("truncated")]
            assert any("copytruncate, 2 times" in m and "ct.log.2, then ct.log.1" in m
                       for m in said), said
            assert not any("reading it from the start" in m for m in said)


@pytest.mark.parametrize("tool", ["gzip", "zstd"])
def test_rotated_and_compressed_in_one_disconnect(make_connector, own_sshd, ssh_env, tmp_path,
                                                  tool):
    """Regression: a rotation compressed at once (no delaycompress) was taken for a file that
    is gone: 30,293 of 79,996 lines lost. The compressed rotations are read decompressed on
    the host, from where the follower stopped, then the newer ones, then the new file."""
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} not installed")
    log = tmp_path / "gz.log"
    with Writer(log) as w:
        w.write(50)
        with Collector(_follower(_own(own_sshd, ssh_env, make_connector), log)) as c:
            _run_disconnects(c, own_sshd, w, lambda: compress(log, w, tool))
            _assert_every_line_once(c, w)
            said = " ".join(n.message for n in c.notices("rotated"))
            ext = {"gzip": ".gz", "zstd": ".zst"}[tool]
            assert f"compressed (now gz.log.2{ext}" in said and f"gz.log.1{ext}" in said
            assert "the old file is gone" not in said and "after the disconnect" not in said


def test_olddir_inside_the_log_directory(make_connector, own_sshd, ssh_env, tmp_path):
    """Regression: `olddir old` (relative: a directory beside the log) lost the moved file."""
    log = tmp_path / "od.log"
    with Writer(log) as w:
        w.write(50)
        with Collector(_follower(_own(own_sshd, ssh_env, make_connector), log)) as c:
            _run_disconnects(c, own_sshd, w, lambda: olddir(log, w, tmp_path / "old"))
            _assert_every_line_once(c, w)
            said = " ".join(n.message for n in c.notices("rotated"))
            assert "now old/od.log.2" in said and "old/od.log.1" in said


def test_olddir_elsewhere_named_by_the_logrotate_config(make_connector, own_sshd, ssh_env,
                                                        tmp_path):
    """An absolute olddir outside the log's directory is found through logrotate's
    configuration (here a file of the test's own instead of /etc/logrotate.conf)."""
    logs, archive = tmp_path / "logs", tmp_path / "archive"
    logs.mkdir()
    log = logs / "abs.log"
    conf = tmp_path / "logrotate.d"
    conf.mkdir()
    (conf / "server").write_text(f"{log} {{\n    rotate 9\n    olddir {archive}\n}}\n")
    with Writer(log) as w:
        w.write(50)
        src = _follower(_own(own_sshd, ssh_env, make_connector), log, rotate_conf=(str(conf),))
        with Collector(src) as c:
            _run_disconnects(c, own_sshd, w, lambda: olddir(log, w, archive), kills=2)
            _assert_every_line_once(c, w)


def test_olddir_and_compress_together(make_connector, own_sshd, ssh_env, tmp_path):
    """olddir + compress: the rotation is moved, then compressed there."""
    log = tmp_path / "both.log"
    old = tmp_path / "old"

    def rotate(w: Writer) -> None:
        if old.exists():
            _shift(old, log.name, ".gz")
        olddir(log, w, old)
        # compressed in place once moved (gzip keeps the file's mtime)
        subprocess.run(["gzip", "-q", str(old / f"{log.name}.1")], check=True, timeout=60)

    with Writer(log) as w:
        w.write(50)
        with Collector(_follower(_own(own_sshd, ssh_env, make_connector), log)) as c:
            _run_disconnects(c, own_sshd, w, lambda: rotate(w), kills=2)
            _assert_every_line_once(c, w)



def test_live_copytruncate_whose_copy_is_compressed_at_once(make_connector, tmp_path):
    """copytruncate + compress while following live: when the follower looks, the copy is
    already NAME.1.gz and the plain copy is gone. Its unread lines come from the .gz."""
    from _sshutil import pids_matching

    log = tmp_path / "ctz.log"
    with Writer(log, rate=None) as w:
        w.write(30)
        with Collector(_follower(make_connector("gpu"), log)) as c:
            c.wait(lambda: len(c.lines()) == 30 and c.notices("live"), what="live")
            pids = pids_matching("kvtui-follow", str(log))
            assert pids
            for pid in pids:  # hold the follower: the rotation happens between two looks
                os.kill(pid, signal.SIGSTOP)
            try:
                w.write(20)  # not read yet
                copytruncate(log, w)
                subprocess.run(["gzip", "-q", str(log) + ".1"], check=True, timeout=60)
                w.write(10)
            finally:
                for pid in pids:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGCONT)
            c.wait(lambda: len(c.lines()) >= 60, timeout=30, what="all 60 lines")
            assert c.texts() == [_line(i) for i in range(60)]
            said = " ".join(n.message for n in c.notices("truncated"))
            assert "ctz.log.1.gz" in said and "compressed" in said


@pytest.mark.parametrize("kind", ["copytruncate", "gzip", "olddir"])
def test_sessions_killed_mid_read_of_the_chain(make_connector, own_sshd, ssh_env, tmp_path,
                                               kind):
    """Big rotated files, and each session killed once the first of their lines arrived:
    the kill lands while the chain (a copy, a compressed file, a file in olddir) is being read
    (whenever the read is not already over), and the next session resumes inside it."""
    from _sshutil import pids_matching

    log = tmp_path / "mid.log"
    rotate = {"copytruncate": lambda w: copytruncate(log, w),
              "gzip": lambda w: compress(log, w, "gzip"),
              "olddir": lambda w: olddir(log, w, tmp_path / "old")}[kind]
    with Writer(log, rate=None) as w:
        w.write(50)
        with Collector(_follower(_own(own_sshd, ssh_env, make_connector), log)) as c:
            c.wait(lambda: len(c.lines()) == 50 and c.notices("live"), what="live")
            for _ in range(4):
                seen = len(c.lines())
                before = len(c.notices("reconnecting"))
                own_sshd.kill_all()
                c.wait(lambda before=before: len(c.notices("reconnecting")) > before,
                       what="reconnecting")
                for _ in range(2):
                    w.write(30000)
                    rotate(w)
                w.write(30000)
                own_sshd.start()
                c.wait(lambda seen=seen: len(c.lines()) > seen, timeout=60, what="progress")
                for pid in pids_matching("kvtui-follow", str(log)):  # mid-read, if not done
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
            _assert_every_line_once(c, w)


def test_another_services_rotations_in_a_directory_inside_are_not_read(make_connector,
                                                                      own_sshd, ssh_env,
                                                                      tmp_path):
    """A directory inside the log's is searched by identity and content only: another
    service's srv.log.1 there, written meanwhile, is no member of this log's chain."""
    log = tmp_path / "srv.log"
    other = tmp_path / "other"
    other.mkdir()

    def create(w: Writer) -> None:
        _shift(tmp_path, log.name)
        with w.lock:
            os.rename(log, tmp_path / f"{log.name}.1")
            w.reopen()

    with Writer(log, rate=None) as w:
        w.write(50)
        with Collector(_follower(_own(own_sshd, ssh_env, make_connector), log)) as c:
            c.wait(lambda: len(c.lines()) == 50 and c.notices("live"), what="live")
            own_sshd.kill_all()
            c.wait(lambda: c.notices("reconnecting"), what="reconnecting")
            for _ in range(2):
                w.write(100)
                create(w)
                (other / "srv.log.1").write_text("another service's line\n")  # newest of all
            w.write(100)
            own_sshd.start()
            _assert_every_line_once(c, w)
            assert "another service's line" not in c.texts()



def test_a_read_stopped_inside_the_first_kib_resumes_in_the_compressed_file(
        make_connector, own_sshd, ssh_env, tmp_path):
    """Regression (found by the mid-read test): stopped less than 1 KiB into a file whose
    first KiB was already known (an unfinished line after it), then rotated and compressed,
    the follower compared the wrong bytes before the offset and called the file gone."""
    log = tmp_path / "kib.log"
    first = [_line(i) for i in range(5)]  # about 400 bytes
    unfinished = "u" * 900  # the file is over 1 KiB, the read stops before this line
    log.write_text("".join(x + "\n" for x in first) + unfinished)
    with Collector(_follower(_own(own_sshd, ssh_env, make_connector), log)) as c:
        c.wait(lambda: c.texts() == first and c.notices("live"), what="live")
        own_sshd.kill_all()
        c.wait(lambda: c.notices("reconnecting"), what="reconnecting")
        with open(log, "a") as f:
            f.write(" ends here\n" + "".join(_line(i) + "\n" for i in range(5, 50)))
        os.rename(log, tmp_path / "kib.log.1")
        log.write_text(_line(50) + "\n")
        subprocess.run(["gzip", str(tmp_path / "kib.log.1")], check=True, timeout=60)
        own_sshd.start()
        want = [*first, unfinished + " ends here", *(_line(i) for i in range(5, 51))]
        c.wait(lambda: len(c.lines()) >= len(want), timeout=30, what="every line")
        assert c.texts() == want
        said = " ".join(n.message for n in c.notices("rotated"))
        assert "compressed (now kib.log.1.gz" in said


@pytest.mark.parametrize("kind", ["copytruncate", "gzip"])
def test_a_file_still_empty_when_the_connection_was_lost(make_connector, own_sshd, ssh_env,
                                                          tmp_path, kind):
    """Nothing of it had been read, so there is no content to find its copies by: the rotated
    files written since its mtime then (copies, or the file itself compressed) are read, then
    the file. Before, its copies were skipped without a word."""
    log = tmp_path / "empty.log"
    log.touch()
    src = _follower(_own(own_sshd, ssh_env, make_connector), log)
    with Writer(log, rate=None) as w, Collector(src) as c:
        c.wait(lambda: c.notices("live"), what="live")
        own_sshd.kill_all()
        c.wait(lambda: c.notices("reconnecting"), what="reconnecting")
        for _ in range(2):
            w.write(50)
            if kind == "copytruncate":
                copytruncate(log, w)
            else:
                compress(log, w, "gzip")
        w.write(10)
        own_sshd.start()
        _assert_every_line_once(c, w)
        said = " ".join(n.message for n in c.notices("rotated"))
        assert "before anything of it had been read" in said


def test_late_writes_to_the_renamed_file_are_not_read_twice_after_a_resume(
        make_connector, own_sshd, ssh_env, tmp_path):
    """The renamed file got late writes after the new (empty) file was created, so it is
    newer than the new file's mtime; it was read already, and the host is told so on
    resume (`done`): not read again."""
    log = tmp_path / "late.log"
    log.write_text("r1\n")
    with Collector(_follower(_own(own_sshd, ssh_env, make_connector), log)) as c:
        c.wait(lambda: c.texts() == ["r1"] and c.notices("live"), what="live")
        with open(log, "a", buffering=1) as old:
            os.rename(log, tmp_path / "late.log.1")
            log.touch()  # the new file, empty
            old.write("late1\n")  # after the new file was created
            c.wait(lambda: c.texts()[-1:] == ["late1"], what="the late line")
        c.wait(lambda: c.notices("rotated"), timeout=20, what="on the new file")
        before = len(c.notices("reconnecting"))
        own_sshd.kill_all()
        c.wait(lambda: len(c.notices("reconnecting")) > before, what="reconnecting")
        own_sshd.start()
        c.wait(lambda: any("resumed" in n.message for n in c.notices("live")), timeout=30,
               what="resumed")
        with open(log, "a") as f:
            f.write("n1\n")
        c.wait(lambda: c.texts()[-1:] == ["n1"], timeout=20, what="the new file's line")
        assert c.texts() == ["r1", "late1", "n1"]
