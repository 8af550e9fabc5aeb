"""GLM-5 (GlmMoeDsaForCausalLM) is sized from its own config, not by scaling the logged pool.

The NSA pool of a DSA model holds the MLA latent plus the indexer keys, and only the latent
changes with --kv-cache-dtype: the indexer buffer is uint8 whatever the KV dtype
(`dsa_indexer_bytes`: (128 + 128 // 128 x 4) B per layer, 0.5.4 model_runner.py:1406-1418;
pool_configurator.py:560-575 in 0.5.23). Without a spec the what-if scaled the whole logged
bytes/token by 2 for bf16, indexer included: 499,968 tokens for the run below where SGLang gives
551,360. GLM-5: 78 layers, kv_lora 512 + rope 64, index_head_dim 128 (transformers'
GlmMoeDsaConfig, the preset's sources).

Fixture lines follow SGLang 0.5.10+'s weight-load wording with numbers of our own: an FP8
cache of 1,000,000 tokens on TP8.
"""

from __future__ import annotations

from kvtui.core.capacity import Parallel, preset_spec
from kvtui.core.capacity.presets import match_preset
from kvtui.engines.sglang.cell import kv_cell
from kvtui.engines.sglang.sizing.args import SizingArgs
from tests.capacity._logged import calculator_of

TOKENS = 1_000_000
# printed: (tokens + page) x 656 x 78 + (tokens + page + 1) // page x page x 132 x 78
# (memory_pool.py:1784-1800, get_kv_size_bytes :1879-1883 in 0.5.9)
KV_GIB = ((TOKENS + 64) * 656 * 78 + (TOKENS + 65) // 64 * 64 * 132 * 78) / 2**30

LINES = [
    "[2026-11-20 10:00:00] server_args=ServerArgs(model_path='zai-org/GLM-5-FP8', tp_size=8, "
    "kv_cache_dtype='fp8_e4m3', page_size=64, mem_fraction_static=0.85)",
    "[2026-11-20 10:00:01 TP0] Using KV cache dtype: torch.float8_e4m3fn",
    "[2026-11-20 10:01:00 TP0] Load weight end. elapsed=30.00 s, type=GlmMoeDsaForCausalLM, "
    "avail mem=100.00 GB, mem usage=90.00 GB.",
    f"[2026-11-20 10:01:05 TP0] KV Cache is allocated. #tokens: {TOKENS}, KV size: {KV_GIB:.2f} GB",
    "[2026-11-20 10:01:05 TP0] Memory pool end. avail mem=40.00 GB",
]


def test_glm5_checkpoints_name_the_preset():
    for name in ("zai-org/GLM-5", "zai-org/GLM-5-FP8", "GLM-5"):
        found = match_preset(name)
        assert found is not None and found[0] == "glm-5", name
    # a later model with its own dims is not GLM-5
    assert match_preset("zai-org/GLM-4.6") != match_preset("zai-org/GLM-5")


def test_glm5_cell_is_the_nsa_layout_over_78_layers():
    spec = preset_spec("glm-5")
    hopper = SizingArgs(dsa_prefill_backend="flashmla_kv", dsa_decode_backend="flashmla_kv")
    cell = kv_cell(spec, "fp8_e4m3", Parallel(tp=8), version=(0, 5, 17), args=hopper)
    # 0.5.17+: the budget divides by the 656-B store; indexer 132 B per layer
    assert cell.bytes_per_token == 656 * 78 + 132 * 78
    # trtllm keeps the raw 576-B latent (kv_cache_configurator.py:2005-2008 in 0.5.17)
    trtllm = SizingArgs(dsa_prefill_backend="trtllm", dsa_decode_backend="trtllm")
    cell = kv_cell(spec, "fp8_e4m3", Parallel(tp=8), version=(0, 5, 17), args=trtllm)
    assert cell.bytes_per_token == 576 * 78 + 132 * 78 and not cell.approximate
    bf16 = kv_cell(spec, "bf16", Parallel(tp=8), version=(0, 5, 17))
    assert bf16.bytes_per_token == 576 * 2 * 78 + 132 * 78


def test_glm5_bf16_row_keeps_the_indexer_at_one_byte():
    calc = calculator_of(LINES)
    assert calc.spec is not None and calc.spec.arch == "GlmMoeDsaForCausalLM"
    # the logged pool is what this release prints for the preset
    assert abs(calc.calibration()["ratio"] - 1.0) < 0.0005
    # 0.5.10-0.5.12 budget the latent at 576 B (< 0.5.17): budget 1,000,000 x (576 + 132) x 78
    budget = TOKENS * (576 + 132) * 78
    bf16 = (576 * 2 + 132) * 78
    assert calc.tokens_for("bf16")[0] == budget // bf16 // 64 * 64
    # the old log-only rule (half the tokens) is not what SGLang gives
    assert calc.tokens_for("bf16")[0] > TOKENS // 2 * 1.1


def test_a_local_path_is_sized_by_its_class_when_the_pool_line_agrees():
    lines = [ln.replace("zai-org/GLM-5-FP8", "/data/glm5-local") for ln in LINES]
    calc = calculator_of(lines)
    assert calc.spec is not None and calc.spec.name == "zai-org/GLM-5"
    assert "GlmMoeDsaForCausalLM" in calc.spec_reason
    assert calc.tokens_for("bf16")[0] == TOKENS * (576 + 132) * 78 // ((576 * 2 + 132) * 78) \
        // 64 * 64


def test_a_class_whose_pool_line_disagrees_stays_log_only():
    # e.g. a GLM-5.x config with part of its indexers "shared": another printed size
    lines = [ln.replace("zai-org/GLM-5-FP8", "/data/glm5-local") for ln in LINES]
    lines = [ln.replace(f"KV size: {KV_GIB:.2f} GB", "KV size: 50.00 GB") for ln in lines]
    calc = calculator_of(lines)
    assert calc.spec is None
    assert "matches no preset" in calc.spec_reason


def test_a_given_model_is_not_replaced_by_the_class_preset():
    lines = [ln.replace("zai-org/GLM-5-FP8", "/data/glm5-local") for ln in LINES]
    calc = calculator_of(lines, "deepseek-v3.2")
    assert calc.spec is not None and calc.spec.name != "zai-org/GLM-5"
