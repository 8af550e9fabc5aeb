"""A vLLM run started with --kv-cache-memory-bytes: the what-if's memory knob is that flag.

vLLM's rule, read from the wheels (kvtui/engines/vllm/kvbytes.py has the citations): with the
flag the worker skips the memory profile and `determine_available_memory` returns the flag's
value (v1/worker/gpu_worker.py:235-252 in 0.10.2, :295-313 in 0.14.0, :656-682 in 0.33.0);
every worker returns it and sizes its own pool from it (v1/engine/core.py:243-255 in 0.14.0) as
`budget // page_size // num_layers` (v1/core/kv_cache_utils.py get_num_blocks), its page holding
`max(1, kv_heads // tp)` heads (config/model.py:1153 in 0.14.0). So the budget is the value per
GPU at any TP, and --gpu-memory-utilization sizes nothing.

The runs are built from real line formats: vLLM's own "reserved ... as specified by
kv_cache_memory_bytes config" line (the 0.14+ wording, as pasted in vllm-project/vllm#49878), its
"GPU KV cache size" and "Maximum concurrency" lines, and the `non-default args` dict. The numbers
each test expects are computed here from vLLM's rule, not by kvtui's sizing code.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

from kvtui.core.pipeline import Session
from kvtui.ui.whatif_calc import WhatIfInputs, compute
from tests.helpers import session_of

ROOT = Path(__file__).resolve().parents[2]
GIB = 1 << 30
# Llama-3.1-8B (the preset, as config.json says): 32 layers, 8 KV heads of 128.
LAYERS, KV_HEADS, HEAD = 32, 8, 128
BLOCK = 16


def vllm_blocks(budget: int, tp: int, dtype_bytes: int) -> int:
    """vLLM's num_blocks: budget // page_size // num_layers, the page one block of one layer
    (AttentionSpec.page_size_bytes = 2 x block x heads x head_size x dtype)."""
    page = 2 * BLOCK * max(1, KV_HEADS // tp) * HEAD * dtype_bytes
    return budget // page // LAYERS


def vllm_tokens(budget: int, tp: int, dtype_bytes: int) -> int:
    """GPU KV cache size, 0.9 - 0.19 with one group: num_blocks // 1 x block_size."""
    return vllm_blocks(budget, tp, dtype_bytes) * BLOCK


def args(tp: int, kv_bytes: int | None, util: float | None = None, kv: str = "auto") -> str:
    extra = f", 'kv_cache_memory_bytes': {kv_bytes}" if kv_bytes is not None else ""
    extra += f", 'kv_cache_dtype': '{kv}'" if kv != "auto" else ""
    extra += f", 'gpu_memory_utilization': {util}" if util is not None else ""
    return ("(APIServer pid=1) INFO 05-01 10:00:00 [utils.py:253] non-default args: "
            "{'model': 'meta-llama/Llama-3.1-8B-Instruct', 'max_model_len': 32768, "
            f"'tensor_parallel_size': {tp}{extra}}}")


def config(tp: int, kv: str = "auto") -> str:
    return ("(EngineCore_DP0 pid=9) INFO 05-01 10:00:05 [core.py:93] Initializing a V1 LLM "
            "engine (v0.14.0) with config: model='meta-llama/Llama-3.1-8B-Instruct', "
            f"dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size={tp}, "
            f"kv_cache_dtype={kv}, enable_prefix_caching=True, compilation_config={{}}")


def reserved(worker: str, gib: float) -> str:
    # format_gib: round(b / GiB, 2), trailing zeros dropped (gpu_worker.py:301 in 0.14.0)
    return (f"({worker} pid=11) INFO 05-01 10:00:30 [gpu_worker.py:301] Initial free memory "
            f"78.52 GiB, reserved {round(gib, 2)} GiB memory for KV Cache as specified by "
            "kv_cache_memory_bytes config and skipped memory profiling. This does not respect "
            "the gpu_memory_utilization config. Only use kv_cache_memory_bytes config when you "
            "want manual control of KV cache memory size. If OOM'ed, check the difference of "
            "initial free memory between the current run and the previous run where "
            "kv_cache_memory_bytes is suggested and update it correspondingly.")


def loaded(worker: str, tp: int) -> str:
    # "Model loading took %s GiB memory and %.6f seconds" (v1/worker/gpu_model_runner.py:3906
    # in 0.14.0): Llama-3.1-8B's 14.99 GiB of BF16 weights, sharded over TP
    return (f"({worker} pid=11) INFO 05-01 10:00:20 [gpu_model_runner.py:3906] Model loading "
            f"took {round(14.99 / tp, 2)} GiB memory and 12.000000 seconds")


def size_lines(tokens: int, blocks: int, context: int = 32768) -> list[str]:
    per_request = math.ceil(context / BLOCK)
    return [f"(EngineCore_DP0 pid=9) INFO 05-01 10:00:42 [kv_cache_utils.py:1087] GPU KV cache "
            f"size: {tokens:,} tokens",
            f"(EngineCore_DP0 pid=9) INFO 05-01 10:00:42 [kv_cache_utils.py:1091] Maximum "
            f"concurrency for {context:,} tokens per request: {blocks / per_request:.2f}x"]


def run(tp: int, budget: int, *, in_args: bool = True, kv: str = "auto") -> list[str]:
    """A run at `tp` started with --kv-cache-memory-bytes `budget`, its KV cache BF16 (`auto`)
    or `fp8`."""
    workers = [f"Worker_TP{i}" for i in range(tp)] if tp > 1 else ["EngineCore_DP0"]
    b = 1 if kv == "fp8" else 2
    return [args(tp, budget if in_args else None, kv=kv), config(tp, kv),
            *(loaded(w, tp) for w in workers), *(reserved(w, budget / GIB) for w in workers),
            *size_lines(vllm_tokens(budget, tp, b), vllm_blocks(budget, tp, b))]


def session(lines: list[str]) -> Session:
    s = session_of(lines, "log")
    return s


N = 40 * GIB  # 42,949,672,960 B: 20,480 bf16 blocks at TP 1


def test_the_knob_is_kv_cache_memory_bytes_and_the_budget_is_its_value():
    s = session(run(1, N))
    w = s.report().to_json()["whatif"]
    knob = w["memory_knob"]
    assert (knob["name"], knob["flag"], knob["unit"], knob["value"]) == (
        "kv_cache_memory_bytes", "--kv-cache-memory-bytes", "bytes", N)
    # one request of 32,768 tokens: 2,048 blocks of 2 x 16 x 8 x 128 x 2 B x 32 layers
    assert knob["request_bytes"] == math.ceil(32768 / BLOCK) * 2 * BLOCK * 8 * HEAD * 2 * LAYERS
    rows = {r["dtype"]: r for r in w["scenarios"]}
    assert rows["bf16"]["current"] and rows["bf16"]["tokens"] == vllm_tokens(N, 1, 2)
    assert rows["fp8_e4m3"]["tokens"] == vllm_tokens(N, 1, 1)
    assert "per GPU" in rows["fp8_e4m3"]["basis"] and not rows["fp8_e4m3"]["estimate"]
    assert any("--gpu-memory-utilization does not size it" in x for x in w["explanation"])


def test_a_tp_what_if_keeps_the_budget_and_moves_the_bytes_per_token():
    s = session(run(1, N))
    calc = s.calculator()
    # TP 2: 4 heads per GPU, the same 40 GiB per GPU: twice the blocks. A profiled run would
    # also get the weights TP sheds; this one does not (nothing is profiled).
    row = calc.scenario("bf16", tp=2)
    assert row.tokens == vllm_tokens(N, 2, 2) == 2 * vllm_tokens(N, 1, 2)
    assert row.bytes_per_token == 2 * BLOCK * 4 * HEAD * 2 * LAYERS / BLOCK
    assert calc.budget_bytes(tp=2)[0] == N
    # and from a TP 2 run to TP 4 and back to TP 1
    calc2 = session(run(2, N)).calculator()
    assert calc2.tokens == vllm_tokens(N, 2, 2)
    assert calc2.scenario("bf16", tp=4).tokens == vllm_tokens(N, 4, 2)
    assert calc2.scenario("bf16", tp=1).tokens == vllm_tokens(N, 1, 2)


def test_a_what_if_on_the_knob_changes_the_budget():
    calc = session(run(2, N)).calculator()
    knob = calc.memory_knob()
    assert knob.bytes and knob.value == N and knob.short == "kv bytes"
    more = 52 * GIB + 12_345
    row = calc.scenario("fp8_e4m3", mem_fraction_static=more)
    assert row.tokens == vllm_tokens(more, 2, 1)
    assert row.to_json()["kv_cache_memory_bytes"] == more
    assert "gpu_memory_utilization" not in row.to_json()
    assert not row.current


def test_the_reserved_line_alone_says_the_run_is_sized_by_the_flag():
    """No argument list: the worker lines' "reserved 40 GiB" (0.01 GiB) is the budget."""
    lines = run(2, N, in_args=False)
    calc = session(lines).calculator()
    knob = calc.memory_knob()
    assert knob.name == "kv_cache_memory_bytes"
    assert abs(knob.value - N) < 0.01 * GIB
    assert calc.scenario("bf16", tp=4).tokens == vllm_tokens(N, 4, 2)


def test_a_profiled_run_keeps_gpu_memory_utilization():
    lines = [args(1, None, 0.9), config(1),
             "(EngineCore_DP0 pid=9) INFO 05-01 10:00:30 [gpu_worker.py:359] Available KV "
             "cache memory: 40.0 GiB",
             *size_lines(vllm_tokens(N, 1, 2), vllm_blocks(N, 1, 2))]
    w = session(lines).report().to_json()["whatif"]
    assert "memory_knob" not in w
    assert session(lines).calculator().memory_knob().name == "gpu_memory_utilization"


def whatif(path: Path, *extra: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "kvtui", "whatif", "--from-log", str(path),
                          "--json", *extra], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_the_whatif_command_takes_kv_cache_memory_bytes(tmp_path: Path):
    log = tmp_path / "vllm.log"
    log.write_text("\n".join(run(2, N)) + "\n")
    # vLLM's own syntax: "48G" is 48 x 2^30 (human_readable_int, engine/arg_utils.py:2075)
    w = whatif(log, "--kv-cache-memory-bytes", "48G", "--dtype", "bf16", "--dtype", "fp8_e4m3")
    rows = {r["dtype"]: r for r in w["budget_scenarios"]}
    assert rows["bf16"]["tokens"] == vllm_tokens(48 * GIB, 2, 2)
    assert rows["fp8_e4m3"]["tokens"] == vllm_tokens(48 * GIB, 2, 1)
    assert rows["bf16"]["kv_cache_memory_bytes"] == 48 * GIB
    both = whatif(log, "--kv-cache-memory-bytes", "48G", "--target-tp", "4", "--dtype", "bf16")
    assert both["budget_scenarios"][0]["tokens"] == vllm_tokens(48 * GIB, 4, 2)
    text = subprocess.run([sys.executable, "-m", "kvtui", "whatif", "--from-log", str(log),
                           "--kv-cache-memory-bytes", "48G", "--dtype", "bf16"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120).stdout
    assert (f"budget what-if (bf16, TP 2, kv_cache_memory_bytes {48 * GIB} = 48.00 GiB): "
            f"{vllm_tokens(48 * GIB, 2, 2):,} tokens") in text


def test_the_whatif_command_sizes_a_profiled_run_by_the_flag():
    """On a run vLLM profiled, N replaces the profiled budget on every GPU, as vLLM would."""
    fp8 = ROOT / "sample_logs" / "vllm-llama31-8b-tp2-fp8-unscaled.log"
    w = whatif(fp8, "--kv-cache-memory-bytes", str(N), "--dtype", "fp8_e4m3", "--dtype", "bf16")
    rows = {r["dtype"]: r for r in w["budget_scenarios"]}
    assert rows["fp8_e4m3"]["tokens"] == vllm_tokens(N, 2, 1)
    assert rows["bf16"]["tokens"] == vllm_tokens(N, 2, 2)
    # the run itself is still read as vLLM sized it
    assert "memory_knob" not in w


def test_the_whatif_command_refuses_a_utilization_on_a_run_sized_by_bytes(tmp_path: Path):
    log = tmp_path / "vllm.log"
    log.write_text("\n".join(run(1, N)) + "\n")
    out = subprocess.run([sys.executable, "-m", "kvtui", "whatif", "--from-log", str(log),
                          "--mem-fraction-static", "0.95"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 2 and "--kv-cache-memory-bytes" in out.stderr
    bad = subprocess.run([sys.executable, "-m", "kvtui", "whatif", "--from-log", str(log),
                          "--kv-cache-memory-bytes", "1.5G"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert bad.returncode == 2 and "--kv-cache-memory-bytes" in bad.stderr


def test_the_pane_shows_kv_bytes_and_the_flag():
    calc = session(run(1, N)).calculator()
    more = 48 * GIB
    res = compute(calc, WhatIfInputs(dtype="bf16", mem_fraction=float(more), contexts=[32768],
                                     concurrency=20))
    rows = {label: (cur, tgt) for label, cur, tgt in res.rows}
    assert res.knob == "kv_cache_memory_bytes"
    assert rows["kv_cache_memory_bytes"] == ("40.00 GiB", "48.00 GiB")
    tokens = int(rows["tokens"][1].split()[0].replace(",", ""))
    assert tokens == vllm_tokens(more, 1, 2)
    assert f"--kv-cache-memory-bytes {more}" in res.flag
    assert "gpu-memory-utilization" not in res.flag
    # 20 requests of 32,768 tokens: 20 x 2,048 blocks of 2 MiB, which 48 GiB does not hold
    need = rows["kv_cache_memory_bytes needed"][1]
    assert need == f"{20 * 2048 * 2 * BLOCK * 8 * HEAD * 2 * LAYERS / GIB:,.2f} GiB"


BLOCK_BF16 = 2 * BLOCK * KV_HEADS * HEAD * 2 * LAYERS  # 2 MiB: one TP 1 block of 32 layers
REQUEST = math.ceil(32768 / BLOCK)  # blocks one request of max_model_len takes


def fixes(lines: list[str]) -> dict[str, str]:
    return {a.rule: a.fix for a in session(lines).report().alerts}


def test_alert_fixes_name_kv_cache_memory_bytes_with_the_bytes_that_fit():
    # 2 GiB: 1,024 blocks, half a request of 32,768 tokens
    small = fixes(run(1, 2 * GIB))
    assert f"--kv-cache-memory-bytes to {REQUEST * BLOCK_BF16}" in small["context-exceeds-pool"]
    # 6 GiB: 1.5 requests; the rule wants 2 (AlertOptions.min_context_concurrency)
    low = fixes(run(1, 6 * GIB))
    assert f"--kv-cache-memory-bytes to {2 * REQUEST * BLOCK_BF16}" in \
        low["low-context-concurrency"]
    for fix in (*small.values(), *low.values()):
        assert "--gpu-memory-utilization" not in fix


def test_bf16_does_not_fit_names_the_bytes_bf16_needs():
    # FP8, 3 GiB: 3,072 blocks of 1 MiB (1.5 requests); in BF16 1,536 blocks of 2 MiB (0.75)
    found = fixes(run(1, 3 * GIB, kv="fp8"))
    assert f"--kv-cache-memory-bytes {REQUEST * BLOCK_BF16}" in found["bf16-does-not-fit"]
    assert "--gpu-memory-utilization" not in " ".join(found.values())


def test_a_profiled_run_keeps_gpu_memory_utilization_in_its_fixes():
    lines = [args(1, None, 0.9), config(1),
             "(EngineCore_DP0 pid=9) INFO 05-01 10:00:30 [gpu_worker.py:359] Available KV "
             "cache memory: 6.0 GiB",
             *size_lines(vllm_tokens(6 * GIB, 1, 2), vllm_blocks(6 * GIB, 1, 2))]
    fix = fixes(lines)["low-context-concurrency"]
    assert "--gpu-memory-utilization" in fix and "--kv-cache-memory-bytes" not in fix


def test_an_oom_on_a_run_sized_by_bytes_says_the_budget_is_fixed():
    oom = ("(EngineCore_DP0 pid=9) ERROR 05-01 10:00:50 [core.py:700] torch.OutOfMemoryError: "
           "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
           "79.19 GiB of which 1.02 GiB is free.")
    fix = fixes([*run(1, 70 * GIB), oom]).get("oom")
    assert fix is not None and "--kv-cache-memory-bytes" in fix and str(70 * GIB) in fix


def test_a_pool_smaller_than_the_flag_keeps_the_logged_pool_and_its_shortfall():
    """0.33 takes a multimodal frontend reservation out of the flag's value (reserve_mm_ipc_gpu_
    memory, multimodal/gpu_ipc_memory.py:155): the arguments say 40 GiB, the pool is 38 GiB's."""
    lines = run(1, N)
    lines[-2:] = size_lines(vllm_tokens(38 * GIB, 1, 2), vllm_blocks(38 * GIB, 1, 2))
    calc = session(lines).calculator()
    budget, basis, _ = calc.budget_bytes()
    assert budget == vllm_blocks(38 * GIB, 1, 2) * 2 * BLOCK * 8 * HEAD * 2 * LAYERS
    assert "went elsewhere" in basis
    row = calc.scenario("bf16", mem_fraction_static=48 * GIB)
    assert row.tokens == vllm_tokens(46 * GIB, 1, 2) and row.estimate


def test_the_0_10_2_wording_and_the_parser_field():
    """0.10.2 prints `reserved %.2fGiB` after an unrounded free memory (gpu_worker.py:241 in
    0.10.2); the parser marks both wordings `configured`, the "Available" line not."""
    from parsers.vllm import parse_line

    old = ("(Worker_TP{w} pid=1{w}) INFO 09-01 10:00:00 [gpu_worker.py:252] Initial free "
           "memory 78.5234375 GiB, reserved 40.00GiB memory for KV Cache as specified by "
           "kv_cache_memory_bytes config and skipped memory profiling. This does does not "
           "respect the gpu_memory_utilization config. Only use kv_cache_memory_bytes config "
           "when you want manual control of KV cache memory size.")
    ev = parse_line(old.format(w=0))
    assert ev is not None and ev.get("configured") is True and ev.get("kv_gib") == 40.0
    avail = parse_line("(Worker_TP0 pid=10) INFO 09-01 10:00:00 [gpu_worker.py:298] Available "
                       "KV cache memory: 40.00 GiB")
    assert avail is not None and not avail.get("configured")
    cfg = config(2).replace("v0.14.0", "v0.10.2")
    lines = [cfg, *(old.format(w=w) for w in range(2)),
             *size_lines(vllm_tokens(N, 2, 2), vllm_blocks(N, 2, 2))]
    calc = session(lines).calculator()
    assert calc.memory_knob().name == "kv_cache_memory_bytes"
    assert calc.tokens == vllm_tokens(N, 2, 2)
    assert calc.scenario("bf16", tp=8).tokens == vllm_tokens(N, 8, 2)  # 1 KV head per GPU


def test_the_pools_say_the_operator_set_the_size():
    """`kvtui check`'s Pools line and the report's pools mark a budget the flag set (the
    engine did not profile it); a profiled pool says nothing of the kind."""
    from kvtui.core.render import render_text

    s = session(run(2, N))
    pools = s.report().to_json()["pools"]
    assert pools and all(p["configured"] for p in pools if p["kind"] == "kv")
    assert "a size the operator set (not profiled)" in render_text(s.report())
    profiled = session([args(1, None, 0.9), config(1),
                        "(EngineCore_DP0 pid=9) INFO 05-01 10:00:30 [gpu_worker.py:359] "
                        "Available KV cache memory: 40.0 GiB",
                        *size_lines(vllm_tokens(N, 1, 2), vllm_blocks(N, 1, 2))])
    assert not any("configured" in p for p in profiled.report().to_json()["pools"])
    assert "operator set" not in render_text(profiled.report())


def test_the_facts_pane_says_the_operator_set_the_pool():
    from rich.text import Text

    from kvtui.ui import report_view as rv
    from kvtui.ui.panes import _pools_text

    def pools_shown(lines: list[str]) -> str:
        t = Text()
        _pools_text(t, rv.report_of(session(lines).report()))
        return t.plain

    assert "set by the operator" in pools_shown(run(2, N))
    assert "set by the operator" not in pools_shown(
        [args(1, None, 0.9), config(1), "(EngineCore_DP0 pid=9) INFO 05-01 10:00:30 "
         "[gpu_worker.py:359] Available KV cache memory: 40.0 GiB",
         *size_lines(vllm_tokens(N, 1, 2), vllm_blocks(N, 1, 2))])


def mm_reserved(worker: str, reserved_gib: float, left_gib: float) -> str:
    # reserve_mm_ipc_gpu_memory's log call, format_gib figures (multimodal/gpu_ipc_memory.py:
    # 255-266 in 0.33.0), printed once per worker after its budget line
    return (f"({worker} pid=11) INFO 05-01 10:00:31 [gpu_ipc_memory.py:255] Reserving "
            f"{reserved_gib:g} GiB of GPU memory for frontend multimodal decoding "
            f"({reserved_gib:g} GiB raw-frame semaphore budget, 0 GiB decoder+CUDA-context "
            f"across 1 API server(s) @ 0.05 GiB/server); KV cache memory reduced to "
            f"{left_gib:g} GiB.")


def test_the_logged_multimodal_reservation_is_the_shortfall_not_an_estimate():
    """0.33 logs what it takes out of the flag's value ("Reserving 2 GiB ...; KV cache memory
    reduced to 38 GiB"): the budget is the rest, and a knob what-if takes the same 2 GiB out of
    the new value, read off the log (not an estimate, unlike an unexplained shortfall)."""
    lines = run(1, N)
    lines[-2:] = size_lines(vllm_tokens(38 * GIB, 1, 2), vllm_blocks(38 * GIB, 1, 2))
    lines.insert(-2, mm_reserved("EngineCore_DP0", 2, 38))
    s = session(lines)
    calc = s.calculator()
    assert calc.reserved_gib == 2.0 and calc.available_gib == 38.0
    budget, basis, est = calc.budget_bytes()
    assert budget == N - 2 * GIB and not est
    assert "vLLM logged reserving for frontend multimodal decoding" in basis
    row = calc.scenario("bf16", mem_fraction_static=48 * GIB)
    assert row.tokens == vllm_tokens(46 * GIB, 1, 2) and not row.estimate
    assert s.report().to_json()["capacity"]["kv_budget_reserved_gib"] == 2.0


def test_a_profiled_run_is_calibrated_against_the_reduced_budget():
    """On a profiled 0.33 run "Available KV cache memory" is printed before the reservation
    (gpu_worker.py:771-774, then :816 returns reserve_mm_ipc_gpu_memory(...)): the pool is
    sized by the reduced figure, so that is what the calibration checks."""
    lines = [args(1, None), config(1), loaded("EngineCore_DP0", 1),
             "(EngineCore_DP0 pid=11) INFO 05-01 10:00:30 [gpu_worker.py:771] Available KV cache "
             "memory: 40 GiB", mm_reserved("EngineCore_DP0", 2, 38),
             *size_lines(vllm_tokens(38 * GIB, 1, 2), vllm_blocks(38 * GIB, 1, 2))]
    calc = session(lines).calculator()
    cal = calc.calibration()
    assert cal is not None and cal["available_gib"] == 38.0 and cal["within_rounding"]
    assert calc.memory_knob().name == "gpu_memory_utilization"
