"""`kvtui check` as a deploy gate over several files: each file is its own report, an alert in
any file fails the gate, and a file that is no LLM-server log says so and exits 3."""

from __future__ import annotations

import json
import random

import pytest

from tests.test_cli_check import BF16, FP8, SAMPLES, kvtui

CLEAN = SAMPLES / "llama31-70b-tp8.log"


@pytest.mark.parametrize("order", [(FP8, CLEAN), (CLEAN, FP8)])
def test_a_critical_alert_in_any_file_fails_the_gate(order):
    out = kvtui("check", *map(str, order))
    assert out.returncode == 1
    assert out.stdout.count("=== file ") == 2
    assert "kv-fp8-unscaled" in out.stdout
    gate = out.stdout[out.stdout.index("\nGate\n"):]
    assert f"{FP8.relative_to(SAMPLES.parent)}: CRITICAL kv-fp8-unscaled" in gate
    assert f"{CLEAN.relative_to(SAMPLES.parent)}: no alerts" in gate
    assert gate.rstrip().endswith("exit 1 (--fail-on critical)")


def test_several_files_in_json_are_several_reports():
    out = kvtui("check", "--json", str(FP8), str(BF16))
    doc = json.loads(out.stdout)
    assert out.returncode == doc["exit_code"] == 1
    assert [r["sources"][0]["name"] for r in doc["files"]] == [
        str(FP8), str(BF16)]
    assert [a["rule"] for a in doc["files"][0]["alerts"]] == ["kv-fp8-unscaled"]
    assert doc["files"][1]["kv_cache"]["effective_dtype"] == "bf16"
    one = json.loads(kvtui("check", "--json", str(FP8)).stdout)
    assert doc["files"][0] == one  # each file's report is the one it gets alone


# random.Random(3).randbytes, not os.urandom: the same bytes in every pytest-xdist worker, which
# collect the suite each on its own and must find the same test ids.
@pytest.mark.parametrize("content", [b"", b"hello\nworld\n", random.Random(3).randbytes(4096),
                                     b'{"level": "info", "msg": "nginx started"}\n'])
def test_a_file_that_is_no_llm_server_log_exits_3(tmp_path, content):
    path = tmp_path / "other.log"
    path.write_bytes(content)
    out = kvtui("check", str(path))
    assert out.returncode == 3, out.stdout
    assert "none recognised" in out.stdout
    js = kvtui("check", "--json", str(path))
    assert js.returncode == 3 and json.loads(js.stdout)["engine"] is None


def test_an_alert_outranks_an_unrecognised_file(tmp_path):
    other = tmp_path / "other.log"
    other.write_text("not a server log\n")
    assert kvtui("check", str(other), str(CLEAN)).returncode == 3
    assert kvtui("check", str(other), str(FP8)).returncode == 1
    assert kvtui("check", "--fail-on", "never", str(other), str(FP8)).returncode == 3


def test_stream_prints_one_report_per_file():
    out = kvtui("check", "--stream", str(CLEAN), str(FP8))
    lines = [json.loads(x) for x in out.stdout.splitlines()]
    assert out.returncode == 1
    assert [r["sources"][0]["name"] for r in lines] == [
        str(CLEAN), str(FP8)]


def test_a_pinned_release_steers_the_advice_too():
    """--sglang-version pins the release for the what-if and for every fix the alerts give."""
    pinned = json.loads(kvtui("check", "--json", "--sglang-version", "0.5.3", str(FP8)).stdout)
    dated = json.loads(kvtui("check", "--json", str(FP8)).stdout)
    assert "--kv-cache-dtype bf16" in dated["alerts"][0]["fix"]
    assert "SGLang 0.5.3 has no bf16 choice" in pinned["alerts"][0]["fix"]
    assert pinned["whatif"]["version"]["label"] == "0.5.3"
