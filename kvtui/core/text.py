"""Making untrusted log text inert before it reaches a terminal or a document: the one sanitizer.

Log lines can carry prompts (`--log-requests`), ANSI escapes and control bytes; printed raw they
could recolour or retitle the user's terminal. Every renderer (the text report, Markdown, the TUI
through `kvtui.ui.text`) passes log-derived text through `inert` first.
"""

from __future__ import annotations

import regex

from parsers.text import ANSI, CARET, CARET_SGR

# Every C0/C1 control except tab and newline (the text renderer keeps its paragraphs).
_CONTROL = regex.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
REPLACEMENT = "\ufffd"


def inert(text: str, limit: int | None = 400, *, one_line: bool = False) -> str:
    """ANSI sequences removed (caret-form colours too), other control characters shown as
    U+FFFD, length bounded (an ellipsis marks the cut). `one_line`: newlines become U+FFFD and
    tabs spaces (a terminal cell grid, where both would move the cursor)."""
    if limit is not None and len(text) > limit * 2:
        text = text[: limit * 2]  # cut before the regexes so a 1 MB line costs nothing
    if "\x1b" in text:
        text = ANSI.sub("", text)
    if CARET in text:  # colours pasted as `cat -v` shows them: noise, as the parsers read it
        text = CARET_SGR.sub("", text)
    if one_line:
        text = text.replace("\t", "    ").replace("\n", REPLACEMENT)
    text = _CONTROL.sub(REPLACEMENT, text)
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text
