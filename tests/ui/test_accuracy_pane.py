"""The accuracy checklist in the TUI (issue 40): the Facts pane opens with it, on a narrow
terminal (key 2) and on a wide one (the main screen), with the Qwen3.5 sample's KV item red and
its weights stated (NVFP4, pre-quantized)."""

from __future__ import annotations

import pytest
from rich.text import Text
from ui_helpers import ROOT, replay_app, settle

from kvtui.ui.accuracy import STATE_STYLE
from kvtui.ui.panes import FactsPane

QWEN = "sample_logs/qwen35-397b-nvfp4-tp8-fp8.log"  # relative: snapshots do not name the clone


@pytest.fixture(autouse=True)
def _in_checkout(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)


def _line(text: Text, needle: str) -> tuple[str, set[str]]:
    """The facts line holding `needle`, and the styles over it."""
    plain = text.plain
    start = plain.index(needle)
    start = plain.rfind("\n", 0, start) + 1
    end = plain.find("\n", start)
    styles = {str(s.style) for s in text.spans if s.start < end and s.end > start}
    return plain[start:end], styles


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_facts_open_with_the_checklist(size: tuple[int, int]) -> None:
    app = replay_app(QWEN, "qwen35-397b-nvfp4-tp8-fp8.log")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        if size[0] < 100:
            await pilot.press("2")  # one upper pane on a narrow terminal
            await pilot.pause()
        pane = app.query_one(FactsPane)
        assert pane.display and pane.region.height > 0
        text = pane._last
        assert text is not None and text.plain.startswith("Accuracy\n")
        kv, styles = _line(text, "KV cache ")
        assert "CRITICAL" in kv and "scaling factors of 1.0" in kv
        assert STATE_STYLE["critical"] in styles  # red
        weights, _ = _line(text, "Weights ")
        assert "NVFP4" in weights and "pre-quantized" in weights
        # the checklist is on screen, not scrolled away
        assert pane.scroll_offset.y == 0


def test_checklist_snapshot_narrow(snap_compare) -> None:
    """Key 2 at 80x24; at 200x50 the main screen shows it (tests/ui/test_snapshots.py
    test_main_screen[200x50])."""
    async def facts(pilot) -> None:
        await settle(pilot)
        await pilot.press("2")
        await pilot.pause()

    assert snap_compare(replay_app(QWEN, "qwen35-397b-nvfp4-tp8-fp8.log"),
                        terminal_size=(80, 24), run_before=facts)
