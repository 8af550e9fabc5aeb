"""The log pane's sticky tail does not depend on when Textual lays the pane out (issue 17).

One batch of lines arriving in one tick (a small file replayed `--instant`) used to leave the
pane at line 1 about one run in three: the pane scrolled to the tail in a callback that Textual
ran "after the refresh", and whether the layout that makes the pane scrollable came first was a
matter of task order. A user saw the top of the log and, since the pane then believed they had
scrolled away, it stopped following for good. These tests force the bad order deterministically:
inside `batch_update` Textual runs the after-refresh callbacks but holds the layout back.
"""

from __future__ import annotations

from textual.app import App, ComposeResult

from kvtui.ui.ingest import LogEntry
from kvtui.ui.logview import LogView


class OneLog(App[None]):
    def compose(self) -> ComposeResult:
        yield LogView(id="log")


def lines(first: int, count: int, width: int = 200) -> list[LogEntry]:
    return [LogEntry(i, "x.log", f"line {i} " + "x" * width) for i in range(first, first + count)]


async def test_one_big_batch_lands_on_the_tail_whatever_the_layout_order() -> None:
    app = OneLog()
    async with app.run_test(size=(100, 20)) as pilot:
        log = app.query_one(LogView)
        await pilot.pause()
        with app.batch_update():
            log.append(lines(1, 457))
            await pilot.pause()  # after-refresh callbacks run; the layout waits for the batch
            await pilot.pause()
        await pilot.pause()
        await pilot.pause()
        assert log.max_scroll_y > 400
        assert log.scroll_offset.y == log.max_scroll_y
        assert log.new_lines == 0
        # And it keeps following: the next lines scroll into view too.
        log.append(lines(458, 10))
        await pilot.pause()
        await pilot.pause()
        assert log.scroll_offset.y == log.max_scroll_y and log.new_lines == 0


async def test_scrolling_up_stops_following_and_end_resumes() -> None:
    app = OneLog()
    async with app.run_test(size=(100, 20)) as pilot:
        log = app.query_one(LogView)
        log.append(lines(1, 100))
        await pilot.pause()
        await pilot.pause()
        assert log.scroll_offset.y == log.max_scroll_y
        log.scroll_to(y=10, animate=False)  # what the mouse wheel or the scrollbar do
        await pilot.pause()
        log.append(lines(101, 5))
        await pilot.pause()
        assert log.scroll_offset.y == 10 and log.new_lines == 5
        log.focus()
        await pilot.press("end")
        await pilot.pause()
        assert log.scroll_offset.y == log.max_scroll_y and log.new_lines == 0
        log.append(lines(106, 5))
        await pilot.pause()
        assert log.scroll_offset.y == log.max_scroll_y
