"""A rank tag of SGLang's scheduler proves more than its index: the scheduler puts `TPn` in its
log prefix only when tp_size > 1 from 0.4.7 (0.5.6 managers/scheduler.py:2616, 0.5.9 :3093,
0.5.23 :6288, each `if ... tp_size > 1: prefix += f" TP{...}"`; <= 0.4.6 tagged TP always), and
`PPn` / `EPn` only when pp_size / ep_size > 1 (0.5.9 :3087, :3095; 0.5.23 :6282, :6290).
bench_one_batch tags every line `TP{tp_rank}` whatever the size (0.5.9 bench_one_batch.py:467,
:660), so a TP tag proves TP >= 2 only on a line the server's scheduler printed.

Runtime pastes of sgl-project/sglang#26248 and #10053 show only `TP0` batch lines of servers
whose releases are 0.4.7+: TP >= 2, not TP >= 1. Lines here are in that shape, numbers made up.
"""

from __future__ import annotations

from kvtui.core.pipeline import Session
from kvtui.core.render import render_text


def _report(lines):
    a = Session()
    a.feed_lines("paste.log", lines)
    return a.report()


def _parallel_line(report):
    return next(s for s in render_text(report).splitlines() if s.startswith("Parallel"))


DECODE = ("[2026-03-01 12:00:0{i} TP0] Decode batch, #running-req: 4, #token: 9000, "
          "token usage: 0.10, cuda graph: True, gen throughput (token/s): 300.00, #queue-req: 0")


def test_a_tp0_scheduler_line_of_a_new_release_proves_tp_two():
    report = _report([DECODE.format(i=i) for i in range(3)])
    par = report.to_json()["parallel"]
    assert (par["tp"], par["basis"]["tp"]) == (2, "rank tags")
    assert _parallel_line(report).split()[1] == "TP>=2"


def test_an_ep_tag_proves_ep_two():
    lines = [DECODE.format(i=i).replace(" TP0]", " TP0 EP0]") for i in range(2)]
    report = _report(lines)
    par = report.to_json()["parallel"]
    assert (par["tp"], par["ep"]) == (2, 2)
    assert "EP>=2" in _parallel_line(report)


def test_old_releases_tag_tp_always():
    # time-only stamps date the log <= 0.3.2, where TP0 was printed at tp_size 1 too
    lines = [f"[16:40:0{i} TP0] Decode batch. #running-req: 2, #token: 500, token usage: 0.01, "
             "gen throughput (token/s): 80.00, #queue-req: 0" for i in range(2)]
    par = _report(lines).to_json()["parallel"]
    assert par["tp"] == 1


def test_bench_one_batch_start_up_proves_nothing_more():
    # only model-runner lines: bench_one_batch tags these TP0 at tp_size 1 too
    lines = [
        "[2025-10-01 08:00:00 TP0] Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, "
        "avail mem=60.00 GB, mem usage=8.00 GB.",
        "[2025-10-01 08:00:00 TP0] Using KV cache dtype: torch.bfloat16",
        "[2025-10-01 08:00:01 TP0] KV Cache is allocated. #tokens: 300000, K size: 20.60 GB, "
        "V size: 20.60 GB",
    ]
    par = _report(lines).to_json()["parallel"]
    assert par["tp"] == 1


def test_an_ep_part_dates_the_tag_and_proves_tp_two_on_start_up_lines():
    # no batch line and no dated line: the EP part alone is the scheduler's, and 0.4.10+
    lines = ["[2026-02-02 10:00:00 DP0 TP0 EP0] Init torch distributed ends. mem usage=1.20 GB"]
    par = _report(lines).to_json()["parallel"]
    assert (par["tp"], par["ep"], par["least"]) == (2, 2, {"TP": 2, "EP": 2})
