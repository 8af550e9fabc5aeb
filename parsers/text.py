"""The shape of raw terminal text: escape sequences and redraws, known to every layer.

Log lines arrive with ANSI colours (docker, vLLM's coloured process prefixes), OSC titles and
progress bars redrawn with CR. Parsing strips them to read the message (`normalize`); display
makes them inert (`kvtui.core.text.inert`). Both use this one description of an escape sequence.
"""

from __future__ import annotations

import regex

# CSI (incl. SGR colours), OSC (ended by BEL or ST, or cut), and the two-byte escapes.
ANSI = regex.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")


def normalize(text: str) -> str:
    """A line as the parsers read it: escapes removed, the last CR redraw kept, no newline at
    the end, no indentation."""
    if "\x1b" in text:
        text = ANSI.sub("", text)
    text = text.rstrip("\r\n")
    cr = text.rfind("\r")
    if cr >= 0:
        text = text[cr + 1 :]  # a progress bar redrawn over the same terminal line
    return text.lstrip(" \t")
