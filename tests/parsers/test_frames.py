"""Traceback frames name whose code crashed: the engine of a paste that is only a traceback.

Each engine claims only code no other engine runs: SGLang's `sglang/srt/` runtime and its
launcher; functions of vLLM's engines, entry points, executors and workers, never its model
layers, config or parallel state, which SGLang 0.1-0.4 ran (an SGLang traceback may pass through
them), nor those modules' import (`in <module>`), which `import vllm` ran for SGLang too;
vLLM's servers and CLI, which nobody else imports, anywhere.
"""

from __future__ import annotations

import pytest

from parsers.frames import Frame, read_frame
from parsers.sglang.frames import owns_frame as sglang_owns_frame
from parsers.vllm.frames import owns_frame as vllm_owns_frame


def sglang_owns(text: str) -> bool:
    frame = read_frame(text)
    return frame is not None and sglang_owns_frame(frame)


def vllm_owns(text: str) -> bool:
    frame = read_frame(text)
    return frame is not None and vllm_owns_frame(frame)

SGLANG = '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2009, in run'
VLLM_V1 = ('(EngineCore pid=316)   File "/opt/venv/lib/python3.12/site-packages/vllm/v1/engine/'
           'core.py", line 144, in __init__')


@pytest.mark.parametrize(("text", "frame"), [
    (SGLANG, Frame("/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", "run")),
    (VLLM_V1, Frame("/opt/venv/lib/python3.12/site-packages/vllm/v1/engine/core.py", "__init__")),
    # a docker envelope in front, a Windows path
    ('2026-11-24T10:00:00.123456789Z   File "/usr/lib/sglang/launch_server.py", line 14, in '
     '<module>', Frame("/usr/lib/sglang/launch_server.py", "<module>")),
    ('  File "C:\\venv\\Lib\\site-packages\\vllm\\entrypoints\\api_server.py", line 9, in f',
     Frame("C:/venv/Lib/site-packages/vllm/entrypoints/api_server.py", "f")),
    ("Traceback (most recent call last):", None),
    ("    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)", None),
    ('ProfileFile "/x/sglang/srt/a.py", line 3, in f', None),  # not a word of its own
    ('  File "/x/sglang/srt/a.py"', None),  # no line number: not a frame
    ('  File "/x/sglang/srt/a.py", line ?, in f', None),
    # a message quoting a frame after a quoted word: the path ends at the first quote
    ('  File "config.json" not found; see File "/x/sglang/srt/a.py", line 3, in f', None),
    # faulthandler's dump (a segfault, a hung NCCL call): no comma before "in"
    ('  File "/sgl/python/sglang/srt/managers/scheduler.py", line 1234 in event_loop_normal',
     Frame("/sgl/python/sglang/srt/managers/scheduler.py", "event_loop_normal")),
    # what a wrapper appends after the function is not part of it
    ('(EngineCore pid=7)   File "/v/vllm/engine/arg_utils.py", line 9, in <module> [repeated 3x '
     'across cluster]', Frame("/v/vllm/engine/arg_utils.py", "<module>")),
    ('  File "/v/vllm/engine/arg_utils.py", line 9, in <module>\x1b[0m',
     Frame("/v/vllm/engine/arg_utils.py", "<module>")),
    # ", in " inside the path, importlib's frozen frames
    ('  File "/srv/a, in b/vllm/v1/x.py", line 2, in run',
     Frame("/srv/a, in b/vllm/v1/x.py", "run")),
    ('  File "<frozen importlib._bootstrap>", line 1206, in _gcd_import',
     Frame("<frozen importlib._bootstrap>", "_gcd_import")),
    ('  File "/x/sglang/srt/a.py", line 3, in ', None),  # no function
])
def test_read_frame(text, frame):
    assert read_frame(text) == frame


def test_a_frame_is_read_only_near_the_line_start():
    # wrappers (a Ray prefix, an envelope, a log head) are short; a frame deep in a message is
    # quoted text, not a frame
    near, far = " " * 200 + SGLANG.lstrip(), "x " * 150 + SGLANG.lstrip()
    assert read_frame(near) is not None
    assert read_frame(far) is None


@pytest.mark.parametrize(("text", "sglang", "vllm"), [
    (SGLANG, True, False),
    (VLLM_V1, False, True),
    ('  File "/usr/lib/python3/dist-packages/sglang/launch_server.py", line 14, in <module>',
     True, False),
    ('  File "/usr/local/lib/python3.10/dist-packages/vllm/engine/llm_engine.py", line 9, in f',
     False, True),
    ('  File "/usr/local/lib/python3.10/dist-packages/vllm/worker/worker.py", line 9, in f',
     False, True),
    # importing them is no proof: `from vllm.distributed import ...` in SGLang 0.1-0.4 runs
    # vllm/__init__.py, which imports vllm/engine, entrypoints and executor (vLLM 0.4-0.6)
    ('  File "/usr/local/lib/python3.10/dist-packages/vllm/engine/arg_utils.py", line 9, in '
     '<module>', False, False),
    ('  File "/usr/local/lib/python3.10/dist-packages/vllm/v1/engine/llm_engine.py", line 9, in '
     '<module>', False, False),
    # vLLM's servers and CLI, which nobody else imports, are its proof even at import: where an
    # install's import error (`undefined symbol`) shows, vllm-project/vllm#20361's shape
    ('  File "/home/pc/envs/vllmNext/bin/vllm", line 5, in <module>', False, True),
    ('  File "/home/pc/vllm/vllm/entrypoints/cli/__init__.py", line 3, in <module>', False, True),
    ('  File "/usr/local/lib/python3.10/dist-packages/vllm/entrypoints/openai/api_server.py", '
     'line 27, in <module>', False, True),
    # the console script on Windows, relative paths
    ('  File "C:\\venv\\Scripts\\vllm.exe\\__main__.py", line 7, in <module>', False, True),
    ('  File "sglang/launch_server.py", line 14, in <module>', True, False),
    ('  File "vllm/v1/engine/core.py", line 144, in __init__', False, True),
    # faulthandler's frames, and a Ray suffix that must not hide `<module>`
    ('  File "/sgl/python/sglang/srt/managers/scheduler.py", line 1234 in event_loop_normal',
     True, False),
    ('(EngineCore pid=7)   File "/v/vllm/engine/arg_utils.py", line 9, in <module> [repeated 3x '
     'across cluster]', False, False),
    # ...but not what `import vllm` imports (vLLM 0.6.3.post1 vllm/__init__.py)
    ('  File "/usr/local/lib/python3.10/dist-packages/vllm/entrypoints/llm.py", line 9, in '
     '<module>', False, False),
    # vLLM's layers and parallel state, as SGLang 0.1-0.4 imported them: nobody's proof
    ('  File "/usr/local/lib/python3.10/dist-packages/vllm/model_executor/layers/linear.py", '
     'line 9, in f', False, False),
    ('  File "/usr/local/lib/python3.10/dist-packages/vllm/distributed/parallel_state.py", '
     'line 9, in f', False, False),
    # the kernels package and the user's own code
    ('  File "/usr/local/lib/python3.10/dist-packages/sgl_kernel/ops.py", line 9, in f',
     False, False),
    ('  File "/home/me/bench.py", line 9, in main', False, False),
])
def test_which_engine_owns_a_frame(text, sglang, vllm):
    assert (sglang_owns(text), vllm_owns(text)) == (sglang, vllm)
