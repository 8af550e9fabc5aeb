"""Line classes met in real SGLang pastes that kvtui misread, each with lines written in the
shape of the real ones (the source is cited at each; nothing here is copied from the corpus)."""

from __future__ import annotations

import pytest

from parsers.sglang import parse_line


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
