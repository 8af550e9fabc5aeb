"""`kvtui compare`: goldens pin its JSON and text on the bundled restart pairs, two files, an
SGLang run against a vLLM run of the same model, and a log whose second start has no argument
dump; the gate's exit codes are `check`'s. Refresh with KVTUI_UPDATE_GOLDEN=1 when a change
means to change what it says."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "compare"
UPDATE = os.environ.get("KVTUI_UPDATE_GOLDEN") == "1"

CASES = {
    "restart-fp8-to-bf16": ["sample_logs/qwen35-397b-nvfp4-tp8-fp8-then-bf16.log"],
    "two-files-fp8-bf16": ["sample_logs/qwen35-397b-nvfp4-tp8-fp8.log",
                           "sample_logs/qwen35-397b-nvfp4-tp8-bf16.log"],
    "sglang-vs-vllm": ["sample_logs/llama31-70b-tp8.log",
                       "sample_logs/vllm-llama31-70b-tp8-bf16.log"],
    "no-dump-tp1-to-tp2": ["sample_logs/llama31-8b-tp1-then-tp2-no-dump.log"],
    "vllm-tp8-to-tp4": ["sample_logs/vllm-llama31-70b-tp8-then-tp4.log"],
    "mem-fraction": ["sample_logs/llama31-70b-tp8-mem-fraction-restart.log#1",
                     "sample_logs/llama31-70b-tp8-mem-fraction-restart.log#2"],
}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kvtui", "compare", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def golden(path: Path, actual: str) -> None:
    if UPDATE:
        path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"missing golden {path.name}; run with KVTUI_UPDATE_GOLDEN=1"
    assert actual == path.read_text(encoding="utf-8"), f"{path.name} changed"


@pytest.mark.parametrize("case", sorted(CASES))
def test_compare_json_golden(case):
    out = run(*CASES[case], "--json", "--fail-on", "never")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert {"a", "b", "args", "facts", "fits", "alerts", "runtime", "prediction"} <= set(doc)
    golden(GOLDEN / f"{case}.json", out.stdout)


@pytest.mark.parametrize("case", sorted(CASES))
def test_compare_text_golden(case):
    out = run(*CASES[case], "--fail-on", "never")
    assert out.returncode == 0, out.stderr
    golden(GOLDEN / f"{case}.txt", out.stdout)


def test_prediction_object_in_json():
    doc = json.loads(run(*CASES["restart-fp8-to-bf16"], "--json").stdout)
    p = doc["prediction"]
    assert list(p)[:5] == ["from_run", "setting", "predicted_tokens", "logged_tokens", "ratio"]
    assert p["predicted_tokens"] == p["logged_tokens"] == 304_087 and p["ratio"] == 1.0


def _median_of(figures: list[float]) -> float:
    """The median of a run's non-zero printed figures, each rounded to a whole tok/s."""
    kept = sorted(int(x + 0.5) for x in figures if int(x + 0.5) > 0)
    n = len(kept)
    return (kept[(n - 1) // 2] + kept[n // 2]) / 2


def _per_run(path: str, pattern: str) -> list[list[float]]:
    """The figures `pattern` captures, split at each argument dump (a new run)."""
    import re

    runs: list[list[float]] = []
    for line in (ROOT / path).read_text().splitlines():
        if "server_args=" in line or "non-default args:" in line:
            runs.append([])
        m = re.search(pattern, line)
        if m and runs:
            runs[-1].append(float(m.group(1)))
    return runs


@pytest.mark.parametrize(("case", "pattern"), [
    ("restart-fp8-to-bf16", r"Prefill batch, .*input throughput \(token/s\): ([0-9.]+)"),
    ("vllm-tp8-to-tp4", r"Avg prompt throughput: ([0-9.]+) tokens/s"),
])
def test_prefill_throughput_is_compared_as_each_run_printed_it(case, pattern):
    """The restart pair's SGLang prefill lines print `input throughput` (0.5.9+), the vLLM
    pair's stats lines `Avg prompt throughput`: compare gives each run's median of the non-zero
    figures, computed here from the log text itself, and the count of lines it is of."""
    first, second = _per_run(CASES[case][0], pattern)
    pt = json.loads(run(*CASES[case], "--json").stdout)["runtime"]["prefill_throughput"]
    assert isinstance(pt, dict), pt
    assert (pt["a"], pt["b"]) == (_median_of(first), _median_of(second))
    assert pt["a_lines"] == sum(int(x + 0.5) > 0 for x in first) > 10
    assert pt["b_lines"] == sum(int(x + 0.5) > 0 for x in second) > 10
    assert pt["change"] == round(pt["b"] / pt["a"] - 1, 4)
    assert pt["note"].startswith("approximate")
    text = run(*CASES[case]).stdout
    assert f"{pt['a']:,.0f}  ->  {pt['b']:,.0f} tok/s" in text


def test_prefill_throughput_not_measured_says_which_run_lacks_it():
    """SGLang's prefill line prints no input throughput before 0.5.9 (the 0.5.5 layout of
    llama31-70b-tp8.log): compare says which run lacks it, and does not gate on it."""
    pt = json.loads(run(*CASES["sglang-vs-vllm"], "--json").stdout)["runtime"][
        "prefill_throughput"]
    assert pt == ("not measured: sample_logs/llama31-70b-tp8.log#1 prints no non-zero prefill "
                  "throughput")


def test_gate_on_alerts_of_the_later_run():
    pair = CASES["two-files-fp8-bf16"]
    assert run(*pair).returncode == 0  # the critical is resolved; a warning remains
    assert run(*pair, "--fail-on", "warning").returncode == 1
    out = run(*reversed(pair))  # back to the unscaled FP8: a critical remains
    assert out.returncode == 1 and "kv-fp8-unscaled" in out.stdout


def test_gate_on_a_throughput_drop():
    pair = CASES["restart-fp8-to-bf16"]
    doc = json.loads(run(*pair, "--json").stdout)
    drop = -doc["runtime"]["aggregate"]["change"] * 100
    assert drop > 1
    failed = run(*pair, "--max-throughput-drop", f"{drop / 2:.2f}")
    assert failed.returncode == 1 and "dropped" in failed.stdout
    assert run(*pair, "--max-throughput-drop", f"{drop * 2:.2f}").returncode == 0


def test_errors_exit_2():
    one = run("sample_logs/llama31-70b-tp8.log")  # a single start: nothing to compare with
    assert one.returncode == 2 and "server start" in one.stderr
    assert run("sample_logs/llama31-70b-tp8.log#3", "sample_logs/llama31-70b-tp8.log"
               ).returncode == 2
    assert run("no/such/file.log").returncode == 2


def test_the_readme_walk_through_is_printed_verbatim():
    """The README's deploy-loop example is what `kvtui compare` prints today."""
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"^`(?P<cmd>kvtui compare (?P<arg>[^` ]+))` \(one file", readme, re.M)
    assert m, "the README's compare example"
    block = readme[m.end():].split("```\n", 2)[1]
    out = run(m.group("arg"))
    assert out.returncode == 0
    assert out.stdout == block
