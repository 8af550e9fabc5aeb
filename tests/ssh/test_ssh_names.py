"""File names as they are on the host (issue 36 point 8): a path whose bytes are not UTF-8 is
followed byte for byte (it failed with UnicodeEncodeError, exit 2) and listed with \\xNN
escapes (it was shown with U+FFFD); a name with a newline is listed (it was not)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from pathlib import Path

import pytest
from _sshutil import Collector

from kvtui.commands import ssh as ssh_cmd
from kvtui.sources.ssh.follow import RemoteFollower, Target, visible

START = b"[2026-01-01 00:00:00] server_args=ServerArgs(model_path='m', tp_size=1)\n"
LATIN1 = b"caf\xe9-server.log"  # latin-1 bytes: not UTF-8
NEWLINE = b"two\nlines.log"


def _args(ssh_env, *argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    ssh_cmd.configure(p)
    return p.parse_args(["-F", str(ssh_env["config"]), *argv])


@pytest.fixture
def odd_logs(tmp_path, monkeypatch) -> list[bytes]:
    d = tmp_path / "odd"
    d.mkdir()
    paths = [os.fsencode(d) + b"/" + name for name in (LATIN1, NEWLINE)]
    for p in paths:
        with open(p, "wb") as f:
            f.write(START + b"[2026-01-01 00:00:01] a second line\n")
    monkeypatch.setattr("kvtui.sources.ssh.discover.DEFAULT_ROOTS", (str(d),))
    return paths


def test_visible_escapes_only_what_is_not_utf8():
    assert visible("plain/ünïcode.log") == "plain/ünïcode.log"
    assert visible(os.fsdecode(b"/a/caf\xe9.log")) == "/a/caf\\xe9.log"


def test_list_shows_both_names_faithfully(ssh_env, odd_logs, capsys):
    assert ssh_cmd.run(_args(ssh_env, "gpu", "--list")) == 0
    out = capsys.readouterr().out
    mine = [ln for ln in out.splitlines() if "/odd/" in ln]
    assert not any("\ufffd" in ln for ln in mine)
    assert any(ln.strip().endswith("/caf\\xe9-server.log (0.0 MB)") for ln in mine)
    assert any(ln.strip().endswith("/two\\nlines.log (0.0 MB)") for ln in mine)
    # the suggested commands rebuild the exact bytes of both names in a shell
    words = [ln.strip().split(" --log ", 1)[1] for ln in out.splitlines()
             if ln.strip().startswith("kvtui ssh") and "odd" in ln]
    got = {subprocess.run(["bash", "-c", f"printf %s {w}"], capture_output=True, timeout=30,
                          check=True).stdout for w in words}
    assert got == set(odd_logs)


def test_list_json_has_both_names(ssh_env, odd_logs, capsys):
    assert ssh_cmd.run(_args(ssh_env, "gpu", "--list", "--json")) == 0
    doc = json.loads(capsys.readouterr().out)
    targets = {c["target"] for c in doc["candidates"] if "/odd/" in c["target"]}
    base = os.fsdecode(odd_logs[0]).rsplit("/", 1)[0]
    assert targets == {f"{base}/caf\\xe9-server.log", f"{base}/two\nlines.log"}


def test_a_path_that_is_not_utf8_is_followed(make_connector, odd_logs):
    path = os.fsdecode(odd_logs[0])
    src = RemoteFollower(make_connector("gpu"), Target("file", path), stop_at_end=True,
                         keepalive=1.0)
    c = Collector(src)
    c.thread.start()
    c.thread.join(30)
    assert not c.thread.is_alive()
    assert c.texts() == [START.decode().rstrip("\n"), "[2026-01-01 00:00:01] a second line"]
    assert not c.notices("error")
    assert "caf\\xe9-server.log" in src.name


def test_check_on_a_path_that_is_not_utf8(ssh_env, odd_logs, capsys):
    """Regression: UnicodeEncodeError, exit 2."""
    rc = ssh_cmd.run(_args(ssh_env, "gpu", "--log", os.fsdecode(odd_logs[0]), "--check",
                           "--json", "--fail-on", "never", "--no-checkpoint"))
    out, err = capsys.readouterr()
    assert rc == 0, err
    report = json.loads(out)
    assert report["sources"][0]["name"].endswith("caf\\xe9-server.log")


def test_a_missing_file_that_is_not_utf8_is_named_with_its_host(ssh_env, tmp_path, capsys):
    missing = os.fsdecode(os.fsencode(tmp_path) + b"/gone-\xff.log")
    rc = ssh_cmd.run(_args(ssh_env, "gpu", "--log", missing, "--check"))
    err = capsys.readouterr().err
    assert rc == 2 and "gone-\\xff.log (on gpu): no such file" in err


def test_a_name_with_a_newline_is_followed(make_connector, odd_logs):
    path = os.fsdecode(odd_logs[1])
    assert "\n" in path and Path(path).exists()
    src = RemoteFollower(make_connector("gpu"), Target("file", path), stop_at_end=True,
                         keepalive=1.0)
    c = Collector(src)
    c.thread.start()
    c.thread.join(30)
    assert len(c.texts()) == 2 and not c.notices("error")
