"""A vLLM log in the TUI: the header names the engine's facts, the CRITICAL scale alert is on
top with its evidence, and the what-if pane answers with vLLM's arithmetic and flags."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Select

from kvtui.ui.panes import AlertsPane, HeaderBar
from kvtui.ui.whatif import WhatIfPane
from tests.ui.ui_helpers import replay_app, settle

FP8 = Path(__file__).resolve().parents[2] / "sample_logs" / "vllm-llama31-8b-tp2-fp8-unscaled.log"


async def test_vllm_log_shows_the_critical_alert_and_a_working_what_if() -> None:
    app = replay_app(FP8)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        header = app.query_one(HeaderBar).build().plain
        assert "TP=2" in header and "fp8_e4m3" in header
        alerts = app.query_one(AlertsPane).alerts
        assert alerts[0].severity == "critical" and alerts[0].rule == "kv-fp8-unscaled"
        ev = alerts[0].evidence
        assert ev is not None and "Using KV cache scaling factor 1.0" in ev.text
        assert ev.line == 8
        pane = app.query_one(WhatIfPane)
        rows = {label: (cur, tgt) for label, cur, tgt in pane.result.rows}
        # BF16 (the default target) halves the FP8 pool: the same 61,950 blocks of pages twice
        # the size, 991,200 -> 495,600 tokens.
        assert rows["tokens"] == ("991,200", "495,600 (-50%)")
        assert pane.result.flag.startswith("--kv-cache-dtype bfloat16")
        app.query_one("#wi-dtype", Select).value = "nvfp4"
        await pilot.pause()
        rows = {label: (cur, tgt) for label, cur, tgt in pane.result.rows}
        assert rows["tokens"][1].startswith("1,762,128")
        assert "--kv-cache-dtype nvfp4" in pane.result.flag
        await pilot.press("q")
    assert app.return_value == 0
