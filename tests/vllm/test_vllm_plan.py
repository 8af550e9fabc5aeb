"""`kvtui whatif` without a log, sized by vLLM (`--engine vllm`), and the release pins of both
engines (`--vllm-version`, `--sglang-version`) on `whatif` and `check`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtui.cli import main
from kvtui.sources.readers import iter_lines
from tests.helpers import session_of

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs"
FP8 = SAMPLES / "vllm-llama31-8b-tp2-fp8-unscaled.log"
SGLANG = SAMPLES / "llama31-70b-tp8.log"
GIB = 1 << 30

# Qwen/Qwen3-0.6B's config.json (the Hugging Face repo): the model of vLLM PR 24577's log.
QWEN3_06B = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 1024,
             "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8,
             "head_dim": 128, "max_position_embeddings": 40960, "torch_dtype": "bfloat16"}


def whatif(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["whatif", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def rows(doc: dict) -> dict[str, dict]:
    return {r["dtype"]: r for r in doc["scenarios"]}


def test_a_plan_gives_the_pool_vllm_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    # vllm-project/vllm PR 24577 (2025-09, EngineCore_DP0: 0.10.2): Qwen3-0.6B on one A100,
    # bf16, max_model_len 4096: "Available KV cache memory: 69.66 GiB", then "GPU KV cache size:
    # 652,144 tokens" and "Maximum concurrency for 4,096 tokens per request: 159.21x". The
    # printed GiB is rounded to 0.01, so the budgets at either end of its rounding interval
    # must bracket the printed pool.
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(QWEN3_06B))
    got = []
    for gib in ("69.655", "69.665"):
        code, out, err = whatif(capsys, "--engine", "vllm", "--vllm-version", "0.10.2",
                                "--model", str(cfg), "--pool-gib", gib, "--context-len", "4096",
                                "--json")
        assert code == 0, err
        doc = json.loads(out)
        assert doc["engine"] == "vllm"
        bf16 = rows(doc)["bf16"]
        # 16-token blocks of 8 KV heads x (128 + 128) x 2 B x 28 layers (vLLM's
        # FullAttentionSpec page x layers, v1/core/kv_cache_utils.py get_num_blocks 0.10.2):
        block = 16 * 8 * 256 * 2 * 28
        assert bf16["tokens"] == int(float(gib) * GIB) // block * 16
        got.append(bf16["tokens"])
        assert doc["version"]["min"] == doc["version"]["max"] == "0.10.2"
    assert got[0] <= 652_144 <= got[1]


def test_a_plan_sizes_as_the_log_route_does(capsys: pytest.CaptureFixture[str]):
    """The same model, TP and budget give the same pools with or without a log: one sizing."""
    s = session_of(iter_lines(str(FP8)), str(FP8))
    logged = s.report().whatif
    assert logged is not None
    budget = next(line for line in logged.explanation if line.startswith("KV budget held fixed"))
    gib = int(budget.split(":")[1].split("B =")[0].replace(",", "").strip()) / GIB
    code, out, err = whatif(capsys, "--engine", "vllm", "--model", "meta-llama/Llama-3.1-8B",
                            "--tp", "2", "--pool-gib", repr(gib), "--current-dtype", "fp8",
                            "--context-len", str(logged.current.context_len), "--json")
    assert code == 0, err
    planned = rows(json.loads(out))
    for r in logged.scenarios:
        assert planned[r.dtype]["tokens"] == r.tokens, r.dtype


def test_without_engine_a_plan_is_sglangs(capsys: pytest.CaptureFixture[str]):
    code, out, _ = whatif(capsys, "--model", "meta-llama/Llama-3.1-8B", "--pool-gib", "40",
                          "--json")
    doc = json.loads(out)  # SGLang's what-if JSON predates the engine key (tests/golden)
    assert code == 0 and "engine" not in doc and doc["current"]["sglang_rules"]
    code, out, _ = whatif(capsys, "--vllm-version", "0.11.0", "--model",
                          "meta-llama/Llama-3.1-8B", "--pool-gib", "40", "--json")
    assert code == 0 and json.loads(out)["engine"] == "vllm"  # the pinned engine's plan


@pytest.mark.parametrize(("args", "said"), [
    (["--engine", "vllm", "--sglang-version", "0.5.5"], "--sglang-version: the what-if is vLLM's"),
    (["--engine", "vllm", "--dtype", "mxfp8"], "not a KV dtype vLLM sizes"),
    (["--engine", "sglang", "--dtype", "fp8_ds_mla"], "not a KV dtype SGLang sizes"),
    (["--engine", "vllm", "--tp", "4", "--attn-dp", "2"], "--attn-dp is SGLang's DP attention"),
    (["--engine", "vllm", "--vllm-version", "0.4.0"], "kvtui knows vLLM 0.5.0 .."),
    (["--engine", "vllm", "--vllm-version", "latest"], "not a release number"),
])
def test_what_an_engine_has_no_counterpart_of_is_one_line(
        args: list[str], said: str, capsys: pytest.CaptureFixture[str]):
    code, out, err = whatif(capsys, *args, "--model", "meta-llama/Llama-3.1-8B", "--pool-gib", "8")
    assert code == 2 and out == ""
    assert said in err and len(err.strip().splitlines()) == 1


def test_a_log_names_its_engine(capsys: pytest.CaptureFixture[str]):
    code, _, err = whatif(capsys, "--from-log", str(FP8), "--engine", "sglang")
    assert code == 2 and "is vLLM's log" in err
    # a vLLM log's dtypes are vLLM's: SGLang's mxfp8 is refused after the log is read
    code, _, err = whatif(capsys, "--from-log", str(FP8), "--dtype", "mxfp8")
    assert code == 2 and "not a KV dtype vLLM sizes" in err
    code, _, err = whatif(capsys, "--from-log", str(FP8), "--sglang-version", "0.5.5")
    assert code == 2 and "--sglang-version: the what-if is vLLM's" in err


def test_check_pins_each_engines_release(capsys: pytest.CaptureFixture[str]):
    assert main(["check", "--json", "--fail-on", "never", "--vllm-version", "0.11.0",
                 str(FP8)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["whatif"]["version"]["min"] == doc["whatif"]["version"]["max"] == "0.11.0"
    # the other engine's pin does not touch a vLLM run: the release its log prints stands
    assert main(["check", "--json", "--fail-on", "never", "--sglang-version", "0.5.5",
                 str(FP8)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["whatif"]["version"]["min"] == doc["whatif"]["version"]["max"] == "0.25.0"
    assert main(["check", "--vllm-version", "9.9.9", str(FP8)]) == 2
    assert "kvtui knows vLLM" in capsys.readouterr().err
    assert main(["check", "--json", "--fail-on", "never", "--sglang-version", "0.5.5",
                 str(SGLANG)]) == 0
    assert "0.5.5" in json.dumps(json.loads(capsys.readouterr().out)["whatif"]["version"])


def test_the_commands_name_every_engine():
    from kvtui.commands.whatif import ENGINES
    from kvtui.core.engine import ENGINE_MODULES

    assert tuple(ENGINE_MODULES) == ENGINES


def test_a_plan_shows_vllms_default_max_num_seqs(capsys: pytest.CaptureFixture[str]):
    """No --max-num-seqs in a plan: the max_run column shows vLLM's default, not `-`. V1's
    default is 1024 on a GPU with at least 70 GiB that is not an A100, else 256
    (`EngineArgs._set_default_args`, engine/arg_utils.py:1605-1623 in 0.11.0; capped at
    max_num_batched_tokens, :1676-1679, whose defaults 2048 / 8192 leave both): a plan names no
    GPU, so both, with the rule in the notes (kvtui/engines/vllm/limits.py). V0 (releases
    before V1, 0.6.3 engine/arg_utils.py:115) is 256."""
    args = ("--engine", "vllm", "--model", "meta-llama/Llama-3.1-8B", "--pool-gib", "40")
    code, out, err = whatif(capsys, *args, "--vllm-version", "0.11.0")
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.startswith("bf16*"))
    assert "256|1,024" in row.split()
    assert "max_num_seqs not given: vLLM's default" in out
    code, out, err = whatif(capsys, *args, "--vllm-version", "0.11.0", "--json")
    bf16 = rows(json.loads(out))["bf16"]
    assert bf16["max_running_requests"] is None
    assert bf16["max_running_requests_default"] == [256, 1024]
    # a release before V1 had one default
    code, out, err = whatif(capsys, *args, "--vllm-version", "0.6.3", "--json")
    assert code == 0, err
    bf16 = rows(json.loads(out))["bf16"]
    assert bf16["max_running_requests"] is None and bf16["max_running_requests_default"] == [256]
