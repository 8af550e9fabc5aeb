"""A log that shows the pool line but no KV dtype: the dtype whose cell prints that line.

DeepSeek-V3.2 at TP8, page 64, 800,000 tokens: an FP8 NSA pool prints (tokens + page) x 656 x 61
plus the page-rounded indexer keys (memory_pool.py:1784-1800, get_kv_size_bytes :1879-1883 in
0.5.9), 48,068 B per row; BF16 would print 78,324. With the dtype line cut from the paste, the
what-if took the model dtype (bf16) as current and started every row from it (its bf16 row at the
FP8 pool's 800,000 tokens), and the mismatch's likely cause compared the candidates' K + V bytes
(656 x 61, no indexer) with the line, so it named none.
"""

from __future__ import annotations

from tests.capacity._logged import calculator_of

N = 800_000
PRINTED_FP8 = ((N + 64) * 656 * 61 + (N + 65) // 64 * 64 * 132 * 61) / 2**30


def _lines(gib: float = PRINTED_FP8, model: str = "deepseek-ai/DeepSeek-V3.2") -> list[str]:
    return [
        f"[2026-11-20 10:00:00] server_args=ServerArgs(model_path='{model}', tp_size=8, "
        "page_size=64, mem_fraction_static=0.85)",
        "[2026-11-20 10:01:00 TP0] Load weight end. elapsed=30.00 s, "
        "type=DeepseekV32ForCausalLM, avail mem=100.00 GB, mem usage=80.00 GB.",
        f"[2026-11-20 10:01:05 TP0] KV Cache is allocated. #tokens: {N}, KV size: {gib:.2f} GB",
        "[2026-11-20 10:01:05 TP0] Memory pool end. avail mem=40.00 GB",
    ]


def test_the_pool_line_names_the_dtype_the_log_does_not():
    calc = calculator_of(_lines())
    assert calc.current_dtype == "fp8_e4m3" and calc.current_dtype_assumed
    cal = calc.calibration()
    assert cal is not None and cal["within_rounding"]
    assert any("the dtype whose cell prints the logged pool line" in n for n in calc.notes)
    assert not any(n.startswith("KV dtype not in the log: assumed the model dtype")
                   for n in calc.notes)
    # the bf16 row re-sizes the FP8 budget (< 0.5.17: 576 + 132 per layer) for 1152 + 132
    assert calc.tokens_for("bf16")[0] == N * (576 + 132) * 61 // ((1152 + 132) * 61) // 64 * 64


def test_a_line_no_dtype_explains_keeps_the_model_dtype_and_names_no_cause():
    calc = calculator_of(_lines(gib=20.00))
    assert calc.current_dtype == "bf16"
    assert any(n.startswith("KV dtype not in the log: assumed the model dtype") for n in calc.notes)
    cal = calc.calibration()
    assert cal is not None and not cal["ok"]
    assert "no single usual suspect" in cal["likely_cause"]


def test_the_likely_cause_holds_each_suspect_against_the_printed_line():
    """Force the model dtype to stay current (a calculator built with it) and ask why."""
    calc = calculator_of(_lines())
    from dataclasses import replace

    wrong = replace(calc, current_dtype="bf16")
    cal = wrong.calibration()
    assert cal is not None and not cal["ok"]
    assert cal["likely_cause"].startswith("likely: the KV dtype is fp8_e4m3, not bf16")
