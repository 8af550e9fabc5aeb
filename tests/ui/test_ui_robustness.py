"""Untrusted log content: markup, ANSI, invalid UTF-8, a 1 MB line; rotation shown inline."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ui_helpers import replay_app, settle, wait_for

from kvtui.sources.lines import MAX_LINE_CHARS
from kvtui.sources.local import LocalFollower
from kvtui.ui.app import KvApp
from kvtui.ui.logview import WRAP_MAX, LogView
from kvtui.ui.panes import HeaderBar

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"

sys.path.insert(0, str(Path(__file__).parent))

NASTY = [
    b"[2025-01-01 00:00:01] [bold]not bold[/bold] and [/x] unmatched",
    b"[2025-01-01 00:00:02] click me [@click=app.quit]quit[/] please",
    b"[2025-01-01 00:00:03] \x1b[31mred\x1b[0m \x1b]52;c;ZXZpbA==\x07 osc \x1b[2J clear",
    b"[2025-01-01 00:00:04] invalid \xff\xfe utf8 \xc3( here",
]


def screen_text(app: KvApp) -> str:
    import io

    from rich.console import Console

    console = Console(width=app.size.width, file=io.StringIO(), record=True,
                      force_terminal=True, color_system="truecolor")
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text()


async def test_markup_ansi_and_bad_utf8_are_shown_literally(tmp_path: Path) -> None:
    p = tmp_path / "nasty.log"
    p.write_bytes(b"\n".join(NASTY) + b"\n")
    app = replay_app(p)
    async with app.run_test(size=(160, 30)) as pilot:
        await settle(pilot)
        text = screen_text(app)
        assert "[bold]not bold[/bold] and [/x] unmatched" in text
        assert "[@click=app.quit]quit[/] please" in text
        assert "\x1b" not in text and "red" in text and "clear" in text
        assert "invalid \ufffd\ufffd utf8" in text
        # Clicking where the fake link is drawn does nothing: the app is still running.
        log = app.query_one(LogView)
        await pilot.click(LogView, offset=(40, 2))
        await pilot.pause()
        assert app.is_running and log.kept == 4
        # A prompt-like line in the detail and copy paths stays literal too.
        log.focus()
        await pilot.press("home", "down", "enter")
        await pilot.pause()
        assert "LineDetailScreen" in type(app.screen).__name__
        await pilot.press("escape")
        await pilot.press("q")
    assert app.return_value == 0


async def test_one_megabyte_line_does_not_freeze(tmp_path: Path) -> None:
    p = tmp_path / "long.log"
    big = b"[2025-01-01 00:00:01] " + b"A[b]" * (1 << 18) + b"\n"
    assert len(big) > 1_000_000
    p.write_bytes(b"[2025-01-01 00:00:00] before\n" + big + b"[2025-01-01 00:00:02] after\n")
    app = replay_app(p)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        log = app.query_one(LogView)
        assert log.kept == 3
        assert len(log._entries[1].text) == MAX_LINE_CHARS  # kept (bounded by the source)
        log.focus()
        await pilot.press("w")  # wrap the huge line: drawn up to WRAP_MAX characters
        await pilot.pause()
        rows = log._starts[2] - log._starts[1]
        assert 1 < rows <= -(-WRAP_MAX // (log._wrap_width or 1))
        await pilot.press("home", "down")
        await pilot.pause()
        await pilot.press("w")
        await pilot.pause()
        assert log.virtual_size.height == 3  # one row per line again
        await pilot.press("c")
        await pilot.pause()
        assert app.clipboard == log._entries[1].text
        assert "+" in screen_text(app) or log.wrap is False


async def test_rotation_is_shown_in_header_and_log(tmp_path: Path) -> None:
    p = tmp_path / "live.log"
    p.write_text("[2025-01-01 00:00:00] one\n")
    src = LocalFollower(str(p), from_start=True, poll_ms=100)
    app = KvApp(src, str(p))
    async with app.run_test(size=(120, 30)) as pilot:
        log = app.query_one(LogView)
        header = app.query_one(HeaderBar)
        await wait_for(pilot, lambda: log.kept >= 1 and header.state == "live", "line one")
        os.rename(p, tmp_path / "live.log.1")
        p.write_text("[2025-01-01 00:00:01] two\n")
        await wait_for(pilot, lambda: any("two" in e.text for e in log._entries), "line two")
        assert any(e.notice and "rotated" in e.text for e in log._entries)
        p.unlink()
        await wait_for(pilot, lambda: header.state == "error", "the error state")
        await pilot.press("q")
    assert app.return_value == 0
    assert not app.ingest._thread.is_alive()  # type: ignore[union-attr]


async def test_the_app_gives_back_the_switch_interval() -> None:
    """The app shortens the interpreter's thread switch interval while it runs (snappy keys);
    that is the whole process's setting, so a process that hosts the app (a test run, an
    embedding tool) must get its own back when the app ends."""
    before = sys.getswitchinterval()
    app = replay_app(SAMPLES / "llama31-70b-tp8.log")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: sys.getswitchinterval() != before, "the app's interval")
    assert sys.getswitchinterval() == before


async def test_the_app_freezes_its_heap_while_it_runs_and_gives_the_collector_back() -> None:
    """While the app runs, what it held at start-up and when the history was in is out of the
    cycle collector's walk (`gc.freeze`: each full collection then walks only what came later,
    which kept a key press of a followed log under 100 ms, bench_tui); the process gets its
    collector back when the app ends."""
    import gc

    assert gc.get_freeze_count() == 0
    app = replay_app(SAMPLES / "llama31-70b-tp8.log")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.header_bar.state == "at_end", "the end of the replay")
        await settle(pilot)
        assert gc.get_freeze_count() > 10_000  # the modules, Textual's DOM, the history
        assert app._history_frozen
    assert gc.get_freeze_count() == 0


async def test_a_host_that_froze_its_own_objects_keeps_them_frozen() -> None:
    import gc

    gc.freeze()  # the host's own (a server that forks workers does this)
    try:
        held = gc.get_freeze_count()
        app = replay_app(SAMPLES / "llama31-70b-tp8.log")
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, lambda: app.header_bar.state == "at_end", "the replay's end")
            await settle(pilot)
            assert not app._frozen
        # not unfrozen by the app (frozen objects that lose their last reference still go)
        assert gc.get_freeze_count() > held // 2 > 0
    finally:
        gc.unfreeze()

