"""Which traceback frames are SGLang's own: a module of the `sglang` package's `srt` runtime or
its launcher (`python -m sglang.launch_server`). No other engine imports them, so one such frame
proves the log is SGLang's (`parsers.frames`). SGLang itself imported vLLM's layers and
parallel state in its early releases (0.1-0.4), so vLLM's frames in an SGLang traceback are
no proof of vLLM: `parsers.vllm.frames` says which are."""

from __future__ import annotations

from parsers.frames import Frame


def owns_frame(frame: Frame) -> bool:
    path = "/" + frame.path  # a relative path (`sglang/srt/x.py`) reads as an absolute one
    return "/sglang/srt/" in path or path.endswith("/sglang/launch_server.py")
