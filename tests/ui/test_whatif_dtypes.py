"""The what-if pane's KV dtype field offers the run's engine's own KV dtypes
(`Engine.kv_dtypes`), not one list for every engine (issue 41 point 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Select
from ui_helpers import ROOT, replay_app, settle, wait_for

from kvtui.core.engine import load
from kvtui.ui.whatif import WhatIfPane

VLLM = ROOT / "sample_logs" / "vllm-llama31-8b-tp2-fp8-unscaled.log"
QWEN = ROOT / "sample_logs" / "qwen35-397b-nvfp4-tp8-fp8.log"


@pytest.mark.parametrize(("path", "engine"), [(QWEN, "sglang"), (VLLM, "vllm")])
async def test_the_dtype_field_offers_the_engines_dtypes(path: Path, engine: str) -> None:
    app = replay_app(path)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        pane = app.query_one(WhatIfPane)
        await wait_for(pilot, lambda: pane.calc is not None, "the run's calculator")
        select = app.query_one("#wi-dtype", Select)
        offered = tuple(value for _, value in select._options if isinstance(value, str))
        assert offered == load(engine).kv_dtypes
        # a dtype only the other engine sizes is not offered
        other = load("vllm" if engine == "sglang" else "sglang").kv_dtypes
        assert set(other) - set(offered)
        select.value = offered[-1]
        await wait_for(pilot, lambda: pane.inputs.dtype == offered[-1], "the chosen dtype")
