"""Every corpus log with a KV pool line and an identifiable model: computed cell vs logged pool.

The logged sizes are rounded to 0.01 GiB, so a pool of 0.12 GiB is only known to +-4%. Each case
therefore passes when the computed cell lies inside the interval the rounding allows, and large
pools must in addition be within 1% (they always are when the interval holds).

How each model was identified (the logs rarely print a model path):
- ktransformers-issue-1804: DeepseekV3ForCausalLM, thread is about DeepSeek-V3 (MLA, TP2).
- repofile-53259568910: Qwen2ForCausalLM, the notebook serves qwen/qwen2.5-0.5b-instruct.
- sglang-pr-15909: thread names Qwen-Omni-30B-A3B-Instruct, TP4 (only TP1-TP3 lines excerpted).
- sglang-pr-17157: Qwen3VLMoeForConditionalGeneration at 30.67 GB of weights per rank -> the 30B-A3B
  size (the 235B would need 17.3 GiB per K buffer); DP-attention (DP0 TP0 / DP1 TP1), Ascend NPU
  page_size 128 (token count is a multiple of 128; with page 1 the line would read 8.83).
- sglang-pr-29853: Grok2 on TP16 (8 KV heads replicated to 1 per rank).
- sglang-pr-4826: Gemma3ForConditionalGeneration with 8.13 GB of BF16 weights -> gemma-3-4b; this
  2025-03 build counts all 34 layers at full size (no SWA pool).
- xinference-issue-3481: Qwen3ForCausalLM, thread names Qwen3-14B.
- sglang-pr-18039: the thread names XiaomiMiMo/MiMo-V2-Flash (TP4, page 64); the pool line kept
  is the SWA sub-pool, whose unequal K/V sizes (head 192 / 128, 8 SWA KV heads) are reproduced.

Not identifiable (listed, not tested against a spec):
- sglang-issue-8336: only an EAGLE3 draft's pools (LlamaForCausalLMEagle3) of an unnamed target;
  they are kept as draft pools and never taken for the target's, so there is no what-if.
- sglang-pr-11032: a tiny test config of GptOssForCausalLM (2.72 GB weights); pool prints 0.00 GB.
- sglang-pr-11716: an unnamed 30-shard MoE at TP8; 40,960 B/token fits several shapes.
- sglang-pr-11830: unnamed; 57,344 B/token fits e.g. 28 layers x 4 KV heads x 128 but the log
  does not say which model.
- repofile-54751690598 / dsv4_head: DeepSeek-V4 prints its own DeepSeekV4TokenToKVPool line (no
  KV pool line kvtui parses), and kvtui says plainly that it cannot size DeepSeek-V4.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import session_of

CORPUS = Path(os.environ.get("KVTUI_CORPUS")
              or Path(__file__).resolve().parents[2].parent / "shared" / "corpus")

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(),
                                reason=f"corpus not found at {CORPUS} (set KVTUI_CORPUS)")

IDENTIFIED = {
    "ktransformers-issue-1804.log": ("deepseek-v3", {}),
    "repofile-53259568910.log": ("qwen2.5-0.5b-instruct", {}),
    "sglang-pr-15909.log": ("qwen3-omni-30b-a3b", {"tp": 4}),
    "sglang-pr-17157.log": ("qwen3-vl-30b-a3b", {}),
    "sglang-pr-29853.log": ("grok-2", {"tp": 16}),
    "sglang-pr-4826.log": ("gemma-3-4b", {}),
    "xinference-issue-3481.log": ("qwen3-14b", {}),
    "sglang-pr-18039.log": ("mimo-v2-flash", {}),
}
UNIDENTIFIED = {
    "sglang-issue-8336.log", "sglang-pr-11032.log", "sglang-pr-11716.log",
    "sglang-pr-11830.log",
}


def _run(name: str):
    from kvtui.sources.readers import iter_lines

    path = CORPUS / name
    a = session_of(iter_lines(str(path)), str(path))
    return a.state.current


@pytest.mark.parametrize("name", sorted(IDENTIFIED))
def test_computed_cell_matches_logged_pool(name):
    from kvtui.engines.sglang.fromrun import whatif_for_run

    preset, overrides = IDENTIFIED[name]
    run = _run(name)
    w = whatif_for_run(run, preset, **overrides).to_json()
    assert w is not None
    cal = w["current"]["calibration"]
    lo, hi = cal["ratio_interval"]
    assert cal["within_rounding"], (name, cal)
    assert lo <= 1.0 <= hi
    pool = run.primary_kv_pool()
    if (pool.kv_gib or (pool.k_gib or 0) + (pool.v_gib or 0)) >= 1.0:
        assert cal["ratio"] == pytest.approx(1.0, abs=0.01), (name, cal)
    # The pool line SGLang would print for these tokens is the logged one.
    logged = (f"KV size: {pool.kv_gib:.2f} GB" if pool.kv_gib is not None
              else f"K size: {pool.k_gib:.2f} GB, V size: {pool.v_gib:.2f} GB")
    assert cal["predicted_line"].endswith(logged), (name, cal["predicted_line"], logged)


def test_every_pool_log_is_accounted_for():
    """A new corpus log with a pool line must be added to one of the two lists."""
    from kvtui.engines.sglang.fromrun import whatif_for_run

    with_pool = set()
    for path in sorted(CORPUS.glob("*.log")):
        run = _run(path.name)
        if run.primary_kv_pool() is not None and whatif_for_run(run) is not None:
            with_pool.add(path.name)
    assert with_pool <= set(IDENTIFIED) | UNIDENTIFIED, with_pool - set(IDENTIFIED) - UNIDENTIFIED


def test_mimo_swa_split_follows_the_ratio_rule():
    run = _run("sglang-pr-18039.log")
    split = run.swa_split
    assert split["swa_tokens"] == int(split["full_tokens"] * 0.8) // 64 * 64  # page_size 64


def test_unidentified_logs_still_get_a_log_only_whatif():
    from kvtui.engines.sglang.fromrun import whatif_for_run

    w = whatif_for_run(_run("sglang-pr-11716.log")).to_json()
    assert w is not None and w["model"] is None
    rows = {r["dtype"]: r for r in w["scenarios"]}
    assert rows["fp8_e4m3"]["tokens"] == 2 * 2795207  # same bytes, half the value size
    assert "no model spec" in " ".join(w["explanation"])


def test_version_of_bench_log_ignores_the_bare_capacity_print():
    from kvtui.engines.sglang.version import infer_version

    vr = infer_version(_run("sglang-pr-11032.log"))
    assert vr.lo >= (0, 5, 3) and vr.hi <= (0, 5, 8), vr
    # The bare print shows no layout of the capacity line, so it dates nothing (or is ignored).
    assert all(r.startswith("ignored") for r in vr.reasons if r.startswith("capacity"))


def test_mimo_swa_pool_and_split_reproduced():
    from kvtui.engines.sglang.fromrun import whatif_for_run

    w = whatif_for_run(_run("sglang-pr-18039.log"), "mimo-v2-flash").to_json()
    assert w is not None
    cur = w["current"]
    assert cur["swa_split"]["full_tokens"] == 375_360
    assert cur["calibration"]["predicted_line"] == (
        "#tokens: 300288, K size: 8.38 GB, V size: 5.59 GB")


def test_draft_only_pools_are_kept_apart():
    run = _run("sglang-issue-8336.log")
    assert run.primary_kv_pool() is None
    assert [(p.rank, p.tokens, p.role) for p in run.draft_kv_pools()] == [
        ("TP0", 42632, "draft"), ("TP1", 42632, "draft")]
    from kvtui.engines.sglang.fromrun import whatif_for_run

    assert whatif_for_run(run) is None
