"""DeepSeek-V4 on SGLang: what `auto` means, how bf16 is spelled, which page size the pool has.

SGLang applies these for the architecture alone (hf_config.architectures[0]), so they hold when
the log names only the model class (`Load weight end. type=DeepseekV4ForCausalLM`):

- `auto` becomes fp8_e4m3 (arg_groups/deepseek_v4_hook.py:18-22 in 0.5.14,
  arg_groups/overrides.py:900-903 in 0.5.23; bfloat16 on NPU);
- the result must be "fp8_e4m3" or "bfloat16": "bf16" is not normalized on this path and fails
  the assertion (deepseek_v4_hook.py:37-40 in 0.5.14, overrides.py:907-910 in 0.5.23), where
  the DSA path does normalize it (overrides.py:539-540 in 0.5.23);
- page_size is set to 256 (deepseek_v4_hook.py:17 in 0.5.14; 128 on NPU).

Fixture lines are written in the style of a DSv4.1 + DSpark start-up (a public repository's
run report, GitHub; wording of SGLang 0.5.23's weight-load and capacity lines).
"""

from __future__ import annotations

from tests.capacity._logged import calculator_of
from tests.helpers import session_of

# No args dump and no KV dtype line: only the model class and the capacity line.
LINES = [
    "[2026-09-11 23:34:13 TP0 EP0] Load weight begin. avail mem=111.47 GB",
    "[2026-09-11 23:43:15 TP0 EP0] Load weight end. elapsed=541.76 s, "
    "type=DeepseekV4ForCausalLM, quant=fp8, avail mem=17.47 GB, mem usage=94.00 GB.",
    "[2026-09-11 23:46:13 TP0 EP0] Memory pool end. avail mem=9.90 GB",
    "[2026-09-11 23:46:49 TP0 EP0] max_total_num_tokens=2999808, chunked_prefill_size=1024, "
    "max_prefill_tokens=16384, max_running_requests=4, context_len=1048576, "
    "available_gpu_mem=7.68 GB",
]


def _calc(lines=LINES):
    return calculator_of(lines, name="dsv4.log")


def test_auto_on_deepseek_v4_is_fp8_e4m3():
    calc = _calc()
    row = calc.current().to_json()
    assert row["dtype"] == "fp8_e4m3"
    assert any("DeepseekV4ForCausalLM" in n and "fp8_e4m3" in n for n in calc.notes)


def test_bf16_flag_on_deepseek_v4_is_spelled_bfloat16():
    calc = _calc()
    flag, _ = calc.flag("bf16")
    assert flag == "--kv-cache-dtype bfloat16"


def test_deepseek_v4_page_size_is_256():
    calc = _calc()
    assert calc.page_size == 256


def test_other_models_keep_the_model_dtype_and_bf16_spelling():
    lines = [line.replace("DeepseekV4ForCausalLM", "DeepseekV3ForCausalLM") for line in LINES]
    calc = _calc(lines)
    assert calc.current().to_json()["dtype"] == "bf16"
    assert calc.flag("bf16")[0] == "--kv-cache-dtype bf16"


def test_engine_advice_spells_bfloat16_for_deepseek_v4():
    from kvtui.engines.sglang import ENGINE
    s = session_of(LINES, "dsv4.log")
    advice = ENGINE.kv_dtype_advice("bf16", s.state.current)
    assert advice.startswith("--kv-cache-dtype bfloat16")


def test_deepseek_v4_running_default_is_256():
    """No --max-running-requests: SGLang sets 256 for DeepSeek-V4 (deepseek_v4_hook.py:21-25 in
    0.5.12, :138-145 in 0.5.23), before its speculative default of 48 could apply
    (server_args.py:929 then :976 in 0.5.12). A logged 256 is that default; a logged 4 is below
    it, the user's flag, and the note names the model's default, not the pool rule's."""
    calc = _calc([*LINES[:-1], LINES[-1].replace("max_running_requests=4",
                                                  "max_running_requests=256")])
    assert calc.mrr_user == 256
    assert calc.current().to_json()["max_running_requests_sglang"] == 256
    assert not any("below the" in n for n in calc.notes)
    calc = _calc()
    assert calc.mrr_user == 4
    assert any("below the 256 SGLang sets for DeepseekV4ForCausalLM" in n for n in calc.notes)
    assert not any("speculative" in n for n in calc.notes)
