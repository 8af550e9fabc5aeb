"""Discovery of a stand-in SGLang server, SFTP checkpoint inspection, and `kvtui ssh` headless."""

from __future__ import annotations

import argparse
import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from kvtui.commands import ssh as ssh_cmd
from kvtui.core.checkpoint import (
    CheckpointFacts,
    parse_config_json,
    parse_hf_quant_config,
    parse_safetensors_index,
)
from kvtui.sources.ssh.checkpoint import inspect_checkpoint
from kvtui.sources.ssh.discover import discover, model_path_from_argv, parse_discovery

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
HUB_ID = "meta-llama/Llama-3.1-70B-Instruct"  # what the sample log's server_args names


def make_model_dir(d: Path, *, scales: bool, single_file: bool = False) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.json").write_text(json.dumps({
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 2,
        "num_attention_heads": 64, "num_key_value_heads": 8, "hidden_size": 8192,
        "torch_dtype": "bfloat16"}))
    names = {f"model.layers.{i}.self_attn.q_proj.weight": "a.safetensors" for i in range(2)}
    if scales:
        (d / "hf_quant_config.json").write_text(json.dumps({
            "producer": {"name": "modelopt"},
            "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}}))
        for i in range(2):
            names[f"model.layers.{i}.self_attn.k_proj.k_scale"] = "a.safetensors"
            names[f"model.layers.{i}.self_attn.v_proj.v_scale"] = "a.safetensors"
    if single_file:
        header = json.dumps({n: {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}
                             for n in names}).encode()
        (d / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 4)
    else:
        (d / "model.safetensors.index.json").write_text(json.dumps({"weight_map": names}))
    return d


# -- core parsing (pure) -----------------------------------------------------------------------

def test_core_parsing_scales_and_algo():
    f = CheckpointFacts()
    parse_config_json(json.dumps({"num_hidden_layers": 4, "quantization_config": {
        "quant_method": "compressed-tensors",
        "kv_cache_scheme": {"num_bits": 8, "type": "float"}}}), f)
    assert f.has_config and f.quant_method == "compressed-tensors"
    assert f.kv_cache_quant_algo == "FP8" and f.model_config == {"num_hidden_layers": 4}
    parse_safetensors_index(json.dumps({"weight_map": {"l.0.self_attn.k_scale": "x",
                                                        "l.0.self_attn.v_scale": "x",
                                                        "l.0.k_proj.weight_scale": "x"}}), f)
    assert (f.has_k_scale, f.has_v_scale, f.scale_tensor_count) == (True, True, 2)
    assert "per-layer k_scale/v_scale" in f.summary()
    g = CheckpointFacts()
    parse_hf_quant_config('{"quantization": {"quant_algo": "NVFP4", '
                          '"kv_cache_quant_algo": null}}', g)
    parse_safetensors_index('{"weight_map": {"w": "x"}}', g)
    assert g.has_k_scale is False and g.kv_cache_quant_algo is None
    assert "no k_scale/v_scale" in g.summary()
    bad = CheckpointFacts()
    parse_config_json("{not json", bad)
    assert not bad.has_config and bad.notes


def test_model_path_from_argv():
    assert model_path_from_argv(["python", "-m", "sglang.launch_server", "--model-path",
                                 "/m"]) == "/m"
    assert model_path_from_argv(["sglang", "serve", "org/name", "--tp", "8"]) == "org/name"
    assert model_path_from_argv(["x", "--model=/a b"]) == "/a b"


# -- over SSH -----------------------------------------------------------------------------------

@pytest.fixture
def stand_in_server(tmp_path):
    """A process that looks like `python -m sglang.launch_server` with stdout+stderr in a file."""
    logdir = tmp_path / "logs dir; x"
    logdir.mkdir()
    log = logdir / "sglang server.log"
    model = make_model_dir(tmp_path / "models" / "m1", scales=True)
    code = ("import sys, time; print('server_args=ServerArgs(model_path=x)', flush=True); "
            "time.sleep(60)")
    with open(log, "ab") as f:
        proc = subprocess.Popen([sys.executable, "-c", code, "-m", "sglang.launch_server",
                                 "--model-path", str(model), "--tp", "1"],
                                stdout=f, stderr=f)
    try:
        yield {"log": log, "model": model, "pid": proc.pid}
    finally:
        proc.kill()
        proc.wait(5)


def test_discovery_finds_server_process_and_log_files(make_connector, stand_in_server, tmp_path):
    other = tmp_path / "old-runs"
    other.mkdir()
    shutil.copy(SAMPLES / "llama31-70b-tp8.log", other / "run1.log")
    (other / "unrelated.log").write_text("nothing to see\n")
    conn = make_connector("gpu").connect()
    try:
        found = discover(conn, roots=(str(tmp_path),), timeout=30)
    finally:
        conn.close()
    procs = [c for c in found.candidates if c.pid == stand_in_server["pid"]]
    assert len(procs) == 1, found
    assert procs[0].kind == "file" and procs[0].target == str(stand_in_server["log"])
    assert procs[0].model_path == str(stand_in_server["model"])
    assert procs[0].python and "python" in procs[0].python
    files = [c.target for c in found.candidates if c.kind == "file" and c.pid is None]
    assert str(other / "run1.log") in files
    assert str(other / "unrelated.log") not in files
    assert str(stand_in_server["log"]) not in files  # listed once, as the server's output


def test_parse_discovery_handles_pipes_units_and_forks():
    us = "\037"
    text = "\n".join([
        us.join(["proc", "10", "1", "pipe:[1]", "socket:[2]", "/usr/bin/python3",
                 "sglang.service", "python3", "-m", "sglang.launch_server", "--model", "a/b"]),
        us.join(["proc", "11", "10", "pipe:[1]", "socket:[2]", "/usr/bin/python3", "",
                 "python3", "-m", "sglang.launch_server"]),
        us.join(["proc", "20", "1", "/dev/pts/3", "/dev/pts/3", "/usr/bin/python3", "",
                 "sglang", "serve", "x/y"]),
        us.join(["docker", "abc123", "lmsysorg/sglang:latest", "sgl", '"python3 -m sglang"']),
    ])
    found = parse_discovery(text)
    kinds = [(c.kind, c.target, c.pid) for c in found.candidates]
    assert ("journal", "sglang.service", 10) in kinds
    assert ("none", "", 20) in kinds
    assert not any(c.pid == 11 for c in found.candidates)  # forked child of pid 10
    assert ("docker", "sgl", None) in kinds


@pytest.mark.parametrize("scales,single", [(True, False), (False, False), (True, True)])
def test_sftp_checkpoint_inspection(make_connector, tmp_path, scales, single):
    model = make_model_dir(tmp_path / "model dir", scales=scales, single_file=single)
    conn = make_connector("gpu").connect()
    try:
        facts = inspect_checkpoint(conn, str(model), host="gpu")
    finally:
        conn.close()
    assert facts.has_config and facts.source == f"gpu:{model}"
    assert facts.model_config["num_key_value_heads"] == 8
    assert facts.has_k_scale is scales and facts.has_v_scale is scales
    assert facts.scale_tensor_count == (4 if scales else 0)
    assert facts.kv_cache_quant_algo == ("FP8" if scales else None)


def test_checkpoint_from_hub_id_in_host_cache(make_connector, ssh_root):
    snap = ssh_root / "hf-hub" / "models--org--tiny" / "snapshots" / "0123abcd"
    make_model_dir(snap, scales=False)
    (snap.parents[1] / "refs").mkdir(exist_ok=True)
    (snap.parents[1] / "refs" / "main").write_text("0123abcd")
    conn = make_connector("gpu").connect()
    try:
        facts = inspect_checkpoint(conn, "org/tiny", host="gpu")
        missing = inspect_checkpoint(conn, "org/absent", host="gpu")
    finally:
        conn.close()
    assert facts.source == f"gpu:{snap}" and facts.has_k_scale is False
    assert missing.source is None and any("not found" in n for n in missing.notes)


# -- the command, headless -----------------------------------------------------------------------

def _args(ssh_env, *argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    ssh_cmd.configure(p)
    return p.parse_args(["-F", str(ssh_env["config"]), *argv])


def test_ssh_check_json_with_checkpoint(ssh_env, ssh_root, tmp_path, capsys):
    snap = ssh_root / "hf-hub" / ("models--" + HUB_ID.replace("/", "--")) / "snapshots" / "s1"
    make_model_dir(snap, scales=True)
    log = tmp_path / "a b; c" / "server.log"
    log.parent.mkdir()
    shutil.copy(SAMPLES / "llama31-70b-tp8-fp8-scaled.log", log)
    rc = ssh_cmd.run(_args(ssh_env, "gpu", "--log", str(log), "--check", "--json",
                           "--fail-on", "never", "--no-checkpoint"))
    report = json.loads(capsys.readouterr().out)
    assert rc == 0
    local = _local_report(log)
    for key in ("model", "kv_cache", "pools", "capacity", "alerts", "runs", "whatif"):
        assert report[key] == _rename_sources(local[key], str(log), f"gpu:{log}"), key
    assert "checkpoint" not in report
    # the same, plus what the checkpoint itself says (found via the hub id in the host's cache)
    rc = ssh_cmd.run(_args(ssh_env, "gpu", "--log", str(log), "--check", "--json",
                           "--fail-on", "never"))
    report = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert report["checkpoint"]["has_k_scale"] is True
    assert report["checkpoint"]["kv_cache_quant_algo"] == "FP8"
    assert report["checkpoint"]["source"] == f"gpu:{snap}"
    assert report["sources"][0]["name"] == f"gpu:{log}"


def _local_report(path: Path) -> dict:
    from kvtui.commands.check import analyse_files

    return analyse_files([str(path)])[0].report().to_json()


def _rename_sources(obj, old: str, new: str):
    return json.loads(json.dumps(obj).replace(json.dumps(old)[1:-1], json.dumps(new)[1:-1]))


def test_ssh_check_exit_code_matches_kvtui_check(ssh_env, tmp_path, capsys):
    from kvtui.commands.check import analyse_files
    from kvtui.core.gate import exit_code

    log = tmp_path / "server.log"
    shutil.copy(SAMPLES / "qwen35-397b-nvfp4-tp8-fp8.log", log)
    expected = exit_code(analyse_files([str(log)])[0].report(), "warning")
    rc = ssh_cmd.run(_args(ssh_env, "gpu", "--log", str(log), "--check", "--fail-on", "warning",
                           "--no-checkpoint"))
    capsys.readouterr()
    assert rc == expected


def test_ssh_check_errors_exit_2_without_traceback(ssh_env, tmp_path, capsys):
    rc = ssh_cmd.run(_args(ssh_env, "gpu", "--log", str(tmp_path / "missing.log"), "--check"))
    err = capsys.readouterr().err
    assert rc == 2 and "no such file" in err and "Traceback" not in err
    # which host it is missing on (issue 36 point 7)
    assert f"{tmp_path / 'missing.log'} (on gpu): no such file" in err
    ssh_env["known"].write_text("")
    rc = ssh_cmd.run(_args(ssh_env, "gpu", "--check"))
    err = capsys.readouterr().err
    assert rc == 2 and "not known" in err and "SHA256:" in err and "Traceback" not in err


def test_ssh_list_headless(ssh_env, stand_in_server, capsys, monkeypatch):
    monkeypatch.setattr("kvtui.sources.ssh.discover.DEFAULT_ROOTS", ())
    rc = ssh_cmd.run(_args(ssh_env, "gpu", "--list"))
    out = capsys.readouterr().out
    assert rc == 0
    assert str(stand_in_server["log"]) in out
    assert "--log" in out


def test_interactive_launch_hands_follower_and_checkpoint_to_tui(ssh_env, tmp_path, monkeypatch):
    """Without --check the command opens the TUI on a RemoteFollower; once the log names its
    model, the checkpoint is inspected on the follower's connection and lands in the analyzer."""
    import kvtui.ui.app as app_mod

    model = make_model_dir(tmp_path / "served model", scales=False)
    log = tmp_path / "tui.log"
    log.write_text(f"[2026-01-01 00:00:00] server_args=ServerArgs(model_path='{model}', "
                   f"kv_cache_dtype='fp8_e4m3', tp_size=1)\n")
    seen: dict = {}

    def fake_run_app(source, title, **opts):
        """The TUI minus Textual: the real ingest feeds the session the command handed over."""
        import time

        from kvtui.ui.ingest import Ingest

        seen["title"], seen["opts"] = title, opts
        ingest = Ingest(source, session=opts["session"])
        notices: list = []
        ingest.start()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not any("checkpoint:" in n.message
                                                      for n in notices):
            notices += ingest.drain().notices
            time.sleep(0.05)
        ingest.close(10)
        seen["notices"] = notices
        return 0

    monkeypatch.setattr(app_mod, "run_app", fake_run_app)
    rc = ssh_cmd.run(_args(ssh_env, "gpu", "--log", str(log)))
    assert rc == 0
    assert seen["title"] == f"gpu:{log}"
    facts = seen["opts"]["session"].options.checkpoint
    assert facts is not None and facts.has_k_scale is False
    assert any("no k_scale/v_scale" in n.message for n in seen["notices"])


def test_terminal_picker(monkeypatch, capsys):
    from kvtui.sources.ssh.discover import Candidate

    cands = [Candidate("file", "/a.log", "a"), Candidate("none", "", "tty"),
             Candidate("docker", "c1", "docker c1")]
    answers = iter(["7", "2"])
    monkeypatch.setattr("builtins.input", lambda prompt: next(answers))
    assert ssh_cmd._pick("gpu", cands).target == "c1"


@pytest.mark.parametrize("packages", [{"sglang": "0.5.9"}, {"vllm": "0.11.0"},
                                      {"sglang": "0.5.9", "vllm": "0.10.1.1"}])
def test_engine_versions_from_the_servers_interpreter(make_connector, tmp_path, packages):
    """The server's own python (from discovery) is asked, by package metadata only, for every
    engine in one round trip; the checkpoint facts carry what it says."""
    from kvtui.sources.ssh.checkpoint import engine_versions

    site = tmp_path / "site"
    for name, version in packages.items():
        dist = site / f"{name}-{version}.dist-info"
        dist.mkdir(parents=True)
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\n"
                                       f"Version: {version}\n")
    py = tmp_path / "venv bin" / "python"
    py.parent.mkdir()
    py.write_text(f"#!/bin/sh\nPYTHONPATH='{site}' exec {sys.executable} \"$@\"\n")
    py.chmod(0o755)
    conn = make_connector("gpu").connect()
    try:
        assert engine_versions(conn, str(py)) == packages
        facts = inspect_checkpoint(conn, str(tmp_path / "absent"), host="gpu", python=str(py))
        assert facts.engine_version("sglang") == packages.get("sglang")
        assert facts.engine_version("vllm") == packages.get("vllm")
        assert facts.notes
    finally:
        conn.close()


def test_cli_entry_point_end_to_end(ssh_env, tmp_path):
    """`python -m kvtui ssh ... --check` through the real CLI dispatch, in a child process."""
    import os

    log = tmp_path / "cli.log"
    shutil.copy(SAMPLES / "llama31-70b-tp8.log", log)
    proc = subprocess.run(
        [sys.executable, "-m", "kvtui", "ssh", "-F", str(ssh_env["config"]), "gpu", "--log",
         str(log), "--check", "--json", "--fail-on", "never", "--no-checkpoint"],
        capture_output=True, text=True, timeout=60, env=dict(os.environ),
        cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["sources"] == [{"name": f"gpu:{log}", "lines": len(log.read_text().splitlines())}]


def test_missing_python_on_host_is_a_clear_error(ssh_env, tmp_path, capsys):
    log = tmp_path / "x.log"
    log.write_text("a\n")
    rc = ssh_cmd.run(_args(ssh_env, "gpu", "--log", str(log), "--check",
                           "--python", "/no/such/python3"))
    err = capsys.readouterr().err
    assert rc == 2 and "/no/such/python3 is not available on the host" in err


# -- a connection lost during the read (the follower closes a lent connection on a drop) ----------

def test_sftp_on_a_closed_connection_is_an_ssherror(make_connector):
    from kvtui.sources.ssh.connect import SSHError

    conn = make_connector("gpu").connect()
    conn.sftp()  # opened (and cached) while the connection lives
    conn.close()
    assert not conn.is_active()
    with pytest.raises(SSHError, match="connection closed"):
        conn.sftp()


def test_checkpoint_on_a_closed_connection_is_a_note(make_connector, tmp_path):
    """Regression: AttributeError 'NoneType' object has no attribute 'open_sftp_client'."""
    model = make_model_dir(tmp_path / "model", scales=False)
    conn = make_connector("gpu").connect()
    conn.close()
    facts = inspect_checkpoint(conn, str(model), host="gpu")
    assert facts.source is None and not facts.has_config
    assert any("SFTP unavailable: connection closed" in n for n in facts.notes)
    assert facts.engine_version("sglang") is None


def _hub_model(ssh_root: Path) -> Path:
    snap = ssh_root / "hf-hub" / ("models--" + HUB_ID.replace("/", "--")) / "snapshots" / "s1"
    make_model_dir(snap, scales=True)
    return snap


def test_ssh_check_reconnects_for_the_checkpoint_after_a_drop(ssh_env, ssh_root, tmp_path,
                                                              capsys, monkeypatch):
    """Regression: `--check` inspected the checkpoint on the connection the read had closed
    (a traceback); it now reconnects."""
    import kvtui.commands.ssh as mod

    snap = _hub_model(ssh_root)
    log = tmp_path / "server.log"
    shutil.copy(SAMPLES / "llama31-70b-tp8-fp8-scaled.log", log)
    lent: list = []
    real = mod.analyse_remote

    def drop_after(connector, conn, *a, **kw):
        analyzer = real(connector, conn, *a, **kw)
        lent.append(conn)
        conn.close()  # what RemoteFollower.run does to a lent connection on a lost stream
        return analyzer

    monkeypatch.setattr(mod, "analyse_remote", drop_after)
    rc = ssh_cmd.run(_args(ssh_env, "gpu", "--log", str(log), "--check", "--json",
                           "--fail-on", "never"))
    out, err = capsys.readouterr()
    assert rc == 0 and "Traceback" not in err
    assert lent and not lent[0].is_active()
    report = json.loads(out)
    assert report["checkpoint"]["source"] == f"gpu:{snap}"
    assert report["checkpoint"]["has_k_scale"] is True
    local = _local_report(log)
    assert report["kv_cache"] == _rename_sources(local["kv_cache"], str(log), f"gpu:{log}")


def test_ssh_check_when_reconnecting_fails_notes_it(ssh_env, ssh_root, tmp_path, capsys,
                                                   monkeypatch):
    import kvtui.commands.ssh as mod
    from kvtui.sources.ssh.connect import SSHError

    _hub_model(ssh_root)
    log = tmp_path / "server.log"
    shutil.copy(SAMPLES / "llama31-70b-tp8-fp8-scaled.log", log)
    real = mod.analyse_remote

    def drop_for_good(connector, conn, *a, **kw):
        analyzer = real(connector, conn, *a, **kw)
        conn.close()

        def refuse():
            raise SSHError("gpu: connection refused")

        monkeypatch.setattr(connector, "connect", refuse)
        return analyzer

    monkeypatch.setattr(mod, "analyse_remote", drop_for_good)
    rc = ssh_cmd.run(_args(ssh_env, "gpu", "--log", str(log), "--check", "--json",
                           "--fail-on", "never"))
    out, err = capsys.readouterr()
    assert rc == 0 and "Traceback" not in err
    report = json.loads(out)
    assert any("reconnecting failed: gpu: connection refused" in n
               for n in report["checkpoint"]["notes"])
