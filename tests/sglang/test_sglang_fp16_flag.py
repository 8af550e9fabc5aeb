"""The flag that keeps an fp16 model's fp16 KV cache.

sgl-project/sglang#14254 (2025-12, PP4, LlavaForConditionalGeneration in float16) logged
`Using KV cache dtype: torch.float16`; kvtui's what-if put `--kv-cache-dtype bf16` on the fp16
row, a flag that stores bfloat16 (0.5.8 model_executor/model_runner.py:1569-1570). The lines
below are written in the shape of that paste.
"""

from __future__ import annotations

from kvtui.engines.sglang.version import SGLANG_LINE, kv_dtype_flag
from tests.helpers import session_of

PASTE = [
    "[2025-12-01 10:00:00 PP0] Load weight end. type=LlavaForConditionalGeneration, "
    "dtype=torch.float16, avail mem=60.00 GB, mem usage=8.00 GB.",
    "[2025-12-01 10:00:00 PP0] Using KV cache dtype: torch.float16",
    "[2025-12-01 10:00:00 PP0] KV Cache is allocated. #tokens: 300000, K size: 22.89 GB, "
    "V size: 22.89 GB",
    "[2025-12-01 10:00:00 PP1] KV Cache is allocated. #tokens: 300000, K size: 22.89 GB, "
    "V size: 22.89 GB",
    "[2025-12-01 10:00:00 PP0] Memory pool end. avail mem=13.00 GB",
]


def test_fp16_target_is_auto_not_bf16():
    newer = SGLANG_LINE.between((0, 5, 4), (0, 5, 8))
    flag, advice = kv_dtype_flag("fp16", newer, model_dtype="fp16")
    assert flag == "--kv-cache-dtype auto" and "FP8" in advice
    flag, _ = kv_dtype_flag("fp16", newer, model_dtype="fp16", checkpoint_kv_fp8=False)
    assert flag == "--kv-cache-dtype auto"
    flag, advice = kv_dtype_flag("fp16", newer, model_dtype="fp16", checkpoint_kv_fp8=True)
    assert flag is None and "no fp16" in advice
    old = SGLANG_LINE.between((0, 4, 0), (0, 5, 2))
    assert kv_dtype_flag("fp16", old, model_dtype="fp16", checkpoint_kv_fp8=True)[0] == \
        "--kv-cache-dtype auto"
    # bf16 on a bf16 model keeps its explicit choice (0.5.4+)
    assert kv_dtype_flag("bf16", newer, model_dtype="bf16")[0] == "--kv-cache-dtype bf16"


def test_report_row_of_an_fp16_paste():
    s = session_of(PASTE, "pp4-fp16.log")
    whatif = s.report().whatif
    assert whatif is not None
    rows = {r.dtype: r for r in whatif.scenarios}
    assert rows["fp16"].flag == "--kv-cache-dtype auto"
    assert rows["bf16"].flag == "--kv-cache-dtype bf16"
