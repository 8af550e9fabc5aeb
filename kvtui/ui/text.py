"""Turning untrusted log text into inert, bounded display text, and the app's colour vocabulary.

Why one module: every widget that shows log-derived text (log lines, alert evidence, model names
from server_args) must go through the same sanitizer, or one of them will eventually render a
prompt containing `[@click=app.quit]` as markup. Nothing here builds markup strings: callers get
`rich.text.Text` objects whose content is never parsed.
"""

from __future__ import annotations

from rich.cells import cell_len, chop_cells
from rich.text import Text

from kvtui.core.text import inert
from parsers import KIND_TRAITS

# How much of one line the log pane draws. The full line stays in memory for copy and detail.
DISPLAY_MAX = 2000

SEVERITY_STYLE = {
    "critical": "bold red",
    "warning": "bold yellow",
    "info": "cyan",
    "ok": "bold green",
}

# Log-pane colour per tone of a recognised kind (parsers.kinds.KIND_TRAITS).
TONE_STYLE = {
    "danger": "bold red",
    "warn": "yellow",
    "dtype": "bold magenta",
    "memory": "magenta",
    "capacity": "bold cyan",
    "config": "blue",
    "load": "green",
    "good": "bold green",
    "decode": "dim",
    "prefill": "dim cyan",
}
KIND_STYLE = {kind: TONE_STYLE[t.tone] for kind, t in KIND_TRAITS.items()}
RECOGNIZED_STYLE = "white"


def clean(text: str, limit: int | None = DISPLAY_MAX) -> str:
    """Untrusted text for one row of the terminal: `kvtui.core.text.inert` on one line, cut
    without an ellipsis (the detail view has the rest)."""
    if limit is not None and len(text) > limit * 2:
        text = text[: limit * 2]  # cut before the regexes so a 1 MB line costs nothing
    text = inert(text, None, one_line=True)
    return text[:limit] if limit is not None else text


def gist(text: str, limit: int = 200) -> str:
    """The start of a fix as a list shows it: its first sentence, or as many of that
    sentence's "; " clauses as fit in `limit`, then " …" (the detail view has the rest). Never
    cut inside a clause: a cut at a fixed width once left "or serve BF16: -" of a flag."""
    end = text.find(". ")
    first = text[:end + 1] if end > 0 else text
    if len(first) <= limit:
        return first
    shown = ""
    for clause in first.split("; "):
        longer = f"{shown}; {clause}" if shown else clause
        if len(longer) > limit:
            break
        shown = longer
    if not shown:  # one long clause: cut at a space
        shown = first[:limit].rsplit(" ", 1)[0]
    return shown + " …"


def wrap_cells(text: str, width: int) -> list[str]:
    """Rows of at most `width` cells (a trailing space may overhang: it is cropped, unseen),
    broken after a space where the row has one, so a word is split only when it is longer
    than a row (issue 39: the log's wrap cut words at the width). Nothing is dropped: the rows
    joined are the text."""
    width = max(1, width)
    rows: list[str] = []
    while cell_len(text) > width:
        head = chop_cells(text[:width], width)[0]
        cut = text.rfind(" ", 0, len(head) + 1)
        if cut > 0:
            head = text[:cut + 1]
        rows.append(head)
        text = text[len(head):]
    rows.append(text)
    return rows


def plain(text: str, limit: int | None = DISPLAY_MAX, style: str = "") -> Text:
    """Untrusted text as a Text object: never parsed as markup, controls made inert."""
    return Text(clean(text, limit), style=style, no_wrap=False)


def severity_style(severity: str | None) -> str:
    return SEVERITY_STYLE.get(severity or "", "")


def fmt_int(v: object) -> str:
    return fmt_num(v, 0)


def fmt_gib(v: object) -> str:
    if isinstance(v, int | float) and not isinstance(v, bool):
        return f"{v:.2f} GiB"
    return "—"


def fmt_num(v: object, digits: int = 2) -> str:
    if isinstance(v, bool) or v is None:
        return "—"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:,.{digits}f}"
    return str(v)
