"""The export (`e` / `E`) carries the what-if scenario the user built in the pane: its target
settings, the flag, and the figures the calculator predicts, so it goes into a deploy ticket as
is (issue 34)."""

from __future__ import annotations

import json

from textual.widgets import Select
from ui_helpers import QWEN, replay_app, settle

from kvtui.ui.whatif import WhatIfPane


async def test_export_carries_the_scenario_built_in_the_pane(tmp_path) -> None:
    app = replay_app(QWEN, export_dir=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        pane = app.query_one(WhatIfPane)
        app.query_one("#wi-dtype", Select).value = "bf16"
        await pilot.pause()
        app.query_one("#wi-conc").focus()
        await pilot.press("2")
        await pilot.pause()
        assert pane.inputs.concurrency == 2
        await pilot.press("escape", "E")
        await app.workers.wait_for_complete()
        await pilot.press("e")
        await app.workers.wait_for_complete()
        await pilot.pause()
        doc = json.loads((tmp_path / "kvtui-qwen35-397b-nvfp4-tp8-fp8.json").read_text())
        md = (tmp_path / "kvtui-qwen35-397b-nvfp4-tp8-fp8.md").read_text()
    scenario = doc["whatif_scenario"]
    assert scenario["target"]["kv_dtype"] == "bf16"
    assert scenario["target"]["concurrency"] == 2
    assert "--kv-cache-dtype bf16" in scenario["flag"]
    assert scenario["predicted_tokens"] == 304_087
    assert scenario["current_tokens"] == 608_174
    rows = {r["figure"]: r for r in scenario["rows"]}
    assert rows["tokens"]["target"].startswith("304,087")
    # the report itself is unchanged: the same keys as `kvtui check --json`, the scenario after
    assert list(doc)[-1] == "whatif_scenario" and doc["alerts"]
    assert "## What-if scenario (built in the kvtui pane)" in md
    assert "--kv-cache-dtype bf16" in md and "| tokens | 608,174 |" in md
