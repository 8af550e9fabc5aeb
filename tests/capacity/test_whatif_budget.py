"""mem_fraction_static / TP what-ifs and the inverse, on the bundled Qwen3.5-397B TP8 sample.

The sample log (SGLang 0.5.10-0.5.12 formats) logs 608,174 FP8 tokens and 174 Mamba slots at
mem_fraction_static 0.82, pre (Load weight begin) 46.98 GiB. SGLang 0.5.12 sizes it as
(model_runner_kv_cache_mixin.py:146-204 in 0.5.9-0.5.12, radix cache on, no_buffer):
  rest   = KV + slots x per_slot = 608,174 x 7,680 + 174 x 24,007,680 = 8,848,112,640 B
  at 0.90: rest' = rest + 46.98 GiB x 0.08 = 12,883,663,911 B
  slots' = int(rest' x 0.9 / 1.9 // 24,007,680) = 254
  tokens (BF16) = (rest' - 254 x 24,007,680) // 15,360 = 441,778
  max_running_requests = min(2048, 441,778 // 2, 254 // 3) = 84
Before this change kvtui said 566,818 tokens and 58 (the state held at 174 slots).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kvtui.engines.sglang.fromrun import calculator_from_run
from kvtui.engines.sglang.inverse import inverse
from tests.helpers import session_of

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
QWEN = SAMPLES / "qwen35-397b-nvfp4-tp8-fp8.log"
PER = 24_007_680


@pytest.fixture(scope="module")
def calc():
    from kvtui.sources.readers import iter_lines

    a = session_of(iter_lines(str(QWEN)), str(QWEN))
    c = calculator_from_run(a.state.current)
    assert c is not None
    return c


def test_rest_memory_is_kv_plus_logged_state(calc):
    assert calc.rules_version == (0, 5, 10)  # the log dates to 0.5.10 (prefill layout)
    assert calc.rest_now().bytes == 608_174 * 7680 + 174 * PER == 8_848_112_640


def test_dtype_only_whatif_keeps_the_split(calc):
    row = calc.scenario("bf16").to_json()
    assert (row["tokens"], row["mamba_slots"], row["max_running_requests"]) == (304_087, 174, 58)
    assert row["estimate"] is False


def test_mem_fraction_whatif_gives_the_state_its_share(calc):
    row = calc.scenario("bf16", mem_fraction_static=0.90).to_json()
    assert (row["tokens"], row["mamba_slots"], row["max_running_requests"]) == (441_778, 254, 84)
    assert row["estimate"] is True


def test_inverse_mem_fraction_accounts_for_the_split(calc):
    """By hand: at 0.9474 the KV holds (rest - 301 x PER) // 15,360 = 523,985 < 524,288
    BF16 tokens; at 0.9475 it holds 524,313 (the old answer, 0.8871, ignored the split)."""
    inv = inverse(calc, "bf16", 262_144, 2).to_json()
    assert inv["mem_fraction_static_needed"] == 0.9475
    assert calc.tokens_for("bf16", mem_fraction_static=0.9474)[0] == 523_985
    assert calc.tokens_for("bf16", mem_fraction_static=0.9475)[0] == 524_313


def test_weights_that_no_longer_fit(calc):
    row = calc.scenario("bf16", mem_fraction_static=0.3).to_json()
    assert row["tokens"] is None
    # pre - avail = 46.98 - 16.68 = 30.30 GiB > 0.3 x 46.98 = 14.09 GiB
    assert row["does_not_fit"].startswith("does not fit: weights 30.30 GiB > 14.09 GiB")
    # the weights double per GPU: 60.60 GiB > 38.52 GiB
    half = calc.scenario("bf16", tp=4).to_json()
    assert half["does_not_fit"].startswith("does not fit: weights 60.60 GiB > 38.52 GiB")


def test_tp_whatif_reshards_the_state(calc):
    """TP 16: state (768 x 3 x 2 + 4 x 128 x 128 x 4) x 45 = 12,003,840 B per slot; the weights
    shed 30.30 x (1 - 8/16) GiB (mem usage 30.30 GiB logged on TP2/TP5)."""
    row = calc.scenario("bf16", tp=16).to_json()
    st = calc.mamba(16)
    assert st is not None and st.per_slot == (768 * 3 * 2 + 4 * 128 * 128 * 4) * 45
    rest = 8_848_112_640 + int(30.30 * 0.5 * 2**30)
    slots = int(rest * 0.9 / 1.9 // st.per_slot)
    assert row["tokens"] == (rest - slots * st.per_slot) // 15_360


def test_sglang_version_changes_the_rules(calc):
    from kvtui.sources.readers import iter_lines

    a = session_of(iter_lines(str(QWEN)), str(QWEN))
    c17 = calculator_from_run(a.state.current, sglang_version="0.5.17")
    assert c17 is not None and c17.rules_version == (0, 5, 17)
    # 0.5.17: padding slot -> the logged 174 slots take 175 x PER; strategy auto ->
    # extra_buffer (0.5.14+), 3 + 2 slots per request: 174 // 5 = 34
    assert c17.rest_now().bytes == 608_174 * 7680 + 175 * PER
    assert c17.scenario("bf16").to_json()["max_running_requests"] == 34


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kvtui", "whatif", *args], capture_output=True,
                          text=True, check=False)


@pytest.mark.parametrize("args", [
    ("--tp", "0", "--tokens", "10"), ("--context", "-5", "--tokens", "10"),
    ("--context", "0", "--tokens", "10"), ("--pool-gib", "0", "--model", "llama-3.1-8b"),
    ("--pool-gib", "-1", "--model", "llama-3.1-8b"), ("--tokens", "0"),
    ("--mem-fraction-static", "1.2", "--tokens", "10"),
    ("--mem-fraction-static", "0", "--tokens", "10"), ("--current-dtype", "foo", "--tokens", "5"),
    ("--dtype", "int3", "--tokens", "5"), ("--sglang-version", "9.9.9", "--tokens", "5"),
    ("--tp", "abc", "--tokens", "5"), ("--target-tp", "0", "--tokens", "5"),
])
def test_nonsense_input_gives_one_line_and_exit_2(args):
    p = _cli(*args)
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("kvtui: ")
    assert "Traceback" not in p.stderr and p.stdout == ""


def test_cli_and_tui_agree(calc):
    from kvtui.ui.whatif_calc import WhatIfInputs, compute

    p = _cli("--from-log", str(QWEN), "--mem-fraction-static", "0.90", "--dtype", "bf16",
             "--no-explain")
    assert p.returncode == 0, p.stderr
    assert "441,778 tokens, max_running_requests 84 (254 state slots)" in p.stdout
    assert "raise mem_fraction_static to 0.9475" in p.stdout
    res = compute(calc, WhatIfInputs(dtype="bf16", mem_fraction=0.90))
    rows = {label: tgt for label, _, tgt in res.rows}
    assert rows["tokens"].startswith("441,778") and rows["max_running_requests"] == "84"


def test_without_a_log_the_newest_release_is_assumed():
    p = _cli("--model", "Qwen/Qwen3.5-397B-A17B", "--tp", "8", "--pool-gib", "4.35",
             "--current-dtype", "fp8_e4m3", "--json")
    assert p.returncode == 0, p.stderr
    import json

    w = json.loads(p.stdout)
    assert w["current"]["sglang_rules"] == "0.5.23"
    p = _cli("--model", "Qwen/Qwen3.5-397B-A17B", "--tp", "8", "--pool-gib", "4.35",
             "--current-dtype", "fp8_e4m3", "--sglang-version", "0.5.8", "--json")
    w = json.loads(p.stdout)
    # Qwen3.5 is served from 0.5.9 only: a plain refusal, not a number
    assert "does not serve Qwen3_5MoeForConditionalGeneration" in w["current"]["cannot_model"]
    assert all(r["tokens"] is None for r in w["scenarios"])


def test_max_total_tokens_cap_is_not_the_memory():
    """A pool cut by --max-total-tokens (model_runner.py:1288-1295 in 0.5.2) says nothing about
    the memory: the memory lines size it (51.721 GiB, sglang-log-lines.md 8.8) and the cap is
    applied again to every dtype."""
    from kvtui.core.capacity import preset_spec
    from kvtui.engines.sglang.calculator import Calculator, MemoryFacts
    from kvtui.engines.sglang.sizing.args import SizingArgs
    from kvtui.engines.sglang.version import SGLANG_LINE

    mem = MemoryFacts(pre_gib=78.66, avail_gib=63.52, mem_fraction_static=0.85, tp=1)
    calc = Calculator(current_dtype="fp8_e4m3", tokens=100_000, spec=preset_spec("llama-3.1-8b"),
                      memory=mem, context_len=131072, args=SizingArgs(max_total_tokens=100_000),
                      version=SGLANG_LINE.between((0, 5, 10), (0, 5, 10)))
    kv, basis, est = calc.budget_bytes()
    assert kv == int(mem.rest_gib() * 2**30) and est and "max-total-tokens" in basis
    assert calc.tokens_for("bf16")[0] == 100_000  # 423,698 fit, the cap keeps 100,000
    assert calc.tokens_for("bf16", mem_fraction_static=0.5)[0] == 100_000


def test_a_dtype_the_release_cannot_size_is_said_plainly():
    """nvfp4 does not exist before 0.5.16: pinned to 0.5.10 the logged NVFP4 pool cannot be
    re-derived, the row says so, and the other dtypes still come from the logged bytes."""
    log = SAMPLES / "qwen3-235b-tp8-nvfp4-kv.log"
    p = _cli("--from-log", str(log), "--sglang-version", "0.5.10", "--json")
    assert p.returncode == 0, p.stderr
    import json

    w = json.loads(p.stdout)
    assert "0.5.16" in w["current"]["cannot_model"]
    rows = {r["dtype"]: r for r in w["scenarios"]}
    assert rows["nvfp4"]["tokens"] is None and rows["nvfp4"]["cannot_model"]
    assert rows["bf16"]["tokens"] is not None
