"""Hybrid sliding-window pools by release: which models get one, and how tokens are split.

Expected values are worked by hand from the SGLang source in each comment.
"""

from __future__ import annotations

import pytest

from kvtui.core.capacity import Parallel, preset_spec
from kvtui.engines.sglang.cell import kv_cell
from kvtui.engines.sglang.sizing.args import SizingArgs
from kvtui.engines.sglang.sizing.swa import pool_applies, split_tokens


@pytest.mark.parametrize(("pid", "version", "args", "expected"), [
    # runtime detection 0.4.10-0.5.6 (model_runner.py:282-290 in 0.4.10): Gemma-3 yes,
    # gpt-oss from its first release 0.5.1
    ("gemma-3-27b", (0, 4, 9), SizingArgs(), False),
    ("gemma-3-27b", (0, 4, 10), SizingArgs(), True),
    ("gemma-3-27b", (0, 5, 6), SizingArgs(), True),
    ("gemma-3-27b", (0, 5, 6), SizingArgs(disable_hybrid_swa_memory=True), False),
    ("gpt-oss-120b", (0, 5, 1), SizingArgs(), True),
    # 0.5.7: only MiMo-V2 (configs/model_config.py:1147-1167 in 0.5.7)
    ("gemma-3-27b", (0, 5, 7), SizingArgs(), False),
    ("gpt-oss-120b", (0, 5, 7), SizingArgs(), False),
    ("mimo-v2-flash", (0, 5, 7), SizingArgs(), True),
    # 0.5.8+: the allow-list (model_config.py:1220-1228 in 0.5.8); Gemma-3 never on it
    ("gpt-oss-120b", (0, 5, 8), SizingArgs(), True),
    ("gemma-3-27b", (0, 5, 23), SizingArgs(), False),
    ("gpt-oss-120b", (0, 5, 23), SizingArgs(disable_hybrid_swa_memory=True), False),
    # Llama-4: only with --hybrid-kvcache-ratio before 0.5.8, on the list from 0.5.8
    ("llama-4-scout-17b-16e", (0, 5, 7), SizingArgs(), False),
    ("llama-4-scout-17b-16e", (0, 5, 7), SizingArgs(hybrid_kvcache_ratio=0.5), True),
    ("llama-4-scout-17b-16e", (0, 5, 8), SizingArgs(), True),
])
def test_pool_applies(pid, version, args, expected):
    assert pool_applies(preset_spec(pid), version, args)[0] is expected


AVAIL = 10 * 2**30


@pytest.mark.parametrize(("version", "page", "full", "swa"), [
    # gpt-oss-120b at TP8 in BF16: F = S = 1 x (64 + 64) x 2 = 256 B per layer, 18 + 18 layers.
    # 0.4.10-0.5.8: n = 10 GiB // (256 x 36) = 1,165,084; full = int(n x 36 / (0.8 x 18 + 18))
    # (model_runner.py:1044-1060 in 0.4.10)
    ((0, 5, 6), 1, 1_294_537, 1_035_629),
    # 0.5.11+: full = 10 GiB // (4,608 + 0.8 x 4,608) = 1,294,538 (pool_configurator.py:276-279)
    ((0, 5, 11), 1, 1_294_538, 1_035_630),
    # 0.5.9: n x (F + S) / (F + r S) from n = 10 GiB // 9,216 (mixin :297-320 in 0.5.9)
    ((0, 5, 9), 1, 1_294_537, 1_035_629),
    # page 64 from 0.5.7: both counts page-aligned
    ((0, 5, 8), 64, 1_294_464, 1_035_584),
    ((0, 5, 11), 64, 1_294_528, 1_035_584),
])
def test_split_tokens_by_release(version, page, full, swa):
    got = split_tokens(AVAIL, 256, 256, 18, 18, 36, 0.8, page, version)
    assert got[:2] == (full, swa)


def test_mimo_v2_flash_heads_differ_between_pools():
    """MiMo-V2-Flash at TP4, BF16: full layers 4 // 4 = 1 head x (192 + 128) x 2 B = 640 B,
    SWA layers 8 // 4 = 2 heads x 320 x 2 B = 1,280 B (get_swa_num_kv_heads,
    model_config.py:1713-1724 in 0.5.23); cost per full token 640 x 9 + 0.8 x 1,280 x 39 =
    45,696 B. The corpus log sglang-pr-18039 shows full 375,360 / swa 300,288 at page 64."""
    spec = preset_spec("mimo-v2-flash")
    cell = kv_cell(spec, "bf16", Parallel(tp=4), swa_pool=True, version=(0, 5, 12))
    assert cell.swa is not None
    assert (cell.swa.f_layer, cell.swa.s_layer) == (640, 1280)
    assert cell.swa.cost == pytest.approx(45_696)
    assert cell.swa.tokens(375_360 * 45_696 + 10_000, 64) == (375_360, 300_288)
    # The SWA pool prints K 2 x 192 x 39 x 2 and V 2 x 128 x 39 x 2 per row
    assert (cell.swa.swa_k, cell.swa.swa_v) == (29_952, 19_968)


def test_llama4_chunk_formula_before_0_5_8():
    """0.4.9-0.5.7 with --hybrid-kvcache-ratio 0.5 (model_runner.py:986-1014 in 0.4.10):
    t = 0.5 + 0.5 x 8192 / 65536 = 0.5625; n = avail // (F x 48);
    swa = 4 n t // (3 t + 1), full = 4 n - 12 n t // (3 t + 1)."""
    spec = preset_spec("llama-4-scout-17b-16e")
    args = SizingArgs(hybrid_kvcache_ratio=0.5, context_length=65536)
    cell = kv_cell(spec, "bf16", Parallel(tp=8), swa_pool=True, version=(0, 5, 7), args=args)
    assert cell.swa is not None
    f = 1 * 256 * 2  # 8 // 8 heads x (128 + 128) x 2 B
    n = AVAIL // (f * 48)
    t = 0.5625
    assert cell.swa.tokens(AVAIL, 1) == (int(4 * n - 12 * n * t // (3 * t + 1)),
                                         int(4 * n * t // (3 * t + 1)))
