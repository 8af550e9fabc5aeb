"""Issue 41 point 3: `kvtui ssh` keeps the user's --model, --checkpoint and release options in
every session it builds, the read-ahead start-up preview included (it used to fold the preview
with the defaults, so the first verdict on screen sized another model under another release),
through a real sshd."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def _two_starts(path: Path) -> None:
    """A BF16 server, some runtime, then an FP8 restart: the host reads the restart ahead."""
    first = (SAMPLES / "llama31-70b-tp8.log").read_text().splitlines()
    second = (SAMPLES / "qwen35-397b-nvfp4-tp8-fp8.log").read_text().splitlines()
    decode = next(x for x in first if "Decode batch" in x)
    path.write_text("".join(x + "\n" for x in first + [decode] * 36000 + second))


def _args(*argv: str) -> argparse.Namespace:
    from kvtui.commands import ssh as ssh_cmd

    p = argparse.ArgumentParser()
    ssh_cmd.configure(p)
    return p.parse_args(list(argv))


def test_the_read_ahead_preview_keeps_model_and_release(make_connector, tmp_path):
    from kvtui.commands.ssh import analyse_remote, pipeline_options
    from kvtui.sources.ssh.follow import Target

    log = tmp_path / "two.log"
    _two_starts(log)
    args = _args("gpu", "--model", "llama-3.1-70b", "--sglang-version", "0.5.2")
    verdicts: list = []
    session = analyse_remote(make_connector("gpu"), None, Target("file", str(log)), None, "gpu",
                             on_verdict=lambda block, report: verdicts.append(report),
                             options=pipeline_options(args))
    assert verdicts, "the host read the restart's start-up ahead"
    for report in (verdicts[0], session.report()):
        assert report.whatif is not None
        assert report.whatif.model is not None
        assert report.whatif.model["name"] == "meta-llama/Llama-3.1-70B"
        assert report.whatif.version["label"] == "0.5.2"
        assert report.whatif.version["reasons"] == ["--sglang-version 0.5.2"]
    assert verdicts[0].partial and not session.report().partial

    # without the options the same preview sizes the logged model under the dated release
    plain: list = []
    analyse_remote(make_connector("gpu"), None, Target("file", str(log)), None, "gpu",
                   on_verdict=lambda block, report: plain.append(report))
    assert plain[0].whatif is not None and plain[0].whatif.model is not None
    assert plain[0].whatif.model["name"] != "meta-llama/Llama-3.1-70B"
    assert plain[0].whatif.version["label"] != "0.5.2"


def test_ssh_check_uses_a_local_checkpoint_and_the_model(ssh_env, tmp_path, capsys):
    from checkpoint_builder import FP8, config, llama_tensors, write_checkpoint

    from kvtui.commands import ssh as ssh_cmd
    from kvtui.commands.check import analyse_files
    from kvtui.sources.checkpoint_files import inspect_local_checkpoint

    log = tmp_path / "two.log"
    _two_starts(log)
    ckpt = write_checkpoint(tmp_path / "m", llama_tensors(4, k=[0.5] * 4, v=[0.25] * 4),
                            config(4, FP8))
    extra = ["--checkpoint", str(ckpt)]
    args = _args("-F", str(ssh_env["config"]), "gpu", "--log", str(log), "--check", "--json",
                 "--fail-on", "never", "--model", "llama-3.1-70b", "--vllm-version", "0.33.0",
                 *extra)
    assert ssh_cmd.run(args) == 0
    out = json.loads(capsys.readouterr().out)
    local = analyse_files([str(log)], model="llama-3.1-70b",
                          checkpoint=inspect_local_checkpoint(str(ckpt)),
                          releases=(("vllm", "0.33.0"),))[0].report().to_json()
    for key in ("whatif", "checkpoint"):
        assert out.get(key) == json.loads(json.dumps(local.get(key)).replace(str(log),
                                                                              f"gpu:{log}")), key
    assert out["whatif"]["model"]["name"] == "meta-llama/Llama-3.1-70B"
    assert out["checkpoint"] is not None  # the local copy's facts, not an SFTP read


def test_a_bad_model_is_refused_before_connecting(capsys):
    from kvtui.commands import ssh as ssh_cmd

    args = _args("nohost.invalid", "--check", "--model", "no-such-preset-xyz")
    assert ssh_cmd.run(args) == 2
    assert "no-such-preset-xyz" in capsys.readouterr().err
