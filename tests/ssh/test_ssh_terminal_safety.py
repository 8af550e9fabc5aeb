"""Remote strings are made inert before they reach the terminal (issue 16): a log file named
with escape sequences on the host must not retitle or recolour the user's terminal through
`--list`, the numbered prompt or `--check` without a source."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from kvtui.commands import ssh as ssh_cmd

EVIL = ["evil\x1b]0;pwned\x07title.log", "red\x1b[31mtext\x1b[0m \x9b2J.log"]


def _args(ssh_env, *argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    ssh_cmd.configure(p)
    return p.parse_args(["-F", str(ssh_env["config"]), *argv])


@pytest.fixture
def evil_logs(tmp_path, monkeypatch):
    d = tmp_path / "logs"
    d.mkdir()
    paths = []
    for name in EVIL:
        path = d / name
        path.write_text("[2026-01-01 00:00:00] server_args=ServerArgs(model_path='m')\n")
        paths.append(path)
    monkeypatch.setattr("kvtui.sources.ssh.discover.DEFAULT_ROOTS", (str(d),))
    return paths


def _assert_inert(out: str) -> None:
    for bad in ("\x1b", "\x07", "\x9b"):
        assert bad not in out, repr(out)


@pytest.mark.parametrize("argv", [["--list"], ["--check"]])
def test_list_and_check_without_a_source_print_names_inert(ssh_env, evil_logs, capsys, argv):
    assert ssh_cmd.run(_args(ssh_env, "gpu", *argv)) == (
        ssh_cmd.EXIT_CHOOSE if argv == ["--check"] else 0)
    out, err = capsys.readouterr()
    _assert_inert(out + err)
    assert "evil" in out and "title.log" in out  # still recognisable
    # the suggested command names the real file when a shell reads it back; only this test's
    # files count: discovery also lists the server processes on the host, and another test run
    # on this machine may have a fake server up (seen: a concurrent suite's test_ssh_list_headless)
    lines = [ln.strip() for ln in out.splitlines()
             if ln.strip().startswith("kvtui ssh") and str(evil_logs[0].parent) in ln]
    assert len(lines) == len(EVIL)
    words = [ln.split(" --log ", 1)[1] for ln in lines]
    got = {subprocess.run(["bash", "-c", f"printf %s {w}"], capture_output=True, timeout=30,
                          check=True).stdout.decode() for w in words}
    assert got == {str(p) for p in evil_logs}


def test_numbered_prompt_prints_names_inert(ssh_env, evil_logs, capsys, monkeypatch):
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False)
    monkeypatch.setattr("builtins.input", lambda prompt: "q")
    assert ssh_cmd.run(_args(ssh_env, "gpu")) == 0
    out, err = capsys.readouterr()
    _assert_inert(out + err)
    assert "Follow which one" not in out  # input() printed it, not us
    assert out.count("title.log") == 1 and "text" in out
