"""The what-if pane moves the engine's own memory setting: vLLM's --gpu-memory-utilization,
never SGLang's --mem-fraction-static (kvtui/engines/vllm/calculator.py memory_knob)."""

from __future__ import annotations

from textual.widgets import Input, Label
from ui_helpers import ROOT, replay_app, settle, wait_for

from kvtui.ui.whatif import WhatIfPane

VLLM = ROOT / "sample_logs" / "vllm-llama31-8b-tp2-fp8-unscaled.log"
QWEN = ROOT / "sample_logs" / "qwen35-397b-nvfp4-tp8-fp8.log"


async def _typed_memory(path, value: str) -> tuple[str, str]:
    app = replay_app(path)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        pane = app.query_one(WhatIfPane)
        label = str(app.query_one("#wi-mf-label", Label).render())
        placeholder = app.query_one("#wi-mf", Input).placeholder
        app.query_one("#wi-mf", Input).value = value
        await wait_for(pilot, lambda: value in pane.shown, "the typed value in the pane")
        return label + " | " + placeholder, pane.shown


async def test_vllm_pane_moves_gpu_memory_utilization() -> None:
    field, shown = await _typed_memory(VLLM, "0.95")
    assert field.startswith("gpu util | ") and "(log)" in field
    assert "--gpu-memory-utilization 0.95" in shown and "gpu mem util" in shown
    assert "mem-fraction-static" not in shown and "mem fraction" not in shown


async def test_sglang_pane_moves_mem_fraction_static() -> None:
    field, shown = await _typed_memory(QWEN, "0.9")
    assert field.startswith("mem frac | ") and "(log)" in field
    assert "--mem-fraction-static 0.9" in shown and "mem fraction" in shown
    assert "gpu-memory-utilization" not in shown
