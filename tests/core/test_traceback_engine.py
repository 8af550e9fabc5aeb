"""A paste that is only a traceback is still an engine's log: its frames say whose code crashed.

The corpus' sgl-project/sglang#5285 is 18 lines of a Scheduler traceback ending in a CUDA-graph
OOM; before, the report said "no line of sglang or vllm was found; this does not look like an
LLM-server log" and `check` exited 3. A frame identifies only where the fold knows no engine
yet, on every route alike (line by line, byte ranges joined, a stream's pieces).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtui.core.engine import all_engines
from kvtui.core.pipeline import Options, Session
from kvtui.core.pipeline.chunks import fold_ranges
from kvtui.core.pipeline.fold import Fold
from kvtui.sources.lines import lines_of
from kvtui.sources.readers import ranged_file
from tests.helpers import session_of

SGLANG_TB = [
    "Traceback (most recent call last):",
    '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2009, in '
    "run_scheduler_process",
    "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)",
    '  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", '
    "line 269, in __init__",
    "    raise Exception(",
    "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 448.00 MiB. "
    "GPU 7 has a total capacity of 95.00 GiB",
]
VLLM_TB = [
    "(EngineCore pid=316) Traceback (most recent call last):",
    '(EngineCore pid=316)   File "/opt/venv/lib/python3.12/site-packages/vllm/v1/engine/core.py"'
    ", line 144, in __init__",
    "(EngineCore pid=316)     num_gpu_blocks, num_cpu_blocks, kv_cache_config = "
    "self._initialize_kv_caches(",
    "(EngineCore pid=316) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
    "2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.06 GiB is free.",
]
# SGLang 0.1-0.4 ran vLLM's layers: a frame there proves nothing, the SGLang frame after it does
THROUGH_VLLM_LAYERS = [
    "Traceback (most recent call last):",
    '  File "/usr/local/lib/python3.10/dist-packages/vllm/model_executor/layers/linear.py", '
    "line 301, in forward",
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/layers/radix_attention.py", '
    "line 99, in forward",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB.",
]

# SGLang 0.3's `from vllm.distributed import ...` runs vllm/__init__.py, which vLLM 0.4-0.6 wrote
# as eager imports of its engine and executor; a paste cut to its last frames shows only those
IMPORT_THROUGH_VLLM_INIT = [
    "Traceback (most recent call last):",
    '  File "/usr/local/lib/python3.10/dist-packages/vllm/__init__.py", line 3, in <module>',
    "    from vllm.engine.arg_utils import AsyncEngineArgs, EngineArgs",
    '  File "/usr/local/lib/python3.10/dist-packages/vllm/engine/arg_utils.py", line 7, in '
    "<module>",
    "    from vllm.config import (CacheConfig, DecodingConfig, DeviceConfig,",
    '  File "/usr/local/lib/python3.10/dist-packages/vllm/executor/ray_utils.py", line 5, in '
    "<module>",
    "ImportError: /usr/local/lib/python3.10/dist-packages/vllm/_C.abi3.so: undefined symbol: "
    "_ZN5torch3jit17parseSchemaOrNameERKSs",
]
SGLANG_IMPORT_FRAME = ('  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/layers/'
                       'linear.py", line 8, in <module>')


def report_of(lines: list[str]):
    session = session_of(lines, "paste.log")
    return session.report()


@pytest.mark.parametrize(("lines", "engine"), [
    (SGLANG_TB, "sglang"), (VLLM_TB, "vllm"), (THROUGH_VLLM_LAYERS, "sglang")])
def test_a_traceback_names_its_engine(lines, engine):
    report = report_of(lines)
    assert report.engine == engine
    assert not report.unrecognised
    assert [a.rule for a in report.alerts] == ["oom"]  # the alert is what it was


def test_importing_vllm_is_no_proof_of_vllm():
    assert report_of(IMPORT_THROUGH_VLLM_INIT).engine is None
    whole = [IMPORT_THROUGH_VLLM_INIT[0], SGLANG_IMPORT_FRAME, *IMPORT_THROUGH_VLLM_INIT[1:]]
    assert report_of(whole).engine == "sglang"
    # `vllm serve` failing at the same import is vLLM's own crash: its console script says so
    # (vLLM 0.6's is vllm.scripts:main)
    serve = [IMPORT_THROUGH_VLLM_INIT[0],
             '  File "/opt/venv/bin/vllm", line 5, in <module>',
             "    from vllm.scripts import main", *IMPORT_THROUGH_VLLM_INIT[1:]]
    assert report_of(serve).engine == "vllm"


def test_a_faulthandler_dump_names_its_engine():
    # a segfault's dump of every thread: `File "p", line N in f`, no comma
    dump = ["Fatal Python error: Segmentation fault",
            "",
            "Thread 0x00007f2a4c9ff640 (most recent call first):",
            '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", '
            "line 1234 in event_loop_normal",
            '  File "/usr/lib/python3.10/threading.py", line 953 in run']
    assert report_of(dump).engine == "sglang"


def test_engine_agnostic_lines_alone_stay_unrecognised():
    report = report_of([SGLANG_TB[0], SGLANG_TB[-1], '  File "/home/me/run.py", line 3, in main'])
    assert report.engine is None and report.unrecognised


def test_a_frame_does_not_undo_the_engine_a_line_named():
    # a vLLM log (its KV cache line names it) whose traceback shows an SGLang path stays vLLM's
    report = report_of(["INFO 11-24 10:00:00 [kv_cache_utils.py:1087] GPU KV cache size: "
                        "695,504 tokens", VLLM_TB[0], SGLANG_TB[1], VLLM_TB[-1]])
    assert report.engine == "vllm"
    assert report_of([SGLANG_TB[1], *VLLM_TB]).engine == "sglang"  # the first proof holds


def _padded(lines: list[str]) -> bytes:
    # engine-agnostic lines first, so a cut can put the frame in any chunk
    filler = [f"warming up step {i}" for i in range(400)]
    return ("\n".join(filler + lines + filler) + "\n").encode()


def test_every_route_finds_it_the_same(tmp_path: Path):
    data = _padded(SGLANG_TB)
    path = tmp_path / "paste.log"
    path.write_bytes(data)
    line_starts = [0, *(i + 1 for i, b in enumerate(data) if b == 10)][:-1]
    for cut in line_starts[395:412]:  # cuts before, at and after the frames
        fold = Fold(all_engines())
        assert fold_ranges(ranged_file(str(path)), str(path), fold, [0, cut], 1), cut
        assert fold.engine is not None and fold.engine.name == "sglang", cut
    session = Session(Options(workers=2, piece_bytes=4096, min_parallel_bytes=1))
    feed = session.stream(len(data))
    pos, n = 0, 1
    while pos < len(data):  # the SSH follower's blocks: received bytes, whole lines
        end = data.rfind(b"\n", pos, pos + 3000) + 1
        raw = data[pos:end]
        feed.feed_raw("paste.log", raw, raw.count(b"\n"), n, lines_of)
        n += raw.count(b"\n")
        pos = end
    feed.close()
    assert session.report().engine == "sglang"
