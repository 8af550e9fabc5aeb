"""Shared helpers for the TUI tests: build the app on a log and wait for a state, never a time.

Every wait here polls a condition (the poll interval only spaces the checks); the timeout is a
guard that turns a hang into a failure with a message, not a pace the test relies on.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from kvtui.sources.replay import ReplaySource
from kvtui.ui.app import KvApp

ROOT = Path(__file__).resolve().parents[2]
QWEN = ROOT / "sample_logs" / "qwen35-397b-nvfp4-tp8-fp8.log"
POLL = 0.02


def replay_app(path: Path | str, title: str | None = None, **kw) -> KvApp:
    src = ReplaySource([str(path)], instant=True)
    return KvApp(src, title or Path(path).name, **kw)


async def wait_for(pilot, cond: Callable[[], object], what: str = "the condition",
                   timeout: float = 60.0) -> None:
    """Poll `cond` between event-loop turns until it holds; fail (never pass) on the guard."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(POLL)


async def settle(pilot, timeout: float = 60.0) -> None:
    """Wait until the source has ended, the app has applied everything it produced, and
    Textual has handled every message, layout and paint that the last drain caused.

    `ingest.idle` holds only once the source said it is at its end and the app's tick has
    taken the last lines, notices and report (the tick applies a drain to the widgets in the
    same call, so nothing is in between). What that last tick queued (the log pane's status
    message, the layout that gives it scrollbars, after-refresh callbacks) is then run by
    Pilot's own waits, which return when the queues are empty.
    """
    app = pilot.app
    await wait_for(pilot, lambda: app.ingest.idle, "the source to end and the UI to drain it",
                   timeout)
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


def screen_text(app: KvApp) -> str:
    """What the terminal shows, as plain text (the compositor's full frame)."""
    import io

    from rich.console import Console

    console = Console(width=app.size.width, file=io.StringIO(), record=True,
                      force_terminal=True, color_system="truecolor")
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text()


def region_text(app: KvApp, widget) -> str:
    """What the terminal shows inside one widget's region (a pane among others side by side)."""
    r = widget.region
    rows = screen_text(app).splitlines()[r.y:r.y + r.height]
    return "\n".join(row[r.x:r.x + r.width] for row in rows)
