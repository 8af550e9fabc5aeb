"""The capacity line's max_running_requests on the oldest releases, checked against real pastes.

SGLang 0.3.2-0.4.6 sized the request pool one slot larger than the estimate (a padding slot), so
the capacity line printed estimate + 1: sgl-project/sglang#2468 (2024-12, ~0.4.0) logged
max_running_requests=2049 beside max_total_num_tokens=56524 and context_len=32768, and
sgl-project/sglang#7055 (2025-06, 0.4.6.postN, DP attention) logged 3846 beside 1230416 and
163840 (the estimates are 2048 and 3845). The lines below are written in the shape of those.
"""

from __future__ import annotations

import pytest

from kvtui.engines.sglang.calculator import sglang_max_running_requests
from kvtui.engines.sglang.sizing.budget import estimated_requests


@pytest.mark.parametrize(("version", "tokens", "ctx", "expected"), [
    # 0.2.15-0.3.0: estimate clamped to [2048, 5120], cap = pool - 1 (tp_worker.py:126-133)
    ((0, 2, 15), 10_000_000, 4096, 5119),
    ((0, 3, 0), 56524, 32768, 2047),
    # 0.3.1: ceiling 4096, pool = estimate, cap = pool
    ((0, 3, 1), 10_000_000, 4096, 4096),
    ((0, 3, 1), 56524, 32768, 2048),
    # 0.3.2-0.4.6: pool = estimate + 1 (model_runner.py:402-403 in 0.3.2, :903-904 in 0.4.6.post5)
    ((0, 3, 2), 56524, 32768, 2049),
    ((0, 4, 1), 56524, 32768, 2049),         # sglang#2468
    ((0, 4, 6), 1230416, 163840, 3846),      # sglang#7055
    ((0, 4, 6), 10_000_000, 4096, 4097),
    # 0.4.7+: pool = estimate again (model_runner.py:933-934 in 0.4.7)
    ((0, 4, 7), 1230416, 163840, 3845),
    ((0, 5, 9), 1230416, 163840, 3845),
    # tokens // 2 still wins on a small pool
    ((0, 4, 6), 1000, 131072, 500),
    ((0, 3, 0), 1000, 131072, 500),
])
def test_capacity_line_cap_by_release(version, tokens, ctx, expected):
    assert sglang_max_running_requests(tokens, ctx, version=version) == expected


def test_estimate_ceiling_by_release():
    assert estimated_requests(10_000_000, 4096, (0, 3, 0)) == 5120
    assert estimated_requests(10_000_000, 4096, (0, 3, 1)) == 4096
    assert estimated_requests(10_000_000, 4096) == 4096


def test_user_value_by_release():
    # --max-running-requests: taken whole up to 0.4.1 (tp_worker.py:92-98), divided by the
    # DP-attention size from 0.4.2 (:101-108); up to 0.3.0 it did not size the pool
    # (--max-num-reqs did), so the cap is min(user, estimate - 1).
    assert sglang_max_running_requests(56524, 32768, user=256, attn_dp=8,
                                       version=(0, 4, 1)) == 256
    assert sglang_max_running_requests(56524, 32768, user=256, attn_dp=8,
                                       version=(0, 4, 2)) == 32
    assert sglang_max_running_requests(56524, 32768, user=256, version=(0, 4, 6)) == 256
    assert sglang_max_running_requests(56524, 32768, user=9000, version=(0, 3, 0)) == 2047
    assert sglang_max_running_requests(56524, None, user=256, version=(0, 3, 0)) == 256
    assert sglang_max_running_requests(56524, None, user=9000, version=(0, 3, 0)) is None
