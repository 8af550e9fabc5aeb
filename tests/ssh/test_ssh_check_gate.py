"""`kvtui ssh --check` as a deploy gate (issue 16): a bounded wait with a clear message when
the host goes away mid-read, nothing left in the temporary directory on any exit path, and
the same bounded line handling as the TUI for a 200 MB line. Runs the real CLI in a child."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from _sshutil import pids_matching

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"

# A ProxyCommand that forwards until LIMIT bytes came from the server, then freezes: the host is
# gone mid-read, the TCP connection stays up and nothing more arrives (a cut network, a frozen
# host). Once frozen, every new relay (a reconnect) hangs before the SSH banner.
STALL_RELAY = """
import os, socket, sys, threading, time
host, port, limit, flag = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
if os.path.exists(flag):
    time.sleep(3600)
s = socket.create_connection((host, port))
def up():
    while True:
        b = os.read(0, 65536)
        if not b:
            s.shutdown(socket.SHUT_WR)
            return
        s.sendall(b)
threading.Thread(target=up, daemon=True).start()
sent = 0
while True:
    b = s.recv(65536)
    if not b:
        break
    if sent + len(b) >= limit:
        os.write(1, b[:limit - sent])
        open(flag, "w").close()
        time.sleep(3600)
    os.write(1, b)
    sent += len(b)
"""


@pytest.fixture
def stall_host(ssh_env, sshd, user_key, tmp_path):
    """An ssh config alias `gpu-stall` whose link freezes after 256 KiB from the server."""
    relay = tmp_path / "stall_relay.py"
    relay.write_text(STALL_RELAY)
    flag = tmp_path / "stalled"
    cfg = tmp_path / "ssh_config_stall"
    cfg.write_text(textwrap.dedent(f"""\
        Host gpu-stall
          HostName 127.0.0.1
          Port {sshd.port}
          IdentityFile {user_key}
          IdentitiesOnly yes
          ServerAliveInterval 1
          ProxyCommand {sys.executable} {relay} %h %p {256 << 10} {flag}
        """) + ssh_env["config"].read_text())
    yield {"config": cfg, "flag": flag}
    for pid in pids_matching(str(relay)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


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
    code = ("import resource, sys; from kvtui.cli import main; rc = main(sys.argv[1:]); "
            "print(f'MAXRSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}', "
            "file=sys.stderr); sys.exit(rc)")
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
    local = analyse_files([str(plain)]).report()
    assert report["kv_cache"] == json.loads(json.dumps(local["kv_cache"]).replace(
        str(plain), f"gpu:{log}"))
