"""Python traceback frames: the source file and function a `  File "<path>", line N, in <func>`
line names.

Why: a paste that is only a traceback (the common issue report: "it crashed with this") holds
no line an engine's grammar reads, yet its frames say whose code crashed. Each engine's parser
says which of those frames are its own (`parsers.sglang.frames`, `parsers.vllm.frames`); this
reads the frame, wherever a wrapper put it (a Ray `(EngineCore pid=316) ` prefix, a docker or
kubectl envelope, a log head), once per line for every engine asked (`Fold.parse`).
"""

from __future__ import annotations

from typing import NamedTuple

# A frame's text starts within this many characters of the line's start (the longest wrapper
# the readers know is well under it).
_WITHIN = 240
_OPEN = 'File "'
_LINE = '", line '
_IN = " in "  # ", in f" from a traceback, " in f" from faulthandler's dump of every thread


class Frame(NamedTuple):
    path: str  # with "/" separators, also for a Windows path
    function: str  # "<module>" for code run while a module is imported


def read_frame(text: str) -> Frame | None:
    """The traceback frame on this line, or None when it holds none: a traceback's
    `File "p", line N, in f` or faulthandler's `File "p", line N in f` (a segfault's or a hung
    NCCL call's dump). Only `find`s until a frame is there, so a line that is none costs almost
    nothing. The path ends at its closing quote, which Python writes right before `, line N`:
    a quote inside a message that merely mentions `File "x", line 3` is no frame. The function
    is the name's one word: what a wrapper appends (Ray's ` [repeated 3x across cluster]`, a
    colour reset) is not part of it."""
    at = text.find(_OPEN, 0, _WITHIN)
    if at < 0 or (at and text[at - 1] not in " \t"):  # "File" as a word of its own
        return None
    start = at + len(_OPEN)
    end = text.find('"', start)
    if end <= start or not text.startswith(_LINE, end):
        return None
    number_at = end + len(_LINE)
    in_at = text.find(_IN, number_at)
    if in_at < 0 or not text[number_at:in_at].removesuffix(",").isdigit():
        return None
    function = text[in_at + len(_IN):].split(None, 1)
    if not function:
        return None
    return Frame(text[start:end].replace("\\", "/"), function[0].split("\x1b", 1)[0])
