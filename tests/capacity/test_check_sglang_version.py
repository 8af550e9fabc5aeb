"""`kvtui check --sglang-version X` pins the release whose sizing rules the what-if applies."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

QWEN = Path(__file__).resolve().parents[2] / "sample_logs" / "qwen35-397b-nvfp4-tp8-fp8.log"


def _check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kvtui", "check", *args], capture_output=True,
                          text=True, check=False)


def test_check_pins_the_release():
    plain = json.loads(_check(str(QWEN), "--json", "--fail-on", "never").stdout)["whatif"]
    assert plain["current"]["sglang_rules"] == "0.5.12"
    assert {r["dtype"]: r["max_running_requests"] for r in plain["scenarios"]}["bf16"] == 58
    p = _check(str(QWEN), "--json", "--fail-on", "never", "--sglang-version", "0.5.17")
    pinned = json.loads(p.stdout)["whatif"]
    assert pinned["current"]["sglang_rules"] == "0.5.17"
    # 0.5.17: auto -> extra_buffer (3 + 2 slots per request): 174 // 5 = 34
    assert {r["dtype"]: r["max_running_requests"] for r in pinned["scenarios"]}["bf16"] == 34


def test_check_refuses_an_unknown_release():
    p = _check(str(QWEN), "--sglang-version", "0.6.0")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "0.5.23" in p.stderr
