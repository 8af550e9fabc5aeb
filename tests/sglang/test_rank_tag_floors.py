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

from kvtui.core.render import render_text
from tests.helpers import session_of


def _report(lines):
    a = session_of(lines, "paste.log")
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


# Issue 36.3b: the other half of the same rule. A 0.4.7+ scheduler that prints no TP tag runs at
# tp_size 1 (0.4.7 managers/scheduler.py:2461-2462, `" TP{tp}"` only if tp_size > 1;
# sglang-log-lines.md 1: "`[2025-07-14 05:48:43] KV Cache is allocated. …` (TP=1 on 0.4.7+
# gives no rank tag)"). Without an args dump the report says TP 1 and that it is inferred.
UNTAGGED = [
    # `.ms` stamps (0.5.6+ `maybe_ms`) date these lines 0.4.7+ by themselves
    "[2025-07-14 05:48:40.123] Load weight begin. avail mem=78.50 GB",
    "[2025-07-14 05:48:42.456] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, "
    "avail mem=63.42 GB, mem usage=15.08 GB.",
    "[2025-07-14 05:48:43.789] KV Cache is allocated. #tokens: 413540, K size: 25.24 GB, "
    "V size: 25.24 GB",
    "[2025-07-14 05:48:43.790] Memory pool end. avail mem=12.11 GB",
]


def test_an_untagged_new_start_up_is_tp_one_inferred():
    report = _report(UNTAGGED)
    par = report.to_json()["parallel"]
    assert par["tp"] == 1 and par["basis"]["tp"] == "inferred from untagged lines"
    assert _parallel_line(report).split()[1:] == ["TP=1", "(inferred)"]
    text = render_text(report)
    assert "so TP = 1 (inferred)" in text and "assumed 1" not in text


def test_untagged_batch_lines_of_a_new_release_are_tp_one():
    lines = [DECODE.format(i=i).replace(" TP0]", "]") for i in range(3)]
    assert _report(lines).to_json()["parallel"]["tp"] == 1


def test_a_dump_still_wins():
    dump = ("[2025-07-14 05:48:30] server_args=ServerArgs(model_path='m', tp_size=4, "
            "kv_cache_dtype='auto')")
    par = _report([dump, *UNTAGGED]).to_json()["parallel"]
    assert par["tp"] == 4 and (par.get("basis") or {}).get("tp") is None


def test_an_untagged_log_of_unknown_release_stays_unknown():
    # no stamp at all: the release is not known to be 0.4.7+, so no TP is inferred
    lines = [s.split("] ", 1)[1] for s in UNTAGGED]
    par = _report(lines).to_json()["parallel"]
    assert par["tp"] is None


def test_launcher_lines_alone_prove_no_tp():
    # the tokenizer / launcher process tags nothing at any size
    lines = ["[2025-07-14 05:48:30.100] Setting KV cache dtype to fp8_e4m3 for DeepSeek DSA on "
             "SM10 device."]
    assert _report(lines).to_json()["parallel"]["tp"] is None


def test_corpus_untagged_b200_start_up_is_tp_one():
    import pytest

    from tests.conftest import corpus_dir

    path = corpus_dir() / "sglang-pr-11830.log"  # INDEX.md: "tp1 (no TP prefix)"
    if not path.exists():
        pytest.skip("no shared corpus")
    report = _report(path.read_text().splitlines())
    assert report.to_json()["parallel"]["tp"] == 1
    assert "TP=1 (inferred)" in _parallel_line(report)
