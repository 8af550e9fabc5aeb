"""Regenerate docs/screenshot.svg: the TUI on the Qwen3.5 NVFP4 sample, as the README shows it.

    .venv/bin/python docs/make_screenshot.py
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from kvtui.sources.replay import ReplaySource
from kvtui.ui.app import KvApp

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_logs" / "qwen35-397b-nvfp4-tp8-fp8.log"


async def main() -> None:
    app = KvApp(ReplaySource([str(SAMPLE)], instant=True), SAMPLE.name)
    async with app.run_test(size=(160, 45)) as pilot:
        # The same wait as the snapshot tests: the replay at its end, all of it on screen.
        while not app.ingest.idle:
            await pilot.pause(0.02)
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        app.save_screenshot(filename="screenshot.svg", path=str(ROOT / "docs"))
        await pilot.press("q")


if __name__ == "__main__":
    asyncio.run(main())
