"""The FP8 latent layout of a DSA pool (DeepSeek-V3.2, GLM-5) follows its DSA backends.

`calculate_mla_kv_cache_dim` keeps the raw 512 + 64 FP8 latent (576 B per layer) when a DSA
backend is trtllm and stores 512 FP8 + 16 scale bytes + 64 bf16 rope (656 B) otherwise (0.5.9
model_runner_kv_cache_mixin.py:223-230; 0.5.17 mem_cache/kv_cache_configurator.py:2005-2008;
0.5.23 :3425-3456); from 0.5.17 the budget divides by it (pool_configurator.py:252-262 in
0.5.18). SGLang names the backends in `Set DSA backends for fp8_e4m3 KV Cache: prefill=..,
decode=..` (0.5.23 arg_groups/overrides.py:737-740), and from 0.5.10 an FP8 cache defaults to
trtllm on SM100 and flashmla_kv on Hopper (0.5.10 server_args.py:1464-1472; 0.5.23
overrides.py:714-720), FP8 being the DSA default only on SM100 (:532-538).

Fixture: DeepSeek-V3.2 (61 layers, indexer (128 + 4) B per layer) at TP8, page 64, 800,000
tokens, in 0.5.23's pool-line wording (memory_pool.py:2096-2097) with numbers of our own.
"""

from __future__ import annotations

from kvtui.core.capacity import preset_spec
from kvtui.engines.sglang.calculator import Calculator
from kvtui.engines.sglang.fromrun import calculator_from_run
from kvtui.engines.sglang.version import SGLANG_LINE
from tests.helpers import session_of

N = 800_000
LAYERS = 61
INDEXER = 132 * LAYERS
RAW = 576 * LAYERS + INDEXER  # 43,188 B per token in the budget
SCALED = 656 * LAYERS + INDEXER  # 48,068
BF16 = 1152 * LAYERS + INDEXER


def _printed_gib(latent: int) -> float:
    # (tokens + page) x latent + (tokens + page + 1) // page x page x indexer (0.5.9
    # memory_pool.py:1784-1800, get_kv_size_bytes :1879-1883)
    return ((N + 64) * latent * LAYERS + (N + 65) // 64 * 64 * INDEXER) / 2**30


def _lines(latent: int, backends: str | None) -> list[str]:
    out = []
    if backends is not None:
        out.append(f"[2026-11-20 10:00:00] Set DSA backends for fp8_e4m3 KV Cache: {backends}.")
    out += [
        "[2026-11-20 10:00:00] server_args=ServerArgs(model_path='deepseek-ai/DeepSeek-V3.2', "
        "tp_size=8, kv_cache_dtype='fp8_e4m3', page_size=64, mem_fraction_static=0.85)",
        "[2026-11-20 10:01:00 TP0] Load weight end. elapsed=30.00 s, "
        "type=DeepseekV32ForCausalLM, avail mem=100.00 GB, mem usage=80.00 GB.",
        "[2026-11-20 10:01:05 TP0] KV Cache is allocated. dtype: torch.float8_e4m3fn, "
        f"#tokens: {N}, KV size: {_printed_gib(latent):.2f} GB",
        "[2026-11-20 10:01:05 TP0] Memory pool end. avail mem=40.00 GB",
    ]
    return out


def _calc(lines: list[str]) -> Calculator:
    s = session_of(lines, "log")
    calc = calculator_from_run(s.state.current, sglang_version="0.5.23")
    assert calc is not None
    return calc


def test_the_trtllm_backend_line_selects_the_raw_layout():
    calc = _calc(_lines(576, "prefill=trtllm, decode=trtllm"))
    assert calc.sargs.dsa_prefill_backend == calc.sargs.dsa_decode_backend == "trtllm"
    cell = calc.cell("fp8_e4m3")
    assert cell is not None and cell.bytes_per_token == RAW and not cell.approximate
    cal = calc.calibration()
    assert cal is not None and cal["within_rounding"] and "likely_cause" not in cal
    # the BF16 row re-sizes the 576-B budget, not a 656-B one (11% high before)
    assert calc.tokens_for("bf16")[0] == N * RAW // BF16 // 64 * 64
    assert calc.tokens_for("bf16")[0] * 1.11 < N * SCALED // BF16 // 64 * 64


def test_a_flashmla_backend_line_keeps_the_scaled_layout():
    calc = _calc(_lines(656, "prefill=flashmla_kv, decode=flashmla_kv"))
    cell = calc.cell("fp8_e4m3")
    assert cell is not None and cell.bytes_per_token == SCALED and not cell.approximate
    cal = calc.calibration()
    assert cal is not None and cal["within_rounding"]
    assert calc.tokens_for("bf16")[0] == N * SCALED // BF16 // 64 * 64


def test_the_dump_wins_over_the_line_only_where_it_states_the_backends():
    lines = _lines(576, "prefill=trtllm, decode=trtllm")
    lines[1] = lines[1].replace("page_size=64,", "page_size=64, dsa_prefill_backend='trtllm', "
                                "dsa_decode_backend='trtllm',")
    assert _calc(lines).cell("fp8_e4m3").bytes_per_token == RAW  # type: ignore[union-attr]


def test_without_backends_the_pool_line_tells_the_layout():
    for latent, cell_bytes, word in ((576, RAW, "raw 576-B"), (656, SCALED, "scaled 656-B")):
        calc = _calc(_lines(latent, None))
        cell = calc.cell("fp8_e4m3")
        assert cell is not None and cell.bytes_per_token == cell_bytes and not cell.approximate
        assert any(f"the pool line's size is the {word}" in n for n in calc.notes)


def test_without_a_log_the_fp8_row_is_approximate_and_names_its_layout():
    version = SGLANG_LINE.between((0, 5, 23), (0, 5, 23), ("--sglang-version 0.5.23",))
    calc = Calculator(current_dtype="bf16", spec=preset_spec("deepseek-v3.2"), tokens=N,
                      version=version)
    row = calc.scenario("fp8_e4m3")
    assert row.approximate and row.bytes_per_token == RAW
    assert not calc.scenario("bf16").approximate
    assert any(ln.startswith("fp8_e4m3 row: DSA backends not in the log: the raw 576-B layout")
               for ln in calc.explanation())


def test_before_the_trtllm_default_the_fp8_layout_is_exact():
    # 0.5.9: FP8 defaults to flashmla_auto / flashmla_kv on every GPU (server_args.py:1157-1162)
    version = SGLANG_LINE.between((0, 5, 9), (0, 5, 9), ("--sglang-version 0.5.9",))
    calc = Calculator(current_dtype="bf16", spec=preset_spec("deepseek-v3.2"), tokens=N,
                      version=version)
    cell = calc.cell("fp8_e4m3")
    assert cell is not None and not cell.approximate and cell.k_bytes == 656 * LAYERS
