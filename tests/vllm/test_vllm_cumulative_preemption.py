"""V0 logs a preemption only every 50th time, with the running count: "Sequence group %s is
preempted by %s mode because there is not enough KV cache space. ...
total_num_cumulative_preemption=%d" under `if self.num_cumulative_preemption % 50 == 0`
(core/scheduler.py:1483-1491 in 0.6.3), so its lines say 1, 51, 101, ... One such line with
total_num_cumulative_preemption=101 (GAIR-NLP/LIMO#29, a V0 eval run) is 101 preemptions at
least, where kvtui said "1 preemptions (1 requests)". The lines are written here in that
wording with figures of their own.
"""

from __future__ import annotations

from tests.helpers import session_of


def line(n: int, group: int, ts: str = "10:12:44") -> str:
    return (f"WARNING 05-09 {ts} scheduler.py:1555] Sequence group {group} is preempted by "
            "PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This "
            "can affect the end-to-end performance. Increase gpu_memory_utilization or "
            "tensor_parallel_size to provide more KV cache memory. "
            f"total_num_cumulative_preemption={n}")


def _report(lines: list[str]):
    s = session_of(lines, "log")
    return s.report().to_json()


def test_the_running_count_is_the_preemptions():
    rep = _report([line(151, 812)])
    assert rep["runtime"]["retractions"] == 151
    alert = next(a for a in rep["alerts"] if a["rule"] == "kv-retraction")
    assert alert["title"].startswith("151 ")


def test_several_lines_give_the_last_count_not_their_sum():
    rep = _report([line(1, 3, "10:00:01"), line(51, 77, "10:03:09"), line(101, 140, "10:07:30")])
    assert rep["runtime"]["retractions"] == 101


def test_the_preemption_line_pasted_without_its_head_is_read():
    """GAIR-NLP/LIMO#29 quotes the message alone (no level, time or file); its wording is
    vLLM's only."""
    bare = " " + line(201, 9).split("] ", 1)[1]
    rep = _report([bare])
    assert rep["engine"] == "vllm"
    assert rep["runtime"]["retractions"] == 201
