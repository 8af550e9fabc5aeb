"""Making untrusted log text inert before it reaches a terminal or a document.

Log lines can carry prompts (`--log-requests`), ANSI escapes and control bytes; printed raw they
could recolour or retitle the user's terminal. Every renderer passes log-derived text through
`inert` first.
"""

from __future__ import annotations

import regex

_ANSI = regex.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROL = regex.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def inert(text: str, limit: int = 400) -> str:
    """ANSI sequences removed, other control characters shown as U+FFFD-free '?' and bounded."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    text = _CONTROL.sub("?", text)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text
