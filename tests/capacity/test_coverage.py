"""Every architecture SGLang 0.5.23 and vLLM 0.34.0 register is either sized by a cited rule or
said to be not modelled, never sized by a rule that does not apply (issue 35, "Coverage").

The registries are data read from the wheels (kvtui/engines/<engine>/registry/, written by
tools/read_registry.py); the verdicts are kvtui's (`kvtui.engines.<engine>.coverage`).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kvtui.core.capacity import from_hf_config, preset_spec
from kvtui.core.capacity.coverage import load_registry
from kvtui.engines.sglang import coverage as sgl_cov
from kvtui.engines.sglang.sizing.families import CannotModel, check_supported
from kvtui.engines.vllm import coverage as vllm_cov
from kvtui.engines.vllm.plan import plan
from tests.helpers import session_of

ROOT = Path(__file__).resolve().parents[2]
# a rule's source names a file and line, or a kvtui module that cites them
_CITED = re.compile(r"\.py:\d+|sizing\.|sglang\.cell|modelspec\.")


@pytest.mark.parametrize(("cov", "package", "name"), [
    (vllm_cov, "kvtui.engines.vllm", "vllm-0.34.0.json"),
    (sgl_cov, "kvtui.engines.sglang", "sglang-0.5.23.json"),
])
def test_every_registered_architecture_is_sized_by_a_cited_rule_or_not_modelled(
        cov, package, name):
    doc = load_registry(package, name)
    assert doc["release"] == cov.RELEASE and doc["source"]
    names = cov.registry_names()
    assert len(names) > 200  # the whole registry, not a sample
    for arch in names:
        v = cov.verdict(arch)
        if v.sized:
            assert v.rule and _CITED.search(v.source), (arch, v)
            assert cov.unmodelled(arch) is None
        else:
            assert v.unmodelled and arch in cov.unmodelled(arch), (arch, v)


def _counts(cov) -> tuple[int, int]:
    verdicts = [cov.verdict(a) for a in cov.registry_names()]
    sized = sum(v.sized for v in verdicts)
    return sized, len(verdicts) - sized


def test_the_docs_state_the_counts_the_verdicts_give():
    text = (ROOT / "docs" / "calculator.md").read_text(encoding="utf-8")
    for label, cov in (("vLLM 0.34.0", vllm_cov), ("SGLang 0.5.23", sgl_cov)):
        sized, unmodelled = _counts(cov)
        line = f"{label}: {sized} sized, {unmodelled} not modelled"
        assert line in text, line


# The families the issue names, on each engine that serves them: sized (True) or not (False).
@pytest.mark.parametrize(("cov", "arch", "sized"), [
    (vllm_cov, "Gemma4ForCausalLM", True), (sgl_cov, "Gemma4ForCausalLM", True),
    (vllm_cov, "Gemma4ForConditionalGeneration", True),
    (sgl_cov, "Gemma4ForConditionalGeneration", True),
    (vllm_cov, "Gemma4UnifiedForConditionalGeneration", False),
    (sgl_cov, "Gemma4UnifiedForConditionalGeneration", False),
    (vllm_cov, "Gemma3nForCausalLM", False),
    (vllm_cov, "MiniMaxText01ForCausalLM", True), (vllm_cov, "MiniMaxM1ForCausalLM", True),
    (vllm_cov, "MiniMaxVL01ForConditionalGeneration", False),
    (vllm_cov, "JambaForCausalLM", True),
    (vllm_cov, "NemotronHForCausalLM", True), (sgl_cov, "NemotronHForCausalLM", True),
    (vllm_cov, "Lfm2ForCausalLM", True), (sgl_cov, "Lfm2ForCausalLM", True),
    (sgl_cov, "Lfm2MoeForCausalLM", True), (vllm_cov, "Lfm2MoeForCausalLM", True),
    (vllm_cov, "Lfm2VlForConditionalGeneration", False),
    (sgl_cov, "Lfm2VlForConditionalGeneration", False),
    (vllm_cov, "BailingMoeV2_5ForCausalLM", True), (sgl_cov, "BailingMoeV2_5ForCausalLM", True),
    (sgl_cov, "BailingMoeV3ForCausalLM", False),
    (vllm_cov, "LongcatFlashForCausalLM", True), (sgl_cov, "LongcatFlashForCausalLM", True),
    # the families kvtui sized before, still sized
    (vllm_cov, "LlamaForCausalLM", True), (sgl_cov, "LlamaForCausalLM", True),
    (vllm_cov, "Qwen3NextForCausalLM", True), (sgl_cov, "Qwen3NextForCausalLM", True),
    (vllm_cov, "DeepseekV3ForCausalLM", True), (sgl_cov, "DeepseekV3ForCausalLM", True),
    (vllm_cov, "GptOssForCausalLM", True), (sgl_cov, "GptOssForCausalLM", True),
    # served by vLLM's Transformers backend (one Attention per layer, transformers/base.py)
    (vllm_cov, "Olmo2ForCausalLM", True), (vllm_cov, "TransformersForCausalLM", True),
    (vllm_cov, "NanbeigeForCausalLM", False),
    (vllm_cov, "TransformersForSequenceClassification", False),
])
def test_the_named_families(cov, arch, sized):
    assert cov.verdict(arch).sized is sized


def test_engines_that_do_not_serve_a_family_say_so():
    minimax = preset_spec("minimax-m1")
    assert "0.24+ refuses" in vllm_cov.for_run(minimax, lo=(0, 28, 0), hi=(0, 28, 0))
    # a class vLLM dropped: judged by the 0.22.0 registry for runs dated before, refused after
    grok = preset_spec("grok-2")
    assert vllm_cov.verdict("Grok1ForCausalLM").sized
    assert "0.22.0" in vllm_cov.verdict("Grok1ForCausalLM").source
    assert vllm_cov.for_run(grok, lo=(0, 22, 0), hi=(0, 24, 0)) is None
    assert "served until 0.24.0" in vllm_cov.for_run(grok, lo=(0, 28, 0), hi=(0, 28, 0))
    assert "not in SGLang 0.5.23's model registry" in sgl_cov.unmodelled("MiniMaxM1ForCausalLM")
    assert "not in SGLang 0.5.23's model registry" in sgl_cov.unmodelled("JambaForCausalLM")


def test_the_minimax_config_is_not_read_as_eighty_kv_layers():
    """attn_type_list: 0 lightning, 1 softmax (vLLM 0.22.0 models/minimax_text_01.py:509): the
    preset's 80 layers hold KV in 10."""
    spec = preset_spec("minimax-m1")
    assert spec.num_layers == 80
    assert len(spec.full_layer_ids) == 10 and len(spec.linear_layer_ids) == 70


# A vLLM 0.22 start of MiniMax-M1 at TP8 (the release's wording; figures worked from its rules:
# a block of 512 tokens x 512 B x 10 layers = 2,621,440 B, tests/capacity/test_family_rules.py;
# 21.50 GiB holds 8,806 blocks; a 131,072-token request takes 256 + 7 = 263 blocks: 33.48x,
# int(8,806 / 263 x 131,072) = 4,388,669 tokens).
E = "(EngineCore_DP0 pid=41) INFO 06-11 09:14:"
MINIMAX_LOG = [
    "(APIServer pid=7) INFO 06-11 09:13:58 [model.py:531] Resolved architecture: "
    "MiniMaxM1ForCausalLM",
    E + "02 [core.py:114] Initializing a V1 LLM engine (v{release}) with config: "
    "model='{path}', dtype=torch.bfloat16, max_seq_len=131072, "
    "tensor_parallel_size=8, kv_cache_dtype=auto, enable_prefix_caching=False, "
    "compilation_config={{}}",
    E + "40 [gpu_worker.py:515] Available KV cache memory: 21.50 GiB",
    E + "40 [kv_cache_utils.py:2146] GPU KV cache size: 4,388,669 tokens",
    E + "40 [kv_cache_utils.py:2147] Maximum concurrency for 131,072 tokens per request: 33.48x",
]


def _minimax(model, release="0.22.0", path="MiniMaxAI/MiniMax-M1-80k"):
    s = session_of([line.format(release=release, path=path) for line in MINIMAX_LOG], "log",
                   model=model)
    w = s.report().whatif
    assert w is not None
    return w, {r.dtype: r for r in w.scenarios}


@pytest.mark.parametrize(("path", "release", "why"), [
    # no spec (a path no preset matches): no log-only scaling
    ("org/minimax-finetune", "0.22.0", "need the model's config"),
    # the preset, on a release the rule was not read in
    ("MiniMaxAI/MiniMax-M1-80k", "0.28.0", "read in vLLM 0.22.0 only"),
])
def test_minimax_on_vllm_gets_no_figure_but_the_logged_ones_where_no_rule_applies(
        path, release, why):
    """Before: with the config, 80 full-attention layers (about 8x the KV); without it, the
    logged tokens scaled by dtype as if the pool were dense. Where kvtui has no rule: the logged
    row quoted, every other cell withheld, and the reason said."""
    w, rows = _minimax(None, release, path)
    assert rows["bf16"].tokens == 4_388_669 and rows["bf16"].concurrency["131072"] == 33.48
    for dtype, row in rows.items():
        assert row.cannot_model and why in row.cannot_model, dtype
        if dtype != "bf16":
            assert row.tokens is None and set(row.concurrency.values()) == {None}, dtype
    assert w.inverse is None
    assert any(line.startswith("not modelled: MiniMax") for line in w.explanation)
    assert w.current.cannot_model


def test_minimax_on_vllm_0_22_with_its_config_reproduces_the_log():
    """The lightning rule (10 KV layers, a (64 // 8) x 128 x 128 x 2 B state in 70): the
    preset and the rules reproduce the logged pool from the logged memory, and FP8 halves the
    attention page only (the state stays bf16)."""
    w, rows = _minimax("minimax-m1")
    assert w.current.calibration is not None and w.current.calibration["within_rounding"]
    assert rows["bf16"].cannot_model is None
    fp8 = rows["fp8_e4m3"]
    # fp8: token 256 B; block 16 x cdiv(262,144, 16 x 256) = 1,024 tokens, page 262,144 B (the
    # same bytes): 8,806 blocks; a request takes 128 + 7 = 135: int(8,806 / 135 x 131,072)
    assert fp8.tokens == 8806 * 131072 // 135


def test_a_plan_for_an_unmodelled_preset_says_so_instead_of_failing():
    """`kvtui whatif --engine vllm --model deepseek-v4 --pool-gib 40` raised (a spec with no
    layers); it now answers "not modelled" on every row."""
    calc = plan(preset_spec("deepseek-v4"), "preset", current_dtype="bf16", tokens=None,
                context_len=32768, tp=8, attn_dp=1, page_size=None, pool_gib=40.0,
                release=None)
    rows = calc.report().scenarios
    assert rows and all(r.cannot_model and r.tokens is None for r in rows)


def test_the_text_says_a_models_not_modelled_reason_once_above_the_how():
    """Every row of an unmodelled preset has the same reason: `kvtui whatif` printed it once
    for the current setting and again under each of the other dtypes."""
    from kvtui.core.capacity.render import render_whatif_text

    calc = plan(preset_spec("deepseek-v4"), "preset", current_dtype="bf16", tokens=None,
                context_len=32768, tp=8, attn_dp=1, page_size=None, pool_gib=40.0,
                release=None)
    text = render_whatif_text(calc.report())
    above = text.split("\nhow:")[0]
    reason = calc.report().current.cannot_model
    assert reason and above.count(reason) == 1, above


def test_an_unknown_architecture_is_not_modelled_on_either_engine():
    spec = from_hf_config({"architectures": ["FooBarForCausalLM"], "num_hidden_layers": 4,
                           "num_attention_heads": 8, "num_key_value_heads": 2,
                           "hidden_size": 512})
    with pytest.raises(CannotModel, match="FooBarForCausalLM is not in SGLang"):
        check_supported(spec, (0, 5, 23))
    calc = plan(spec, "given", current_dtype="bf16", tokens=None, context_len=4096, tp=1,
                attn_dp=1, page_size=None, pool_gib=10.0, release=None)
    assert calc.unmodelled and "not in vLLM 0.34.0" in calc.unmodelled
    assert all(r.tokens is None for r in calc.report().scenarios)


def test_a_registered_dense_architecture_is_still_sized():
    spec = from_hf_config({"architectures": ["Phi3ForCausalLM"], "num_hidden_layers": 32,
                           "num_attention_heads": 32, "num_key_value_heads": 32,
                           "hidden_size": 3072})
    check_supported(spec, (0, 5, 23))  # no CannotModel
    calc = plan(spec, "given", current_dtype="bf16", tokens=None, context_len=4096, tp=1,
                attn_dp=1, page_size=None, pool_gib=10.0, release=None)
    assert calc.unmodelled is None
    # 32 KV heads x (96 + 96) x 2 B x 32 layers = 393,216 B/token; 10 GiB // (16 x that)
    # blocks of 16 (FullAttentionSpec, v1/kv_cache_interface.py)
    assert calc.tokens == (10 << 30) // (16 * 393_216) * 16


def test_a_longcat_checkpoint_with_an_indexer_is_not_modelled_on_sglang():
    spec = from_hf_config({"architectures": ["LongcatFlashForCausalLM"], "num_layers": 2,
                           "num_attention_heads": 4, "hidden_size": 64, "kv_lora_rank": 16,
                           "qk_rope_head_dim": 8, "index_topk": 4, "index_head_dim": 8})
    with pytest.raises(CannotModel, match="DSA"):
        check_supported(spec, (0, 5, 23))


def _sglang_log_of(model_class: str) -> list[str]:
    return [
        "[2026-09-11 23:34:13 TP0] Load weight begin. avail mem=111.47 GB",
        "[2026-09-11 23:43:15 TP0] Load weight end. elapsed=41.76 s, "
        f"type={model_class}, quant=None, avail mem=57.47 GB, "
        "mem usage=54.00 GB.",
        "[2026-09-11 23:46:13 TP0] Memory pool end. avail mem=9.90 GB",
        "[2026-09-11 23:46:49 TP0] max_total_num_tokens=999808, chunked_prefill_size=8192, "
        "max_prefill_tokens=16384, max_running_requests=64, context_len=262144, "
        "available_gpu_mem=7.68 GB",
    ]


def test_an_sglang_log_naming_an_unmodelled_class_gets_only_its_logged_figures():
    """No spec: the log-only arithmetic scaled a DeepSeek-V4 pool by each dtype's value size
    (a bf16 row of half the fp8 tokens), though SGLang does not size it as a plain pool. The
    logged row keeps its tokens; every other row says why it has none."""
    s = session_of(_sglang_log_of("DeepseekV4ForCausalLM"), "log")
    w = s.report().whatif
    assert w is not None
    rows = {r.dtype: r for r in w.scenarios}
    cur = next(r for r in rows.values() if r.current)
    assert cur.tokens == 999_808
    others = [r for r in rows.values() if not r.current]
    assert others and all(r.tokens is None and r.cannot_model for r in others)
    assert all("DeepSeek-V4" in (r.cannot_model or "") for r in rows.values())


def test_an_sglang_log_naming_gemma4_without_a_spec_scales_its_pool():
    """Gemma-4 is sized now (a hybrid-SWA pool: F x full layers + r x S x SWA layers per full
    token, every part in the KV dtype's bytes, model_executor/pool_configurator.py:656-801 in
    0.5.23), so without its config the logged full-pool tokens scale by the value size as
    gpt-oss's do: FP8 holds twice the BF16 tokens."""
    s = session_of(_sglang_log_of("Gemma4ForConditionalGeneration"), "log")
    w = s.report().whatif
    assert w is not None
    rows = {r.dtype: r for r in w.scenarios}
    assert rows["bf16"].current and rows["bf16"].tokens == 999_808
    assert rows["fp8_e4m3"].tokens == 2 * 999_808 and not rows["fp8_e4m3"].cannot_model


def test_a_vllm_log_without_a_spec_keeps_log_only_figures_for_a_class_with_no_verdict():
    """An out-of-tree class (or one an older release served) is not in the registry kvtui
    read: without a spec its logged pool is scaled as before; a registered hybrid kvtui does
    not size (Falcon-H1) gets no scaled figure."""
    assert vllm_cov.for_run(None, "MyOrgCustomForCausalLM") is None
    assert vllm_cov.for_run(None, "LlamaForCausalLM") is None
    assert "FalconH1ForCausalLM on vLLM" in vllm_cov.for_run(None, "FalconH1ForCausalLM")
    # with a spec the verdict is strict: an unregistered class is not modelled
    spec = from_hf_config({"architectures": ["MyOrgCustomForCausalLM"], "num_hidden_layers": 2,
                           "num_attention_heads": 4, "hidden_size": 64})
    assert "not in vLLM 0.34.0" in vllm_cov.for_run(spec)
