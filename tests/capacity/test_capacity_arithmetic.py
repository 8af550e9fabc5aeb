"""The issue's correctness cases: Qwen3.5 at TP8, the reference worked example, vLLM's point."""

from __future__ import annotations

import math

import pytest
from _fakerun import qwen35_run

from kvtui.core.capacity import Parallel, preset_spec, resolve_model
from kvtui.engines.sglang.calculator import Calculator, MemoryFacts, sglang_max_running_requests
from kvtui.engines.sglang.cell import kv_cell, mamba_state, pool_gib_line
from kvtui.engines.sglang.fromrun import whatif_for_run


def test_qwen35_cell_replicates_kv_heads_at_tp8():
    spec, _ = resolve_model("/models/nvidia/Qwen3.5-397B-A17B-NVFP4")
    cell = kv_cell(spec, "fp8_e4m3", Parallel(tp=8))
    assert cell.layers == 15
    assert cell.heads_local == 1  # 2 // 8 floored to 1: replicated
    assert cell.replicated
    assert cell.bytes_per_token == 15 * 1 * (256 + 256) * 1 == 7680
    assert kv_cell(spec, "bf16", Parallel(tp=8)).bytes_per_token == 15360
    assert any("replicates" in line for line in cell.lines)


def test_qwen35_whatif_from_the_log():
    w = whatif_for_run(qwen35_run()).to_json()
    assert w is not None
    cur = w["current"]
    assert cur["dtype"] == "fp8_e4m3"
    assert cur["tokens"] == 608174
    assert cur["theoretical_bytes_per_token"] == 7680
    assert cur["calibration_ratio"] == pytest.approx(1.0, abs=0.01)
    # The hand analysis assumed 2 KV heads per GPU (15,360 B/token): a 0.5x mismatch.
    assert cur["bytes_per_token"] / 15360 == pytest.approx(0.5, abs=0.01)
    assert "auto-detected" in w["model_reason"] and "Qwen3.5-397B-A17B" in w["model_reason"]
    assert any("replicates" in line for line in w["explanation"])
    rows = {r["dtype"]: r for r in w["scenarios"]}
    bf16 = rows["bf16"]
    assert bf16["tokens"] == 304087
    assert bf16["bytes_per_token"] == 15360
    assert list(bf16["concurrency"]) == ["262144", "32768", "131072"]
    # cut, never rounded: 304,087 / 262,144 = 1.159999..., so 1.16 requests do not fit
    assert bf16["concurrency"]["262144"] == 1.15
    assert bf16["concurrency"]["32768"] == 9.27
    fp8 = rows["fp8_e4m3"]
    assert fp8["tokens"] == 608174
    assert fp8["concurrency"]["262144"] == 2.31
    assert fp8["concurrency"]["32768"] == 18.55
    # No Mamba line in this fake: kvtui derives the slots SGLang 0.5.23 (the newest the
    # server_args dict allows) would take, (rest x 0.9/1.9 - per) // per = 173 with rest =
    # 4,670,776,320 + 174 x 24,007,680 solved back from the KV bytes, and auto picks
    # extra_buffer (3 + 2 slots per request): max_running_requests = 173 // 5 = 34.
    assert fp8["max_running_requests"] == 34 == bf16["max_running_requests"]
    assert bf16["mamba_slots"] == 173
    assert bf16["flag"] == "--kv-cache-dtype bf16"


def test_qwen35_mamba_state_per_slot_tp8():
    spec = preset_spec("qwen3.5-397b-a17b")
    st = mamba_state(spec, 8)
    assert st is not None
    # conv (12288 // 8) x 3 x 2 B + ssm (64 // 8) x 128 x 128 x 4 B, over 45 GDN layers
    assert st.per_slot == (1536 * 3 * 2 + 8 * 128 * 128 * 4) * 45 == 24_007_680


def test_qwen3_next_tp4_reference_numbers():
    spec = preset_spec("qwen3-next-80b-a3b")
    assert kv_cell(spec, "bf16", Parallel(tp=4)).bytes_per_token == 12288
    st = mamba_state(spec, 4)
    assert st is not None and st.per_slot == 536_576 * 36 == 19_316_736


def test_reference_worked_example_8_8():
    """sglang-log-lines.md 8.8: Llama-3.1-8B, TP1, BF16, page 1."""
    spec = preset_spec("llama-3.1-8b")
    mem = MemoryFacts(pre_gib=78.66, avail_gib=63.52, mem_fraction_static=0.85, tp=1)
    assert mem.rest_gib() == pytest.approx(51.721)
    cell = kv_cell(spec, "bf16")
    assert cell.bytes_per_token == 131072
    n = int(mem.rest_gib() * (1 << 30)) // cell.bytes_per_token
    assert n == 423698
    assert pool_gib_line(n, cell, 1) == "K size: 25.86 GB, V size: 25.86 GB"
    calc = Calculator(current_dtype="bf16", spec=spec, memory=mem, context_len=131072,
                      parallel=Parallel(tp=1))
    assert calc.tokens_for("bf16") == (423698, None)
    assert calc.tokens_for("fp8_e4m3") == (847396, None)
    fp8 = kv_cell(spec, "fp8_e4m3")
    assert pool_gib_line(847396, fp8, 1) == "K size: 25.86 GB, V size: 25.86 GB"
    assert sglang_max_running_requests(423698, 131072) == 2048
    # The same from the logged pool alone (tokens held, dtype changed):
    calc2 = Calculator(current_dtype="bf16", tokens=423698, spec=spec, context_len=131072)
    assert calc2.tokens_for("fp8_e4m3")[0] == 847396
    assert calc2.scenario("bf16").to_json()["max_running_requests"] == 2048


def test_max_running_requests_reference_check():
    # 8.6 real check: N=38,141, ctx=131,072 -> 2048
    assert sglang_max_running_requests(38141, 131072) == 2048
    assert sglang_max_running_requests(1000, 131072) == 500  # N // 2 wins
    assert sglang_max_running_requests(10_000_000, 4096) == 4096
    assert sglang_max_running_requests(608174, 262144, user=256, attn_dp=1) == 256


def test_vllm_documented_qwen3_4b_point():
    """vLLM docs: Qwen3-4B, 11.47 GiB of KV -> 83,488 tokens BF16, 166,992 FP8 (16-token blocks).

    vLLM prints the memory rounded to 0.01 GiB, so the computed count must bracket the logged one
    over that interval, at 16-token block granularity.
    """
    spec = preset_spec("qwen3-4b")
    for dtype, logged in (("bf16", 83488), ("fp8_e4m3", 166992)):
        cell = kv_cell(spec, dtype).bytes_per_token
        lo = math.floor(11.465 * 2**30 / cell) // 16 * 16
        hi = math.floor(11.475 * 2**30 / cell) // 16 * 16
        assert lo <= logged <= hi, (dtype, lo, logged, hi)
        assert logged % 16 == 0
    assert kv_cell(spec, "bf16").bytes_per_token == 147456
