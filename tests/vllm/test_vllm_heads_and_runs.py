"""vLLM's line heads in the one timestamp grammar (parsers.prefix), and how its starts fold.

A vLLM start prints its configuration in parts (the API server's args, the engine's resolved
config, one per DP engine), its capacity over two lines before 0.28, and its pool in blocks in
V0: these tests hold the fold to one run per start and to the facts those parts state together.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from kvtui.core.pipeline import Session
from kvtui.sources.base import SourceLine
from kvtui.sources.replay import ReplaySource
from parsers.prefix import line_timestamp, ts_day, ts_seconds, vllm_head
from tests.helpers import session_of

ARGS = ("(APIServer pid=1) INFO 05-01 10:00:00 [utils.py:328] non-default args: "
        "{'model': 'meta-llama/Llama-3.1-8B-Instruct', 'tensor_parallel_size': 2, "
        "'kv_cache_dtype': 'fp8'}")
CONFIG = ("(EngineCore_DP{dp} pid=9) INFO 05-01 10:00:05 [core.py:75] Initializing a V1 LLM "
          "engine (v0.10.2) with config: model='meta-llama/Llama-3.1-8B-Instruct', "
          "dtype=torch.bfloat16, max_seq_len=131072, tensor_parallel_size=2, "
          "kv_cache_dtype=fp8, enable_prefix_caching=True, compilation_config={{}}")
LOAD = "(Worker_TP{w} pid=1{w}) INFO 05-01 10:00:30 [gpu_model_runner.py:2392] Model loading " \
       "took 7.48 GiB and 12.000000 seconds"
AVAIL = "(Worker_TP{w} pid=1{w}) INFO 05-01 10:00:41 [gpu_worker.py:276] Available KV cache " \
        "memory: 30.25 GiB"
SIZE = "(EngineCore_DP0 pid=9) INFO 05-01 10:00:42 [kv_cache_utils.py:864] GPU KV cache size: " \
       "991,200 tokens"
CONC = "(EngineCore_DP0 pid=9) INFO 05-01 10:00:42 [kv_cache_utils.py:868] Maximum " \
       "concurrency for 131,072 tokens per request: 7.56x"


def fold(lines: list[str]) -> Session:
    s = session_of(lines, "log")
    return s


def start(dp: int = 0) -> list[str]:
    return [ARGS, CONFIG.format(dp=dp), *(LOAD.format(w=w) for w in range(2)),
            *(AVAIL.format(w=w) for w in range(2)), SIZE, CONC]


def test_a_start_in_parts_is_one_run_and_the_operator_wins():
    s = fold(start())
    assert len(s.state.runs) == 1
    run = s.state.current
    assert run.server_args["tp_size"] == 2 and run.server_args["context_length"] == 131072
    assert run.configured_kv_dtype == "fp8_e4m3"
    assert run.engine_version == "0.10.2"
    cap = run.primary_capacity()
    assert cap is not None
    assert (cap["max_total_num_tokens"], cap["context_len"], cap["max_concurrency"]) == (
        991_200, 131072, 7.56)


def test_a_restart_is_a_new_run():
    s = fold(start() + start())
    assert len(s.state.runs) == 2
    assert s.state.runs[1].start is not None and s.state.runs[1].start.line == 9


def test_dp_engines_print_their_config_into_the_same_run():
    lines = start()
    lines.insert(4, CONFIG.format(dp=1))  # DP1's engine prints while DP0's workers load
    s = fold(lines)
    assert len(s.state.runs) == 1


def test_auto_resolved_by_the_engine_is_the_effective_dtype():
    """0.14+ resolves `auto` from a ModelOpt checkpoint before the engine prints its config
    (engine/arg_utils.py:1398 in 0.14.0): the args say auto, the config says fp8_e4m3."""
    args = ARGS.replace(", 'kv_cache_dtype': 'fp8'", "")
    config = CONFIG.format(dp=0).replace("kv_cache_dtype=fp8", "kv_cache_dtype=fp8_e4m3")
    s = fold([args, config])
    run = s.state.current
    assert run.configured_kv_dtype == "auto"
    assert run.effective[:2] == ("fp8_e4m3", "config_line")
    alert = next(a for a in s.report().to_json()["alerts"] if a["rule"] == "kv-auto-fp8")
    assert "the engine config line (line 2)" in alert["detail"]
    assert "Using KV cache dtype" not in alert["detail"]


def test_the_dtype_line_is_named_in_vllms_words():
    """vLLM's KV dtype line is "Using fp8 data type to store kv cache" (0.6.3 config.py:637,
    0.11.0 config/cache.py:181): an alert built on it names that line, not SGLang's
    "Using KV cache dtype" line (the engine's wording key `basis.kv_dtype_line`)."""
    args = ARGS.replace(", 'kv_cache_dtype': 'fp8'", "")
    line = ("(EngineCore_DP0 pid=9) INFO 05-01 10:00:04 [cache.py:181] Using fp8 data type to "
            "store kv cache. It reduces the GPU memory footprint and boosts the performance.")
    s = fold([args, line])
    assert s.state.current.effective[1] == "kv_dtype_line"
    alert = next(a for a in s.report().to_json()["alerts"] if a["rule"] == "kv-auto-fp8")
    assert "the 'Using ... data type to store kv cache' line (line 2)" in alert["detail"]
    assert "Using KV cache dtype" not in alert["detail"]


def test_auto_beside_the_model_dtype_in_the_config_line_is_its_own_basis():
    """0.14.1 prints no "Using ... data type" line for an `auto` BF16 cache: only the engine
    config (`kv_cache_dtype=auto, dtype=torch.bfloat16`, core.py:97 in 0.14.1) says it, so the
    basis names that line, not a KV-dtype line."""
    config = CONFIG.format(dp=0).replace("kv_cache_dtype=fp8", "kv_cache_dtype=auto")
    run = fold([config]).state.current
    dtype, basis, ev = run.effective
    assert (dtype, basis) == ("bf16", "config_line")
    assert ev is not None and "Initializing a V1 LLM engine" in ev.text


def test_v0_pool_in_blocks_gets_its_tokens_from_the_printed_concurrency():
    s = fold(["INFO 08-19 07:51:08 distributed_gpu_executor.py:56] # GPU blocks: 22982, # CPU "
              "blocks: 6241",
              "INFO 08-19 07:51:08 distributed_gpu_executor.py:60] Maximum concurrency for 8192 "
              "tokens per request: 44.89x"])
    cap = s.state.current.primary_capacity()
    assert cap is not None
    assert (cap["page_size"], cap["max_total_num_tokens"]) == (16, 22982 * 16)


def test_vllm_heads_in_the_timestamp_grammar():
    line = "(Worker_TP3 pid=9) INFO 05-01 16:27:56 [kv_cache_utils.py:1] x"
    assert vllm_head(line) == (len(line) - 1, "05-01 16:27:56", "TP3")
    assert line_timestamp(line) == "05-01 16:27:56"
    assert line_timestamp("vllm-1  | " + line) == "05-01 16:27:56"
    assert line_timestamp("INFO 02-20 00:01:02 file.py:522] x") == "02-20 00:01:02"
    assert ts_day("05-01 16:27:56") == "05-01" and ts_day("2026-01-01 10:00:00") == "2026-01-01"
    assert ts_day("10:00:00") is None
    a, b = ts_seconds("12-31 23:59:58"), ts_seconds("12-31 23:59:59.5")
    assert a is not None and b is not None and b - a == 1.5
    assert line_timestamp("[2026-01-01 10:00:00 TP0] Decode batch") == "2026-01-01 10:00:00"


def _replay(path: Path, seek: str | None) -> list[SourceLine]:
    items: list[object] = []
    lock = threading.Lock()

    def emit(batch: list[object]) -> None:
        with lock:
            items.extend(batch)

    src = ReplaySource([str(path)], start_paused=seek is not None, speed=1e6)
    stop = threading.Event()
    t = threading.Thread(target=src.run, args=(emit, stop), daemon=True)
    t.start()
    end = time.monotonic() + 10
    if seek is not None:
        assert src.seek_time(seek)
        while time.monotonic() < end and not (src.paused and src.lines_emitted):
            time.sleep(0.01)
    else:
        while time.monotonic() < end and src.state != "at_end":
            time.sleep(0.01)
    stop.set()
    t.join(5)
    with lock:
        return [i for i in items if isinstance(i, SourceLine)]


def test_replay_times_and_seeks_a_vllm_log(tmp_path: Path):
    path = tmp_path / "vllm.log"
    body = []
    for s in range(10):
        body.append(f"(EngineCore_DP0 pid=9) INFO 05-01 10:00:{s:02d} [core.py:1] n{s}")
        body.append(f"(EngineCore_DP0 pid=9)   File \"core.py\", line {s}")  # untimed
    path.write_text("\n".join(body) + "\n")
    got = _replay(path, None)
    assert len(got) == 20 and all(ln.ts is not None for ln in got)
    assert got[3].ts == got[2].ts == "05-01 10:00:01"
    sought = _replay(path, "10:00:06")  # a bare time is completed with the log's first day
    assert sought[-1].text.endswith("n6") and len(sought) == 13


# Pastes in threads often cut the time out of vLLM's head and keep `LEVEL [file.py:N]`:
# vllm-project/vllm#54623 (v0.27.1) quotes its warning so, and so do many bench threads
# (`INFO [gpu_worker.py:462] Available KV cache memory: ...`).
UNTIMED_54623 = ("WARNING [kv_cache.py:151] Using KV cache scaling factor 1.0 for fp8_e4m3. If "
                 "this is unintended, verify that k/v_scale scaling factors are properly set in "
                 "the checkpoint.")


def test_a_head_without_its_time_is_still_a_vllm_head():
    from parsers.vllm import parse_line

    ev = parse_line(UNTIMED_54623)
    assert ev is not None and (ev.kind, ev.ts) == ("fp8_scales_missing", None)
    # Any of vLLM's lines, not only the wordings a headless line is read by:
    ev = parse_line("(Worker_TP1 pid=612) INFO [model_runner.py:329] Model loading took "
                    "30.59 GiB and 20.456472 seconds")
    assert ev is not None and (ev.kind, ev.rank, ev.get("usage_gib")) == (
        "load_weight_end", "TP1", 30.59)
    assert line_timestamp(UNTIMED_54623) is None
    # SGLang's logging-config head (`ts LEVEL [file.py:N]`) stays SGLang's.
    assert parse_line("2026-01-01 10:00:00 INFO [model_runner.py:329] Model loading took "
                      "30.59 GiB and 20.456472 seconds") is None


def test_an_untimed_paste_folds_into_a_start_and_dates_by_its_bracket():
    s = fold([UNTIMED_54623,
              "INFO [gpu_worker.py:456] Available KV cache memory: 57.09 GiB",
              "INFO [kv_cache_utils.py:1316] GPU KV cache size: 124,704 tokens"])
    report = s.report().to_json()
    assert report["engine"] == "vllm"
    assert report["kv_cache"]["scales"] == "missing"
    assert "kv-fp8-unscaled" in {a["rule"] for a in report["alerts"]}
    assert report["capacity"]["max_total_num_tokens"] == 124_704
    assert "head:bracket" in s.state.current.hints


def test_the_weights_line_quoted_without_a_head_is_read():
    """A headless "Model loading took ..." is vLLM's own wording (gpu_model_runner.py; SGLang
    prints "Load weight end."): quoted so in https://myoceane.fr/index.php/ai-vllm-a100-gemma-4/
    (vLLM 0.19) and in vllm-project/vllm#25350."""
    from parsers.vllm import parse_line

    ev = parse_line("Model loading took 13.72 GiB memory and 62.336108 seconds")
    assert ev is not None and (ev.kind, ev.get("usage_gib"), ev.get("elapsed_s")) == (
        "load_weight_end", 13.72, 62.336108)
    ev = parse_line("Loading model weights took 13.9476 GB")
    assert ev is not None and ev.get("usage_gib") == 13.9476


# vllm-project/vllm#49878 (0.26, Gemma4 with --kv-cache-memory-bytes): no "Available KV cache
# memory" line is printed then; the reserved budget is the pool's (v1/worker/gpu_worker.py:495
# in 0.28.0; "%.2fGiB" without a space in 0.10.2-0.11, gpu_worker.py:241 in 0.11.0).
RESERVED = ("(EngineCore pid=83) INFO 07-26 12:29:34 [gpu_worker.py:479] Initial free memory "
            "93.88 GiB, reserved 49.0 GiB memory for KV Cache as specified by "
            "kv_cache_memory_bytes config and skipped memory profiling. This does not respect "
            "the gpu_memory_utilization config. Only use kv_cache_memory_bytes config when you "
            "want manual control of KV cache memory size. If OOM'ed, check the difference of "
            "initial free memory between the current run and the previous run where "
            "kv_cache_memory_bytes is suggested and update it correspondingly.")


def test_the_kv_budget_reserved_by_kv_cache_memory_bytes_is_the_pool():
    from parsers.vllm import parse_line

    ev = parse_line(RESERVED)
    assert ev is not None and (ev.kind, ev.get("kv_gib"), ev.get("scope")) == (
        "kv_pool", 49.0, "all")
    old = parse_line("INFO 09-01 10:00:00 [gpu_worker.py:241] Initial free memory "
                     "93.87628173828125 GiB, reserved 49.00GiB memory for KV Cache as specified "
                     "by kv_cache_memory_bytes config and skipped memory profiling. This does "
                     "does not respect the gpu_memory_utilization config.")
    assert old is not None and old.get("kv_gib") == 49.0
    s = fold([RESERVED, SIZE])
    whatif = s.report().to_json()["whatif"]
    assert whatif["current"]["bytes_per_token"] == round(49.0 * 2**30 / 991_200, 1)
    assert any("49.00 GiB per GPU" in line for line in whatif["explanation"])
    assert not any(h.startswith("avail:") for h in s.state.current.hints)


# vllm-project/vllm#10517 (a user on 0.6.4, Llama-3.1-8B on an RTX 3090) pasted V0's start-up
# lines without heads; 0.6.4 prints the profile's pairs separated by spaces (worker.py:233 in
# 0.6.4.post1), later releases by commas.
V0_HEADLESS = [
    "Loading model weights took 14.9888 GB",
    "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB "
    "peak_torch_memory=17.98GiB memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB "
    "kv_cache_size=2.89GiB gpu_memory_utilization=0.90",
    "# GPU blocks: 1478, # CPU blocks: 2048",
    "Maximum concurrency for 29000 tokens per request: 0.82x",
]


def test_v0_start_up_lines_pasted_without_heads():
    from parsers.vllm import parse_line

    events = [parse_line(line) for line in V0_HEADLESS]
    assert [e.kind if e else None for e in events] == [
        "load_weight_end", "memory_profile", "capacity", "capacity"]
    profile = events[1]
    assert profile is not None
    assert (profile.get("total_gib"), profile.get("non_torch_gib"), profile.get("kv_gib"),
            profile.get("gpu_memory_utilization")) == (23.58, 0.35, 2.89, 0.9)
    blocks = events[2]
    assert blocks is not None and (blocks.get("gpu_blocks"), blocks.get("cpu_blocks")) == (
        1478, 2048)


def _budget_basis(lines: list[str]) -> str:
    from kvtui.engines.vllm.fromrun import calculator_from_run

    calc = calculator_from_run(fold(lines).state.current)
    assert calc is not None
    return calc.budget_bytes()[1]


def test_a_v0_budget_is_named_as_its_release_logs_it():
    """V0 prints no "Available KV cache memory" (V1's gpu_worker.py, 0.9.2+): 0.6.4 logs the
    budget as "Memory profiling results: ... kv_cache_size=%.2fGiB" (worker.py:233-243 in
    0.6.4), 0.6.5-0.10.2 as "... the rest of the memory reserved for KV Cache is %.2fGiB."
    (worker.py:225 in 0.6.5): the budget's basis says the log's own words."""
    basis = _budget_basis(V0_HEADLESS[1:2] + V0_HEADLESS[3:])
    assert "kv_cache_size=2.89GiB (logged: 'Memory profiling results')" in basis
    assert "Available KV cache memory" not in basis
    takes = ("INFO 02-10 09:00:00 worker.py:271] model weights take 21.21GiB; non_torch_memory "
             "takes 0.20GiB; PyTorch activation peak memory takes 0.37GiB; the rest of the "
             "memory reserved for KV Cache is 1.57GiB.")
    basis = _budget_basis([takes, V0_HEADLESS[3]])
    assert "memory reserved for KV Cache 1.57 GiB (logged)" in basis
    # V1's own line keeps its words
    basis = _budget_basis([AVAIL.format(w=0), SIZE, CONC])
    assert "Available KV cache memory 30.25 GiB (logged)" in basis


# A launcher or supervisor that re-logs vLLM's output puts its own head in front, and that head
# can be vLLM's shape without the time (`INFO [file.py:N] `). vLLM itself always prints the time
# (vllm/logger.py:28 in 0.33.0, `%(levelname)s %(asctime)s [%(fileinfo)s`), so the timed head
# further on is vLLM's, and its message is the one to read.
WRAPPED = [
    "(APIServer pid=1) INFO [launcher.py:88] [engine] INFO 05-01 10:00:41 [gpu_worker.py:276] "
    "Available KV cache memory: 30.25 GiB",
    "INFO [supervisor.py:12] (Worker_TP1 pid=11) INFO 05-01 10:00:41 [gpu_worker.py:276] "
    "Available KV cache memory: 30.25 GiB",
]


def test_a_timed_head_behind_an_untimed_one_is_the_one_read():
    from parsers.vllm import parse_line

    first, second = (parse_line(line) for line in WRAPPED)
    assert first is not None and (first.kind, first.ts, first.rank, first.get("kv_gib")) == (
        "kv_pool", "05-01 10:00:41", None, 30.25)
    assert second is not None and (second.ts, second.rank) == ("05-01 10:00:41", "TP1")
    assert line_timestamp(WRAPPED[0]) == "05-01 10:00:41"
    # the wrapper's process prefix names the rank when vLLM's own head has none in front
    ev = parse_line("(Worker_TP3 pid=12) INFO [relay.py:5] INFO 05-01 10:00:41 "
                    "[gpu_worker.py:276] Available KV cache memory: 30.25 GiB")
    assert ev is not None and (ev.ts, ev.rank) == ("05-01 10:00:41", "TP3")
    # an untimed head alone is still read as before, whatever brackets its message holds
    ev = parse_line("INFO [gpu_worker.py:456] Available KV cache memory: 57.09 GiB [note] x")
    assert ev is not None and (ev.kind, ev.ts, ev.get("kv_gib")) == ("kv_pool", None, 57.09)


def test_the_head_window_is_read_in_one_pass(monkeypatch):
    """Each `] ` of the head window is checked where it stands: no regex is run over the whole
    head again per candidate (which made a line full of `] ` cost 500 times a plain one)."""
    import regex

    from parsers import prefix

    scanned = [0]

    class Counting:
        def __init__(self, pattern):
            self.pattern = pattern

        def __getattr__(self, name):
            method = getattr(self.pattern, name)

            def call(string, pos=0, endpos=None, *a, **kw):
                scanned[0] += (len(string) if endpos is None else endpos) - pos
                return method(string, pos, endpos if endpos is not None else len(string),
                              *a, **kw)
            return call

    for name, value in list(vars(prefix).items()):
        if isinstance(value, regex.Pattern):
            monkeypatch.setattr(prefix, name, Counting(value))
    for line in ("[1:2] " * 45 + "x",
                 "INFO [gpu_worker.py:456] " + "[1:2] " * 40 + "Available KV cache memory: 1 GiB",
                 "(APIServer pid=1) INFO [launcher.py:88] " + "[a.py:1] " * 20 +
                 "INFO 05-01 10:00:41 [gpu_worker.py:276] Available KV cache memory: 1 GiB"):
        prefix.VLLM_CACHE.clear()
        scanned[0] = 0
        head = prefix.vllm_head(line)
        # a fixed number of passes over the window (11,537 characters for the first line before)
        assert scanned[0] <= 4 * prefix.MAX_VLLM_PREFIX, (line, scanned[0])
        assert head is None or head[1] is not None
    assert prefix.vllm_head("INFO [gpu_worker.py:456] " + "[1:2] " * 40) == (25, "", None)


def _range(lines: list[str]) -> tuple[str, str]:
    from kvtui.engines.vllm.version import infer_version

    run = fold(lines).state.current
    vr = infer_version(run.hints)
    return ".".join(map(str, vr.lo)), ".".join(map(str, vr.hi))


def test_v0_pool_named_by_the_device_folds_and_dates():
    """0.7-0.10's V0 executor prints the platform's device_name ("# cuda blocks: ...",
    executor_base.py:111 in 0.8.0); <= 0.6 printed "# GPU blocks" (gpu_executor.py:76 in
    0.6.6.post1). Both are V0's pool with its CPU blocks."""
    lines = ["INFO 03-14 18:57:59 [executor_base.py:111] # cuda blocks: 4739, # CPU blocks: 859",
             "INFO 03-14 18:57:59 [executor_base.py:116] Maximum concurrency for 163840 tokens "
             "per request: 1.85x"]
    run = fold(lines).state.current
    cap = run.primary_capacity()
    assert cap is not None
    assert (cap["gpu_blocks"], cap["page_size"], cap["max_total_num_tokens"]) == (
        4739, 64, 4739 * 64)
    assert {"capacity:cpu_blocks", "capacity:device_name"} <= run.hints
    assert _range(lines) == ("0.8.0", "0.10.2")
    assert _range(["INFO 08-19 07:51:08 distributed_gpu_executor.py:56] # GPU blocks: 22982, "
                   "# CPU blocks: 6241"])[1] == "0.6.6"
    from parsers.vllm import parse_line

    ev = parse_line("# cuda blocks: 41345, # CPU blocks: 21845")  # pasted without its head
    assert ev is not None and ev.get("gpu_blocks") == 41345


def test_the_xpu_weights_line_dates_by_its_unit():
    """xpu_model_runner.py prints "Loading model weights took %.4f GB" up to 0.8.0 (:425) and
    "... GiB" from 0.8.5 (:414) to 0.9.2 (:415); V0's XPU runner is gone in 0.10.2. The CUDA
    runner's "... GB" line stays <= 0.7."""
    assert _range(["INFO 05-01 16:27:56 [xpu_model_runner.py:414] Loading model weights took "
                   "7.4800 GiB"]) == ("0.8.1", "0.10.1")
    assert _range(["INFO 05-01 16:27:56 [xpu_model_runner.py:425] Loading model weights took "
                   "7.4800 GB"]) == ("0.8.0", "0.8.4")
    assert _range(["INFO 10-17 08:00:08 model_runner.py:1071] Loading model weights took "
                   "14.9888 GB"])[1] == "0.7.3"


def test_the_start_up_memory_summary_in_its_wordings():
    """V1's "Free memory on device" summary: 0.10.2's (gpu_worker.py:373: weight, non-torch, the
    kv memory in bytes) and 0.33.0's (:1045: consumed memory, GiB), as public logs show them."""
    from parsers.vllm import parse_line

    old = parse_line(
        "(Worker_TP0 pid=90) INFO 09-12 10:00:00 [gpu_worker.py:373] Free memory on device "
        "(79.1/79.19 GiB) on startup. Desired GPU memory utilization is (0.9, 71.27 GiB). "
        "Actual usage is 14.99 GiB for weight, 1.41 GiB for peak activation, 0.09 GiB for "
        "non-torch memory, and 0.5 GiB for CUDAGraph memory. Replace gpu_memory_utilization "
        "config with `--kv-cache-memory=57740052480` to fit into requested memory, or "
        "`--kv-cache-memory=66177669120` to fully utilize gpu memory. Current kv cache memory "
        "in use is 58322565120 bytes.")
    assert old is not None and old.kind == "memory_profile" and old.rank == "TP0"
    assert (old.get("free_gib"), old.get("total_gib"), old.get("requested_gib"),
            old.get("weights_gib"), old.get("non_torch_gib"), old.get("consumed_gib"),
            old.get("cuda_graph_gib")) == (79.1, 79.19, 71.27, 14.99, 0.09, None, 0.5)
    assert old.get("kv_gib") == 58322565120 / 2**30
    assert (old.get("kv_cache_memory_bytes_to_fit"), old.get("kv_cache_memory_bytes_to_fill")) \
        == (57740052480, 66177669120)
    new = parse_line(
        "(Worker_TP1 pid=771) INFO 08-21 18:22:06 [gpu_worker.py:789] Free memory on device "
        "(94.05/95.01 GiB) on startup. Desired GPU memory utilization is (0.9, 85.51 GiB). "
        "Actual usage is 56.89 GiB for consumed memory (weights + non-torch), 0.76 GiB for peak "
        "activation, and 0.32 GiB for CUDAGraph memory. Replace gpu_memory_utilization config "
        "with `--kv-cache-memory=29407858586` (27.39 GiB) to fit into requested memory, or "
        "`--kv-cache-memory=38581581312` (35.93 GiB) to fully utilize gpu memory. Current kv "
        "cache memory in use is 27.85 GiB.")
    assert new is not None and new.rank == "TP1"
    assert (new.get("total_gib"), new.get("consumed_gib"), new.get("weights_gib"),
            new.get("activation_gib"), new.get("kv_gib")) == (95.01, 56.89, None, 0.76, 27.85)


# Ray's data-parallel engines (`--data-parallel-backend=ray`): each `DPEngineCoreActor`
# (v1/engine/core.py:1133 in 0.11.0) is an `EngineCore`, which prints the config once
# (core.py:77), and Ray prefixes its lines with the actor's class and pid, no DP rank (the
# process title `EngineCore_DP{n}` of the mp backend, v1/engine/utils.py:119, is not used). The
# wording of kuberay#4366 (https://github.com/ray-project/kuberay/issues/4366, vLLM 0.11.0,
# DP 2 over two nodes), numbers and names made up; the remote actor's lines arrive first.
RAY_ARGS = ("(APIServer pid=5) INFO 01-12 06:14:25 [utils.py:233] non-default args: "
            "{'model': 'org/m', 'data_parallel_size': 2, 'data_parallel_backend': 'ray'}")
RAY_CONFIG = ("(APIServer pid=5) (DPEngineCoreActor pid={pid}{ip}) INFO 01-12 {ts} [core.py:77] "
              "Initializing a V1 LLM engine (v0.11.0) with config: model='org/m', "
              "dtype=torch.float16, max_seq_len=32768, tensor_parallel_size=1, "
              "pipeline_parallel_size=1, data_parallel_size=2, kv_cache_dtype=auto, "
              "enable_prefix_caching=True, compilation_config={{}}")
RAY_LOAD = ("(APIServer pid=5) (DPEngineCoreActor pid={pid}{ip}) INFO 01-12 {ts} "
            "[gpu_model_runner.py:2653] Model loading took 0.93 GiB and 6.19 seconds")
RAY_SIZE = ("(APIServer pid=5) (DPEngineCoreActor pid={pid}{ip}) INFO 01-12 {ts} "
            "[kv_cache_utils.py:1087] GPU KV cache size: 938,544 tokens")


def ray_engine(pid: int, ip: str, stamps: tuple[str, str, str]) -> list[str]:
    return [line.format(pid=pid, ip=ip, ts=ts) for line, ts in
            zip((RAY_CONFIG, RAY_LOAD, RAY_SIZE), stamps, strict=True)]


REMOTE = ray_engine(43, ", ip=10.0.0.9", ("06:15:17", "06:15:28", "06:16:00"))
LOCAL = ray_engine(86, "", ("06:14:36", "06:14:50", "06:15:10"))


def test_a_ray_dp_siblings_config_stamped_before_the_runs_lines_joins_the_run():
    """The local engine's config, forwarded after the remote engine's lines but stamped before
    them: one start, not a restart (a restart is stamped after every line before it)."""
    s = fold([RAY_ARGS, *REMOTE, *LOCAL])
    assert len(s.state.runs) == 1
    assert s.state.current.server_args["dp_size"] == 2


def test_a_ray_dp_siblings_config_in_line_order_joins_the_run():
    """In the order the engines printed: the second engine's config, the same config, while
    the first has not served; the run has seen fewer configs than its DP size."""
    s = fold([RAY_ARGS, *LOCAL, *REMOTE])
    assert len(s.state.runs) == 1


def test_a_ray_dp_sibling_cut_from_its_run_by_a_chunk_is_joined_as_read_in_order(tmp_path):
    """A chunk that begins at the sibling's config: the join declines (or joins exactly), the
    chunked fold gives the sequential state."""
    from tests.core.test_merge import check_cuts, line_offsets, sequential
    path = tmp_path / "ray.log"
    later = [line.replace("01-12 06:1", "01-12 07:1") for line in REMOTE]
    path.write_text("\n".join([RAY_ARGS, *LOCAL, *REMOTE, *later]) + "\n")
    assert len(sequential(path).state.runs) == 2  # the third config of a DP 2 start
    for off in line_offsets(path)[:-1]:
        check_cuts(path, [0, off])


def test_a_repeated_rankless_config_is_still_a_restart_when_it_cannot_be_a_sibling():
    later = [line.replace("01-12 06:1", "01-12 07:1") for line in REMOTE]
    # a third config in a DP 2 run
    s = fold([RAY_ARGS, *LOCAL, *REMOTE, *later])
    assert len(s.state.runs) == 2
    # another config (not the same start)
    other = [later[0].replace("max_seq_len=32768", "max_seq_len=8192"), *later[1:]]
    s = fold([RAY_ARGS, *LOCAL, *other])
    assert len(s.state.runs) == 2
    # no DP stated: one engine, a second config is a restart
    solo = [line.replace("data_parallel_size=2", "data_parallel_size=1") for line in LOCAL]
    s = fold([*solo, *[line.replace("06:1", "07:1") for line in solo]])
    assert len(s.state.runs) == 2


# V0's pool line with no concurrency line after it (a paste cut there): "# %s blocks: %d, # CPU
# blocks: %d" (executor/executor_base.py:114 in 0.10.1.1, the platform's device_name;
# executor/gpu_executor.py:122 in 0.6.3: "# GPU blocks"). The block size is printed nowhere
# unless forced: 16 is the default (EngineArgs.block_size, engine/arg_utils.py:107 in 0.6.3;
# set by the platform in 0.10.1.1: platforms/cuda.py:137-138, rocm.py:326-327, tpu.py:106-107;
# xpu.py:90-91 sets 64; cpu.py:147-148 16 or 128 with IPEX).
V0_BLOCKS = "INFO 08-19 07:51:08 executor_base.py:114] # {dev} blocks: 22982, # CPU blocks: 6241"


def v0_tokens(lines: list[str]) -> tuple[object, object]:
    cap = fold(lines).state.current.primary_capacity()
    assert cap is not None
    return cap.get("page_size"), cap.get("max_total_num_tokens")


def test_v0_pool_in_blocks_alone_is_tokens_at_the_default_block_size():
    assert v0_tokens([V0_BLOCKS.format(dev="cuda")]) == (16, 22982 * 16)
    assert v0_tokens([V0_BLOCKS.format(dev="rocm")]) == (16, 22982 * 16)
    assert v0_tokens([V0_BLOCKS.format(dev="xpu")]) == (64, 22982 * 64)
    old = "INFO 10-17 07:51:08 gpu_executor.py:122] # GPU blocks: 22982, # CPU blocks: 6241"
    assert v0_tokens([old]) == (16, 22982 * 16)
    # the CPU backend's size depends on IPEX: no default, no tokens
    assert v0_tokens([V0_BLOCKS.format(dev="cpu")]) == (None, None)


def test_v0_pool_in_blocks_takes_the_stated_or_forced_block_size_first():
    args = ("INFO 08-19 07:50:00 api_server.py:529] args: Namespace(model='org/m', "
            "block_size=32, tensor_parallel_size=1)")
    assert v0_tokens([args, V0_BLOCKS.format(dev="cuda")]) == (32, 22982 * 32)
    # MLA on CUDA: platforms/cuda.py:171-173 in 0.10.1.1 forces 64 and says so
    forced = ("INFO 08-19 07:50:01 cuda.py:173] Forcing kv cache block size to 64 for FlashMLA "
              "backend.")
    assert v0_tokens([forced, V0_BLOCKS.format(dev="cuda")]) == (64, 22982 * 64)


# "Available KV cache memory" is the worker's whole KV budget, printed once per worker by
# `determine_available_memory` (v1/worker/gpu_worker.py:276 in 0.10.1, :298 in 0.11.0, :359 in
# 0.14.1); a speculative draft's attention layers are in the same KV cache
# (`get_kv_cache_spec` takes every Attention layer of the config, gpu_model_runner.py:3201-3213
# in 0.10.1), so no draft budget follows it. A second one on the same rank restates the budget
# (two starts in one paste without their start lines): it is never a draft model's pool.
def test_a_second_kv_budget_on_a_rank_is_not_a_draft_pool():
    avail = "[gpu_worker.py:298] Available KV cache memory: {gib} GiB"
    conc = "[kv_cache_utils.py:1091] Maximum concurrency for {n:,} tokens per request: {x}x"
    s = fold([avail.format(gib=40.5), conc.format(n=8192, x="30.10"),
              avail.format(gib=40.5), conc.format(n=16384, x="15.05")])
    pools = list(s.state.current.pools.values())
    assert [(p.kind, p.role, p.kv_gib) for p in pools] == [("kv", "target", 40.5)]
    assert pools[0].evidence is not None and pools[0].evidence.line == 3
