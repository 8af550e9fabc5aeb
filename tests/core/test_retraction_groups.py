"""How many retraction episodes a log's lines are is the engine's to say (`retraction_groups`).

SGLang logs one retraction on every TP rank (0.4.1.post4 managers/scheduler.py:927, 0.5.5
:1917-1921, `update_running_batch`), so its lines count once per DP and PP group; vLLM's
scheduler preempts once per engine (0.10.1 v1/core/sched/scheduler.py:255-271), so each of its
lines is an episode. The core keeps the lines by rank and asks the engine.
"""

from __future__ import annotations

from kvtui.core.engine import load
from kvtui.core.pipeline import Session
from kvtui.core.runtime import Runtime, Witness

V0 = ("(VllmWorker TP{r} pid=1{r}) WARNING 05-01 10:00:0{i} [scheduler.py:1776] Sequence group "
      "{i} is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache "
      "space. This can affect the end-to-end performance. Increase gpu_memory_utilization or "
      "tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption=1")


def _runtime(ranks: list[str | None]) -> Runtime:
    rt = Runtime()
    for n, rank in enumerate(ranks, 1):
        rt.add_retraction({"retracted_reqs": 2}, None, n, Witness("x", n, rank, None, "x"))
    return rt


def test_the_engine_says_which_ranks_log_one_retraction():
    assert load("sglang").retraction_groups == frozenset({"DP", "PP"})
    assert load("vllm").retraction_groups is None
    rt = _runtime(["TP0", "TP1", "DP1 TP2", "DP1 TP3", None])
    # SGLang's rule: TP0 and TP1 (and the untagged line) are one group, DP1 another
    assert rt.retraction_counts(load("sglang").retraction_groups) == (2, 4)
    # an engine without it counts every line
    assert rt.retraction_counts(None) == (5, 10)
    assert rt.to_dict()["retractions"] == 5


def test_a_vllm_log_counts_every_retraction_line():
    """Two TP-tagged preemption lines of a vLLM log are two episodes: the TP rule is SGLang's
    (the core applied it to every engine)."""
    s = Session()
    s.feed_lines("v", ["INFO 05-01 10:00:00 [api_server.py:1] vLLM API server version 0.10.1",
                       *(V0.format(r=r, i=i) for i, r in ((1, 0), (2, 1)))])
    report = s.report()
    assert report.engine == "vllm"
    assert (report.runtime.retractions, report.runtime.retracted_reqs) == (2, 2)
    alert = next(a for a in report.alerts if a.rule == "kv-retraction")
    assert alert.title.startswith("2 ")
