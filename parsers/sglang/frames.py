"""Which traceback frames are SGLang's own: a module of the `sglang` package's `srt` runtime or
its launcher (`python -m sglang.launch_server`). No other engine imports them, so one such frame
proves the log is SGLang's (`parsers.frames`). SGLang itself imported vLLM's layers and
parallel state in its early releases (0.1-0.4), so vLLM's frames in an SGLang traceback are
no proof of vLLM: `parsers.vllm.frames` claims only vLLM's own engine modules."""

from __future__ import annotations

from parsers.frames import frame_path


def owns_frame(text: str) -> bool:
    path = frame_path(text)
    return path is not None and ("/sglang/srt/" in path or path.endswith(
        "/sglang/launch_server.py"))
