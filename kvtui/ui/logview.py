"""The raw log pane: a bounded window of lines drawn lazily with Textual's Line API.

Why a ScrollView of our own instead of `Log`/`RichLog`: the pane needs per-kind colouring, a
cursor (copy, detail, jump-to-evidence), filters, search and a wrap toggle, while only the rows on
screen may cost anything (a firehose and a 1 MB line both have to stay cheap). Entries are kept as
plain data; a `Text` is built only for a visible row, from sanitized, length-bounded text, so log
content is never parsed as markup and never draws control sequences.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from kvtui.ui.ingest import LogEntry
from kvtui.ui.text import DISPLAY_MAX, KIND_STYLE, RECOGNIZED_STYLE, clean, wrap_cells
from parsers.kinds import ALERTING_KINDS

WRAP_MAX = 8000  # characters of one line drawn when wrapping (the rest: see line detail)
GUTTER = 8
FILTERS = ("all", "recognized", "alerts", "regex")


@dataclass(frozen=True, slots=True)
class SearchResult:
    """Where a search step landed: match `index` (1-based) of `total`; `wrapped` says how the
    search went round an end of the pane (None: it did not)."""

    index: int
    total: int
    wrapped: str | None


class LogView(ScrollView, can_focus=True):
    """Bounded, filterable, searchable view of the newest log lines with a sticky tail."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "cursor_page(-1)", "PgUp", show=False),
        Binding("pagedown", "cursor_page(1)", "PgDn", show=False),
        Binding("home", "top", "Top", show=False),
        Binding("end", "bottom", "Tail", show=False),
        Binding("n", "search_next(1)", "Next match", show=False),
        Binding("N", "search_next(-1)", "Prev match", show=False),
        Binding("enter", "line_detail", "Line", show=False),
        # w, f and c are the app's keys (they act on this pane from any pane).
    ]

    DEFAULT_CSS = """
    LogView { background: $surface; }
    """

    wrap: reactive[bool] = reactive(False)

    class Status(Message):
        """The pane's title/subtitle inputs changed (filter, wrap, new lines)."""

    class LineDetail(Message):
        def __init__(self, entry: LogEntry) -> None:
            super().__init__()
            self.entry = entry

    class Copied(Message):
        def __init__(self, entry: LogEntry) -> None:
            super().__init__()
            self.entry = entry

    class Searched(Message):
        """n / N moved the search: the app says "match i of N", a wrap, or "no match"."""

        def __init__(self, result: SearchResult) -> None:
            super().__init__()
            self.result = result

    def __init__(self, *, max_lines: int = 20000, id: str | None = None) -> None:
        super().__init__(id=id)
        self.max_lines = max_lines
        self._entries: list[LogEntry] = []
        self._view: list[LogEntry] = []
        self._starts: list[int] = [0]  # row where each view entry starts (wrap mode), + total
        self._widest = 0
        self.filter_mode = "all"
        self.filter_re: re.Pattern[str] | None = None
        self.search_re: re.Pattern[str] | None = None
        self.evidence: set[tuple[str, int]] = set()
        self.cursor: int | None = None
        self.new_lines = 0
        self.dropped = 0
        self._wrap_width = 0
        # The sticky tail is the user's intent, kept as a flag (see `_pin`).
        self.following = True
        self._pinning = False
        self.search_status = ""
        self._matches: list[int] | None = None
        self._matches_view: list[LogEntry] | None = None
        self._matches_upto = 0
        # Drawn rows by (entry, piece, look): a following pane shifts every row up by one per
        # new line, and redrawing only the new rows keeps a busy tail cheap. The entry itself
        # is kept with its strip, so a recycled id() can never show another line's text.
        # 256 rows hold a tall screen; each row kept holds some 20 objects the cycle collector
        # walks (the strip, its caches, the strips Textual derives from it), and 1,024 made
        # every full collection of a followed log ~15,000 objects longer (app._freeze_heap).
        self._strips: LRUCache[tuple[object, ...], tuple[LogEntry, Strip]] = LRUCache(256)

    # -- data in ------------------------------------------------------------------------------
    def append(self, entries: Iterable[LogEntry]) -> None:
        entries = list(entries)
        if not entries:
            return
        self._entries.extend(entries)
        if len(self._entries) > self.max_lines + self.max_lines // 4:
            cut = len(self._entries) - self.max_lines
            self.dropped += cut
            self._entries = self._entries[cut:]
            self._rebuild(keep_cursor=True)
            added = len(entries)
        else:
            matching = [e for e in entries if self._keep(e)]
            added = len(matching)
            for e in matching:
                self._push_view(e)
        self._update_size()
        if self.following:
            self.new_lines = 0
            self._pin()
        else:
            self.new_lines += added
        self.refresh()
        self.post_message(self.Status())

    def clear(self) -> None:
        self._entries.clear()
        self._view.clear()
        self._starts = [0]
        self._widest = 0
        self.cursor = None
        self.new_lines = 0
        self.following = True
        self._update_size()
        self._pin()
        self.refresh()
        self.post_message(self.Status())

    def set_evidence(self, lines: set[tuple[str, int]]) -> None:
        if lines != self.evidence:
            self.evidence = lines
            if self.filter_mode == "alerts":
                self._rebuild(keep_cursor=True)
                self.refresh()

    # -- filtering ---------------------------------------------------------------------------
    def _keep(self, e: LogEntry) -> bool:
        mode = self.filter_mode
        if e.notice or mode == "all":
            return True
        if mode == "recognized":
            return e.kind is not None
        if mode == "alerts":
            return e.kind in ALERTING_KINDS or (e.source, e.line_no) in self.evidence
        if mode == "regex" and self.filter_re is not None:
            return self.filter_re.search(e.text[:DISPLAY_MAX * 4]) is not None
        return True

    def set_filter(self, mode: str, pattern: str | None = None) -> str | None:
        """Apply a filter; returns an error message for a bad regex (the filter is unchanged)."""
        if mode == "regex":
            if pattern:
                try:
                    self.filter_re = re.compile(pattern)
                except re.error as exc:
                    return f"bad regex: {exc}"
            elif self.filter_re is None:
                return "empty regex"
            # No pattern: the regex set before (`f` cycling back to it).
        self.filter_mode = mode
        self._rebuild(keep_cursor=True)
        if self.cursor is None:
            self.following = True
            self._pin()
        else:
            self._scroll_to_cursor()
        self.refresh()
        self.post_message(self.Status())
        return None

    def _rebuild(self, keep_cursor: bool = False) -> None:
        selected = self._view[self.cursor] if (keep_cursor and self.cursor is not None
                                               and self.cursor < len(self._view)) else None
        self._view = []
        self._starts = [0]
        self._widest = 0
        for e in self._entries:
            if self._keep(e):
                self._push_view(e)
        self.cursor = None
        if selected is not None:
            for i in range(len(self._view) - 1, -1, -1):
                if self._view[i] is selected:
                    self.cursor = i
                    break
        self.new_lines = 0
        self._update_size()

    def _push_view(self, e: LogEntry) -> None:
        self._view.append(e)
        n = min(len(e.text), DISPLAY_MAX if not self.wrap else WRAP_MAX)
        if n > self._widest:
            self._widest = n
        self._starts.append(self._starts[-1] + self._height_of(e))

    def _height_of(self, e: LogEntry) -> int:
        if not self.wrap:
            return 1
        width = max(10, self._wrap_width)
        n = len(e.text)
        if n <= width and e.text.isascii():
            return 1
        return len(wrap_cells(clean(e.text, WRAP_MAX), width))

    def _update_size(self) -> None:
        rows = self._starts[-1]
        width = GUTTER + (self._widest if not self.wrap else 0)
        size = Size(max(width, 1), rows)
        old = self.virtual_size
        if size == old:
            return
        if (size.width == old.width and self.show_vertical_scrollbar
                and min(rows, old.height) > self.container_size.height):
            # Only the number of rows changed and the scrollbar stays: nothing on screen moves
            # but this pane, so skip the screen-wide layout that setting virtual_size asks for
            # (it ran on every tick of a streaming log). The scrollbar learns the new length.
            self.set_reactive(ScrollView.virtual_size, size)
            self.vertical_scrollbar.window_virtual_size = rows
            self.refresh()
            return
        self.virtual_size = size

    # -- the sticky tail -----------------------------------------------------------------------
    # Why a flag and not "is the scroll position at the bottom now?": the bottom moves when
    # lines arrive, when the pane is resized and when a scrollbar appears, and Textual decides
    # whether the pane may scroll at all (it must have laid out a scrollbar) only at its next
    # layout, on its own schedule. The old code scrolled in an after-refresh callback and read
    # the position back; when that callback ran before the layout, one big batch left the pane
    # at line 1 and, since it then looked scrolled away, it never followed again (issue 17).
    # Now the flag holds the intent, and `_pin` re-applies it each time an input of
    # `max_scroll_y` changes: our virtual size (append, rebuild), the container size (resize)
    # and the horizontal scrollbar's row.
    def _pin(self) -> None:
        """If following: scroll to the last row now, whether or not a scrollbar is shown yet."""
        if not self.following:
            return
        self._pinning = True
        try:
            self.scroll_to(y=self.max_scroll_y, animate=False, force=True)
        finally:
            self._pinning = False
        self._sync_scrollbar()

    def _sync_scrollbar(self) -> None:
        if self.show_vertical_scrollbar:
            self.vertical_scrollbar.position = self.scroll_y

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._pinning:
            return
        # Moved by the user (wheel, scrollbar) or clamped by a layout: follow again exactly
        # when the view ends at the last row and no line is selected.
        following = self.cursor is None and round(new_value) >= self.max_scroll_y
        if following != self.following:
            self.following = following
            if following:
                self.new_lines = 0
            self.post_message(self.Status())

    def watch_show_horizontal_scrollbar(self) -> None:
        self._pin()  # the scrollbar takes a row: the last line moved up by one

    def watch_show_vertical_scrollbar(self) -> None:
        self._sync_scrollbar()  # a new scrollbar starts at the top; put it where the view is
        self._sync_wrap_width()  # and it takes columns from the rows

    # -- geometry ------------------------------------------------------------------------------
    def on_resize(self) -> None:
        self._sync_wrap_width()
        self.refollow()

    def _sync_wrap_width(self) -> None:
        """Wrap at the width the rows are drawn in. That width shrinks when the vertical
        scrollbar appears, which a resize event does not report, so the scrollbar watcher calls
        this too; wrapping at a stale width cut the end of each piece off."""
        width = max(10, self.scrollable_content_region.width - GUTTER)
        if width == self._wrap_width:
            return
        self._wrap_width = width
        if self.wrap:
            self._rebuild(keep_cursor=True)
            if self.following:
                self._pin()
            elif self.cursor is not None:
                self._scroll_to_cursor()
            self.refresh()

    def refollow(self) -> None:
        """After a layout change: stay on the live tail if that is where the user was."""
        self._pin()

    def watch_wrap(self) -> None:
        self._wrap_width = max(10, self.scrollable_content_region.width - GUTTER)
        self._rebuild(keep_cursor=True)
        if self.following:
            self._pin()
        elif self.cursor is not None:
            self._scroll_to_cursor()
        self.refresh()
        self.post_message(self.Status())

    def _entry_at_row(self, row: int) -> tuple[int, int] | None:
        if row < 0 or row >= self._starts[-1]:
            return None
        if not self.wrap:
            return row, 0
        i = bisect.bisect_right(self._starts, row) - 1
        return i, row - self._starts[i]

    # -- drawing ---------------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        base = self.rich_style
        found = self._entry_at_row(y + scroll_y)
        if found is None:
            return Strip.blank(width, base)
        i, sub = found
        e = self._view[i]
        selected = i == self.cursor
        if self.wrap and width - GUTTER != self._wrap_width and width > GUTTER + 10:
            self.call_later(self._sync_wrap_width)  # drawn narrower than wrapped: re-wrap
        key = (id(e), sub, selected, scroll_x if not self.wrap else 0, width, self.wrap,
               self._wrap_width, self.search_re.pattern if self.search_re else None, base)
        hit = self._strips.get(key)
        if hit is not None and hit[0] is e:
            return hit[1]
        strip = self._draw(e, sub, selected, scroll_x, width)
        self._strips[key] = (e, strip)
        return strip

    def _draw(self, e: LogEntry, sub: int, selected: bool, scroll_x: int, width: int) -> Strip:
        """One row of one entry (`sub`: which wrapped piece), as a Strip `width` cells wide."""
        base = self.rich_style
        gutter = Text(f"{e.line_no:>{GUTTER - 1}} " if (sub == 0 and not e.notice)
                      else " " * GUTTER, style="dim")
        if e.notice:
            style = "bold black on yellow" if "error" not in e.text else "bold white on red"
        else:
            style = KIND_STYLE.get(e.kind, RECOGNIZED_STYLE) if e.kind else ""
        if self.wrap:
            text = clean(e.text, WRAP_MAX)
            chunks = wrap_cells(text, max(10, self._wrap_width))
            body = Text(chunks[sub] if sub < len(chunks) else "", style=style)
        content_width = max(0, width - GUTTER)
        shifted = False
        if not self.wrap:
            text = clean(e.text, DISPLAY_MAX)
            if text.isascii() and len(text) > scroll_x + content_width:
                # One cell per character and more of it than fits: draw only what is on
                # screen (a 2,000-character line costs its visible part, not all of it).
                body = Text(text[scroll_x:scroll_x + content_width], style=style)
                shifted = True
            else:
                body = Text(text, style=style)
                if len(e.text) > DISPLAY_MAX:
                    body.append(f" … (+{len(e.text) - DISPLAY_MAX:,} chars, Enter shows the "
                                "line)", style="dim italic")
        if self.search_re is not None:
            body.highlight_regex(self.search_re, style="black on yellow")
        if selected:
            body.stylize("reverse")
            gutter.stylize("reverse")
        console = self.app.console
        g = Strip(list(gutter.render(console)), GUTTER)
        segs = list(body.render(console))
        s = Strip(segs)
        if not self.wrap and not shifted:
            s = s.crop(scroll_x, scroll_x + content_width)
        s = s.extend_cell_length(content_width).crop(0, content_width)
        return Strip.join([g, s]).apply_style(base)

    # -- cursor & navigation -----------------------------------------------------------------
    def _scroll_to_cursor(self) -> None:
        if self.cursor is None:
            return
        row = self._starts[self.cursor]
        top = self.scroll_offset.y
        height = self.scrollable_content_region.height
        if row < top or row >= top + height:
            self.scroll_to(y=max(0, row - height // 2), animate=False, immediate=True)

    def _select(self, i: int | None) -> None:
        """Put the cursor on view row `i`: a selected line holds the view, so stop following."""
        self.cursor = i
        if i is not None:
            self.following = False

    def action_cursor(self, delta: int) -> None:
        if not self._view:
            return
        if self.cursor is None:
            top = self._entry_at_row(self.scroll_offset.y)
            bottom = self._entry_at_row(
                min(self._starts[-1] - 1,
                    self.scroll_offset.y + self.scrollable_content_region.height - 1))
            start = (bottom[0] if delta < 0 and bottom else top[0] if top else 0)
            self._select(start)
        else:
            self._select(max(0, min(len(self._view) - 1, self.cursor + delta)))
        self._scroll_to_cursor()
        self.refresh()

    def action_cursor_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self.scrollable_content_region.height - 1))

    def action_top(self) -> None:
        self._select(0 if self._view else None)
        self.scroll_home(animate=False, immediate=True)
        self.refresh()

    def action_bottom(self) -> None:
        """Back to the live tail: drop the cursor and follow new lines again."""
        self.cursor = None
        self.new_lines = 0
        self.following = True
        self._pin()
        self.refresh()
        self.post_message(self.Status())

    def action_toggle_wrap(self) -> None:
        self.wrap = not self.wrap

    def action_cycle_filter(self) -> None:
        modes = [m for m in FILTERS if m != "regex" or self.filter_re is not None]
        nxt = modes[(modes.index(self.filter_mode) + 1) % len(modes)] \
            if self.filter_mode in modes else "all"
        self.set_filter(nxt)

    def set_search(self, pattern: str | None) -> SearchResult | None:
        """Search the lines the pane shows (regex, case-insensitive; a bad regex is taken
        literally) and go to the newest match. None when the search was cleared."""
        self._matches = None
        self.search_status = ""
        if not pattern:
            self.search_re = None
            self.refresh()
            self.post_message(self.Status())
            return None
        try:
            self.search_re = re.compile(pattern, re.IGNORECASE)
        except re.error:
            self.search_re = re.compile(re.escape(pattern), re.IGNORECASE)
        self.refresh()
        return self.search_step(1)

    def _match_rows(self) -> list[int]:
        """View rows that match the search, scanned once and then only for new rows (a view
        rebuild, which renumbers the rows, starts the scan again)."""
        pat = self.search_re
        if pat is None:
            return []
        if self._matches is None or self._matches_view is not self._view:
            self._matches, self._matches_view, self._matches_upto = [], self._view, 0
        view = self._view
        for i in range(self._matches_upto, len(view)):
            if pat.search(view[i].text[:WRAP_MAX]):
                self._matches.append(i)
        self._matches_upto = len(view)
        return self._matches

    def search_step(self, direction: int) -> SearchResult:
        """Next (1, newer) or previous (-1, older) match from the cursor; from the live tail
        both mean the newest. Past either end the search wraps round and says so."""
        rows = self._match_rows()
        if not rows:
            self.search_status = "no match"
            self.post_message(self.Status())
            return SearchResult(0, 0, None)
        wrapped = None
        if self.cursor is None:
            k = len(rows) - 1
        elif direction > 0:
            k = bisect.bisect_right(rows, self.cursor)
            if k == len(rows):
                k, wrapped = 0, "past the newest line, back to the oldest match"
        else:
            k = bisect.bisect_left(rows, self.cursor) - 1
            if k < 0:
                k, wrapped = len(rows) - 1, "past the oldest line, back to the newest match"
        self._select(rows[k])
        self._scroll_to_cursor()
        self.refresh()
        self.search_status = f"match {k + 1:,} of {len(rows):,}"
        self.post_message(self.Status())
        return SearchResult(k + 1, len(rows), wrapped)

    def action_search_next(self, direction: int = 1) -> None:
        if self.search_re is None:
            return
        self.post_message(self.Searched(self.search_step(direction)))

    def jump_to(self, source: str | None, line_no: int) -> bool:
        """Put the cursor on a given line (alert evidence); False if outside the kept window."""
        def match(e: LogEntry) -> bool:
            return not e.notice and e.line_no == line_no and (source is None
                                                              or e.source == source)
        if not any(match(e) for e in self._entries):
            if source is not None:
                return self.jump_to(None, line_no)
            return False
        if not any(match(e) for e in self._view):
            self.set_filter("all")
        for i in range(len(self._view) - 1, -1, -1):
            if match(self._view[i]):
                self._select(i)
                break
        self._scroll_to_cursor()
        self.refresh()
        return True

    @property
    def selected(self) -> LogEntry | None:
        if self.cursor is None or self.cursor >= len(self._view):
            return None
        return self._view[self.cursor]

    def action_copy_line(self) -> None:
        e = self.selected
        if e is None and self._view:
            e = self._view[-1]
        if e is not None:
            self.post_message(self.Copied(e))

    def action_line_detail(self) -> None:
        e = self.selected
        if e is not None:
            self.post_message(self.LineDetail(e))

    # -- status for the border ------------------------------------------------------------------
    @property
    def kept(self) -> int:
        return len(self._entries)

    @property
    def shown(self) -> int:
        return len(self._view)

    def status_text(self) -> tuple[str, str]:
        flt = self.filter_mode if self.filter_mode != "regex" else \
            f"regex /{self.filter_re.pattern if self.filter_re else ''}/"
        title = f"Log · {flt} · wrap {'on' if self.wrap else 'off'}"
        if self.search_re is not None and self.search_status:
            title += f" · /{self.search_re.pattern[:30]}/ {self.search_status}"
        sub = f"+{self.new_lines:,} new lines (End: follow)" if self.new_lines else ""
        return title, sub

