"""The KV-scale reader over a real sshd: the same facts as on disk, read through SFTP."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from checkpoint_builder import (
    FP8,
    config,
    into_hf_cache,
    llama_tensors,
    weight_ranges,
    write_checkpoint,
)

from kvtui.commands import ssh as ssh_cmd
from kvtui.core.checkpoint import ReadBudget, read_checkpoint
from kvtui.sources.checkpoint_files import inspect_local_checkpoint
from kvtui.sources.ssh.checkpoint import SFTPCheckpointFiles, inspect_checkpoint

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
K = [0.02 + i / 64 for i in range(6)]
V = [0.01 + i / 128 for i in range(6)]


def _comparable(facts) -> dict:
    d = facts.to_dict()
    for key in ("source", "model_path", "sglang_version", "vllm_version"):
        d.pop(key)
    return d


@pytest.mark.parametrize("case", ["calibrated", "trivial", "broken", "unloadable", "partial"])
def test_sftp_reads_what_the_local_reader_reads(make_connector, tmp_path, case):
    k, v, style = list(K), list(V), "modelopt"
    if case == "trivial":
        k, v = [1.0] * 6, [1.0] * 6
    elif case == "broken":
        v[2] = float("nan")
    elif case == "unloadable":
        style = "attn"
    elif case == "partial":
        k[4] = v[4] = None
    model = write_checkpoint(tmp_path / "model dir", llama_tensors(6, k=k, v=v, style=style,
                                                                   dtype="BF16"),
                             config(6, FP8), shards=3)
    conn = make_connector("gpu").connect()
    try:
        remote = inspect_checkpoint(conn, str(model), host="gpu")
    finally:
        conn.close()
    local = inspect_local_checkpoint(str(model))
    assert remote.source == f"gpu:{model}"
    assert remote.kv_scale_verdict().verdict == case
    assert _comparable(remote) == _comparable(local)
    assert remote.kv_scales.bytes_read == local.kv_scales.bytes_read > 0


def test_sftp_reads_only_headers_and_scales(make_connector, tmp_path):
    model = write_checkpoint(tmp_path / "m", llama_tensors(6, k=K, v=V), config(6, FP8),
                             shards=2)
    reads: list[tuple[str, int, int]] = []

    class Recording(SFTPCheckpointFiles):
        def open(self, name):
            f = super().open(name)
            if f is not None:
                real = f.read_at

                def read_at(offset, size):
                    reads.append((name, offset, size))
                    return real(offset, size)

                f.read_at = read_at  # type: ignore[method-assign]
            return f

    conn = make_connector("gpu").connect()
    try:
        facts = read_checkpoint(Recording(conn.sftp(), str(model), "gpu:m"))
    finally:
        conn.close()
    assert facts.kv_scale_verdict().verdict == "calibrated"
    for shard in model.glob("*.safetensors"):
        weights = weight_ranges(shard)
        for name, off, size in reads:
            if name == shard.name:
                assert not any(off < e and s < off + size for s, e in weights), (name, off)
    assert facts.kv_scales.bytes_read == sum(size for _, _, size in reads)


def test_sftp_shard_set_with_one_shard_missing(make_connector, tmp_path):
    model = write_checkpoint(tmp_path / "m", llama_tensors(6, k=K, v=V), config(6, FP8),
                             shards=3)
    (model / "model-00003-of-00003.safetensors").unlink()
    conn = make_connector("gpu").connect()
    try:
        facts = inspect_checkpoint(conn, str(model), host="gpu")
    finally:
        conn.close()
    kv = facts.kv_scales
    assert kv.missing_files == ["model-00003-of-00003.safetensors"]
    assert facts.kv_scale_verdict().verdict == "incomplete"
    read = {t.layer for t in kv.tensors if t.values is not None}
    unread = {t.layer for t in kv.tensors if t.values is None}
    assert read and unread and not read & unread
    assert any("missing" in n for n in facts.notes)


def test_sftp_hub_id_in_the_hosts_cache_with_symlinked_blobs(make_connector, ssh_root,
                                                             tmp_path):
    src = write_checkpoint(tmp_path / "src", llama_tensors(6, k=K, v=V), config(6, FP8),
                           shards=2)
    snap = into_hf_cache(src, ssh_root / "hf-hub", "org/scaled-fp8", rev="feedbeef")
    conn = make_connector("gpu").connect()
    try:
        facts = inspect_checkpoint(conn, "org/scaled-fp8", host="gpu")
        by_folder = inspect_checkpoint(conn, str(snap.parents[1]), host="gpu")
    finally:
        conn.close()
    assert facts.source == f"gpu:{snap}" == by_folder.source
    assert facts.kv_scale_verdict().verdict == "calibrated"
    assert facts.kv_scales.files_listed == 2


def test_sftp_time_limit(make_connector, tmp_path):
    model = write_checkpoint(tmp_path / "m", llama_tensors(6, k=K, v=V), config(6, FP8),
                             shards=3)
    ticks = iter(range(10_000))
    conn = make_connector("gpu").connect()
    try:
        facts = read_checkpoint(SFTPCheckpointFiles(conn.sftp(), str(model), "gpu:m"),
                                budget=ReadBudget(seconds=8.5),
                                clock=lambda: float(next(ticks)))
    finally:
        conn.close()
    assert facts.kv_scales.stopped and "time limit" in facts.kv_scales.stopped
    assert facts.kv_scale_verdict().verdict == "incomplete"


def _args(ssh_env, *argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    ssh_cmd.configure(p)
    return p.parse_args(["-F", str(ssh_env["config"]), *argv])


@pytest.mark.parametrize("ones", [False, True])
def test_ssh_check_alert_follows_the_scale_values(ssh_env, tmp_path, capsys, ones):
    """`kvtui ssh --check`: the log says "no scaling factors"; the checkpoint's values decide."""
    model = write_checkpoint(tmp_path / "served", llama_tensors(
        6, k=[1.0] * 6 if ones else K, v=[1.0] * 6 if ones else V), config(6, FP8))
    text = (SAMPLES / "qwen35-397b-nvfp4-tp8-fp8.log").read_text()
    log = tmp_path / "server.log"
    log.write_text(text.replace("/models/nvidia/Qwen3.5-397B-A17B-NVFP4", str(model)))
    rc = ssh_cmd.run(_args(ssh_env, "gpu", "--log", str(log), "--check", "--json",
                           "--fail-on", "never"))
    report = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert report["checkpoint"]["source"] == f"gpu:{model}"
    assert report["checkpoint"]["kv_scale_verdict"] == ("trivial" if ones else "calibrated")
    alert = next(a for a in report["alerts"] if a["rule"] == "kv-fp8-unscaled")
    assert alert["severity"] == ("critical" if ones else "warning")
    assert ("exactly 1.0" if ones else "KV scales calibrated") in alert["detail"]


def test_ssh_check_alert_keeps_the_logs_confidence_when_the_checkpoint_is_not_there(
        ssh_env, tmp_path, capsys):
    """The served path is not a directory on the host: nothing was read, so the alert says
    what the log alone supports (the confidence `kvtui check` gives the same log) and that the
    checkpoint was not found there, instead of rising to "high"."""
    from kvtui.commands import check as check_cmd

    missing = tmp_path / "not-on-this-host"
    text = (SAMPLES / "qwen35-397b-nvfp4-tp8-fp8.log").read_text()
    log = tmp_path / "server.log"
    log.write_text(text.replace("/models/nvidia/Qwen3.5-397B-A17B-NVFP4", str(missing)))
    p = argparse.ArgumentParser()
    check_cmd.configure(p)
    assert check_cmd.run(p.parse_args([str(log), "--json", "--fail-on", "never"])) == 0
    alone = next(a for a in json.loads(capsys.readouterr().out)["alerts"]
                 if a["rule"] == "kv-fp8-unscaled")
    rc = ssh_cmd.run(_args(ssh_env, "gpu", "--log", str(log), "--check", "--json",
                           "--fail-on", "never"))
    report = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert report["checkpoint"]["source"] is None
    assert any("not a directory on the host" in n for n in report["checkpoint"]["notes"])
    alert = next(a for a in report["alerts"] if a["rule"] == "kv-fp8-unscaled")
    assert alert["confidence"] == alone["confidence"] == "medium"
    assert alert["severity"] == alone["severity"]
    assert f"{missing}: not a directory on the host" in alert["detail"]
    assert "nothing of the checkpoint was read" in alert["detail"]
