"""The typed report: a snapshot that later lines cannot change, JSON that keeps each producer's
key order, and rows that refuse a key no reader knows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtui.core.report_types import Report, Scenario
from kvtui.sources.readers import iter_lines
from tests.helpers import session_of

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
FP8 = "qwen35-397b-nvfp4-tp8-fp8.log"
WARNING = ("[2026-11-24 09:14:20 TP0] Using FP8 KV cache but no scaling factors provided. "
           "Defaulting to scaling factors of 1.0. This may lead to less accurate results!")


def test_a_report_is_not_changed_by_the_lines_that_follow_it() -> None:
    s = session_of(iter_lines(str(SAMPLES / FP8)), FP8)
    before = s.report()
    frozen = json.dumps(before.to_json(), default=str)
    alert = next(a for a in before.alerts if a.rule == "kv-fp8-unscaled")
    assert alert.evidence is not None
    seen = alert.evidence.count
    s.feed_lines("more", [WARNING] * 3)
    after = s.report()
    again = next(a for a in after.alerts if a.rule == "kv-fp8-unscaled")
    assert again.evidence is not None and again.evidence.count == seen + 3
    assert alert.evidence.count == seen  # the earlier snapshot kept its count
    assert json.dumps(before.to_json(), default=str) == frozen


def test_sglang_and_vllm_rows_keep_their_own_key_order() -> None:
    rows = {}
    for name in (FP8, "vllm-llama31-8b-tp2-fp8-unscaled.log"):
        s = session_of(iter_lines(str(SAMPLES / name)), name)
        report = s.report()
        assert isinstance(report, Report) and report.whatif is not None
        rows[report.engine] = report.whatif.scenarios[0].to_json()
    assert list(rows["sglang"])[:4] == ["dtype", "flag", "flag_advice", "current"]
    assert list(rows["vllm"])[:4] == ["dtype", "tokens", "bytes_per_token", "concurrency"]


def test_a_row_states_only_the_keys_its_producer_gave() -> None:
    row = Scenario.of(dtype="bf16", tokens=None, flag="--kv-cache-dtype bf16")
    assert row.to_json() == {"dtype": "bf16", "tokens": None, "flag": "--kv-cache-dtype bf16"}
    assert row.has("tokens") and not row.has("tp")
    with pytest.raises(TypeError):
        Scenario.of(dtype="bf16", not_a_field=1)
