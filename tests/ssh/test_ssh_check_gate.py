"""`kvtui ssh --check` as a deploy gate (issue 16): a bounded wait with a clear message when
the host goes away mid-read, nothing left in the temporary directory on any exit path, and
the same bounded line handling as the TUI for a 200 MB line. Runs the real CLI in a child."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"

@pytest.fixture
def stall_host(make_stall_host):
    """An ssh config alias `gpu-stall` whose link freezes after 256 KiB from the server."""
    return make_stall_host(256 << 10)


def _random_log(path: Path, mbytes: int) -> None:
    """The sample log's start-up, then lines that do not compress (so the read takes a while)."""
    with open(path, "w") as f:
        f.write((SAMPLES / "llama31-70b-tp8.log").read_text())
        for _ in range(mbytes):
            blob = os.urandom(1 << 19).hex()
            f.write("".join(f"[TP0] {blob[i:i + 58]}\n" for i in range(0, len(blob), 58)))


def _kvtui(*argv: str, env: dict | None = None, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "kvtui", "ssh", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env or dict(os.environ),
                            cwd=Path(__file__).resolve().parents[2], **kw)


def test_host_gone_mid_read_gives_up_with_a_clear_message(stall_host, tmp_path):
    """Regression: `--check` printed nothing and hung until the host came back."""
    log = tmp_path / "big.log"
    _random_log(log, 8)
    proc = _kvtui("-F", str(stall_host["config"]), "gpu-stall", "--log", str(log), "--check",
                  "--no-checkpoint", "--reconnect-timeout", "3", "--connect-timeout", "2")
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert stall_host["flag"].exists()  # it did stall mid-read
    assert proc.returncode == 2, err
    assert "mid-read at line" in err and "did not come back within 3 s" in err
    assert "reconnecting" in err  # said while it waited, not silent
    assert "Traceback" not in err and out == ""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_during_a_big_read_leaves_nothing_in_tmp(stall_host, tmp_path, sig):
    """Regression: killed by SIGTERM or SIGHUP during the read of a big log, `--check` left a
    full copy of the log in /tmp. Nothing is copied now, and the signal ends it cleanly."""
    log = tmp_path / "huge.log"
    _random_log(log, 40)  # above the old 32 MiB threshold for copying the log
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    proc = _kvtui("-F", str(stall_host["config"]), "gpu-stall", "--log", str(log), "--check",
                  "--no-checkpoint", env={**os.environ, "TMPDIR": str(tmpdir)})
    try:
        deadline = time.monotonic() + 60
        while not stall_host["flag"].exists() and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        assert stall_host["flag"].exists(), "the read never got going"
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 128 + sig, err
    assert f"interrupted by {sig.name}" in err and "Traceback" not in err
    assert list(tmpdir.iterdir()) == []


def test_a_200_mb_line_costs_bounded_memory_in_check(ssh_env, tmp_path):
    """Regression: `--check` took 18-27 s and up to 667 MB on one 200 MB line (the TUI path
    bounded it). Both paths use the same bounded splitter now."""
    sample = (SAMPLES / "llama31-70b-tp8.log").read_text()
    log = tmp_path / "long-line.log"
    with open(log, "w") as f:
        f.write(sample)
        chunk = "x" * (1 << 20)
        for _ in range(200):
            f.write(chunk)
        f.write("\nafter the long line\n")
    # The child's own peak (VmHWM of its memory map). Not RUSAGE_SELF's ru_maxrss: Linux keeps
    # that across exec and subprocess forks with vfork, so it started at this pytest process's
    # peak, which after a thousand tests was 290-344 MiB (the test failed only in full runs).
    code = ("import sys; from kvtui.cli import main; rc = main(sys.argv[1:]); "
            "hwm = [ln.split()[1] for ln in open('/proc/self/status') if ln.startswith('VmHWM:')]; "
            "print(f'MAXRSS {hwm[0]}', file=sys.stderr); sys.exit(rc)")
    proc = subprocess.run(
        [sys.executable, "-c", code, "ssh", "-F", str(ssh_env["config"]), "gpu", "--log",
         str(log), "--check", "--json", "--fail-on", "never", "--no-checkpoint"],
        capture_output=True, text=True, timeout=600, env=dict(os.environ),
        cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == 0, proc.stderr
    maxrss_kib = int(proc.stderr.rsplit("MAXRSS ", 1)[1].split()[0])
    assert maxrss_kib < 300 * 1024, f"peak memory {maxrss_kib / 1024:.0f} MiB"
    report = json.loads(proc.stdout)
    assert report["sources"][0]["lines"] == len(sample.splitlines()) + 2
    from kvtui.commands.check import analyse_files

    plain = tmp_path / "plain.log"
    plain.write_text(sample)
    local = analyse_files([str(plain)])[0].report().to_json()
    assert report["kv_cache"] == json.loads(json.dumps(local["kv_cache"]).replace(
        str(plain), f"gpu:{log}"))


def _two_starts(path: Path) -> tuple[list[str], int]:
    """A BF16 server, 5 MB of its runtime, then a restart as FP8: the verdict that matters
    (the running server's) is at the end of the file. Returns the lines and the restart's."""
    first = (SAMPLES / "llama31-70b-tp8.log").read_text().splitlines()
    second = (SAMPLES / "qwen35-397b-nvfp4-tp8-fp8.log").read_text().splitlines()
    decode = next(x for x in first if "Decode batch" in x)
    lines = first + [decode] * 36000 + second + [decode] * 500
    path.write_text("".join(x + "\n" for x in lines))
    restart = max(i for i, x in enumerate(lines) if "server_args=" in x) + 1
    return lines, restart


def test_the_start_up_of_the_running_server_is_read_ahead(make_connector, tmp_path):
    """Issue 14 point 5: the host sends the start-up region of the last server start first,
    so its verdict does not wait for the rest of the file; the in-order lines are unchanged."""
    from kvtui.sources.ssh.blocks import LineBlock
    from kvtui.sources.ssh.follow import RemoteFollower, Target

    log = tmp_path / "restarted.log"
    lines, restart = _two_starts(log)
    got: list = []
    src = RemoteFollower(make_connector("gpu"), Target("file", str(log)), stop_at_end=True,
                         keepalive=1.0, prelude_markers=("server_args=",))
    src.run_blocks(lambda batch: got.extend(b for b in batch if isinstance(b, LineBlock)),
                   __import__("threading").Event())
    ahead = [b for b in got if b.prelude]
    assert len(ahead) == 1
    pre = ahead[0]
    assert pre.first_line_no == restart
    assert pre.texts == lines[restart - 1:restart - 1 + len(pre.texts)]
    assert len(pre.texts) > 50  # the start-up region, not one line
    in_order = [b for b in got if not b.prelude]
    before = got.index(pre)
    assert all(b.first_line_no + len(b.texts) <= restart for b in got[:before])
    assert [t for b in in_order for t in b.texts] == lines
    # the TUI's LineSource form leaves the read-ahead block out: every line once, in order
    from kvtui.sources.base import SourceLine

    seen: list = []
    tui = RemoteFollower(make_connector("gpu"), Target("file", str(log)), stop_at_end=True,
                         keepalive=1.0, prelude_markers=("server_args=",))
    tui.run(lambda items: seen.extend(i for i in items if isinstance(i, SourceLine)),
            __import__("threading").Event())
    assert [x.text for x in seen] == lines
    assert [x.line_no for x in seen] == list(range(1, len(lines) + 1))


def test_check_says_the_read_ahead_verdict_first(ssh_env, tmp_path, capsys):
    import argparse

    from kvtui.commands import ssh as ssh_cmd
    from kvtui.commands.check import analyse_files

    log = tmp_path / "restarted.log"
    _, restart = _two_starts(log)
    p = argparse.ArgumentParser()
    ssh_cmd.configure(p)
    args = p.parse_args(["-F", str(ssh_env["config"]), "gpu", "--log", str(log), "--check",
                         "--json", "--fail-on", "never", "--no-checkpoint"])
    assert ssh_cmd.run(args) == 0
    out, err = capsys.readouterr()
    assert f"read ahead: the start-up at line {restart:,} says critical: FP8 KV cache" in err
    report = json.loads(out)
    local = analyse_files([str(log)])[0].report().to_json()
    for key in ("kv_cache", "alerts", "runs"):
        assert report[key] == json.loads(json.dumps(local[key]).replace(str(log),
                                                                        f"gpu:{log}")), key
