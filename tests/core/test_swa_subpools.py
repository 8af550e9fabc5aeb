"""A hybrid-SWA pool whose two sub-pools hold as many tokens each: both lines kept, by order.

Before 0.5.17 SGLang prints its SWAKVPool's two sub-pools as unlabelled `KV Cache is allocated`
lines, the SWA one first, then the Full one, then the `SWAKVPool mem usage` line (0.5.4
mem_cache/memory_pool.py:952/958/974, 0.5.6 :1183/1189/1206, 0.5.8 and 0.5.9
mem_cache/swa_memory_pool.py:63/72/89, 0.5.13 :59/68/85, 0.5.16 :60/69/86; from 0.5.17 each
line names its sub-pool, the Full one first: 0.5.20 swa_memory_pool.py:92/98, 0.5.23 :96/102).
When the token counts differ they name the sub-pools; when they are equal (MiMo-V2-Flash with
hierarchical cache: swa_full_tokens_ratio reset to 1.0, 0.5.9 server_args.py:1418-1420) only
the order does: the line right before the SWAKVPool line is the Full one.

The wording and the figures follow sgl-project/sglang#15464 (MiMo-V2-Flash, TP4); the lines
below are written for this test.
"""

from __future__ import annotations

from kvtui.core.pipeline import Session
from tests.helpers import session_of

GIB = 1 << 30
SWA_LINE = "KV Cache is allocated. #tokens: 1496958, K size: 41.76 GB, V size: 27.84 GB"
FULL_LINE = "KV Cache is allocated. #tokens: 1496958, K size: 4.82 GB, V size: 3.21 GB"
POOL_LINE = "SWAKVPool mem usage: 77.63 GB, swa size: 1496958, full size: 1496958"


def line(rank: str, text: str) -> str:
    return f"[2025-12-19 07:42:57 {rank}] {text}"


def lines() -> list[str]:
    # TP0's SWA line is cut off above the excerpt, as in the issue's paste
    return [line("TP1", SWA_LINE), line("TP1", FULL_LINE), line("TP1", POOL_LINE),
            line("TP1", "Memory pool end. avail mem=22.56 GB"),
            line("TP0", FULL_LINE), line("TP0", POOL_LINE),
            line("TP0", "Memory pool end. avail mem=22.59 GB"),
            line("TP3", FULL_LINE), line("TP3", POOL_LINE)]  # TP3: the layout is TP >= 4


def fold(model: str | None = None) -> Session:
    s = session_of(lines(), "paste", model=model)
    return s


def test_equal_token_sub_pools_are_named_by_their_order():
    run = fold().state.current
    labels = {(p.rank, p.label): (p.k_gib, p.v_gib, p.role) for p in run.pools.values()}
    assert labels == {("TP1", "SWA"): (41.76, 27.84, "target"),
                      ("TP1", "Full"): (4.82, 3.21, "target"),
                      # the one line TP0 shows is the one printed right before its SWAKVPool
                      ("TP0", "Full"): (4.82, 3.21, "target"),
                      ("TP3", "Full"): (4.82, 3.21, "target")}
    assert run.primary_kv_pool().label == "Full" and run.draft_kv_pools() == []


def test_log_only_budget_is_the_swa_pools_total():
    report = fold().report()
    kv, = [ln for ln in report.whatif.explanation if ln.startswith("KV budget held fixed")]
    # 77.63 GiB: both sub-pools, not the Full one's 8.03
    assert "= 77.63 GiB per GPU" in kv, kv


def test_with_the_preset_the_cell_reproduces_the_logged_pools():
    report = fold("mimo-v2-flash").report()
    kv, = [ln for ln in report.whatif.explanation if ln.startswith("KV budget held fixed")]
    # the logged split (swa size = full size) is the ratio the pool was sized with:
    # 1,496,958 x (F x 9 + 1.0 x S x 39) = 1,496,958 x 55,680 B = 77.63 GiB
    assert "= 77.63 GiB per GPU" in kv, kv
    assert report.whatif.current.to_json()["calibration"]["within_rounding"]
    row = next(s for s in report.whatif.scenarios if s.dtype == "bf16")
    assert row.tokens == 1496958


def test_a_second_swa_pool_line_on_a_rank_is_the_drafts():
    """A speculative draft with a sliding-window pool of its own (MiMoV2MTP is on the hybrid-SWA
    allow-list from 0.5.8, sizing/swa.py) prints its sub-pools and its SWAKVPool line after the
    target's: they stay the draft's, and the target's line stays the run's."""
    draft = [line("TP0", "Load weight end. type=MiMoV2MTP, dtype=torch.bfloat16, "
                         "avail mem=20.00 GB, mem usage=1.00 GB."),
             line("TP0", "KV Cache is allocated. #tokens: 1496958, K size: 1.07 GB, "
                         "V size: 0.71 GB"),
             line("TP0", "KV Cache is allocated. #tokens: 1496958, K size: 0.54 GB, "
                         "V size: 0.36 GB"),
             line("TP0", "SWAKVPool mem usage: 2.68 GB, swa size: 1496958, full size: 1496958")]
    s = Session()
    s.feed_lines("paste", [line("TP0", SWA_LINE), line("TP0", FULL_LINE), line("TP0", POOL_LINE),
                           *draft])
    run = s.state.current
    target = {p.label: p.k_gib for p in run.kv_pools()}
    assert target == {"SWA": 41.76, "Full": 4.82}
    assert [(p.label, p.k_gib) for p in run.draft_kv_pools()] == [("Full", 0.54)]
    assert run.swa_pools["TP0"]["gib"] == 77.63
