"""`kvtui ssh HOST --check` without a source (issue 36 point 6): discovery's list is not a pass.
With several logs (or none) nothing is checked, so the exit code is EXIT_CHOOSE, never 0, and
`--json` prints the candidates as JSON a gate can read."""

from __future__ import annotations

import argparse
import json

import pytest

from kvtui.commands import ssh as ssh_cmd

START = "[2026-01-01 00:00:00] server_args=ServerArgs(model_path='m')\n"


def _args(ssh_env, *argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    ssh_cmd.configure(p)
    return p.parse_args(["-F", str(ssh_env["config"]), *argv])


@pytest.fixture
def two_logs(tmp_path, monkeypatch):
    d = tmp_path / "logs"
    d.mkdir()
    paths = [d / "a.log", d / "b.log"]
    for p in paths:
        p.write_text(START)
    monkeypatch.setattr("kvtui.sources.ssh.discover.DEFAULT_ROOTS", (str(d),))
    return paths


def test_the_code_is_none_of_checks_own():
    from kvtui.core.gate import EXIT_ALERT, EXIT_ERROR, EXIT_UNRECOGNISED

    assert ssh_cmd.EXIT_CHOOSE not in (0, EXIT_ALERT, EXIT_ERROR, EXIT_UNRECOGNISED)


def test_check_json_with_several_logs_prints_the_candidates_and_is_not_a_pass(
        ssh_env, two_logs, capsys):
    rc = ssh_cmd.run(_args(ssh_env, "gpu", "--check", "--json"))
    out, err = capsys.readouterr()
    assert rc == ssh_cmd.EXIT_CHOOSE
    doc = json.loads(out)  # JSON only on stdout, nothing human
    assert doc["status"] == "choose a source" and doc["exit_code"] == rc
    mine = [c for c in doc["candidates"] if c["target"] in {str(p) for p in two_logs}]
    assert sorted(c["target"] for c in mine) == sorted(str(p) for p in two_logs)
    assert all(c["kind"] == "file" and c["command"] == f"kvtui ssh gpu --log {c['target']}"
               for c in mine)
    assert "Traceback" not in err


def test_check_without_json_says_nothing_was_checked(ssh_env, two_logs, capsys):
    rc = ssh_cmd.run(_args(ssh_env, "gpu", "--check"))
    out, err = capsys.readouterr()
    assert rc == ssh_cmd.EXIT_CHOOSE
    assert str(two_logs[0]) in out and "nothing checked" in err


def test_check_with_no_log_found_is_not_a_pass_either(ssh_env, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("kvtui.sources.ssh.discover.DEFAULT_ROOTS", ())
    monkeypatch.setattr("kvtui.sources.ssh.discover.DISCOVER_SCRIPT", "true\n")
    rc = ssh_cmd.run(_args(ssh_env, "gpu", "--check", "--json"))
    doc = json.loads(capsys.readouterr().out)
    assert rc == ssh_cmd.EXIT_CHOOSE and doc["candidates"] == []


def test_list_json_is_the_same_list_and_exits_0(ssh_env, two_logs, capsys):
    rc = ssh_cmd.run(_args(ssh_env, "gpu", "--list", "--json"))
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and doc["status"] == "list"
    assert {str(p) for p in two_logs} <= {c["target"] for c in doc["candidates"]}
