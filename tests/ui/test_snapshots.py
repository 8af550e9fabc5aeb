"""SVG snapshots (pytest-textual-snapshot): main screen, alert detail, what-if panel.

Deterministic by construction: fixed terminal sizes, `--instant` replay drained to the end
before the snap, no clocks or spinners on screen.
"""

from __future__ import annotations

from ui_helpers import QWEN, replay_app, settle


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
