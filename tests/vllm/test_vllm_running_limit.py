"""vLLM's cap on running requests is `max_num_seqs`: the facts pane and the report name it so.

vLLM prints no capacity line with its cap, so the pane used to show SGLang's
`max_running_requests=—`. The cap is the log's `--max-num-seqs` when its arguments show it, else
vLLM's default, read from `vllm/engine/arg_utils.py` (kvtui/engines/vllm/limits.py cites each
release and line): 256 on V0 (0.6.3 :115, 0.10.2 :1611-1613); on V1 1024 on GPUs with at least
70 GiB (not A100 from 0.10.2), else 256 (0.8.5 :1596-1621, 0.14.0 :1846-1865), capped at
max_num_batched_tokens from 0.10.2 (:1740-1743) and doubled by `--performance-mode throughput`
from 0.22.0 (:2508-2512).
"""

from __future__ import annotations

import pytest

from kvtui.core.report_types import Report, RunningLimit
from kvtui.engines.vllm import limits
from kvtui.ui.panes import facts_text
from tests.ui.ui_helpers import replay_app, settle
from tests.vllm.reports import SAMPLES, report_of, sample_report

H = "(APIServer pid=1) INFO 05-01 10:00:00 [utils.py:328] "
CONFIG = ("(EngineCore_DP0 pid=9) INFO 05-01 10:00:05 [core.py:75] Initializing a V1 LLM engine "
          "(v{v}) with config: model='m', dtype=torch.bfloat16, max_seq_len=32768, "
          "tensor_parallel_size=1, kv_cache_dtype=auto, compilation_config={{}}")
SIZE = ("(EngineCore_DP0 pid=9) INFO 05-01 10:00:42 [kv_cache_utils.py:864] GPU KV cache size: "
        "991,200 tokens")


def _limit(report: Report) -> RunningLimit | None:
    return report.capacity.running_limit if report.capacity is not None else None


def test_the_facts_pane_names_vllms_own_cap():
    text = facts_text(sample_report("vllm-llama31-8b-tp2-fp8-unscaled.log")).plain
    assert "max_num_seqs=96" in text  # 'max_num_seqs': 96 in its non-default args
    assert "max_running_requests" not in text


def test_the_facts_pane_gives_vllms_default_when_the_args_leave_it_out():
    # a complete non-default args dump without max_num_seqs, on a V1 0.33.0 engine
    text = facts_text(sample_report("vllm-llama31-70b-tp8-bf16.log")).plain
    assert "max_num_seqs=256 or 1,024 (default)" in text
    assert "max_running_requests" not in text


def test_sglangs_pane_keeps_its_capacity_lines_name():
    report = sample_report("llama31-70b-tp8.log")
    assert report.engine == "sglang" and _limit(report) is None
    cap = report.capacity
    assert cap is not None and cap.max_running_requests
    assert f"max_running_requests={cap.max_running_requests:,}" in facts_text(report).plain


@pytest.mark.parametrize(("args", "release", "expected"), [
    ("{'model': 'm', 'max_num_seqs': 48}", "0.14.0", RunningLimit("max_num_seqs", 48, "logged")),
    # a closed dump without it: the V1 tiers
    ("{'model': 'm'}", "0.14.0",
     RunningLimit("max_num_seqs", None, "default", (256, 1024), limits.RULE)),
    # capped at max_num_batched_tokens from 0.10.2
    ("{'model': 'm', 'max_num_batched_tokens': 512}", "0.14.0",
     RunningLimit("max_num_seqs", None, "default", (256, 512), limits.RULE)),
    ("{'model': 'm', 'max_num_batched_tokens': 128}", "0.14.0",
     RunningLimit("max_num_seqs", 128, "default", rule=limits.RULE)),
    # doubled by the throughput mode from 0.22.0
    ("{'model': 'm', 'performance_mode': 'throughput'}", "0.25.0",
     RunningLimit("max_num_seqs", None, "default", (512, 2048), limits.RULE)),
    # a dump cut by the paste lists nothing for sure
    ("{'model': 'm', 'max_num_s", "0.14.0", RunningLimit("max_num_seqs", None, "not logged")),
])
def test_logged_or_default_by_release(args, release, expected):
    report = report_of([H + "non-default args: " + args, CONFIG.format(v=release), SIZE])
    assert _limit(report) == expected


def test_no_argument_list_claims_no_default():
    # only the engine's config line: the operator may have passed --max-num-seqs
    assert _limit(report_of([CONFIG.format(v="0.14.0"), SIZE])) == RunningLimit(
        "max_num_seqs", None, "not logged")


def test_v0_defaults_to_256():
    # the V0 engine's config line and its block count (0.6.3: EngineArgs.max_num_seqs = 256)
    v0 = ("INFO 07-18 00:05:10 llm_engine.py:237] Initializing an LLM engine (v0.6.3) with "
          "config: model='m', dtype=torch.bfloat16, max_seq_len=4096, "
          "tensor_parallel_size=1, kv_cache_dtype=auto")
    blocks = "INFO 07-18 00:05:20 distributed_gpu_executor.py:57] # GPU blocks: 1000, " \
             "# CPU blocks: 512"
    report = report_of(["INFO 07-18 00:05:00 api_server.py:529] args: Namespace(model='m', "
                      "max_num_seqs=None, tensor_parallel_size=1)", v0, blocks])
    assert _limit(report) == RunningLimit("max_num_seqs", 256, "default", rule=limits.RULE)


def test_a_v1_release_before_08_claims_no_number():
    # V1 was opt-in in 0.7 and its default was not read: "default", with no number
    v1 = ("INFO 02-20 00:01:02 core.py:50] Initializing a V1 LLM engine (v0.7.3) with config: "
          "model='m', dtype=torch.bfloat16, max_seq_len=4096, tensor_parallel_size=1")
    blocks = "INFO 02-20 00:01:30 kv_cache_utils.py:400] # GPU blocks: 1000"
    lim = _limit(report_of(["INFO 02-20 00:01:00 api_server.py:800] args: Namespace(model='m', "
                          "max_num_seqs=None)", v1, blocks]))
    assert lim is not None
    assert (lim.value, lim.defaults, lim.basis, lim.describe()) == (None, (), "default",
                                                                   "default")


async def test_the_tui_facts_pane_shows_max_num_seqs() -> None:
    app = replay_app(SAMPLES / "vllm-llama31-8b-tp2-fp8-unscaled.log")
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        shown = str(app.query_one("#facts-body").render())
        assert "max_num_seqs=96" in shown and "max_running_requests" not in shown
        await pilot.press("q")
