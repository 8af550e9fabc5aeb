"""Which traceback frames are vLLM's own: its engines (V1 `vllm/v1/`, V0 `vllm/engine/`), the
entry points (`vllm/entrypoints/`), executors and workers. SGLang's early releases (0.1-0.4)
imported vLLM's model layers, config and parallel state (`vllm/model_executor/`,
`vllm/config.py`, `vllm/distributed/`), so frames there may sit in an SGLang traceback and
prove nothing (`parsers.frames`)."""

from __future__ import annotations

from parsers.frames import frame_path

_OWN = ("/vllm/v1/", "/vllm/engine/", "/vllm/entrypoints/", "/vllm/executor/", "/vllm/worker/")


def owns_frame(text: str) -> bool:
    path = frame_path(text)
    return path is not None and any(part in path for part in _OWN)
