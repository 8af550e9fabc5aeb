"""SVG snapshots (pytest-textual-snapshot): main screen, alert detail, what-if panel.

Deterministic by construction: fixed terminal sizes, `--instant` replay drained to the end
before the snap, no clocks or spinners on screen, and the log opened by a path relative to the
checkout (evidence lines show it), so the snapshots do not depend on where the clone lives.
"""

from __future__ import annotations

import pytest
from ui_helpers import ROOT, replay_app, settle

QWEN = "sample_logs/qwen35-397b-nvfp4-tp8-fp8.log"


@pytest.fixture(autouse=True)
def _in_checkout(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)


def test_main_screen_wide(snap_compare) -> None:
    assert snap_compare(replay_app(QWEN, "qwen35-397b-nvfp4-tp8-fp8.log"),
                        terminal_size=(160, 45), run_before=settle)


def test_main_screen_80x24(snap_compare) -> None:
    assert snap_compare(replay_app(QWEN, "qwen35-397b-nvfp4-tp8-fp8.log"),
                        terminal_size=(80, 24), run_before=settle)


def test_alert_detail(snap_compare) -> None:
    async def open_detail(pilot) -> None:
        await settle(pilot)
        await pilot.press("1", "enter")
        await pilot.pause()

    assert snap_compare(replay_app(QWEN, "qwen35-397b-nvfp4-tp8-fp8.log"),
                        terminal_size=(120, 40), run_before=open_detail)


def test_whatif_panel(snap_compare) -> None:
    async def whatif(pilot) -> None:
        await settle(pilot)
        await pilot.press("3")
        await pilot.pause()

    assert snap_compare(replay_app(QWEN, "qwen35-397b-nvfp4-tp8-fp8.log"),
                        terminal_size=(100, 40), run_before=whatif)
