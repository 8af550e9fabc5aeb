"""A hybrid batch line prints one usage per pool; the usage kvtui folds (last, peak, the
saturation streak behind `pool-saturated`) is the fullest of them.

SGLang's own "token usage" of a hybrid model is that maximum: `max(full_token_usage,
swa_token_usage)` (0.5.6 managers/scheduler_metrics_mixin.py:110/234, 0.5.9 :184/330), and
from 0.5.13 the metric is `get_max_pool_usage`, which also takes the mamba usage (0.5.13
managers/scheduler_components/pool_stats_observer.py:64-70, 124; 0.5.20 :69-75, 129): a full
mamba pool stops admission as a full KV pool does (0.5.9 mem_cache/common.py:305,
alloc_req_slots needs a mamba slot per request).

Fixture lines are written in the wording of real pastes: a hybrid-GDN decode line (a
MiniCPM-SALA run, 2026-03, repository file; wording of 0.5.9 scheduler_metrics_mixin.py:350-355)
and an SWA prefill line (eugr/llama-benchy#15).
"""

from __future__ import annotations

from kvtui.core.report import build_report
from tests.helpers import session_of


def _mamba(i: int, usage: str) -> str:
    return (f"[2026-03-14 04:59:{i:02d}] Decode batch, #running-req: 20, #full token: 2326796, "
            f"full token usage: 0.14, mamba num: 20, mamba usage: {usage}, cuda graph: True, "
            "gen throughput (token/s): 1174.06, #queue-req: 6, ")


def _swa(i: int) -> str:
    return (f"[2026-05-01 10:00:{i:02d}] Prefill batch, #new-seq: 1, #new-token: 2048, "
            "#cached-token: 0, full token usage: 0.10, swa token usage: 0.97, #running-req: 1, "
            "#queue-req: 3, cuda graph: False")


def _report(lines: list[str], columns: bool):
    s = session_of(lines, "x", columns=columns)
    s.end()
    return build_report(s.state, engine=s.engine)


def test_mamba_usage_is_the_usage_of_a_hybrid_gdn_line() -> None:
    for columns in (False, True):
        rt = _report([_mamba(0, "1.00")], columns).runtime
        assert (rt.last_token_usage, rt.peak_token_usage) == (1.0, 1.0)


def test_a_full_mamba_pool_is_a_saturated_pool() -> None:
    lines = [_mamba(i, "1.00") for i in range(40)]
    for columns in (False, True):
        rep = _report(lines, columns)
        assert rep.runtime.saturated_longest == 40
        assert "pool-saturated" in {a.rule for a in rep.alerts}


def test_swa_usage_counts_when_it_is_the_fuller_pool() -> None:
    lines = [_swa(i) for i in range(40)]
    for columns in (False, True):
        rep = _report(lines, columns)
        assert rep.runtime.peak_token_usage == 0.97
        assert "pool-saturated" in {a.rule for a in rep.alerts}


def test_full_usage_stays_when_it_is_the_fuller_pool() -> None:
    rt = _report([_mamba(0, "0.05")], False).runtime
    assert rt.peak_token_usage == 0.14


def test_the_column_route_folds_the_fullest_pool_too(monkeypatch) -> None:
    from kvtui.core.pipeline import fold as fold_mod

    rows: list[int] = []
    real = fold_mod.Fold._join_stretch

    def counting(self, cols):
        rows.append(len(cols))
        return real(self, cols)

    monkeypatch.setattr(fold_mod.Fold, "_join_stretch", counting)
    lines = [_mamba(i % 60, "1.00") for i in range(300)] + [_swa(i % 60) for i in range(300)]
    rep = _report(lines, True)
    assert sum(rows) > 0  # the column route took part
    assert rep.runtime.peak_token_usage == 1.0
    assert rep.runtime.saturated_longest == 600
    assert rep.runtime.to_json() == _report(lines, False).runtime.to_json()
