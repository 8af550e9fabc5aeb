"""The Pools rows' deviation compares like with like: the pool line over the rows it holds
against the bytes per row the model spec gives for that line (the what-if's calibration).

An FP8 DSA pool stores 656 B per layer where SGLang < 0.5.17 budgets 576 (memory_pool.py
:1246-1251 in 0.5.4; pool_configurator.py:252-262 in 0.5.18): against the budget cell the GLM-5
pool below showed +11.3% in yellow although the line is exactly what SGLang prints.
"""

from __future__ import annotations

import re

from kvtui.ui.panes import facts_text
from tests.capacity.test_sglang_glm5_preset import LINES as GLM5
from tests.helpers import session_of


def _deviation(lines: list[str]) -> float:
    s = session_of(lines, "log")
    text = facts_text(s.report()).plain
    m = re.search(r"measured [\d,]+ B/tok \(([+-]\d+\.\d)%\)", text)
    assert m is not None, text
    return float(m.group(1))


def test_dsa_fp8_pool_matches_its_printed_layout():
    assert abs(_deviation(GLM5)) < 0.1


def test_padded_pool_is_measured_over_its_rows():
    # Llama-3.1-8B bf16 at TP1, page 64: 131,072 B per row; 4,032 tokens + the 64-row padded
    # page print exactly 0.25 GB each for K and V (4,096 x 65,536 B). Over the tokens alone
    # that read +1.6%.
    lines = [
        "[2026-11-20 10:00:00] server_args=ServerArgs("
        "model_path='meta-llama/Llama-3.1-8B-Instruct', tp_size=1, kv_cache_dtype='auto', "
        "page_size=64, mem_fraction_static=0.85)",
        "[2026-11-20 10:00:05 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, "
        "avail mem=60.00 GB, mem usage=15.00 GB.",
        "[2026-11-20 10:00:06 TP0] KV Cache is allocated. #tokens: 4032, K size: 0.25 GB, "
        "V size: 0.25 GB",
        "[2026-11-20 10:00:06 TP0] Memory pool end. avail mem=59.00 GB",
    ]
    assert _deviation(lines) == 0.0
