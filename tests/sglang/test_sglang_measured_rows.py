"""One pool, two measured bytes/token, each saying what it divides by.

The report's Pools row is the pool line's GiB x 2^30 / its tokens (engine-neutral). SGLang's
what-if divides by the rows the buffers hold, the tokens plus the padding page (0.5.23
mem_cache/memory_pool.py:2260 `total_slots = self.size + self.page_size`, :3029-3031 "real slots
+ the reserved padding slot"), so that it compares like with like with the computed cell: the
two differ by the padding, and the what-if's line says so. The pool line is written in the
wording of sgl-project/sglang#30609 (`KV Cache is allocated. #tokens: N, KV size: X GB`).
"""

from __future__ import annotations

from kvtui.core.render import render_text
from tests.helpers import session_of

LINES = [
    "[2026-07-14 07:50:00] server_args=ServerArgs(model_path='/m/x', tp_size=1, page_size=64, "
    "kv_cache_dtype='auto', mem_fraction_static=0.85)",
    "[2026-07-14 07:52:00 TP0] KV Cache is allocated. #tokens: 2659072, KV size: 87.01 GB",
]


def _report():
    a = session_of(LINES, "x.log")
    return a.report()


def test_the_whatif_states_the_rows_its_measure_divides_by():
    report = _report()
    j = report.to_json()
    assert j["pools"][0]["bytes_per_token"] == round(87.01 * 2**30 / 2659072, 1)  # 35,135
    cur = j["whatif"]["current"]
    assert cur["measured_rows"] == 2659072 + 64
    assert round(cur["bytes_per_token"]) == round(87.01 * 2**30 / (2659072 + 64))  # 35,134
    text = render_text(report)
    assert "35,135 B/token measured" in text
    line = next(s for s in text.splitlines() if s.startswith("  current:"))
    assert "measured 35,134 B/token over 2,659,136 pool rows (its tokens + padding)" in line
