"""vLLM 0.34's extensible KV cache: the pool is sized after warmup and CUDA graph capture from
the memory then free, and gpu_memory_utilization defaults to 1.0 in that mode.

vLLM's rule (0.34.0 wheel): `measure_kv_cache_bytes` gives the cache
min(requested - non-KV use, free + committed - margin) - max(transient peak, torch growth)
(v1/worker/extensible_kv_cache.py:592-618), margin = max(1 GiB, 0.75 x transient peak)
(:64-65), non-KV use = initial free - free - committed; requested = ceil(total x utilization)
(v1/worker/utils.py:742-743), utilization None -> 1.0 (config/cache.py:216, :494-500); the
blocks are that // bytes per block, logged "Memory after warmup: ..." (:693-705) and "Extended
KV cache to %d blocks (%.2f GiB)." (:537); "GPU KV cache size" follows, computed from the
final blocks (v1/core/kv_cache_planning.py:1864-1907). The figures below are that arithmetic,
computed here, not by kvtui.
"""

from __future__ import annotations

import json
import math

import pytest

from kvtui.cli import main
from kvtui.core.pipeline import Session
from kvtui.engines.vllm.version import check_release, infer_version
from parsers.vllm.line import parse_line
from tests.helpers import session_of

GIB = 1 << 30
BLOCK_BYTES = 16 * 8 * 256 * 2 * 32  # Llama-3.1-8B, bf16, TP 1: one block of all 32 layers
TOTAL, FREE, COMMITTED, KEPT, PEAK = 79.19, 8.1, 55.0, 2.0, 1.5
MAX_LEN = 32768
H = "(EngineCore_DP0 pid=9) INFO 05-01 10:00:{:02d} [{}] "


def avail(util: float, init_free: float = TOTAL) -> int:
    """vLLM's measure_kv_cache_bytes at `util` (the free memory at startup not logged: all)."""
    requested = math.ceil(TOTAL * GIB * util)
    non_kv = (init_free - FREE - COMMITTED) * GIB
    margin = max(GIB, 0.75 * PEAK * GIB)
    return int(min(requested - non_kv, (FREE + COMMITTED) * GIB - margin) - KEPT * GIB)


BLOCKS = avail(1.0) // BLOCK_BYTES
# 0.22+: int(blocks / blocks per request x max_model_len)
TOKENS = int(BLOCKS / (MAX_LEN // 16) * MAX_LEN)


def log() -> list[str]:
    gib = round(BLOCKS * BLOCK_BYTES / GIB, 2)
    return [
        "(APIServer pid=1) INFO 05-01 10:00:00 [utils.py:253] non-default args: {'model': "
        f"'meta-llama/Llama-3.1-8B-Instruct', 'max_model_len': {MAX_LEN}}}",
        H.format(1, "core.py:140") + "Initializing a V1 LLM engine (v0.34.0) with config: "
        f"model='meta-llama/Llama-3.1-8B-Instruct', dtype=torch.bfloat16, max_seq_len={MAX_LEN}"
        ", tensor_parallel_size=1, kv_cache_dtype=auto, enable_prefix_caching=True",
        H.format(20, "gpu_worker.py:796") + "Available KV cache memory: 62.4 GiB",
        H.format(40, "extensible_kv_cache.py:694") + f"Memory after warmup: {FREE} GiB free, "
        f"{COMMITTED} GiB committed to the KV cache, {KEPT} GiB kept for transient activations "
        f"({PEAK} GiB allocated at peak, {KEPT} GiB of torch reservation growth); {BLOCKS} KV "
        f"cache blocks ({gib} GiB) fit within the requested {TOTAL} GiB. Torch may reserve up "
        "to 12.5 GiB.",
        H.format(41, "extensible_kv_cache.py:537") + f"Extended KV cache to {BLOCKS} blocks "
        f"({BLOCKS * BLOCK_BYTES / GIB:.2f} GiB).",
        H.format(42, "kv_cache_planning.py:1900") + f"GPU KV cache size: {TOKENS:,} tokens, "
        f"Maximum concurrency for {MAX_LEN:,} tokens per request: "
        f"{BLOCKS / (MAX_LEN // 16):.2f}x",
    ]


def session() -> Session:
    s = session_of(log(), "log")
    return s


def test_0_34_is_known_and_its_lines_date_it():
    assert check_release("0.34.0") == (0, 34, 0)
    ev = parse_line(log()[3])
    assert ev is not None and ev.kind == "memory_profile"
    assert (ev.get("warmup_blocks"), ev.get("requested_gib"), ev.get("extensible")) == (
        BLOCKS, TOTAL, True)
    ev = parse_line(H.format(0, "x.py:1") + "Remapping the KV cache from 40000 to 30000 blocks "
                    "to fit the measured budget.")
    assert ev is not None and (ev.get("remapped_from_blocks"), ev.get("remapped_to_blocks")) == (
        40000, 30000)
    ev = parse_line(log()[4])
    assert ev is not None and ev.kind == "kv_pool" and ev.get("post_capture")
    assert ev.get("kv_gib") == round(BLOCKS * BLOCK_BYTES / GIB, 2)
    ev = parse_line(H.format(0, "vllm.py:3256") + "Extensible KV cache off: without an IMEX "
                    "channel, NIXL would fall back to TCP.")
    assert ev is not None and ev.kind == "memory_profile" and ev.get("extensible") is False
    ev = parse_line(H.format(0, "abstract.py:176") + "Disabling the extensible KV cache: "
                    "kv_cache_memory_bytes is set. The KV cache will be sized from profiling "
                    "estimates instead of measured memory.")
    assert ev is not None and ev.get("extensible") is False
    assert infer_version({"memory:extensible"}).lo == (0, 34, 0)


def test_the_budget_is_the_extended_pool_and_the_utilization_defaults_to_one():
    calc = session().calculator()
    assert calc is not None and calc.extensible
    assert calc.utilization == 1.0 and calc.total_gib == TOTAL
    cal = calc.calibration()
    assert cal is not None and cal["within_rounding"]  # the extended GiB, not the 62.4 estimate
    rep = session().report().to_json()
    w = rep["whatif"]
    assert any("extensible KV cache sized the pool after warmup" in x for x in w["explanation"])
    # the report's pool is the extended one, not the 62.4 GiB profiling estimate
    assert [p["kv_gib"] for p in rep["pools"]] == [round(BLOCKS * BLOCK_BYTES / GIB, 2)]


def test_a_lower_utilization_follows_the_post_warmup_model():
    """At 0.9 the requested cap binds: ceil(0.9 x total) - non-KV use - kept."""
    calc = session().calculator()
    assert calc is not None
    tokens, _ = calc.tokens_for("bf16", mem_fraction_static=0.9)
    blocks = avail(0.9) // BLOCK_BYTES
    assert tokens == int(blocks / (MAX_LEN // 16) * MAX_LEN)
    budget, basis, estimate = calc.budget_bytes(mem_fraction_static=0.9)
    assert estimate and "extensible KV cache" in basis
    assert budget is not None and budget // BLOCK_BYTES == blocks


def test_the_inverse_says_the_utilization_cannot_add_memory_at_one():
    calc = session().calculator()
    assert calc is not None
    inv = calc.inverse("bf16", MAX_LEN, 2 * BLOCKS // (MAX_LEN // 16))
    assert inv.gpu_memory_utilization_feasible is False
    assert inv.gpu_memory_utilization_needed is None
    assert "extensible KV cache" in (inv.gpu_memory_utilization_note or "")


def test_the_bundled_0_34_sample_reproduces_its_pool():
    """sample_logs/vllm-gpt-oss-120b-tp2-extensible.log (written by vllm_samples.py through
    vLLM's arithmetic): the extended pool, two batches of 8,192 in flight for the window group
    (the logged 16.96x fixes them: one batch would print more), utilization 1.0."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "sample_logs" / \
        "vllm-gpt-oss-120b-tp2-extensible.log"
    s = session_of(path.read_text(encoding="utf-8").splitlines(), path.name)
    calc = s.calculator()
    assert calc is not None and calc.extensible and calc.utilization == 1.0
    assert calc.flight[:2] == (2, 8192)
    cell = calc.current().cell
    assert cell is not None and cell["max_num_batched_tokens_from"] == "fitted"
    cal = calc.calibration()
    assert cal is not None and cal["within_rounding"]
    lay = calc.layout("bf16")
    assert lay is not None and lay.blocks_per_request(131072) == 8192 + 1033
    blocks = 156_467  # "Extended KV cache to 156467 blocks"
    assert round(blocks / (8192 + 1033), 2) == 16.96 != round(blocks / (8192 + 521), 2)


def test_a_0_34_plan_has_the_extensible_cache_and_no_utilization_to_raise(
        capsys: pytest.CaptureFixture[str]):
    """Without a log, --vllm-version 0.34.0: the extensible KV cache is vLLM's default on CUDA
    (config/cache.py:395-400) and the utilization unset means 1.0 (:494-500), so the inverse
    proposes no higher utilization."""
    code = main(["whatif", "--engine", "vllm", "--vllm-version", "0.34.0", "--model",
                 "llama-3.1-8b", "--tp", "1", "--pool-gib", "20", "--context-len", "131072",
                 "--target-concurrency", "30", "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    inv = json.loads(out.out)["inverse"]
    assert inv["gpu_memory_utilization_current"] == 1.0
    assert inv["gpu_memory_utilization_feasible"] is False
    assert inv["gpu_memory_utilization_needed"] is None


def test_the_utilization_cap_warning_gives_the_operators_value():
    """"gpu_memory_utilization=%s caps this instance at %s GiB, keeping %s GiB of free device
    memory out of the KV cache. ..." (extensible_kv_cache.py:663 in 0.34.0): the utilization
    the operator set and the memory it requests, total = requested / utilization."""
    line = (H.format(40, "extensible_kv_cache.py:663").replace("INFO", "WARNING")
            + "gpu_memory_utilization=0.9 caps this instance at 71.27 GiB, keeping 6.73 GiB of "
            "free device memory out of the KV cache. The extensible KV cache is sized from the "
            "memory measured after warmup and CUDA graph capture, so vLLM's own use needs no "
            "headroom below 1.0.")
    ev = parse_line(line)
    assert ev is not None and ev.kind == "memory_profile"
    assert (ev.get("gpu_memory_utilization"), ev.get("requested_gib")) == (0.9, 71.27)
    lines = [x for x in log() if "Memory after warmup" not in x]
    s = session_of([*lines[:3], line, *lines[3:]], "log")
    calc = s.calculator()
    assert calc is not None and calc.extensible and calc.utilization == 0.9
    assert calc.total_gib == pytest.approx(71.27 / 0.9)
