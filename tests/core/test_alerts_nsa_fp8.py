"""FP8 KV on SGLang's NSA pool (DeepSeek V3.2 DSA): the "scales of 1.0" warning does not apply.

SGLang prints "Using FP8 KV cache but no scaling factors provided. Defaulting to scaling factors
of 1.0" whenever kv_cache_dtype is fp8_e4m3 and no --quantization-param-path is given, whatever
the pool (sglang 0.5.8 model_executor/model_runner.py:906-927). For a DSA model
(`is_deepseek_nsa`: the architecture and `index_topk`, configs/model_config.py:54-65) the pool
is NSATokenToKVPool (model_executor/model_runner_kv_cache_mixin.py:435-448), which quantizes
each token's latent itself with one float32 scale per 128-element tile, stored inline with the
values (mem_cache/memory_pool.py:1676-1706 and :1464-1481; quantize_k_cache_separate in
layers/attention/nsa/quant_k_cache.py: scale = amax / 448 per tile; the same 656-byte layout in
0.5.4 memory_pool.py:1246-1251). The static k_scale/v_scale are never read on that path.
The fixture lines are written in the wording of those files, not copied from a log.
"""

from __future__ import annotations

import pytest

from tests.helpers import session_of

WARN = ("[2026-03-01 12:00:12 TP0] Using FP8 KV cache but no scaling factors provided. "
        "Defaulting to scaling factors of 1.0. This may lead to less accurate results!")


def _lines(model_path: str, cls: str, backend: str = "flashinfer") -> list[str]:
    return [
        f"[2026-03-01 12:00:00] server_args=ServerArgs(model_path='{model_path}', tp_size=8, "
        f"kv_cache_dtype='fp8_e4m3', attention_backend='{backend}', page_size=64)",
        "[2026-03-01 12:00:05 TP0] Load weight begin. avail mem=78.43 GB",
        f"[2026-03-01 12:00:09 TP0] Load weight end. elapsed=4.00 s, type={cls}, "
        "avail mem=60.12 GB, mem usage=18.31 GB.",
        WARN,
    ]


def _alert(lines: list[str]) -> dict:
    s = session_of(lines, "inline")
    return next(a for a in s.report().to_json()["alerts"] if a["rule"] == "kv-fp8-unscaled")


@pytest.mark.parametrize(("model_path", "cls", "backend", "because"), [
    # the model class SGLang's weight line prints
    ("/models/private-ckpt", "DeepseekV32ForCausalLM", "flashinfer", "DeepseekV32ForCausalLM"),
    # GLM-5's class: DSA (is_deepseek_nsa lists it, 0.5.9 configs/model_config.py:54-67;
    # server_args.py:1205 "DeepSeek 3.2, GlmMoeDsaForCausalLM"). A real GLM-5-FP8 run on ROCm
    # (rocm/sgl-dev v0.5.8.post1 20260218, a repository file's log) printed the warning with a
    # pool of 61,463 B/token: 78 layers x (656 + 132), the NSA FP8 layout.
    ("/models/glm5-fp8-local", "GlmMoeDsaForCausalLM", "triton", "GlmMoeDsaForCausalLM"),
    # the GLM-5 preset (its config sets index_topk), found by the checkpoint's name
    ("zai-org/GLM-5-FP8", "GlmMoeDsaForCausalLM", "triton", "zai-org/GLM-5"),
    # the attention backend SGLang picks for a DSA model (server_args.py:1108-1113)
    ("/models/private-ckpt", "DeepseekV3ForCausalLM", "nsa", "attention_backend"),
    # the model spec (a preset with index_topk)
    ("deepseek-ai/DeepSeek-V3.2", "SomeWrapperForCausalLM", "flashinfer", "index_topk"),
])
def test_nsa_pool_fp8_is_not_critical(model_path, cls, backend, because):
    a = _alert(_lines(model_path, cls, backend))
    assert a["severity"] == "info"
    assert "per 128" in a["detail"] and because in a["detail"]
    assert "NSA pool" in a["detail"] and "scales every tile" in a["title"]


def test_a_plain_deepseek_v3_stays_critical():
    # DeepSeek V3/R1 (no index_topk) serves from MLATokenToKVPool, which casts the latent to
    # FP8 as it is, with no tile scales (memory_pool.py:1482-1489): the warning means it.
    a = _alert(_lines("/models/private-ckpt", "DeepseekV3ForCausalLM"))
    assert a["severity"] == "critical"
    assert "NSA" not in a["detail"]


def test_a_raw_dsa_layout_stays_critical():
    # The trtllm / tilelang DSA layouts store the FP8 latent without its tile scales
    # (kvtui/engines/sglang/sizing/cells.py mla_store_dim): no inline scales to rely on.
    lines = _lines("/models/private-ckpt", "DeepseekV32ForCausalLM", "nsa")
    lines[0] = lines[0].replace("page_size=64", "page_size=64, nsa_prefill_backend='trtllm', "
                                "nsa_decode_backend='trtllm'")
    assert _alert(lines)["severity"] == "critical"


def test_no_warning_printed_nsa_fp8_is_info():
    # 0.5.13+ prints no scales warning (kvtui/core/alerts.py, kv-fp8): the same NSA pool,
    # told by the weight line's class, makes kv-fp8 an info too; a plain V3 stays a warning.
    def kv_fp8(cls: str) -> dict:
        s = session_of(_lines("/models/private-ckpt", cls)[:-1], "inline")
        return next(a for a in s.report().to_json()["alerts"] if a["rule"] == "kv-fp8")

    nsa = kv_fp8("DeepseekV32ForCausalLM")
    assert nsa["severity"] == "info" and "NSA pool" in nsa["detail"]
    assert kv_fp8("DeepseekV3ForCausalLM")["severity"] == "warning"


# `auto` left as is on a DeepSeek DSA model: SGLang itself sets fp8_e4m3 on SM100+ (bfloat16
# below) and says so (0.5.5 server_args.py:1078-1085 "for DeepSeek NSA."; 0.5.8 :1168 and
# 0.5.23 arg_groups/overrides.py:532-538 "for DeepSeek DSA on SM{major} device."), whatever the
# checkpoint declares; the NSA pool then scales every tile itself.
def _auto_lines(setting: str | None, cls: str = "DeepseekV32ForCausalLM",
                model_path: str = "/models/private-ckpt") -> list[str]:
    lines = [
        f"[2026-03-01 12:00:00] server_args=ServerArgs(model_path='{model_path}', tp_size=8, "
        "kv_cache_dtype='auto', page_size=64)",
    ]
    if setting is not None:
        lines.append(f"[2026-03-01 12:00:00] {setting}")
    return [
        *lines,
        "[2026-03-01 12:00:09 TP0] Load weight end. elapsed=4.00 s, "
        f"type={cls}, avail mem=60.12 GB, mem usage=18.31 GB.",
        "[2026-03-01 12:00:10 TP0] Using KV cache dtype: torch.float8_e4m3fn",
    ]


def _auto_alert(lines: list[str]) -> dict:
    s = session_of(lines, "auto")
    return next(a for a in s.report().to_json()["alerts"] if a["rule"] == "kv-auto-fp8")


@pytest.mark.parametrize("setting", [
    "Setting KV cache dtype to fp8_e4m3 for DeepSeek DSA on SM10 device.",
    "Setting KV cache dtype to fp8_e4m3 for DeepSeek NSA.",
])
def test_dsa_default_fp8_is_named_as_the_engines_choice(setting):
    a = _auto_alert(_auto_lines(setting)[:2] + _auto_lines(setting)[2:3])
    assert a["severity"] == "warning"
    assert "its default for this model" in a["detail"]
    assert "kv_cache_quant_algo" not in a["detail"] and "scales every tile" in a["title"]
    assert "logs no warning" not in a["detail"]


def test_auto_fp8_on_an_nsa_pool_is_not_unit_scaled():
    # no override line kept in the paste: the cause is not said, but the pool still scales
    a = _auto_alert(_auto_lines(None))
    assert a["severity"] == "warning" and "per 128" in a["detail"]


def test_auto_fp8_on_a_plain_pool_stays_critical():
    a = _auto_alert(_auto_lines(None, cls="LlamaForCausalLM", model_path="/models/llama"))
    assert a["severity"] == "critical" and "kv_cache_quant_algo" in a["detail"]


# Issue 36.2: the DSA line alone, with no args dump in the excerpt. The line is printed only
# when kv_cache_dtype was left at auto (`if kv_cache_dtype == "auto":` 0.5.23
# arg_groups/overrides.py:532-538, logger.warning) and only for a DSA model
# (`is_deepseek_dsa(hf_config)`, :495), so it proves both the engine's choice and the NSA pool.
DSA_SM = "[2026-03-01 12:00:00] Setting KV cache dtype to {d} for DeepSeek DSA on SM{m} device."


def _alone(lines: list[str]) -> list[dict]:
    s = session_of(lines, "dsa")
    return s.report().to_json()["alerts"]


@pytest.mark.parametrize("line", [
    DSA_SM.format(d="fp8_e4m3", m=10),
    DSA_SM.format(d="fp8_e4m3", m=12),
    # the logging-config head (corpus ktransformers-issue-1969 prints it so, at SM8)
    "[2026-05-01 15:16:08] WARNING server_args.py:1168: Setting KV cache dtype to fp8_e4m3 for "
    "DeepSeek DSA on SM10 device.",
    "[2026-03-01 12:00:00] Setting KV cache dtype to fp8_e4m3 for DeepSeek NSA.",  # 0.5.5-0.5.7
])
def test_the_dsa_line_alone_is_the_engines_own_fp8_choice(line):
    for lines in ([line], [line, "[2026-03-01 12:00:09 TP0] Load weight begin. avail mem=78 GB"]):
        alerts = _alone(lines)
        rules = [a["rule"] for a in alerts]
        assert rules == ["kv-auto-fp8"], rules  # not the generic kv-fp8
        a = alerts[0]
        assert "its default for this model" in a["detail"]
        assert "NSA pool" in a["detail"] and a["severity"] == "warning"


def test_the_dsa_line_at_bf16_raises_nothing():
    assert _alone([DSA_SM.format(d="bfloat16", m=9)]) == []


def test_a_dump_that_names_fp8_keeps_it_an_explicit_choice():
    # with a dump the line reads with it (the dump is the post-override value): not this rule
    dump = ("[2026-03-01 12:00:00] server_args=ServerArgs(model_path='/models/x', tp_size=8, "
            "kv_cache_dtype='fp8_e5m2', page_size=64)")
    rules = [a["rule"] for a in _alone([DSA_SM.format(d="fp8_e4m3", m=10), dump])]
    assert "kv-auto-fp8" not in rules


def test_the_gate_fails_on_the_dsa_line_at_warning(tmp_path):
    from tests.test_cli_check import kvtui

    path = tmp_path / "dsa.log"
    path.write_text(DSA_SM.format(d="fp8_e4m3", m=10) + "\n")
    assert kvtui("check", "--fail-on", "warning", str(path)).returncode == 1
    out = kvtui("check", "--json", str(path))
    assert out.returncode == 0  # a warning passes the default (critical) gate, and says so
    assert '"kv-auto-fp8"' in out.stdout


def test_a_dsv4_default_line_alone_is_not_called_unit_scaled():
    # DeepSeek-V4's pool keeps scales of its own (584 B/token: FP8 NoPE, its tile scales, BF16
    # RoPE; 0.5.23 mem_cache/deepseek_v4_memory_pool.py:300-320) that kvtui does not model: no
    # critical "scales default to 1.0" from its override line (overrides.py:900-904) alone
    alerts = _alone(["[2026-05-13 02:13:58] Setting KV cache dtype to fp8_e4m3 for "
                     "DeepseekV4ForCausalLM."])
    assert [(a["rule"], a["severity"]) for a in alerts] == [("kv-fp8", "warning")]
