"""One change in the what-if pane asks the engine's calculator once per answer: the target row,
the row of what fits now and the current setting, each once (issue 41 point 2: the pane used to
compute the target row twice and enter the calculator six times per key press, `compute` and
then `_numbers` asking the same questions again)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from textual.widgets import Input
from ui_helpers import ROOT, replay_app, settle, wait_for

from kvtui.engines.sglang.calculator import Calculator as SglCalculator
from kvtui.engines.vllm.calculator import Calculator as VllmCalculator
from kvtui.ui.whatif import WhatIfPane

VLLM = ROOT / "sample_logs" / "vllm-llama31-8b-tp2-fp8-unscaled.log"
QWEN = ROOT / "sample_logs" / "qwen35-397b-nvfp4-tp8-fp8.log"


def _count(monkeypatch: pytest.MonkeyPatch, cls: type, calls: Counter[str]) -> None:
    """Count the pane's questions to the real calculator class (each still answered by it)."""
    for name in ("scenario", "current", "inverse", "report"):
        real: Callable[..., Any] = getattr(cls, name)  # a method of the engine's class

        def counted(self: Any, *a: Any, _real: Callable[..., Any] = real, _name: str = name,
                    **kw: Any) -> Any:
            calls[_name] += 1
            return _real(self, *a, **kw)

        monkeypatch.setattr(cls, name, counted)


@pytest.mark.parametrize(("path", "cls", "value"), [(QWEN, SglCalculator, "0.9"),
                                                     (VLLM, VllmCalculator, "0.95")])
async def test_one_change_asks_each_answer_once(monkeypatch: pytest.MonkeyPatch, path: Any,
                                                cls: type, value: str) -> None:
    app = replay_app(path)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        pane = app.query_one(WhatIfPane)
        calls: Counter[str] = Counter()
        _count(monkeypatch, cls, calls)
        pane.recompute()
        assert calls == Counter(scenario=2, current=1), calls
        calls.clear()
        app.query_one("#wi-mf", Input).value = value
        await wait_for(pilot, lambda: value in pane.shown, "the typed value in the pane")
        assert calls == Counter(scenario=2, current=1), calls
        calls.clear()
        app.query_one("#wi-conc", Input).value = "3"
        await wait_for(pilot, lambda: "needs" in pane.shown, "the inverse rows")
        assert calls == Counter(scenario=2, current=1, inverse=1), calls
