"""Model specs, presets, calibration diagnosis, version inference and flags, inverse, CLI."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from _fakerun import FakePool, FakeRun, qwen35_run

from kvtui.core.capacity import (
    Parallel,
    from_hf_config,
    from_path,
    match_preset,
    preset_names,
    preset_spec,
)
from kvtui.engines.sglang.calculator import Calculator
from kvtui.engines.sglang.calibrate import diagnose, measured
from kvtui.engines.sglang.cell import kv_cell
from kvtui.engines.sglang.fromrun import whatif_for_run
from kvtui.engines.sglang.inverse import inverse
from kvtui.engines.sglang.version import SGLANG_LINE, infer_version, kv_dtype_flag
from tests.helpers import session_of

REQUIRED = ["Qwen/Qwen3.5-397B-A17B", "Qwen/Qwen3-Next-80B-A3B-Instruct", "deepseek-ai/DeepSeek-V3",
            "moonshotai/Kimi-K2-Instruct", "meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-70B",
            "Qwen/Qwen3-32B", "Qwen/Qwen3-235B-A22B", "zai-org/GLM-4.5", "zai-org/GLM-4.6",
            "openai/gpt-oss-120b", "google/gemma-3-27b-it"]


def test_required_presets_exist_with_sources():
    from kvtui.core.capacity.presets import load_presets

    names = preset_names()
    for hf in REQUIRED:
        assert hf in names
    for doc in load_presets().values():
        assert doc["sources"].get("*"), doc["id"]


@pytest.mark.parametrize(("name", "pid"), [
    ("Qwen/Qwen3.5-397B-A17B", "qwen3.5-397b-a17b"),
    ("qwen3.5-397b-a17b", "qwen3.5-397b-a17b"),
    ("/models/nvidia/Qwen3.5-397B-A17B-NVFP4", "qwen3.5-397b-a17b"),
    ("/data/Qwen3.5-397B-A17B-FP8", "qwen3.5-397b-a17b"),
    ("deepseek-ai/DeepSeek-R1-0528", "deepseek-v3"),
    ("moonshotai/Kimi-K2-Instruct-0905", "kimi-k2"),
    ("meta-llama/Meta-Llama-3.1-8B-Instruct", "llama-3.1-8b"),
    ("GLM-4.6-FP8", "glm-4.6"),
    ("deepseek-ai/DeepSeek-V3.2", "deepseek-v3.2"),  # a version suffix is another model
    ("/models/XiaomiMiMo/MiMo-V2-Flash", "mimo-v2-flash"),
])
def test_preset_matching(name, pid):
    hit = match_preset(name)
    assert hit is not None and hit[0] == pid


@pytest.mark.parametrize("name", ["GLM-4.5-Air", "deepseek-ai/DeepSeek-V3.5", "Qwen3-32B-Coder",
                                  "Llama-3.1-80B", "unknown-model"])
def test_preset_non_matches(name):
    assert match_preset(name) is None


def test_preset_table_values():
    """kv-capacity.md 1.13 table, per GPU."""
    cases = [("llama-3.1-8b", 1, 131072), ("llama-3.1-70b", 1, 327680), ("qwen3-32b", 1, 262144),
             ("qwen3-235b-a22b", 1, 192512), ("qwen3-235b-a22b", 8, 48128),
             ("qwen3-next-80b-a3b", 1, 24576), ("qwen3.5-397b-a17b", 1, 30720),
             ("glm-4.5", 1, 376832), ("glm-4.6", 8, 47104), ("deepseek-v3", 8, 70272),
             ("kimi-k2", 8, 70272), ("gpt-oss-120b", 1, 73728), ("gpt-oss-120b", 8, 9216),
             ("gemma-3-27b", 1, 507904), ("gemma-3-27b", 8, 63488)]
    for pid, tp, expected in cases:
        assert kv_cell(preset_spec(pid), "bf16", Parallel(tp=tp)).bytes_per_token == expected, pid
    assert kv_cell(preset_spec("deepseek-v3"), "fp8_e4m3", Parallel(tp=8)).bytes_per_token == 35136


def test_gpt_oss_swa_pool_split():
    spec = preset_spec("gpt-oss-120b")
    cell = kv_cell(spec, "bf16", Parallel(tp=8), swa_pool=True)
    assert cell.swa is not None
    assert cell.swa.full_layers == 18 and cell.swa.swa_layers == 18
    full, swa = cell.swa.tokens(10 * 2**30, page_size=1)
    assert swa == int(full * 0.8)
    assert full == int(10 * 2**30 // (4608 + 0.8 * 4608))


def test_fp4_and_mxfp8_cells():
    spec = preset_spec("llama-3.1-8b")
    mx = kv_cell(spec, "mxfp8")
    assert mx.bytes_per_token == 65536 + 65536 // 32
    old = kv_cell(spec, "fp4_e2m1", version=(0, 5, 10))
    assert old.bytes_per_token == 65536 // 2 + 8 * 128 * 32 * 2 // 16
    assert 65536 / old.bytes_per_token == pytest.approx(1 / 0.5625)  # ~1.78x FP8 (SGLang docs)
    new = kv_cell(spec, "nvfp4")
    assert new.approximate  # 0.5.23 without a logged attention backend: trtllm_mha assumed


def test_modelspec_from_text_config_and_quant(tmp_path):
    cfg = {"architectures": ["Qwen3_5MoeForConditionalGeneration"], "model_type": "qwen3_5_moe",
           "text_config": {"num_hidden_layers": 8, "hidden_size": 1024, "num_attention_heads": 8,
                           "num_key_value_heads": 2, "head_dim": 256,
                           "full_attention_interval": 4,
                           "layer_types": ["full_attention"] * 8,  # ignored, like SGLang
                           "linear_num_key_heads": 4, "linear_num_value_heads": 8,
                           "linear_key_head_dim": 64, "linear_value_head_dim": 64,
                           "linear_conv_kernel_dim": 4, "mamba_ssm_dtype": "bfloat16"}}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    (tmp_path / "hf_quant_config.json").write_text(json.dumps(
        {"quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8"}}))
    spec = from_path(tmp_path)
    assert spec.full_layer_ids == (3, 7)
    assert spec.head_dim == 256 and spec.num_kv_heads == 2
    assert spec.kv_cache_quant_algo == "FP8"
    assert spec.linear is not None and spec.linear.ssm_dtype == "bf16"
    assert from_path(tmp_path / "config.json").num_layers == 8


def test_modelspec_fallbacks():
    spec = from_hf_config({"num_hidden_layers": 2, "hidden_size": 512, "num_attention_heads": 8})
    assert spec.num_kv_heads == 8 and spec.head_dim == 64  # no KV key: all heads; hidden/heads
    mq = from_hf_config({"num_hidden_layers": 2, "hidden_size": 512, "n_head": 8,
                         "multi_query": True})
    assert mq.num_kv_heads == 1
    glm = from_hf_config({"num_hidden_layers": 2, "hidden_size": 512, "num_attention_heads": 8,
                          "multi_query_group_num": 2, "kv_channels": 64})
    assert glm.num_kv_heads == 2
    flat = from_hf_config({"num_hidden_layers": 2, "hidden_size": 512, "num_attention_heads": 8,
                           "quantization_config": {"quant_method": "modelopt",
                                                   "kv_cache_scheme": {"type": "float",
                                                                       "num_bits": 8}}})
    assert flat.kv_cache_quant_algo == "FP8"
    with pytest.raises(ValueError):
        from_hf_config({"hidden_size": 1})


def test_hand_analysis_error_is_named():
    """Assuming 2 KV heads per GPU at TP8 gives 15,360 B/token; the pool says 7,680."""
    spec = preset_spec("qwen3.5-397b-a17b")
    meas = measured(608174, 1, 2.17, 2.17, None)
    wrong = kv_cell(spec, "fp8_e4m3", Parallel(tp=1))  # 2 heads per GPU
    assert wrong.bytes_per_token == 15360
    assert meas["bytes_per_token"] / wrong.bytes_per_token == pytest.approx(0.5, abs=0.01)
    why = diagnose(spec, "fp8_e4m3", Parallel(tp=1), meas)
    assert why is not None and "attention TP" in why


def test_diagnose_names_dtype_and_layers():
    spec = preset_spec("qwen3.5-397b-a17b")
    bf16_pool = measured(304087, 1, 2.17, 2.17, None)
    assert "dtype is bf16" in diagnose(spec, "fp8_e4m3", Parallel(tp=8), bf16_pool)
    all_layers = measured(100000, 1, 100000 * 60 * 256 / 2**30, 100000 * 60 * 256 / 2**30, None)
    assert "every layer" in diagnose(spec, "fp8_e4m3", Parallel(tp=8), all_layers)


def test_calibration_flags_a_wrong_preset():
    run = qwen35_run()
    w = whatif_for_run(run, "meta-llama/Llama-3.1-8B").to_json()
    cal = w["current"]["calibration"]
    assert not cal["ok"] and cal["likely_cause"]


def test_no_pool_and_no_capacity_gives_none():
    assert whatif_for_run(FakeRun()) is None


def test_log_only_whatif_without_model():
    run = qwen35_run()
    run.server_args["model_path"] = "/models/secret-model"
    w = whatif_for_run(run).to_json()
    assert w["model"] is None and "matches no preset" in w["model_reason"]
    rows = {r["dtype"]: r for r in w["scenarios"]}
    assert rows["bf16"]["tokens"] == 304087
    assert rows["bf16"]["bytes_per_token"] == pytest.approx(2 * 7662.3, rel=1e-3)


def test_mla_pool_and_dp_attention_from_rank_tags():
    run = FakeRun(ranks={"DP0 TP0", "DP1 TP1"}, kv_dtype="bf16")
    run.pools[("DP0 TP0", None, "mla")] = FakePool(rank="DP0 TP0", kind="mla", tokens=10000,
                                                    kv_gib=0.65)
    w = whatif_for_run(run, "deepseek-v3").to_json()
    assert w["current"]["parallel"]["attn_dp"] == 2
    assert w["current"]["calibration"]["within_rounding"]


def test_version_inference_and_flags():
    run = FakeRun(hints={"server_args:repr", "load_weight_end:elapsed", "kv_dtype:resolved"})
    vr = infer_version(run)
    assert (vr.lo, vr.hi) == ((0, 5, 9), (0, 5, 12))
    flag, advice = kv_dtype_flag("bf16", vr)
    assert flag == "--kv-cache-dtype bf16"
    old = SGLANG_LINE.between((0, 5, 3), (0, 5, 3))
    flag, advice = kv_dtype_flag("bf16", old, checkpoint_kv_fp8=True)
    assert flag is None and "0.5.4" in advice
    flag, _ = kv_dtype_flag("bf16", SGLANG_LINE.between((0, 4, 0), (0, 5, 2)))
    assert flag == "--kv-cache-dtype auto"
    flag, advice = kv_dtype_flag("fp8_e4m3", SGLANG_LINE.between((0, 3, 0), (0, 4, 1)))
    assert flag is None and "0.4.2" in advice
    assert kv_dtype_flag("nvfp4", SGLANG_LINE.between((0, 5, 5), (0, 5, 15)))[0] == \
        "--kv-cache-dtype fp4_e2m1"
    assert kv_dtype_flag("nvfp4", SGLANG_LINE.between((0, 5, 16), (0, 5, 23)))[0] == \
        "--kv-cache-dtype nvfp4"
    assert infer_version(run, known="0.5.21").label() == "0.5.21"


def test_inverse_and_budget_changes():
    spec = preset_spec("llama-3.1-8b")
    from kvtui.engines.sglang.calculator import MemoryFacts

    mem = MemoryFacts(pre_gib=78.66, avail_gib=63.52, mem_fraction_static=0.85,
                      weights_gib=15.0, tp=1)
    calc = Calculator(current_dtype="bf16", tokens=423698, spec=spec, memory=mem,
                      context_len=131072)
    inv = inverse(calc, "bf16", 131072, 3.5).to_json()
    assert inv["fits_now"] is False
    assert inv["missing_gib_per_gpu"] == pytest.approx((3.5 * 131072 - 423698) * 131072 / 2**30,
                                                       abs=0.01)
    m = inv["mem_fraction_static_needed"]
    # (458,752 - 423,698) x 131,072 B = 4,594,597,888 B more rest memory
    # = 78.66 GiB x 0.054399: 0.85 + 0.054399 rounded up to 4 decimals
    assert m == 0.9044
    n, _ = calc.tokens_for("bf16", mem_fraction_static=m)
    assert n >= 3.5 * 131072 > calc.tokens_for("bf16", mem_fraction_static=m - 0.0001)[0]
    assert inv["tp_needed"] == 2
    # 64 GiB of KV: no mem_fraction_static below 1
    four = inverse(calc, "bf16", 131072, 4).to_json()
    assert four["mem_fraction_static_needed"] is None and four["tp_needed"] == 2
    row = calc.scenario("bf16", mem_fraction_static=0.9).to_json()
    assert row["estimate"] and row["tokens"] > 423698
    nolog = Calculator(current_dtype="bf16", tokens=423698, spec=spec, context_len=131072)
    assert nolog.scenario("bf16", mem_fraction_static=0.9).tokens is None


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kvtui", "whatif", *args], capture_output=True,
                          text=True, check=False)


def test_cli_without_log():
    p = _cli("--model", "Qwen/Qwen3.5-397B-A17B", "--tp", "8", "--pool-gib", "4.35",
             "--current-dtype", "fp8_e4m3", "--context-len", "262144", "--json")
    assert p.returncode == 0, p.stderr
    w = json.loads(p.stdout)
    rows = {r["dtype"]: r for r in w["scenarios"]}
    assert w["current"]["tokens"] == 608174
    assert rows["bf16"]["tokens"] == 304087
    p = _cli("--tokens", "423698", "--current-dtype", "bf16", "--context-len", "131072")
    assert p.returncode == 0 and "847,396" in p.stdout
    p = _cli("--from-log", "/nonexistent.log")
    assert p.returncode == 2 and p.stderr.count("\n") == 1
    p = _cli("--model", "no-such-model", "--pool-gib", "1")
    assert p.returncode == 2


def test_cli_json_equals_report_object(tmp_path):

    log = tmp_path / "q.log"
    log.write_text(
        "[2026-03-01 10:00:00] server_args={'model_path': '/models/nvidia/Qwen3.5-397B-A17B-NVFP4',"
        " 'tp_size': 8, 'kv_cache_dtype': 'auto', 'page_size': 1, 'context_length': None}\n"
        "[2026-03-01 10:01:00 TP0] KV Cache is allocated. dtype: torch.float8_e4m3fn, "
        "#tokens: 608174, K size: 2.17 GB, V size: 2.17 GB\n"
        "[2026-03-01 10:01:05 TP0] max_total_num_tokens=608174, chunked_prefill_size=8192, "
        "max_prefill_tokens=16384, max_running_requests=2048, context_len=262144, "
        "available_gpu_mem=5.00 GB\n")
    p = _cli("--from-log", str(log), "--json")
    assert p.returncode == 0, p.stderr
    a = session_of(log.read_text().splitlines(), str(log))
    expected = json.loads(json.dumps(whatif_for_run(a.state.current).to_json(), default=str))
    assert json.loads(p.stdout) == expected
    rows = {r["dtype"]: r for r in expected["scenarios"]}
    assert rows["bf16"]["tokens"] == 304087
    assert expected["current"]["calibration_ratio"] == pytest.approx(1.0, abs=0.01)
    assert "auto-detected" in expected["model_reason"]
    text = _cli("--from-log", str(log)).stdout
    assert "replicates" in text and "304,087" in text


def test_headless_imports_stay_light():
    code = ("import sys, kvtui.commands.whatif, kvtui.core.capacity, kvtui.engines.sglang.version;"
            "bad=[m for m in ('textual','rich','paramiko') if m in sys.modules];"
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == ""
