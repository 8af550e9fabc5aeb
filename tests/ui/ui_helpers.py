"""Shared helpers for the TUI tests: build the app on a log and wait until it is drained."""

from __future__ import annotations

from pathlib import Path

from kvtui.sources.replay import ReplaySource
from kvtui.ui.app import KvApp

ROOT = Path(__file__).resolve().parents[2]
QWEN = ROOT / "sample_logs" / "qwen35-397b-nvfp4-tp8-fp8.log"


def replay_app(path: Path | str, title: str | None = None, **kw) -> KvApp:
    src = ReplaySource([str(path)], instant=True)
    return KvApp(src, title or Path(path).name, **kw)


async def settle(pilot, timeout: float = 20.0) -> None:
    """Wait until the source has ended and the UI has drained everything it produced."""
    app = pilot.app
    waited = 0.0
    while waited < timeout:
        await pilot.pause(0.05)
        waited += 0.05
        if app.ingest.idle:
            break
    # One more tick so the last drain is on screen.
    await pilot.pause(0.15)
    await pilot.pause()
