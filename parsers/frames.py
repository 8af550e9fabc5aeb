"""Python traceback frames: the source file a `  File "<path>", line N, in <func>` line names.

Why: a paste that is only a traceback (the common issue report: "it crashed with this") holds
no line an engine's grammar reads, yet its frames say whose code crashed. Each engine's parser
says which of those paths are its own (`parsers.sglang.frames`, `parsers.vllm.frames`); this
reads the frame, wherever a wrapper put it (a Ray `(EngineCore pid=316) ` prefix, a docker or
kubectl envelope, a log head).
"""

from __future__ import annotations

# A frame's text starts within this many characters of the line's start (the longest wrapper
# the readers know is well under it).
_WITHIN = 240
_OPEN = 'File "'
_AFTER = '", line '


def frame_path(text: str) -> str | None:
    """The path of the traceback frame on this line, or None when it holds none. Only `find`s
    until a frame is there, so a line that is none costs almost nothing."""
    at = text.find(_OPEN, 0, _WITHIN)
    if at < 0 or (at and text[at - 1] not in " \t"):  # "File" as a word of its own
        return None
    start = at + len(_OPEN)
    end = text.find(_AFTER, start)
    if end <= start:
        return None
    return text[start:end].replace("\\", "/")
