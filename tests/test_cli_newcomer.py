"""Issue 15's messages and flags, as a user runs them: a typo in `demo --log`, an unknown option,
a replay speed that means nothing, and the TUI started without a terminal; plus the one way
lengths are written (`kvtui.core.units`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kvtui.core.render import render_text
from kvtui.core.units import fmt_length, parse_length, parse_lengths
from kvtui.sources.replay import ReplaySource

ROOT = Path(__file__).resolve().parents[1]
FP8 = ROOT / "sample_logs" / "qwen35-397b-nvfp4-tp8-fp8.log"


def kvtui(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kvtui", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def test_demo_log_typo_names_the_samples() -> None:
    out = kvtui("demo", "--log", "qwen35-typo.log")
    assert out.returncode == 2
    assert "no bundled sample named 'qwen35-typo.log'" in out.stderr
    assert "qwen35-397b-nvfp4-tp8-fp8.log" in out.stderr  # the list to choose from
    assert "missing" not in out.stderr and "generate.py" not in out.stderr


@pytest.mark.parametrize("command", ["check", "whatif", "replay"])
def test_an_unknown_option_prints_the_subcommands_usage(command: str) -> None:
    out = kvtui(command, str(FP8), "--bogus")
    assert out.returncode == 2
    assert f"usage: kvtui {command}" in out.stderr
    assert "unrecognized arguments:" in out.stderr and "--bogus" in out.stderr


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf", "fast"])
def test_replay_refuses_a_speed_that_means_nothing(value: str) -> None:
    out = kvtui("replay", str(FP8), "--speed", value)
    assert out.returncode == 2
    assert "usage: kvtui replay" in out.stderr and "--speed" in out.stderr


def test_replay_source_refuses_a_bad_speed_too() -> None:
    for speed in (-1.0, 0.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="speed"):
            ReplaySource([str(FP8)], speed=speed)
    with pytest.raises(ValueError, match="max_gap"):
        ReplaySource([str(FP8)], max_gap=-1.0)


@pytest.mark.parametrize("command", [["replay", str(FP8), "--speed", "2"], ["demo"]])
def test_the_tui_without_a_terminal_exits_at_once(command: list[str]) -> None:
    """stdin from /dev/null: the TUI used to spin a core until killed (the timeout here)."""
    out = kvtui(*command, timeout=60)
    assert out.returncode == 2
    assert "needs a terminal" in out.stderr and "kvtui check" in out.stderr


# -- one notation for lengths --------------------------------------------------------------
@pytest.mark.parametrize(("n", "text"), [
    (262144, "256K"), (32768, "32K"), (131072, "128K"), (4096, "4K"), (163840, "160K"),
    (256000, "256,000"), (128000, "128,000"), (1500, "1,500"), (8000, "8,000"),
])
def test_fmt_length_names_exactly_one_number(n: int, text: str) -> None:
    assert fmt_length(n) == text
    assert parse_length(text) == n


def test_parse_lengths_reads_what_users_type() -> None:
    assert parse_lengths("8k,32k,128k") == [8192, 32768, 131072]
    assert parse_lengths("256K 32K") == [262144, 32768]
    assert parse_lengths("256,000, 32K") == [256000, 32768]
    assert parse_lengths("x") is None and parse_lengths("0") is None and parse_lengths("") is None


def test_check_and_whatif_write_lengths_the_same_way() -> None:
    whatif = kvtui("whatif", "--from-log", str(FP8), "--no-explain").stdout
    check = kvtui("check", str(FP8)).stdout
    for label in ("@256K", "@32K", "@128K"):
        assert label in whatif and label in check
    assert "x262144" not in whatif
    # A context length that is round in decimal is written in full, never as "250K".
    from dataclasses import replace

    from kvtui.core.pipeline import Session
    from kvtui.core.report_types import Current, Scenario, WhatIf

    whatif = WhatIf(current=Current.of(dtype="bf16"), scenarios=(
        Scenario.of(dtype="bf16", tokens=1, concurrency={"256000": 1.0}),),
        model=None, model_reason="", version={}, explanation=())
    text = render_text(replace(Session().report(), whatif=whatif))
    assert "@256,000" in text and "250K" not in text
