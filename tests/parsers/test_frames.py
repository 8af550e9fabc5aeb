"""Traceback frames name whose code crashed: the engine of a paste that is only a traceback.

Each engine claims only modules no other engine imports: SGLang's `sglang/srt/` runtime and its
launcher; vLLM's engines, entry points, executors and workers, never its model layers, config or
parallel state, which SGLang 0.1-0.4 imported (an SGLang traceback may pass through them).
"""

from __future__ import annotations

import pytest

from parsers.frames import frame_path
from parsers.sglang.frames import owns_frame as sglang_owns
from parsers.vllm.frames import owns_frame as vllm_owns

SGLANG = '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2009, in run'
VLLM_V1 = ('(EngineCore pid=316)   File "/opt/venv/lib/python3.12/site-packages/vllm/v1/engine/'
           'core.py", line 144, in __init__')


@pytest.mark.parametrize(("text", "path"), [
    (SGLANG, "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py"),
    (VLLM_V1, "/opt/venv/lib/python3.12/site-packages/vllm/v1/engine/core.py"),
    # a docker envelope in front, a Windows path
    ('2026-11-24T10:00:00.123456789Z   File "/usr/lib/sglang/launch_server.py", line 14, in <m>',
     "/usr/lib/sglang/launch_server.py"),
    ('  File "C:\\venv\\Lib\\site-packages\\vllm\\entrypoints\\api_server.py", line 9, in f',
     "C:/venv/Lib/site-packages/vllm/entrypoints/api_server.py"),
    ("Traceback (most recent call last):", None),
    ("    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)", None),
    ('ProfileFile "/x/sglang/srt/a.py", line 3, in f', None),  # not a word of its own
    ('  File "/x/sglang/srt/a.py"', None),  # no line number: not a frame
])
def test_frame_path(text, path):
    assert frame_path(text) == path


@pytest.mark.parametrize(("text", "sglang", "vllm"), [
    (SGLANG, True, False),
    (VLLM_V1, False, True),
    ('  File "/usr/lib/python3/dist-packages/sglang/launch_server.py", line 14, in <module>',
     True, False),
    ('  File "/usr/local/lib/python3.10/dist-packages/vllm/engine/llm_engine.py", line 9, in f',
     False, True),
    ('  File "/usr/local/lib/python3.10/dist-packages/vllm/worker/worker.py", line 9, in f',
     False, True),
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
