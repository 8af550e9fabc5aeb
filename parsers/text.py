"""The shape of raw terminal text: escape sequences and redraws, known to every layer.

Log lines arrive with ANSI colours (docker, vLLM's coloured process prefixes), OSC titles and
progress bars redrawn with CR. Parsing strips them to read the message (`normalize`); display
makes them inert (`kvtui.core.text.inert`). Both use this one description of an escape sequence.
"""

from __future__ import annotations

import regex

# CSI (incl. SGR colours), OSC (ended by BEL or ST, or cut), and the two-byte escapes.
ANSI = regex.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
# The same colours pasted as `cat -v` / `less` print them, ESC as the two characters "^[":
# `^[[0;36m(EngineCore_DP0 pid=70073)^[[0;0m INFO ...` (vllm-project/vllm#33155). Only SGR (digits
# and semicolons, then "m") is read so: shorter caret text (`^[[:alpha:]]` in a quoted regex, the
# up-arrow key `^[[A`) stays as it was written.
CARET_SGR = regex.compile(r"\^\[\[[0-9;]*m")
# What a line holds when it may carry one: a line parser calls `normalize` when the line holds
# "\x1b" or CARET (the test is inlined there, before the regex, as the parsers' fast paths run
# once per line of a multi-GB log).
CARET = "^[["


def normalize(text: str) -> str:
    """A line as the parsers read it: escapes removed (caret-form colours too), the last CR
    redraw kept, no newline at the end, no indentation."""
    if "\x1b" in text:
        text = ANSI.sub("", text)
    if CARET in text:
        text = CARET_SGR.sub("", text)
    text = text.rstrip("\r\n")
    cr = text.rfind("\r")
    if cr >= 0:
        text = text[cr + 1 :]  # a progress bar redrawn over the same terminal line
    return text.lstrip(" \t")
