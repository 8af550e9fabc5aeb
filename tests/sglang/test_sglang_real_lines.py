"""Line classes met in real SGLang pastes that kvtui misread, each with lines written in the
shape of the real ones (the source is cited at each; nothing here is copied from the corpus)."""

from __future__ import annotations

import pytest

from parsers.sglang import parse_line
from tests.helpers import session_of


# "Capture cuda graph failed: {e}" wraps any RuntimeError of the capture (0.4.6
# model_executor/cuda_graph_runner.py:277-279; 0.5.23 runner/decode_cuda_graph_runner.py:600-603).
# A repository note of 2026-08 (SGLang 0.5.17 on MI355X, Qwen3-0.6B) failed capture on a ROCm
# shim, not on memory; sgl-project/sglang#5285 failed it on "CUDA out of memory".
@pytest.mark.parametrize("line", [
    "[2026-08-20 01:34:50] Exception: Capture cuda graph failed: ROCm shim: "
    "sgl_kernel.rotary_embedding was really called - needs a native ROCm build",
    "Exception: Capture cuda graph failed: CUDA error: an illegal memory access was encountered",
    "[2026-08-20 01:40:22 TP1] Exception: Capture cuda graph failed: Triton Error [CUDA]: "
    "invalid argument",
])
def test_graph_capture_failure_that_is_not_memory(line):
    ev = parse_line(line)
    assert ev is None or ev.kind != "oom"


@pytest.mark.parametrize("line", [
    "[2025-04-10 08:00:00 TP7] Exception: Capture cuda graph failed: CUDA out of memory. Tried "
    "to allocate 448.00 MiB. GPU 7 has a total capacity of 95.00 GiB",
    "Exception: Capture cuda graph failed: HIP out of memory. Tried to allocate 2.00 GiB.",
    "Exception: Capture cuda graph failed: torch.OutOfMemoryError: CUDA out of memory.",
    "Exception: Capture cuda graph failed: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling "
    "`cublasCreate(handle)`",
    # cut or wrapped at the colon: the cause is not on the line; SGLang's advice is memory first
    "[2026-08-20 01:34:50] Exception: Capture cuda graph failed:",
])
def test_graph_capture_failure_that_is_memory(line):
    ev = parse_line(line)
    assert ev is not None and ev.kind == "oom" and ev.get("reason") == "cuda_graph"


# tmux's copy-mode position indicator, right-aligned on the first line of a copy:
# sgl-project/sglang#7055 pasted "[2025-06-10 14:09:44 DP7 TP7] KV Cache is allocated. #tokens:
# 1230416, KV size: 80.53 GB <spaces> [386/1830]". On a line whose last column is a number the
# indicator ended up inside that value.
TMUX = " " * 40 + "[386/1830]"


@pytest.mark.parametrize(("line", "kind", "field", "value"), [
    ("[2025-06-10 14:09:47 DP0 TP0] Prefill batch. #new-seq: 1, #new-token: 7, #cached-token: 0, "
     "token usage: 0.00, #running-req: 0, #queue-req: 4" + TMUX, "prefill_batch", "queue_req", 4),
    ("[2026-01-01 00:00:00 TP0] Decode batch, #running-req: 12, #token: 51234, token usage: 0.04, "
     "cuda graph: True, gen throughput (token/s): 412.33, #queue-req: 3" + TMUX,
     "decode_batch", "queue_req", 3),
    ("[2025-06-10 14:09:45 DP0 TP0] max_total_num_tokens=1230416, chunked_prefill_size=16384, "
     "max_prefill_tokens=16384, max_running_requests=3846, context_len=163840" + TMUX,
     "capacity", "context_len", 163840),
    ("[2025-06-10 14:09:44 DP7 TP7] KV Cache is allocated. #tokens: 1230416, KV size: 80.53 GB"
     + TMUX + "\n", "kv_pool", "kv_gib", 80.53),
])
def test_tmux_position_indicator(line, kind, field, value):
    ev = parse_line(line)
    assert ev is not None and ev.kind == kind and ev.get(field) == value


def test_tmux_indicator_in_a_block_folds_like_the_clean_line():

    clean = ("[2025-06-10 14:09:47 DP0 TP0] Prefill batch. #new-seq: 1, #new-token: 7, "
             "#cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 9")
    reports = []
    for first in (clean + TMUX, clean):
        s = session_of([first, clean.replace("#queue-req: 9", "#queue-req: 2")], "paste.log")
        reports.append(s.report().runtime)
    assert reports[0] == reports[1]
    assert reports[0] is not None and reports[0].peak_queue_req == 9


def test_brackets_that_are_not_the_indicator_stay():
    ev = parse_line("[2025-03-08 12:29:21 TP0] Capture cuda graph bs [1, 2, 4, 8]")
    assert ev is None or ev.kind != "decode_batch"
    ev = parse_line("[2025-03-08 12:29:29 TP0] max_total_num_tokens=46611, "
                    "max_running_requests=2049, context_len=131072 [note 1/2]")
    assert ev is not None and ev.kind == "capacity"
