"""Whatever a log's server_args say, the calculator answers or says why; it never raises."""

from __future__ import annotations

import random

from _fakerun import FakePool, qwen35_run

from kvtui.engines.sglang.fromrun import whatif_for_run

VALUES = [None, 0, -1, 1, 3, 7, 10**9, 0.0, -0.5, 0.9, 1.5, float("inf"), "auto", "no_buffer",
          "extra_buffer", "extra_buffer_lazy", "EAGLE", "NEXTN", "trtllm_mha", "flashinfer",
          "banana", True, False, ""]
KEYS = ["mamba_full_memory_ratio", "max_mamba_cache_size", "max_running_requests",
        "mamba_scheduler_strategy", "mamba_radix_cache_strategy", "disable_radix_cache",
        "disable_overlap_schedule", "speculative_algorithm", "speculative_num_draft_tokens",
        "swa_full_tokens_ratio", "max_total_tokens", "page_size", "tp_size",
        "attention_backend", "prefill_attention_backend", "mamba_ssm_dtype", "context_length",
        "hybrid_kvcache_ratio", "mem_fraction_static"]


def test_random_server_args_never_raise():
    rng = random.Random(10)
    for _ in range(80):
        run = qwen35_run()
        for key in rng.sample(KEYS, 6):
            run.server_args[key] = rng.choice(VALUES)
        if rng.random() < 0.5:
            run.pools[("TP0", None, "mamba")] = FakePool(kind="mamba", slots=rng.choice(
                [0, 1, 174, 10**6]), conv_gib=0.07, ssm_gib=3.82)
        run.weights_begin["TP0"] = rng.choice([46.98, 0.0, 1.0])
        run.weights["TP0"] = {"avail_gib": rng.choice([16.68, 0.0, 100.0]), "usage_gib": 30.3}
        for model in (None, "Qwen/Qwen3.5-397B-A17B", "mimo-v2-flash", "deepseek-v3.2",
                      "deepseek-v4"):
            w = whatif_for_run(run, model).to_json()
            assert w is not None
            assert w["scenarios"]


def test_an_fp8_pool_without_the_args_dump_does_not_claim_auto():
    """Pool lines alone (a paste with no server_args, club-3090#1261): the cache is FP8, but
    whether by --kv-cache-dtype fp8_e4m3 or by `auto` is not in the log; the note said
    "`auto` resolved to FP8" as if it were."""
    from kvtui.core.pipeline import Session

    session = Session()
    session.feed_lines("paste", [
        "[2026-09-12 00:22:48 TP0] KV Cache is allocated. dtype: torch.float8_e4m3fn, "
        "#tokens: 454112, K size: 3.46 GB, V size: 3.46 GB",
        "[2026-09-12 00:22:48 TP0] Memory pool end. avail mem=8.40 GB"], 1)
    whatif = session.report().whatif
    assert whatif is not None
    notes = " ".join(whatif.explanation)
    assert "`auto` resolved to FP8" not in notes
    assert "the KV dtype setting is not in the log" in notes


def test_a_logged_running_cap_below_sglangs_rule_without_args_is_the_operators():
    """guqiong96/Lsglang#9 pasted only the capacity line: max_running_requests=1 beside a pool
    SGLang's rule gives 2,048 (0.5.13 budget). Only --max-running-requests lowers it so: every
    what-if row keeps 1 instead of the rule's 2,048."""
    from kvtui.core.pipeline import Session

    s = Session()
    s.feed_lines("log", ["[2026-06-07 11:28:36] max_total_num_tokens=262144, "
                         "chunked_prefill_size=32000, max_prefill_tokens=16384, "
                         "max_running_requests=1, context_len=262144, "
                         "available_gpu_mem=37.75 GB"])
    wi = s.report().whatif
    assert wi is not None
    assert {sc.max_running_requests for sc in wi.scenarios} == {1}
    assert any("read as --max-running-requests 1" in n for n in wi.explanation)


# SGLang's speculative-decoding setup without the args dump: the target's and the draft's
# pool lines (test_pool_roles.py), then the capacity line with the cap SGLang sets itself when
# --max-running-requests is not given (48: 0.5.5 srt/server_args.py:1533-1537, 0.5.23
# srt/arg_groups/speculative_hook.py:1086-1094).
_TARGET = [
    "[2025-07-28 11:00:01 TP0] Load weight begin. avail mem=78.66 GB",
    "[2025-07-28 11:00:05 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, "
    "avail mem=63.52 GB, mem usage=15.14 GB.",
    "[2025-07-28 11:00:06 TP0] KV Cache is allocated. #tokens: 423698, K size: 25.86 GB, "
    "V size: 25.86 GB"]
_DRAFT = [
    "[2025-07-28 11:00:07 TP0] Load weight end. type=LlamaForCausalLMEagle3, "
    "dtype=torch.bfloat16, avail mem=11.30 GB, mem usage=0.80 GB.",
    "[2025-07-28 11:00:07 TP0] KV Cache is allocated. #tokens: 423698, K size: 0.81 GB, "
    "V size: 0.81 GB"]


def _capped(lines: list[str], cap: int):
    from kvtui.core.pipeline import Session

    s = Session()
    s.feed_lines("log", [*lines, f"[2025-07-28 11:00:09 TP0] max_total_num_tokens=423698, "
                         "chunked_prefill_size=8192, max_prefill_tokens=16384, "
                         f"max_running_requests={cap}, context_len=131072, "
                         "available_gpu_mem=10.49 GB"])
    wi = s.report().whatif
    assert wi is not None
    return wi, " ".join(wi.explanation)


def test_a_cap_of_48_beside_a_draft_pool_is_sglangs_speculative_default():
    wi, notes = _capped(_TARGET + _DRAFT, 48)
    assert {sc.max_running_requests for sc in wi.scenarios} == {48}
    assert "SGLang's speculative-decoding default 48" in notes
    assert "with a draft model's KV pool in the log" in notes
    assert "read as --max-running-requests" not in notes
    assert "--max-running-requests 48, or" not in notes


def test_a_cap_of_48_without_a_draft_names_both_causes():
    """NGRAM speculative decoding loads no draft model (0.5.5 server_args.py:1615-1625), so
    no draft line does not rule the default out: the note names the flag and the default."""
    wi, notes = _capped(_TARGET, 48)
    assert {sc.max_running_requests for sc in wi.scenarios} == {48}
    assert ("--max-running-requests 48, or SGLang's speculative-decoding default 48" in notes)
    assert "read as --max-running-requests" not in notes


def test_another_cap_beside_a_draft_pool_stays_the_operators():
    wi, notes = _capped(_TARGET + _DRAFT, 32)
    assert {sc.max_running_requests for sc in wi.scenarios} == {32}
    assert "read as --max-running-requests 32" in notes
    assert "speculative" not in notes
