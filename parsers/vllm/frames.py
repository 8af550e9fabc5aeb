"""Which traceback frames are vLLM's own: code running in its engines (V1 `vllm/v1/`, V0
`vllm/engine/`), entry points (`vllm/entrypoints/`), executors and workers; and its servers'
and CLI's modules (`vllm serve`, `python -m vllm.entrypoints.openai.api_server`) even while
they are imported, which is where an install's import error shows.

SGLang's early releases (0.1-0.4) ran vLLM's model layers, config and parallel state
(`vllm/model_executor/`, `vllm/config.py`, `vllm/distributed/`: sglang 0.1.20-0.4.6, every
`from vllm...` import), so frames there may sit in an SGLang traceback and prove nothing. Any of
those imports also runs `vllm/__init__.py`, which imports the engine, `entrypoints/llm.py`,
`chat_utils.py`, `openai/logits_processors.py`, the executor and the worker base eagerly (vLLM
0.6.3.post1 vllm/__init__.py:3-13, followed transitively; the lazy `__getattr__` came later):
an SGLang import-time crash can pass through those `in <module>`. So a frame of the engine,
entry point, executor and worker modules is vLLM's proof only *in a function*, which SGLang
never calls; the servers and the CLI (`entrypoints/openai/api_server.py`,
`entrypoints/api_server.py`, `entrypoints/cli/`, `scripts.py`, the `vllm` console script)
are imported by nobody else and prove it anywhere (`parsers.frames`)."""

from __future__ import annotations

from parsers.frames import Frame

_OWN = ("/vllm/v1/", "/vllm/engine/", "/vllm/entrypoints/", "/vllm/executor/", "/vllm/worker/")
_ENTRY = ("/vllm/entrypoints/openai/api_server.py", "/vllm/entrypoints/api_server.py",
          "/vllm/entrypoints/cli/", "/vllm/scripts.py")
# the `vllm` console script: POSIX bin/vllm, Windows Scripts\vllm.exe (a zip run as __main__)
_SCRIPTS = ("/bin/vllm", "/vllm.exe/__main__.py", "/vllm.exe")


def owns_frame(frame: Frame) -> bool:
    path = "/" + frame.path  # a relative path (`vllm/v1/x.py`) reads as an absolute one
    if path.endswith(_SCRIPTS) or any(part in path for part in _ENTRY):
        return True
    return frame.function != "<module>" and any(part in path for part in _OWN)
