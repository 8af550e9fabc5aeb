"""vLLM's sliding-window and chunked-local-attention groups: the tokens in flight a request
reserves blocks for, and the hybrid KV cache manager chunked attention turns off.

Each figure is vLLM's own arithmetic, quoted from the release that encodes it:
- SlidingWindowSpec: cdiv(min(window - 1 + in flight, max_model_len), block) + 1 blocks
  (v1/kv_cache_interface.py:200-214 in 0.11.0, :919-955 in 0.33.0);
- ChunkedLocalAttentionSpec: cdiv(min(chunk + in flight, max_model_len), block)
  (:175-189 in 0.11.0, :865-889 in 0.33.0);
- in flight: max_num_batched_tokens up to 0.25 (:485-501 in 0.25.0), from 0.26
  `max_in_flight_tokens` = max_concurrent_batches x max_num_batched_tokens, two batches with
  async scheduling at PP 1 (config/vllm.py:512-530 in 0.26.0, :588-609 in 0.33.0), pp + 1 in
  0.34.0 (:560-575).
"""

from __future__ import annotations

import json

import pytest

from kvtui.cli import main
from kvtui.core.capacity import preset_spec
from kvtui.engines.vllm.sizing import (
    RULES,
    batch_token_defaults,
    chunked_hybrid,
    in_flight_batches,
    layout,
)
from parsers.vllm.line import parse_line
from tests.helpers import session_of

V22 = RULES["v1-0.22"]
GIB = 1 << 30
L = 131072  # max_model_len of the cases below


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def test_gpt_oss_window_reserves_two_batches_from_0_26():
    """gpt-oss-120b (18 sliding-window layers of 128 tokens, 18 full; one group each): a
    131,072-token request takes cdiv(131072, 16) = 8,192 full blocks and, with two batches of
    8,192 in flight (0.33), cdiv(127 + 16,384, 16) + 1 = 1,033 window blocks, not 521: kvtui's
    one-batch figure put 6% more requests in the same pool."""
    spec = preset_spec("gpt-oss-120b")
    two = layout(spec, "bf16", 1, V22, batches=2)
    one = layout(spec, "bf16", 1, V22, batches=1)
    assert (two.full_groups, two.swa_groups) == (1, 1)
    assert two.blocks_per_request(L) == 8192 + cdiv(127 + 2 * 8192, 16) + 1 == 9225
    assert one.blocks_per_request(L) == 8192 + cdiv(127 + 8192, 16) + 1 == 8713
    assert round(9225 / 8713 - 1, 3) == 0.059
    # the concurrency vLLM prints is blocks over that: the same pool fits 6% fewer requests
    assert one.concurrency(100_000, L) / two.concurrency(100_000, L) == pytest.approx(9225 / 8713)


def test_gemma3_27b_tp2_six_window_groups():
    """Gemma-3-27B (52 sliding-window layers of 1,024, 10 full): groups of 10, so six window
    groups; two batches add 6 x (1,089 - 577) blocks per request: 26% over a one-batch count."""
    spec = preset_spec("gemma-3-27b")
    two = layout(spec, "bf16", 2, V22, batches=2)
    one = layout(spec, "bf16", 2, V22, batches=1)
    assert (two.group_size, two.full_groups, two.swa_groups) == (10, 1, 6)
    assert two.blocks_per_request(L) == 8192 + 6 * (cdiv(1023 + 16384, 16) + 1) == 14726
    assert one.blocks_per_request(L) == 8192 + 6 * (cdiv(1023 + 8192, 16) + 1) == 11654
    assert round(14726 / 11654 - 1, 2) == 0.26


def test_batches_in_flight_by_release():
    """One batch before 0.26; from 0.26 two with async scheduling (on by default) at PP 1, PP
    batches without it; 0.34 keeps pp + 1 under PP."""
    assert in_flight_batches((0, 25, 0), (0, 25, 0), 1, None) == [1]
    assert in_flight_batches((0, 26, 0), (0, 26, 0), 1, None) == [2]
    assert in_flight_batches((0, 33, 0), (0, 33, 0), 1, False) == [1]
    assert in_flight_batches((0, 33, 0), (0, 33, 0), 2, None) == [2, 3]
    assert in_flight_batches((0, 34, 0), (0, 34, 0), 2, None) == [3]
    assert in_flight_batches((0, 22, 0), (0, 33, 0), 1, None) == [2, 1]  # newest first


def test_batch_token_defaults_follow_the_gpu():
    """The API server's max_num_batched_tokens: 8192 on 70-160 GiB, 2048 below (and on an
    A100), 16384 from 160 GiB (0.28+: engine/arg_utils.py:2973-3005 in 0.33.0)."""
    assert batch_token_defaults((0, 33, 0), None)[0] == 8192
    assert batch_token_defaults((0, 33, 0), 79.2)[0] == 8192
    assert batch_token_defaults((0, 33, 0), 44.4)[0] == 2048
    assert batch_token_defaults((0, 33, 0), 178.4)[0] == 16384
    assert 16384 not in batch_token_defaults((0, 26, 0), 178.4)


def test_scout_chunked_groups_reserve_chunk_plus_batches():
    """Llama-4 Scout at TP 8 (36 chunked layers of 8,192, 12 full; groups of 12): a chunked
    group holds cdiv(min(8192 + 2 x 8192, L), 16) = 1,536 blocks (0.33), no '+ 1': the
    sliding-window formula's 1,025 per group made the request 13.6% smaller."""
    spec = preset_spec("llama-4-scout-17b-16e")
    lay = layout(spec, "bf16", 8, V22, batches=2)
    assert lay.chunk == 8192 and (lay.full_groups, lay.swa_groups) == (1, 3)
    assert lay.blocks_per_request(L) == 8192 + 3 * cdiv(8192 + 16384, 16) == 12800
    old = 8192 + 3 * (cdiv(8191 + 8192, 16) + 1)
    assert round(12800 / old - 1, 3) == 0.136


def test_chunked_attention_turns_the_hybrid_manager_off_before_0_14():
    """VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE defaults to 0 up to 0.13.0 (envs.py:1433)
    and to 1 from 0.14.0 (:1469); off, every layer is a full-attention layer in one group
    (unify_hybrid_kv_cache_specs, kv_cache_utils.py:1100-1140 in 0.11.0). The same budget then
    fits 4 x 8192 / 11267 fewer requests: 13.33x where the hybrid groups said 38.77x."""
    assert chunked_hybrid((0, 11, 0), (0, 11, 0)) == [False]
    assert chunked_hybrid((0, 14, 0), (0, 33, 0)) == [True]
    spec = preset_spec("llama-4-scout-17b-16e")
    off = layout(spec, "bf16", 8, RULES["v1-0.9"], hybrid_allocator=False)
    on = layout(spec, "bf16", 8, RULES["v1-0.9"], batches=1)
    assert (off.groups, off.group_size) == (1, 48)
    budget = 40 * GIB
    c_off = off.concurrency(off.blocks(budget), L)
    c_on = on.concurrency(on.blocks(budget), L)
    assert c_on / c_off == pytest.approx(4 * 8192 / on.blocks_per_request(L), rel=1e-3)
    assert round(13.33 * 4 * 8192 / 11267, 2) == 38.77


def test_the_calculator_follows_the_release_and_the_flag(capsys: pytest.CaptureFixture[str]):
    """`kvtui whatif --engine vllm`: 0.33 reserves two batches, 0.25 one, and
    --max-num-batched-tokens moves the window's share."""
    def conc(*extra: str) -> float:
        code = main(["whatif", "--engine", "vllm", "--model", "gpt-oss-120b", "--tp", "1",
                     "--pool-gib", "40", "--context-len", str(L), "--dtype", "bf16", "--json",
                     *extra])
        out = capsys.readouterr()
        assert code == 0, out.err
        doc = json.loads(out.out)
        return doc["scenarios"][0]["concurrency"][str(L)], doc
    c33, doc = conc("--vllm-version", "0.33.0")
    c25, _ = conc("--vllm-version", "0.25.0")
    c_small, given = conc("--vllm-version", "0.33.0", "--max-num-batched-tokens", "2048")
    # the batch tokens vLLM's default depends on the GPU: assumed, so approximate, until given
    assert doc["scenarios"][0]["approximate"] and "assumed" in doc["scenarios"][0]["basis"]
    assert not given["scenarios"][0]["approximate"]
    cell = doc["current"]["cell"]
    assert (cell["batches"], cell["max_num_batched_tokens"], cell["in_flight_tokens"]) == (
        2, 8192, 16384)
    spec = preset_spec("gpt-oss-120b")
    lay = layout(spec, "bf16", 1, V22, batches=2)
    blocks = lay.blocks(40 * GIB)
    assert c33 == int(blocks / 9225 * 100) / 100
    assert c25 == int(blocks / 8713 * 100) / 100
    assert c_small == int(blocks / (8192 + cdiv(127 + 4096, 16) + 1) * 100) / 100
    assert any("two batches (async scheduling" in ln for ln in doc["explanation"])


def test_the_flag_is_vllms(capsys: pytest.CaptureFixture[str]):
    code = main(["whatif", "--engine", "sglang", "--model", "gpt-oss-120b", "--tp", "1",
                 "--pool-gib", "40", "--max-num-batched-tokens", "4096"])
    assert code == 2 and "vLLM's flag" in capsys.readouterr().err


def test_the_log_lines_that_change_the_reservation():
    """"Async scheduling is disabled because ..." (config/vllm.py:1713 in 0.33.0) and the
    chunked-attention warning (:2247) are read; `--no-async-scheduling` is an argument."""
    ev = parse_line("(APIServer pid=1) WARNING 05-01 10:00:00 [vllm.py:1713] Async scheduling "
                    "is disabled because the V1 model runner does not support it with "
                    "pipeline parallelism.")
    assert ev is not None and ev.kind == "server_args" and ev.get("async_scheduling") is False
    ev = parse_line("(APIServer pid=1) WARNING 05-01 10:00:00 [vllm.py:2247] There is a latency "
                    "regression when using chunked local attention with the hybrid KV cache "
                    "manager. Disabling it, by default. To enable it, set the environment "
                    "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1.")
    assert ev is not None and ev.kind == "kv_layout" and ev.get("hybrid_manager_off") is True
    ev = parse_line("(APIServer pid=1) INFO 05-01 10:00:00 [utils.py:233] non-default args: "
                    "{'model': 'openai/gpt-oss-120b', 'async_scheduling': False}")
    assert ev is not None and ev.get("async_scheduling") is False



def _scout_log(warning: bool, version: bool) -> list[str]:
    """Llama-4 Scout at TP 8 in BF16, vLLM 0.11.0, the hybrid manager off: one group of all 48
    layers, 16 x 512 B x 48 per block (kv_cache_utils.py:813 get_num_blocks, 0.11.0); "GPU KV
    cache size" num_blocks // 1 x 16 (:1083), concurrency blocks / cdiv(131072, 16)."""
    model = "meta-llama/Llama-4-Scout-17B-16E-Instruct"
    head = "(EngineCore_DP0 pid=9) INFO 05-01 10:00:{:02d} [{}] "
    budget = 40 * GIB
    blocks = budget // (16 * 512 * 48)
    out = ["(APIServer pid=1) INFO 05-01 10:00:00 [utils.py:233] non-default args: {'model': "
           f"'{model}', 'tensor_parallel_size': 8, 'max_model_len': {L}}}"]
    if version:
        out.append(head.format(1, "core.py:77") + "Initializing a V1 LLM engine (v0.11.0) with "
                   f"config: model='{model}', dtype=torch.bfloat16, max_seq_len={L}, "
                   "tensor_parallel_size=8, kv_cache_dtype=auto")
    if warning:
        out.append(head.format(2, "__init__.py:521").replace("INFO", "WARNING")
                   + "There is a latency regression when using chunked local attention with "
                   "the hybrid KV cache manager. Disabling it, by default. To enable it, set "
                   "the environment VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1.")
    out += [head.format(20, "gpu_worker.py:298") + "Available KV cache memory: 40.00 GiB",
            head.format(21, "kv_cache_utils.py:1087") + f"GPU KV cache size: {blocks * 16:,} "
            "tokens",
            head.format(21, "kv_cache_utils.py:1091") + f"Maximum concurrency for {L:,} tokens "
            f"per request: {blocks / cdiv(L, 16):.2f}x"]
    return out


@pytest.mark.parametrize(("warning", "version"), [(True, True), (False, True), (True, False),
                                                  (False, False)])
def test_scout_on_0_11_is_one_group_of_full_layers(warning: bool, version: bool):
    """The warning, the release (0.11: VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE
    defaults to 0) or, undated, the logged 13.33x each say the manager was off: the what-if is
    one group of 48 full layers, not 12-layer groups that would fit 38.77 requests."""

    s = session_of(_scout_log(warning, version), "log")
    calc = s.calculator()
    assert calc is not None and calc.spec is not None and calc.spec.attention_chunk_size == 8192
    lay = calc.layout("bf16")
    assert lay is not None and (lay.groups, lay.group_size) == (1, 48)
    blocks = 40 * GIB // (16 * 512 * 48)
    assert round(blocks / cdiv(L, 16), 2) == 13.33
    cal = calc.calibration()
    assert cal is not None and cal["within_rounding"]
    assert calc.concurrency("bf16", [32768])["32768"] == int(blocks / cdiv(32768, 16) * 100) / 100
    assert any("hybrid KV cache manager" in x for x in lay.lines)


def test_the_flag_on_a_log_rereads_the_logged_blocks(capsys: pytest.CaptureFixture[str]):
    """On the 0.34 gpt-oss sample (156,467 blocks, two batches of 8,192 fitted), a what-if with
    --max-num-batched-tokens 2048 keeps the blocks and prints what vLLM would: a window group of
    cdiv(127 + 2 x 2048, 16) + 1 = 265 blocks per request."""
    from pathlib import Path

    log = Path(__file__).resolve().parents[2] / "sample_logs" / \
        "vllm-gpt-oss-120b-tp2-extensible.log"
    code = main(["whatif", "--from-log", str(log), "--max-num-batched-tokens", "2048",
                 "--dtype", "bf16", "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out)
    blocks, per_request = 156_467, 8192 + cdiv(127 + 2 * 2048, 16) + 1
    row = doc["scenarios"][0]
    assert row["tokens"] == int(blocks / per_request * L)
    assert row["concurrency"][str(L)] == int(blocks / per_request * 100) / 100
    assert doc["current"]["cell"]["max_num_batched_tokens_from"] == "given"
