"""The source picker `kvtui ssh HOST` shows when discovery finds several server logs.

A small app of its own, run before the main one: choosing a source decides which follower the
main app is built around. Labels come from the remote host (process command lines, container
and file names), so they are shown as plain text, never as markup.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from kvtui.ui.text import clean


class PickerApp(App[int | None]):
    """Returns the index of the chosen option, or None when the user quits."""

    CSS = """
    #picker-title { padding: 1 2 0 2; text-style: bold; }
    #picker-hint { padding: 0 2 1 2; color: $text-muted; }
    OptionList { margin: 0 2; height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "choose_none", "Quit"),
        Binding("escape", "choose_none", "Quit", show=False),
    ]

    def __init__(self, title: str, labels: list[tuple[str, str]]) -> None:
        super().__init__()
        self.picker_title = title
        self.labels = labels

    def compose(self) -> ComposeResult:
        yield Static(Text(clean(self.picker_title, 200)), id="picker-title", markup=False)
        yield Static("Enter follows the highlighted source; q quits.", id="picker-hint",
                     markup=False)
        options = []
        for label, detail in self.labels:
            t = Text(clean(label, 300), style="bold")
            if detail:
                t.append("\n  " + clean(detail, 300), style="dim")
            options.append(Option(t))
        yield OptionList(*options, markup=False)
        yield Footer()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.exit(event.option_index)

    def action_choose_none(self) -> None:
        self.exit(None)


def pick(title: str, labels: list[tuple[str, str]]) -> int | None:
    """Show the picker full-screen; the chosen index, or None (also when there is no terminal
    to show it on: that is said on stderr)."""
    import sys

    from kvtui.ui.terminal import terminal_problem

    problem = terminal_problem()
    if problem is not None:
        print(f"kvtui: cannot show the log picker: {problem}", file=sys.stderr)
        return None
    return PickerApp(title, labels).run()
