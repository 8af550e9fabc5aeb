"""A checkpoint look that read nothing does not raise an FP8 alert's confidence.

`kvtui check --checkpoint DIR` on a directory with neither a config nor a tensor list: the
facts have a source but say nothing about the scales, so kv-fp8-unscaled keeps the confidence
the log alone gives and says nothing of the checkpoint was read (the SSH case, a served path
that is not a directory on the host, is tests/ssh/test_checkpoint_scales.py)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from kvtui.commands import check as check_cmd

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def _alert(capsys, *argv: str) -> dict:
    p = argparse.ArgumentParser()
    check_cmd.configure(p)
    assert check_cmd.run(p.parse_args([*argv, "--json", "--fail-on", "never"])) == 0
    report = json.loads(capsys.readouterr().out)
    return next(a for a in report["alerts"] if a["rule"] == "kv-fp8-unscaled")


def test_an_empty_checkpoint_directory_keeps_the_logs_confidence(tmp_path, capsys):
    log = str(SAMPLES / "qwen35-397b-nvfp4-tp8-fp8.log")
    empty = tmp_path / "empty"
    empty.mkdir()
    alone = _alert(capsys, log)
    looked = _alert(capsys, log, "--checkpoint", str(empty))
    assert looked["confidence"] == alone["confidence"] == "medium"
    assert "nothing of the checkpoint was read (config.json: missing" in looked["detail"]
