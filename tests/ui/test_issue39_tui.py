"""Issue 39's smaller TUI defects, one test per point, each at 80x24 and at 200x50."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from ui_helpers import ROOT, region_text, replay_app, screen_text, settle, wait_for

from kvtui.ui.text import gist

SIZES = [(80, 24), (200, 50)]
IDS = ["80x24", "200x50"]
FP8 = ROOT / "sample_logs" / "qwen35-397b-nvfp4-tp8-fp8.log"
BF16 = ROOT / "sample_logs" / "qwen35-397b-nvfp4-tp8-bf16.log"


def unboxed(text: str) -> str:
    """The screen's words with the panes' borders and the line ends taken out."""
    return re.sub(r"\s+", " ", re.sub(r"[│╭╮╰╯─]", " ", text))


# -- 1. the FP8 alert's fix during start-up ---------------------------------------------------
@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_the_fp8_fix_names_the_bf16_flag_before_the_pool_line(tmp_path: Path,
                                                                     size) -> None:
    """Until the pool line, the fix's first sentence is long; a cut at 160 characters left
    `or serve BF16: -`. The list now shows whole clauses."""
    start = tmp_path / "start.log"
    start.write_text("".join(FP8.read_text().splitlines(keepends=True)[:20]))
    app = replay_app(start)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        text = unboxed(region_text(app, app.alerts_pane))
        assert "or serve BF16: --kv-cache-dtype bf16" in text, text
        assert "BF16: - " not in text


def test_a_fix_is_shortened_by_clauses_never_inside_one() -> None:
    long = ("Check a; or serve BF16: --kv-cache-dtype bf16; SGLang 0.5.9 - 0.5.18 accepts "
            "an explicit bf16. Second sentence.")
    assert gist(long, 50) == "Check a; or serve BF16: --kv-cache-dtype bf16 …"
    assert gist(long, 200) == long.split(". ")[0] + "."
    assert gist("one clause " * 30, 40).endswith(" …")
    assert len(gist("one clause " * 30, 40)) <= 42


# -- 6. a BF16 run has no scales to load -------------------------------------------------------
@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_a_bf16_run_does_not_say_scales_unknown(size) -> None:
    app = replay_app(BF16)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("2")
        # the Facts pane opens with the accuracy checklist: the KV facts follow it, read as
        # the pane is scrolled through
        pane, text, y = app.facts_pane, "", 0
        while True:
            pane.scroll_to(y=y, animate=False)
            await pilot.pause()
            text += unboxed(region_text(app, pane))
            if y >= pane.max_scroll_y:
                break
            y = min(pane.max_scroll_y, y + max(1, pane.scrollable_content_region.height - 1))
        assert "scales none needed (bf16)" in text, text
        assert "scales unknown" not in text


# -- 2. the header at 80 columns keeps the log time and the file or the host ----------------
@pytest.mark.parametrize("size", SIZES, ids=IDS)
@pytest.mark.parametrize(("title", "kept"), [
    ("sample_logs/qwen35-397b-nvfp4-tp8-fp8.log", "qwen35-397b-nvfp4-tp8-fp8.log"),
    ("gpu-node-7.example:/var/log/sglang/server-2026-11-24.log", "gpu-node-7.example"),
])
async def test_the_header_keeps_the_log_time_and_the_source(size, title: str,
                                                            kept: str) -> None:
    app = replay_app(FP8, title)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        header = screen_text(app).splitlines()[0]
        assert "09:21:00" in header and kept in header, header
        assert "KV " in header and "fp8_e4m3" in header and "at end" in header
        assert not header.rstrip().endswith("…")
        if size[0] >= 200:  # room for everything: nothing gave way
            assert "log time 09:21:00" in header and title in header and "457 lines" in header
            assert "qwen3.5-397b · TP=8" in header


# -- 7. a big file being folded says how much is read, not "0 lines" -------------------------
@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_a_big_file_loading_says_how_much_is_read(size) -> None:
    from kvtui.core.pipeline import Progress

    app = replay_app(FP8, "big.log")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        # what the ingest says while its bulk fold runs (the lines are counted at its end)
        app.ingest.lines = 0
        app.ingest.load = Progress(done=310 << 20, total=1200 << 20, elapsed=3.0)
        app.header_bar.state = "loading"
        await wait_for(pilot, lambda: "loading 26%" in screen_text(app).splitlines()[0],
                       "the header to show the load")
        first = screen_text(app).splitlines()[0]
        assert "loading 26%" in first
        if size[0] >= 200:
            assert "0.30 of 1.17 GiB read" in first, first
        assert "0 lines" not in first


# -- 8. Escape waits 10 ms for a sequence, not 100 ms plus the input thread's select ---------
def test_the_app_reads_keys_with_the_quick_escape_driver(monkeypatch) -> None:
    """Escape took 115-175 ms in a terminal: Textual's ESCDELAY (100 ms) and its input thread
    checking it only when its select(0.1) wakes. The speed is bench_tui's to measure (pty
    keys); here: the app asks for the driver that fixes both, and a user's ESCDELAY wins."""
    from textual import constants
    from textual.drivers.linux_driver import LinuxDriver

    from kvtui.ui.terminal import ESCAPE_DELAY_MS, quick_escape_driver

    monkeypatch.setattr(constants, "ESCAPE_DELAY", 0.1)
    monkeypatch.delenv("ESCDELAY", raising=False)
    driver = quick_escape_driver()
    assert driver is not None and issubclass(driver, LinuxDriver)
    assert driver.run_input_thread is not LinuxDriver.run_input_thread
    assert constants.ESCAPE_DELAY == ESCAPE_DELAY_MS / 1000 < 0.1
    monkeypatch.setattr(constants, "ESCAPE_DELAY", 0.3)
    monkeypatch.setenv("ESCDELAY", "300")
    quick_escape_driver()
    assert constants.ESCAPE_DELAY == 0.3
    app = replay_app(FP8)
    assert app.driver_class.__name__ == "QuickEscapeDriver"


# -- 3. help at 80 columns is wrapped once, at the box's width ------------------------------
def greedy(lines: list[str], width: int) -> list[str]:
    """The rows broken early: a row followed by a continuation (blank key column) whose first
    word would have fitted on it. A text wrapped twice (once at ~88 columns as written, again
    at the box) leaves such short rows."""
    bad = []
    for row, nxt in itertools.pairwise(lines):
        if not row.strip() or not nxt.startswith(" " * 16) or not nxt.strip():
            continue
        word = nxt.split()[0]
        if len(row.rstrip()) + 1 + len(word) <= width:
            bad.append(row)
    return bad


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_help_is_wrapped_once_at_its_width(size) -> None:
    import io

    from rich.console import Console

    from kvtui.ui.screens import HELP, HelpScreen, help_renderable

    app = replay_app(FP8)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        box = app.screen.query_one("#detail-box")
        width = box.scrollable_content_region.width
        console = Console(width=width, file=io.StringIO(), record=True)
        console.print(help_renderable(HELP))
        lines = console.export_text().splitlines()
        assert not greedy(lines, width), greedy(lines, width)
        text = " ".join(" ".join(lines).split())
        assert all(k in text for k in ("up/down", "pgup/pgdn", "home"))  # a long key: whole
        for words in ("written next to the log (or --export-dir DIR;",
                      "it takes (GiB missing per GPU, mem_fraction_static, TP)"):
            assert words in text, words
        shown = unboxed(region_text(app, box))
        assert "move the cursor (stops following)" in shown or "Keys" in shown


# -- 4. the Timeline keeps its time axis at 24 rows -----------------------------------------
@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_the_timeline_keeps_its_time_axis(size) -> None:
    app = replay_app(FP8)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("5")
        await pilot.pause()
        text = screen_text(app)
        assert "time (4m25s)" in text and "09:21:00" in text.split("time (4m25s)")[1], text
        assert "retractions" in text and "generated tok/s" in text
        # shorter than its rows: the series give way from the bottom, the axis stays
        short = app.timeline_pane.build(80, 3).plain.splitlines()
        assert len(short) == 3 and short[-1].startswith("time (4m25s)"), short
        assert short[0].startswith("KV tokens used %")


# -- 9. wrap breaks between words -------------------------------------------------------------
def test_wrap_cells_breaks_after_a_space_and_keeps_every_character() -> None:
    from kvtui.ui.text import wrap_cells

    text = "Using FP8 KV cache but no scaling factors provided. Defaulting to 1.0"
    rows = wrap_cells(text, 20)
    assert "".join(rows) == text
    assert all(r.endswith(" ") for r in rows[:-1]), rows
    assert all(len(r.rstrip()) <= 20 for r in rows)
    assert wrap_cells("x" * 45, 20) == ["x" * 20, "x" * 20, "x" * 5]  # longer than a row
    assert wrap_cells("漢字" * 12, 10)[0] == "漢字漢字漢"  # cells, not characters


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_the_log_wraps_between_words(size) -> None:
    from kvtui.ui.logview import GUTTER, LogView

    app = replay_app(FP8)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("4", "w")
        await pilot.pause()
        log = app.query_one(LogView)
        log.action_top()
        await pilot.pause()
        width = log._wrap_width
        rows = [r[1:] for r in region_text(app, log).splitlines()[1:-1]]
        pieces = []  # consecutive rows of one line: a continuation has a blank gutter
        for a, b in itertools.pairwise(rows):
            if b[:GUTTER].strip() == "" and b[GUTTER:].strip():
                pieces.append((a[GUTTER:GUTTER + width], b[GUTTER:GUTTER + width]))
        assert pieces, rows
        for a, b in pieces:
            # never a word split: the row ends at a space or the next starts with one
            assert a.rstrip() != a[:width] or b[:1] == " " or " " not in a, (a, b)


# -- 5. `]` from a decode line does not leave the replay at its end --------------------------
@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_next_event_from_a_decode_line_stays_when_none_follows(size) -> None:
    """In the FP8 sample only decode and prefill batches follow the first decode line (94):
    `]` read on to the end and left the replay there. It now comes back and says why."""
    from kvtui.sources.replay import ReplaySource
    from kvtui.ui.app import KvApp

    src = ReplaySource([str(FP8)], start_paused=True)
    app = KvApp(src, "fp8.log")
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.ingest.last_state == "paused", "the start-up pause")
        src.seek(lambda line: line.line_no >= 100)  # a decode line, paused there
        await wait_for(pilot, lambda: src.paused and src.lines_emitted == 100, "line 100")
        await wait_for(pilot, lambda: app.log_view._entries
                       and app.log_view._entries[-1].line_no == 100, "line 100 shown")
        await pilot.press("right_square_bracket")
        await wait_for(pilot, lambda: any("no recognized event after line 100" in str(n.message)
                                          for n in app._notifications), "the notice")
        await wait_for(pilot, lambda: src.paused and src.state == "paused"
                       and src.lines_emitted == 100, "back at line 100")
        await wait_for(pilot, lambda: [e.line_no for e in app.log_view._entries
                                       if not e.notice][-1:] == [100], "the log at line 100")
        assert app._event_from is None
        header = screen_text(app).splitlines()[0]
        assert "paused" in header and "at end" not in header, header
