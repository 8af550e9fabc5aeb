"""Issue 15, "what a newcomer tripped over", in the TUI: one test per point, each on the real app
over the bundled Qwen3.5 sample (or a log written by the test)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import Input, Select
from ui_helpers import QWEN, replay_app, settle, wait_for

from kvtui.sources.replay import ReplaySource
from kvtui.ui.app import KvApp
from kvtui.ui.logview import GUTTER, LogView
from kvtui.ui.panes import AlertsPane, HeaderBar
from kvtui.ui.screens import AlertDetailScreen, HelpScreen
from kvtui.ui.text import clean
from kvtui.ui.whatif import WhatIfPane


def screen_text(app: KvApp) -> str:
    console = Console(width=app.size.width, file=io.StringIO(), record=True,
                      force_terminal=True, color_system="truecolor")
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text()


def messages(app: KvApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


# -- keyboard and panes ---------------------------------------------------------------------
async def test_pane_keys_work_while_the_whatif_pane_is_shown() -> None:
    app = replay_app(QWEN)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("3")
        assert app.focused is app.query_one(WhatIfPane).focus_target()  # not a field
        await pilot.press("space")  # play/pause, not "open the dtype menu"
        assert app.source.paused  # type: ignore[attr-defined]
        assert not app.query_one("#wi-dtype", Select).expanded
        await pilot.press("1")
        assert isinstance(app.focused, AlertsPane)
        await pilot.press("3", "q")
    assert app.return_value == 0


async def test_escape_steps_out_of_a_field_and_pane_keys_work_again() -> None:
    app = replay_app(QWEN)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("3", "enter")  # enter steps into the form, on purpose
        assert app.focused is app.query_one("#wi-dtype", Select)
        await pilot.press("tab")
        tp = app.query_one("#wi-tp", Input)
        assert app.focused is tp
        await pilot.press("3")  # typing in a field: this is a TP of 3, not "pane 3"
        assert tp.value == "3"
        await pilot.press("escape")
        assert app.focused is app.query_one(WhatIfPane).focus_target()
        await pilot.press("1")
        assert isinstance(app.focused, AlertsPane)


async def test_typing_in_a_field_entered_again_replaces_its_value() -> None:
    """Issue 39: `TP 8`, away and back, `16` gave `TP 416`; a field entered selects its
    content, so what is typed replaces it (the arrow keys still edit it)."""
    app = replay_app(QWEN)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("3", "enter", "tab")
        tp = app.query_one("#wi-tp", Input)
        assert app.focused is tp
        await pilot.press("8", "tab", "shift+tab")
        assert app.focused is tp and tp.value == "8"
        await pilot.press("1", "6")
        assert tp.value == "16"
        await pilot.press("shift+tab", "tab", "right", "2")  # the cursor keys keep the value
        assert tp.value == "162"


async def test_a_changed_input_is_visible() -> None:
    app = replay_app(QWEN)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        pane = app.query_one(WhatIfPane)
        tp = app.query_one("#wi-tp", Input)
        assert tp.value == "" and tp.placeholder == "8 (log)"  # untouched: as logged
        result = app.query_one(WhatIfPane).shown
        assert "\nTP " not in result  # an unchanged TP is not repeated in the answer
        tp.focus()
        await pilot.press("1", "6")
        await pilot.pause()
        assert tp.has_class("-changed")
        result = app.query_one(WhatIfPane).shown
        assert re.search(r"^TP +8 +16$", result, re.M), result
        assert pane.result is not None and "--tp-size 16" in pane.result.flag


async def test_ctrl_c_quits_as_the_help_says() -> None:
    app = replay_app(QWEN)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        shown = " ".join(screen_text(app).split())
        assert "q / ctrl+c quit" in shown, shown
        await pilot.press("escape")
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: not app.is_running, "the app to quit")
    assert app.return_value == 0


async def test_f_cycles_back_to_the_regex_filter() -> None:
    app = replay_app(QWEN)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        log = app.query_one(LogView)
        await pilot.press("r", *"TP3", "enter")
        await pilot.pause()
        assert log.filter_mode == "regex"
        seen = []
        for _ in range(4):
            await pilot.press("f")
            seen.append(log.filter_mode)
        assert seen == ["all", "recognized", "alerts", "regex"]
        assert all("TP3" in e.text for e in log._view)


async def test_wrap_keeps_every_character() -> None:
    """`replay --instant` on the sample at 160x45, `4`, `f`, `f`, `w`: the FP8 warning lines
    used to read "...less accurate r" / "ults!" (wrapped at a width from before the scrollbar
    appeared)."""
    app = replay_app(QWEN)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("4", "f", "f", "w")
        await pilot.pause()
        await pilot.pause()
        log = app.query_one(LogView)
        assert log._wrap_width == log.scrollable_content_region.width - GUTTER
        log.action_top()
        await pilot.pause()
        rows = [r for r in screen_text(app).splitlines() if r.startswith("│")]
        entry = next(e for e in log._view if e.line_no == 27)
        first = next(i for i, r in enumerate(rows) if r[1:].lstrip().startswith("27 ["))
        body = [r[1 + GUTTER:1 + GUTTER + log._wrap_width] for r in rows[first:first + 2]]
        # rows now break between words (issue 39): every word, whole, in order
        assert " ".join(" ".join(body).split()) == " ".join(clean(entry.text).split())


async def test_search_says_match_i_of_n_and_when_it_wraps() -> None:
    app = replay_app(QWEN)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        log = app.query_one(LogView)
        await pilot.press("slash", *"KV Cache is allocated", "enter")
        await pilot.pause()
        total = sum("KV Cache is allocated" in e.text for e in log._view)
        assert total > 1
        assert f"match {total} of {total}" in str(log.border_title)
        await pilot.press("n")  # past the newest match: round to the oldest, and say so
        await pilot.pause()
        assert f"match 1 of {total}" in str(log.border_title)
        assert any("wrapped past the newest line" in m for m in messages(app))
        await pilot.press("N")  # and back the other way
        await pilot.pause()
        assert f"match {total} of {total}" in str(log.border_title)
        assert any("wrapped past the oldest line" in m for m in messages(app))


async def test_no_match_says_what_was_searched_and_how_to_search_the_file(
        tmp_path: Path) -> None:
    log_file = tmp_path / "big.log"
    log_file.write_text("".join(f"[2025-01-01 00:00:00] line {i}\n" for i in range(300)))
    src = ReplaySource([str(log_file)], instant=True)
    app = KvApp(src, "big.log", log_window=100)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"no such text", "enter")
        await pilot.pause()
        said = " ".join(messages(app))
        assert "kept window" not in said
        assert "no match in the newest" in said and "grep -n" in said
        assert str(log_file) in said and "--log-window" in said


# -- layout and words -----------------------------------------------------------------------
async def test_whatif_concurrency_respects_max_running_requests() -> None:
    """At 8K, 608,174 tokens fit 74.2 requests, but max_running_requests is 58: both are shown."""
    app = replay_app(QWEN)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        app.query_one("#wi-dtype", Select).value = "fp8_e4m3"
        ctx = app.query_one("#wi-ctx", Input)
        ctx.focus()
        await pilot.press(*"8K")
        await pilot.pause()
        result = app.query_one(WhatIfPane).shown
        assert "reqs of 8K" in result and "74.2 fit · 58 run" in result
        assert "concurrent @" not in result


async def test_whatif_lengths_follow_the_servers_context_length() -> None:
    app = replay_app(QWEN)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        pane = app.query_one(WhatIfPane)
        # The same defaults as `kvtui whatif` and `kvtui check`: context_len, 32K, 128K.
        assert pane.inputs.contexts == [262144, 32768, 131072]
        assert app.query_one("#wi-ctx", Input).placeholder == "256K 32K 128K"
        result = app.query_one(WhatIfPane).shown
        assert "reqs of 256K" in result and "2.3 fit · 2 run" in result


async def test_whatif_labels_are_whole_at_160_columns() -> None:
    app = replay_app(QWEN)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        text = screen_text(app)
        whatif = [r[106:] for r in text.splitlines()[2:17]]
        assert any("now (log)" in r for r in whatif) and any("max running" in r for r in whatif)
        assert not any("…" in r for r in whatif)


async def test_an_unavailable_dtype_says_so_next_to_the_numbers() -> None:
    app = replay_app(QWEN)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("3")
        app.query_one("#wi-dtype", Select).value = "mxfp8"
        await pilot.pause()
        text = screen_text(app)
        assert "flag: none: this SGLang does not offer it" in text
        assert "mxfp8" in text and "not available" in text  # the advice, on a short terminal


async def test_header_shows_words_apart_speed_and_log_time() -> None:
    src = ReplaySource([str(QWEN)], start_paused=True, speed=1000)
    app = KvApp(src, "paused.log")
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_for(pilot, lambda: app.ingest.last_state == "paused", "the start-up pause")
        await pilot.press(*["full_stop"] * 3)
        await wait_for(pilot, lambda: app.ingest.lines == 3, "three steps")
        await wait_for(pilot, lambda: "log time" in app.query_one(HeaderBar).build().plain,
                       "the header to show the log's time")
        header = app.query_one(HeaderBar).build().plain
        assert "paused x1000" in header and "log time 09:14:" in header
        src.set_instant(True)
        await pilot.press("space")
        await settle(pilot)
        header = app.query_one(HeaderBar).build().plain
        assert "qwen3.5-397b · TP=8 │" in header and "log time 09:21:00" in header


async def test_plain_words_in_the_alert_detail() -> None:
    app = replay_app(QWEN)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("1", "enter")
        await pilot.pause()
        assert isinstance(app.screen, AlertDetailScreen)
        text = app.screen.build().plain
        assert "confidence" not in text and "likely, not certain" in text


async def test_export_goes_next_to_the_log_and_the_toast_names_it(tmp_path: Path) -> None:
    log_file = tmp_path / "server.log"
    log_file.write_text(QWEN.read_text())
    src = ReplaySource([str(log_file)], instant=True)
    app = KvApp(src, "server.log")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await app.workers.wait_for_complete()
        await pilot.pause()
        out = tmp_path / "kvtui-server.md"
        assert out.is_file() and "FP8" in out.read_text()
        assert any(m == f"exported to {out}" for m in messages(app))
        other = tmp_path / "elsewhere"
        app.export_dir = other
        await pilot.press("E")
        await app.workers.wait_for_complete()
        assert (other / "kvtui-server.json").is_file()


@pytest.mark.parametrize(("width", "end"), [(120, "qwen35-397b-nvfp4-tp8-fp8.log"), (40, "…")])
async def test_a_header_too_long_for_the_terminal_gives_way_then_ends_in_an_ellipsis(
        width: int, end: str) -> None:
    """The header is never cut where the source's name was pushed onto a hidden second row:
    its parts give way by rule (issue 39), and only when that is not enough does it end in a
    visible ellipsis."""
    app = replay_app(QWEN)
    async with app.run_test(size=(width, 30)) as pilot:
        await settle(pilot)
        first = screen_text(app).splitlines()[0].rstrip()
        assert first.endswith(end), first


async def test_a_log_without_alerts_says_so() -> None:
    """The first report with no alerts still fills the pane with its placeholder (its key equals
    the empty start key, which once skipped the redraw and left a blank pane)."""
    from ui_helpers import ROOT

    app = replay_app(ROOT / "sample_logs" / "llama31-70b-tp8.log")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        pane = app.query_one(AlertsPane)
        assert not pane.alerts and pane.option_count == 1
        assert "no alerts" in str(pane.get_option_at_index(0).prompt)
