"""`kvtui ssh --check` folds a big remote log on every core as it arrives (issue 14 point 4),
against a real sshd: the report is exactly the local check's, the workers did the folding, and
the read-ahead verdict still comes before anything of the stream is joined."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from kvtui.core.pipeline import Options, Session
from kvtui.core.pipeline import stream as stream_mod
from kvtui.core.pipeline.fold import Fold

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs"
sys.path.insert(0, str(ROOT / "bench"))
from biglog import write_big_log  # noqa: E402


def _restarted(path: Path) -> tuple[int, int]:
    """A BF16 server with 8 MB of runtime, then an FP8 restart with more runtime: the pieces
    cut the stream anywhere, the restart's start-up included. (lines, the restart's line)"""
    first = (SAMPLES / "llama31-70b-tp8.log").read_text().splitlines()
    second = (SAMPLES / "qwen35-397b-nvfp4-tp8-fp8.log").read_text().splitlines()
    decode = [x for x in first if "Decode batch" in x or "Prefill batch" in x]
    lines = first + decode * (60000 // len(decode)) + second + decode * (20000 // len(decode))
    path.write_text("".join(x + "\n" for x in lines))
    restart = max(i for i, x in enumerate(lines) if "server_args=" in x) + 1
    return len(lines), restart


def _local(path: Path) -> dict:
    from kvtui.commands.check import analyse_files

    return analyse_files([str(path)])[0].report().to_json()


def _renamed(obj: object, old: str, new: str) -> object:
    return json.loads(json.dumps(obj).replace(old, new))


def test_a_big_remote_log_is_folded_by_the_workers_and_equals_the_local_check(
        make_connector, tmp_path, monkeypatch):
    from kvtui.commands.ssh import analyse_remote
    from kvtui.sources.ssh.follow import Target

    log = tmp_path / "restarted.log"
    total, restart = _restarted(log)
    order: list[str] = []
    here: list[int] = []  # lines folded in this process
    real_feed, real_join = Fold.feed_lines, stream_mod.join_result

    def feed(self, source, texts, first_line_no=1):
        if not isinstance(texts, list):
            texts = list(texts)
        here.append(len(texts))
        return real_feed(self, source, texts, first_line_no)

    def join(fold, result, line_offset):
        order.append("join")
        return real_join(fold, result, line_offset)

    def verdict(block, report):
        order.append("verdict")
        assert block.first_line_no == restart
        assert any(a.severity == "critical" for a in report.alerts)

    monkeypatch.setattr(Fold, "feed_lines", feed)
    monkeypatch.setattr(stream_mod, "join_result", join)
    session = analyse_remote(make_connector("gpu"), None, Target("file", str(log)), None, "gpu",
                             on_verdict=verdict,
                             options=Options(workers=2, piece_bytes=256 << 10,
                                             min_parallel_bytes=1 << 20))
    monkeypatch.undo()
    assert order[0] == "verdict" and order.count("join") >= 3
    # here: the read-ahead block, the first block and a declined piece or two; the rest of the
    # lines went to the workers
    assert sum(here) < total // 10, (sum(here), total)
    report = session.report().to_json()
    local = _renamed(_local(log), str(log), f"gpu:{log}")
    assert session.lines == total
    for key in ("kv_cache", "alerts", "runs", "runtime", "sources"):
        assert report[key] == local[key], key


def test_a_small_remote_log_stays_on_one_core(make_connector, tmp_path, monkeypatch):
    from kvtui.commands.ssh import analyse_remote
    from kvtui.sources.ssh.follow import Target

    log = tmp_path / "small.log"
    total, _ = _restarted(log)
    feeds: list[stream_mod.StreamFold] = []
    real = Session.stream
    monkeypatch.setattr(Session, "stream", lambda self, size: feeds.append(real(self, size))
                        or feeds[-1])
    session = analyse_remote(make_connector("gpu"), None, Target("file", str(log)), None, "gpu",
                             options=Options(workers=2))  # 32 MiB from the default
    assert len(feeds) == 1 and feeds[0].workers == 1 and feeds[0].joined == 0
    assert session.lines == total


def test_kvtui_ssh_check_on_a_log_past_the_parallel_threshold(ssh_env, tmp_path):
    """The real command on a 36 MB log (past the 32 MiB at which a local check goes parallel):
    the same report as `kvtui check` of the file, exit status by its alerts."""
    log = write_big_log(tmp_path / "big.log", 185_000)
    assert log.stat().st_size > 32 << 20
    proc = subprocess.run(
        [sys.executable, "-m", "kvtui", "ssh", "-F", str(ssh_env["config"]), "gpu", "--log",
         str(log), "--check", "--json", "--fail-on", "never", "--no-checkpoint"],
        capture_output=True, text=True, timeout=600, env=dict(os.environ), cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    report = json.loads(proc.stdout)
    local = _renamed(_local(log), str(log), f"gpu:{log}")
    for key in ("kv_cache", "alerts", "runs", "runtime", "sources"):
        assert report[key] == local[key], key


def _wait(cond, timeout: float = 60.0) -> bool:
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def test_the_tui_ingest_loads_the_remote_history_on_every_core(make_connector, tmp_path,
                                                               monkeypatch):
    """The TUI's initial SSH load takes the same stream fold as --check (the ingest takes the
    follower's blocks): the session equals the local check, the log pane gets the last lines
    with their kinds, and lines written afterwards still arrive one by one."""
    from kvtui.sources.ssh.follow import RemoteFollower, Target
    from kvtui.ui.ingest import Ingest

    log = tmp_path / "restarted.log"
    total, _ = _restarted(log)
    lines = log.read_text().splitlines()
    joins: list[int] = []
    real_join = stream_mod.join_result

    def join(fold, result, line_offset):
        joins.append(line_offset)
        return real_join(fold, result, line_offset)

    monkeypatch.setattr(stream_mod, "join_result", join)
    session = Session(Options(workers=2, piece_bytes=256 << 10, min_parallel_bytes=1 << 20))
    follower = RemoteFollower(make_connector("gpu"), Target("file", str(log)), keepalive=1.0)
    ingest = Ingest(follower, session=session, ring=500)
    ingest.start()
    try:
        assert _wait(lambda: ingest.last_state == "live" and ingest.lines == total)
        assert len(joins) >= 3  # the workers folded it
        with ingest.report_lock:
            report = session.report().to_json()
        local = _renamed(_local(log), str(log), f"gpu:{log}")
        for key in ("kv_cache", "alerts", "runs", "runtime"):
            assert report[key] == local[key], key
        shown = [e for e in ingest.drain().entries if not e.notice]
        assert [e.line_no for e in shown] == list(range(total - 499, total + 1))
        assert [e.text for e in shown] == lines[-500:]
        assert {e.kind for e in shown} >= {"decode_batch"}
        with log.open("a") as f:
            f.write(lines[-1] + "\n")
        assert _wait(lambda: ingest.lines == total + 1)
        new = [e for e in ingest.drain().entries if not e.notice]
        assert [(e.line_no, e.kind) for e in new] == [(total + 1, shown[-1].kind)]
        assert session.lines == total + 1
    finally:
        ingest.close(10)
