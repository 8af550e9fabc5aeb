"""Which traceback frames are vLLM's own: code running in its engines (V1 `vllm/v1/`, V0
`vllm/engine/`), entry points (`vllm/entrypoints/`), executors and workers.

SGLang's early releases (0.1-0.4) ran vLLM's model layers, config and parallel state
(`vllm/model_executor/`, `vllm/config.py`, `vllm/distributed/`: sglang 0.1.20-0.4.6, every
`from vllm...` import), so frames there may sit in an SGLang traceback and prove nothing. Any of
those imports also runs `vllm/__init__.py`, which in vLLM 0.4-0.6 imports the engine, entry
points and executor eagerly: an SGLang import-time crash can pass through `vllm/engine/*.py`
`in <module>`. So only a frame *in a function* of those modules is vLLM's proof; SGLang never
calls into them (`parsers.frames`)."""

from __future__ import annotations

from parsers.frames import read_frame

_OWN = ("/vllm/v1/", "/vllm/engine/", "/vllm/entrypoints/", "/vllm/executor/", "/vllm/worker/")


def owns_frame(text: str) -> bool:
    frame = read_frame(text)
    return (frame is not None and frame.function != "<module>"
            and any(part in frame.path for part in _OWN))
