"""The vLLM what-if end to end: the report's `whatif`, its inverse, the alert texts' flags, the
`kvtui whatif` command and the TUI's what-if pane, on the vLLM sample logs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kvtui.core.pipeline import Session
from kvtui.sources.readers import iter_lines
from kvtui.ui.whatif_calc import WhatIfInputs, compute
from tests.helpers import session_of

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs"
FP8 = SAMPLES / "vllm-llama31-8b-tp2-fp8-unscaled.log"
HYBRID = SAMPLES / "vllm-qwen3-next-80b-tp4-hybrid.log"
BF16 = SAMPLES / "vllm-llama31-70b-tp8-bf16.log"
GIB = 1 << 30


def session(path: Path) -> Session:
    s = session_of(iter_lines(str(path)), str(path))
    return s


def test_fp8_sample_what_if_and_inverse():
    report = session(FP8).report().to_json()
    assert report["engine"] == "vllm"
    w = report["whatif"]
    rows = {r["dtype"]: r for r in w["scenarios"]}
    # The logged pool (991,200 tokens = 61,950 blocks of 16) held fixed: BF16 pages are twice
    # the FP8 ones, so half the blocks fit; NVFP4 packs 72 bytes per 128 values.
    assert rows["fp8_e4m3"]["tokens"] == 991_200 and rows["fp8_e4m3"]["current"]
    assert rows["bf16"]["tokens"] == 991_200 // 2
    fp8_block = 16 * 4 * 256 * 32  # 16 tokens x 4 heads x (128 + 128) x 1 B x 32 layers
    nvfp4_block = 16 * 4 * 2 * 72 * 32  # (64 data + 8 scale bytes) for K and for V
    assert rows["nvfp4"]["tokens"] == 61_950 * fp8_block // nvfp4_block * 16
    assert rows["bf16"]["flag"] == "--kv-cache-dtype bfloat16"  # 0.25: auto may follow ModelOpt
    assert w["current"]["calibration"]["within_rounding"]
    inv = w["inverse"]
    # Today's 7 full-context requests in BF16: 7 x 8,192 blocks of 32 x 16 x 4 x 256 x 2 B.
    assert inv["dtype"] == "bf16" and inv["concurrency"] == 7
    assert inv["blocks_needed"] == 7 * 8192
    assert inv["kv_gib_needed"] == round(7 * 8192 * 1_048_576 / GIB, 2)
    assert not inv["fits_now"] and inv["tp_needed"] == 4
    # The GPU's memory is implied by the CUDA graph estimate (0.41 GiB = 0.0092 of it).
    assert inv["total_gpu_gib"] is not None and 43 < inv["total_gpu_gib"] < 46
    assert inv["gpu_memory_utilization_needed"] > 0.9


def test_hybrid_sample_keeps_the_state_pages_and_moves_the_block():
    w = session(HYBRID).report().to_json()["whatif"]
    cur = w["current"]
    assert cur["cell"]["block_size"] == 272 and cur["cell"]["groups"]["mamba"] == 3
    rows = {r["dtype"]: r for r in w["scenarios"]}
    # FP8 halves the attention token: the block doubles to 544 tokens, the page (one Gated
    # DeltaNet state) stays 278,528 B, so the same blocks hold twice the tokens.
    assert rows["fp8_e4m3"]["block_size"] == 544
    assert rows["fp8_e4m3"]["tokens"] == 2 * rows["bf16"]["tokens"]
    assert rows["bf16"]["tokens"] == 695_504
    assert rows["bf16"]["flag"] == "--kv-cache-dtype auto"  # 0.11 has no explicit bfloat16 need
    assert rows["nvfp4"]["flag"] is None  # not in 0.11
    assert "KV heads per GPU: max(1, 2 // 4) = 1" in " ".join(w["explanation"])


def test_alert_texts_name_vllm_flags():
    report = session(FP8).report().to_json()
    texts = " ".join(a["detail"] + " " + a["fix"] for a in report["alerts"])
    assert "--gpu-memory-utilization" in texts and "vLLM printed" in texts
    for sglang_only in ("--mem-fraction-static", "--quantization-param-path", "SGLang",
                        "--context-length", "--max-running-requests"):
        assert sglang_only not in texts


def test_whatif_command_on_a_vllm_log():
    out = subprocess.run([sys.executable, "-m", "kvtui", "whatif", "--from-log", str(BF16),
                          "--json"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    w = json.loads(out.stdout)
    rows = {r["dtype"]: r for r in w["scenarios"]}
    assert rows["bf16"]["current"] and rows["fp8_e4m3"]["tokens"] == 2 * rows["bf16"]["tokens"]
    assert w["version"]["min"] == w["version"]["max"] == "0.33.0"


def test_the_tui_pane_computes_from_the_vllm_calculator():
    calc = session(FP8).calculator()
    res = compute(calc, WhatIfInputs(dtype="bf16", contexts=[131072], concurrency=7))
    assert res.error is None
    rows = {label: (cur, tgt) for label, cur, tgt in res.rows}
    assert rows["tokens"] == ("991,200", "495,600 (-50%)")
    assert rows["7 reqs @ 128K"][1] == "does NOT fit"
    assert res.flag.startswith("--kv-cache-dtype bfloat16")


def test_the_pane_moves_gpu_memory_utilization_and_keeps_the_cell_size():
    """The pane's memory row is vLLM's knob; a changed utilization moves the tokens, never the
    bytes per token (a property of the layout: 2 x 32,768 B in BF16 here)."""
    calc = session(FP8).calculator()
    res = compute(calc, WhatIfInputs(dtype="bf16", mem_fraction=0.95, contexts=[131072],
                                     concurrency=7))
    rows = {label: (cur, tgt) for label, cur, tgt in res.rows}
    assert res.knob == "gpu_memory_utilization" and res.engine == "vLLM"
    assert rows["gpu_memory_utilization"] == ("0.900", "0.950")
    assert rows["bytes/token/GPU"][1] == "65,536"
    assert "--gpu-memory-utilization 0.95" in res.flag
    tokens = int(rows["tokens"][1].split()[0].replace(",", ""))
    assert tokens > 495_600 and tokens % 16 == 0  # more memory, whole blocks


def test_vllm_preemptions_mark_the_timeline_like_retractions():
    """Each stats interval with preemptions is a retraction episode and a timeline marker, so
    the TUI's retraction row counts what the facts pane says (34 on the FP8 sample)."""
    s = session(FP8)
    run = s.state.current
    assert run is not None
    marks = [p for p in run.runtime.timeline if p.retraction]
    assert s.report().runtime.retractions == len(marks) == 34


# V1's start-up memory summary, as 0.33.0 prints it (v1/worker/gpu_worker.py:1045, logger.info;
# the wording of public 0.2x-0.3x logs): the GPU's total memory is logged, not implied.
SUMMARY = ("({w}) INFO 03-02 14:06:30 [gpu_worker.py:1045] Free memory on device (44.15/44.39 "
           "GiB) on startup. Desired GPU memory utilization is (0.9, 39.95 GiB). Actual usage "
           "is 8.24 GiB for consumed memory (weights + non-torch), 1.05 GiB for peak "
           "activation, and 0.38 GiB for CUDAGraph memory. Replace gpu_memory_utilization "
           "config with `--kv-cache-memory=32319458918` (30.1 GiB) to fit into requested "
           "memory, or `--kv-cache-memory=36758994534` (34.23 GiB) to fully utilize gpu "
           "memory. Current kv cache memory in use is 30.25 GiB.")


def test_the_start_up_summary_gives_the_gpu_memory_the_utilization_moves():
    lines = list(iter_lines(str(FP8)))
    at = next(i for i, ln in enumerate(lines) if "Graph capturing finished" in ln) + 2
    lines[at:at] = [SUMMARY.format(w=w) for w in ("Worker_TP0 pid=230", "Worker_TP1 pid=231")]
    s = session_of(lines, "fp8.log")
    report = s.report().to_json()
    from kvtui.engines.vllm.fromrun import v0_engine

    assert not v0_engine(s.state.current)  # a total beside the free memory is V1's summary
    inv = report["whatif"]["inverse"]
    assert inv["total_gpu_gib"] == 44.39  # logged, where the CUDA graph estimate gave 43-46
    calc = s.calculator()
    base = compute(calc, WhatIfInputs(dtype="fp8_e4m3", contexts=[131072], concurrency=1))
    more = compute(calc, WhatIfInputs(dtype="fp8_e4m3", mem_fraction=0.95, contexts=[131072],
                                      concurrency=1))
    tok = {label: (cur, tgt) for label, cur, tgt in more.rows}["tokens"]
    now = int(tok[0].replace(",", ""))
    then = int(tok[1].split()[0].replace(",", ""))
    # 0.05 of 44.39 GiB more per GPU, in whole FP8 blocks of 16 x 4 x 256 x 32 B (TP 2)
    block = 16 * 4 * 256 * 32
    extra = int(0.05 * 44.39 * GIB) // block * 16
    assert base.error is None and now == 991_200
    assert abs(then - (now + extra)) <= 16


def test_a_target_tp_whose_weights_take_the_kv_budget_does_not_fit():
    """`whatif --from-log vllm-llama31-70b-tp8-bf16.log --target-tp 1`: 16.43 GiB of weights per
    GPU at TP 8 are 131.4 GiB at TP 1, more than the 52.05 GiB KV budget they are taken from;
    the budget row said '0 tokens' (a pool of nothing) where SGLang's says 'does not fit'."""
    calc = session(BF16).calculator()
    row = calc.scenario("bf16", tp=1, context_lengths=[131072])
    assert row.does_not_fit and row.does_not_fit.startswith("does not fit: ")
    assert "TP 1" in row.does_not_fit
    assert calc.scenario("bf16", tp=2, context_lengths=[131072]).does_not_fit is None
    assert calc.scenario("bf16", context_lengths=[131072]).does_not_fit is None
    # no pool: no tokens and no requests, as SGLang's row; the pane says so
    row = calc.scenario("bf16", tp=1, context_lengths=[131072])
    assert row.tokens is None and row.concurrency == {"131072": None}
    res = compute(calc, WhatIfInputs(dtype="bf16", tp=1, contexts=[131072]))
    assert dict((label, tgt) for label, _, tgt in res.rows)["tokens"] == "does not fit"


def test_a_target_tp_vllm_refuses_to_shard_is_no_pool():
    """`whatif --from-log vllm-llama31-70b-tp8-bf16.log --target-tp 3`: vLLM refuses 64
    attention heads over 3 GPUs (config/model.py:1577-1584 in 0.34.0, `tp_refused`), yet the
    budget row said 323,280 tokens."""
    calc = session(BF16).calculator()
    row = calc.scenario("bf16", tp=3, context_lengths=[131072])
    assert row.tokens is None and row.cannot_model is not None
    assert "do not split over 3 GPUs" in row.cannot_model
    assert calc.scenario("bf16", tp=4, context_lengths=[131072]).cannot_model is None


def test_bytes_per_token_at_a_target_tp_the_weights_do_not_fit_are_that_tps():
    """`whatif --from-log vllm-llama31-70b-tp8-bf16.log --target-tp 1`: the pool does not fit,
    yet the row's bytes per token are TP 1's, not the logged TP 8's. vLLM 0.34.0: each GPU
    holds max(1, 8 KV heads // TP) heads (config/model.py:1703), a page is heads x
    (head_size + head_size_v) x dtype size per token (v1/kv_cache_interface.py:597-605):
    Llama-3.1-70B (80 layers, 8 KV heads, head_dim 128) in BF16 is 8 x 256 x 2 x 80 =
    327,680 B per token per GPU at TP 1, 40,960 at TP 8."""
    calc = session(BF16).calculator()
    row = calc.scenario("bf16", tp=1, context_lengths=[131072])
    assert row.does_not_fit and row.bytes_per_token == 8 * (128 + 128) * 2 * 80
    # where a pool is sized, the figure is its budget over its tokens (a whole number of
    # blocks: at most a block's worth above the page arithmetic)
    for tp, heads in ((2, 4), (8, 1)):
        row = calc.scenario("bf16", tp=tp, context_lengths=[131072])
        page = heads * (128 + 128) * 2 * 80
        assert row.tokens and page <= row.bytes_per_token <= page * (1 + 16 / row.tokens)
    # the command's budget row says the same
    out = subprocess.run([sys.executable, "-m", "kvtui", "whatif", "--from-log", str(BF16),
                          "--target-tp", "1", "--json"], capture_output=True, text=True,
                         cwd=ROOT, check=False)
    rows = json.loads(out.stdout)["budget_scenarios"]
    assert [r["bytes_per_token"] for r in rows if r["dtype"] == "bf16"] == [327_680.0]
