"""Pilot tests: each pane on the Qwen3.5 sample, the what-if interaction, keys, quitting."""

from __future__ import annotations

from textual.command import CommandList, CommandPalette
from textual.widgets import Select
from ui_helpers import QWEN, replay_app, settle, wait_for

from kvtui.ui.logview import LogView
from kvtui.ui.panes import AlertsPane, HeaderBar, TimelinePane
from kvtui.ui.screens import AlertDetailScreen, HelpScreen
from kvtui.ui.whatif import WhatIfPane


async def test_header_alerts_facts_timeline_log() -> None:
    app = replay_app(QWEN)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        header = app.query_one(HeaderBar).build().plain
        assert "at end" in header and "TP=8" in header
        assert "fp8_e4m3 -> fp8_e4m3" in header and "qwen3.5-397b" in header
        alerts = app.query_one(AlertsPane).alerts
        assert alerts and alerts[0].severity == "critical"
        assert alerts[0].evidence is not None and alerts[0].evidence.line == 27
        facts = str(app.query_one("#facts-body").render())
        assert "608,174" in facts and "TP0..TP7" in facts and "measured 7,698 B/tok" in facts
        timeline = app.query_one(TimelinePane)
        assert len(timeline.points) > 100
        drawn = timeline.build(120).plain
        assert "KV tokens used %" in drawn and "generated tok/s" in drawn
        assert "time (4m25s)" in drawn and "09:16:35" in drawn and "09:21:00" in drawn
        log = app.query_one(LogView)
        assert log.kept == 457 and log.shown == 457
        assert log.scroll_offset.y == log.max_scroll_y  # sticky tail
        await pilot.press("q")
    assert app.return_value == 0
    assert not app.ingest._thread.is_alive()  # type: ignore[union-attr]


async def test_whatif_dtype_changes_the_numbers() -> None:
    app = replay_app(QWEN)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        pane = app.query_one(WhatIfPane)
        rows = dict((label, (cur, tgt)) for label, cur, tgt in pane.result.rows)
        # BF16 (the default target) halves the FP8 pool: 608,174 -> 304,087 tokens.
        assert rows["tokens"][0] == "608,174"
        assert rows["tokens"][1].startswith("304,087") and "(-50%)" in rows["tokens"][1]
        assert "--kv-cache-dtype bf16" in pane.result.flag
        app.query_one("#wi-dtype", Select).value = "fp8_e4m3"
        await pilot.pause()
        rows = dict((label, (cur, tgt)) for label, cur, tgt in pane.result.rows)
        assert rows["tokens"][1].startswith("608,174")
        assert rows["KV dtype"] == ("fp8_e4m3", "fp8_e4m3")
        app.query_one("#wi-dtype", Select).value = "bf16"
        await pilot.pause()
        # A concurrency target at the longest length (the server's 256K): 4 requests need
        # 1,048,576 tokens, BF16 has 304,087.
        app.query_one("#wi-conc").focus()
        await pilot.press("4")
        await pilot.pause()
        rows = dict((label, (cur, tgt)) for label, cur, tgt in pane.result.rows)
        assert rows["4 reqs @ 256K"][1] == "does NOT fit"
        # Invalid input is flagged, never raised.
        app.query_one("#wi-mf").focus()
        await pilot.press("x")
        await pilot.pause()
        assert app.query_one("#wi-mf").has_class("-invalid")


async def test_alert_detail_and_jump_to_evidence() -> None:
    app = replay_app(QWEN)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("1", "enter")
        await pilot.pause()
        assert isinstance(app.screen, AlertDetailScreen)
        text = app.screen.build().plain
        assert "Evidence" in text and "line" in text
        assert "Using FP8 KV cache but no scaling factors" in text
        # The newest wording (the whole log dates it to 0.5.10), paragraphs intact.
        assert "SGLang 0.5.10 accepts an explicit bf16 (" in text and "\ufffd" not in text
        assert app.screen.build().plain == text
        await pilot.press("g")
        await pilot.pause()
        log = app.query_one(LogView)
        assert log.selected is not None and log.selected.line_no == 27
        assert app.focused is log


async def test_log_search_filter_wrap_copy() -> None:
    app = replay_app(QWEN)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        log = app.query_one(LogView)
        await pilot.press("slash")
        await pilot.press(*"KV Cache is allocated")
        await pilot.press("enter")
        await pilot.pause()
        first = log.selected
        assert first is not None and "KV Cache is allocated" in first.text
        await pilot.press("N")
        assert log.selected is not None and log.selected.line_no < first.line_no
        await pilot.press("n")
        assert log.selected is first
        await pilot.press("c")
        await pilot.pause()
        assert app.clipboard == first.text
        await pilot.press("f")  # recognized
        assert log.filter_mode == "recognized" and log.shown < log.kept
        await pilot.press("f")  # alerts
        assert log.filter_mode == "alerts"
        assert all(e.kind == "fp8_scales_missing" or e.notice or e.kind == "kv_dtype"
                   for e in log._view)
        await pilot.press("f")
        assert log.filter_mode == "all"
        await pilot.press("r")
        await pilot.press(*"TP3")
        await pilot.press("enter")
        await pilot.pause()
        assert log.filter_mode == "regex" and all("TP3" in e.text for e in log._view)
        await pilot.press("w")
        assert log.wrap
        await pilot.press("end")
        assert log.cursor is None


async def test_help_and_palette_and_export(tmp_path) -> None:
    app = replay_app(QWEN, export_dir=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.press("e")
        await app.workers.wait_for_complete()
        await pilot.press("E")
        await app.workers.wait_for_complete()
        await pilot.pause()
        md = (tmp_path / "kvtui-qwen35-397b-nvfp4-tp8-fp8.md").read_text()
        js = (tmp_path / "kvtui-qwen35-397b-nvfp4-tp8-fp8.json").read_text()
        assert "FP8" in md and '"alerts"' in js
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await pilot.press(*"toggle wrap")
        options = app.screen.query_one(CommandList)

        def offered() -> bool:
            i = options.highlighted
            return i is not None and "toggle wrap" in str(options.get_option_at_index(i).prompt)
        await wait_for(pilot, offered, "the palette to offer 'toggle wrap'")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.query_one(LogView).wrap, "wrap to be on")


async def test_narrow_layout_switches_panes() -> None:
    app = replay_app(QWEN)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.screen.has_class("-narrow")
        assert app.query_one("#alerts").display and not app.query_one("#facts").display
        await pilot.press("2")
        assert app.query_one("#facts").display and not app.query_one("#alerts").display
        await pilot.press("5")
        assert app.query_one("#timeline").has_class("-shown")
        assert app.query_one("#top").has_class("-hidden")
        await pilot.press("3")
        assert app.query_one("#whatif").display and not app.query_one("#facts").display


async def test_replay_controls(tmp_path) -> None:
    from kvtui.sources.replay import ReplaySource
    from kvtui.ui.app import KvApp

    src = ReplaySource([str(QWEN)], start_paused=True, speed=1000)
    app = KvApp(src, "paused")
    async with app.run_test(size=(120, 40)) as pilot:
        # The source's own "paused" notice: it has opened the file and waits before line 1.
        await wait_for(pilot, lambda: app.ingest.last_state == "paused", "the start-up pause")
        assert app.ingest.lines == 0
        await pilot.press("full_stop")
        await wait_for(pilot, lambda: app.ingest.lines >= 1, "the step")
        assert app.ingest.lines == 1
        await pilot.press("right_curly_bracket")  # next alert
        # Until the search has found its alert and stopped there.
        await wait_for(pilot, lambda: app.query_one(AlertsPane).alerts
                       and app._seek_alert_keys is None and src.paused, "an alert")
        assert app.ingest.lines < 457 and src.paused
        await pilot.press("q")


def test_timeline_figures_skip_retraction_markers() -> None:
    from kvtui.core.runtime import TimelinePoint

    pane = TimelinePane()
    pane.points = [TimelinePoint("2026-03-01 12:00:00", 1, 0.97, 12, 3, 850.0),
                   TimelinePoint("2026-03-01 12:00:01", 2, None, None, None, None, True)]
    text = pane.build(120).plain
    assert "97%" in text and "850" in text
    assert "▼" in text  # the retraction is still marked


async def test_the_focused_pane_has_the_accent_border() -> None:
    app = replay_app(QWEN)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        accent = app.theme_variables["accent"].lower()

        def bordered() -> list[str]:
            return [n for n in ("alerts", "facts", "whatif", "log")
                    if app.query_one(f"#{n}").styles.border_top[1].hex.lower() == accent]
        assert bordered() == ["alerts"]
        for key, pane in (("3", "whatif"), ("4", "log"), ("2", "facts")):
            await pilot.press(key)
            await pilot.pause()
            assert bordered() == [pane]
        app.query_one("#wi-tp").focus()  # a field inside a pane marks its pane
        await pilot.pause()
        assert bordered() == ["whatif"]
