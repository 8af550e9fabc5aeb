"""The fold from events to facts: runs, effective dtype, pools, runtime aggregates."""

from __future__ import annotations

from pathlib import Path

from kvtui.core.pipeline import Session
from kvtui.sources.readers import iter_lines
from tests.helpers import session_of

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def analyse(*names: str, extra: list[str] | None = None) -> Session:
    a = Session()
    for name in names:
        a.feed_lines(name, iter_lines(str(SAMPLES / name)))
    if extra:
        a.feed_lines("extra", extra)
    return a


def test_qwen35_fp8_facts():
    run = analyse("qwen35-397b-nvfp4-tp8-fp8.log").state.current
    assert run.configured_kv_dtype == "fp8_e4m3"
    dtype, basis, ev = run.effective
    assert (dtype, basis) == ("fp8_e4m3", "kv_dtype_line")
    assert ev is not None and "Using KV cache dtype" in ev.text
    assert run.scales == "missing"
    assert run.scales_missing is not None and run.scales_missing.count == 8
    assert run.scales_missing.rank == "TP0"
    kv = [p for p in run.pools.values() if p.kind == "mha"]
    mamba = [p for p in run.pools.values() if p.kind == "mamba"]
    assert len(kv) == 8 and len(mamba) == 8
    assert {p.tokens for p in kv} == {608174}
    assert {p.slots for p in mamba} == {174}
    assert run.primary_kv_pool().rank == "TP0"
    cap = run.primary_capacity()
    assert cap["max_total_num_tokens"] == 608174 and cap["context_len"] == 262144
    assert run.ranks == {f"TP{i}" for i in range(8)}


def test_bytes_per_token_is_logged_gib_over_tokens():
    run = analyse("qwen35-397b-nvfp4-tp8-fp8.log").state.current
    pool = run.primary_kv_pool()
    assert pool.bytes_per_token == (2.18 + 2.18) * (1 << 30) / 608174


def test_runtime_aggregates_match_a_hand_count():
    name = "llama31-8b-retraction.log"
    session = analyse(name)
    run = session.state.current
    facts = session.report().runtime
    lines = list(iter_lines(str(SAMPLES / name)))
    decode = [ln for ln in lines if "Decode batch" in ln]
    retract = [ln for ln in lines if "Retract requests" in ln]
    assert run.runtime.decode_batches == len(decode)
    assert facts.retractions == len(retract)
    retracted = sum(int(ln.split("#retracted_reqs: ")[1].split(",")[0]) for ln in retract)
    assert facts.retracted_reqs == retracted
    usages = [float(ln.split("token usage: ")[1].split(",")[0]) for ln in decode]
    assert run.runtime.last_token_usage == usages[-1]
    assert run.runtime.peak_token_usage >= max(usages)
    gens = [float(ln.split("(token/s): ")[1].split(",")[0]) for ln in decode]
    assert abs(run.runtime.mean_gen_throughput - sum(gens) / len(gens)) < 1e-6
    assert run.runtime.timeline[-1].line == lines.index(decode[-1]) + 1 or \
        run.runtime.timeline[-1].retraction


def test_restart_starts_a_new_run_and_latest_is_current():
    a = analyse("qwen35-397b-nvfp4-tp8-fp8.log", "qwen35-397b-nvfp4-tp8-bf16.log")
    assert len(a.state.runs) == 2
    first, current = a.state.runs
    assert first.effective[0] == "fp8_e4m3" and first.scales == "missing"
    assert current.effective[0] == "bf16" and current.scales == "unknown"
    assert current.primary_kv_pool().tokens == 304087


def test_second_weight_load_without_dump_is_a_new_run():
    lines = [
        "[2026-01-01 10:00:00 TP0] Load weight begin. avail mem=70.00 GB",
        "[2026-01-01 10:00:09 TP0] max_total_num_tokens=1000, chunked_prefill_size=8192, "
        "max_prefill_tokens=16384, max_running_requests=500, context_len=4096, "
        "available_gpu_mem=3.00 GB",
        "[2026-01-01 11:00:00 TP0] Load weight begin. avail mem=70.00 GB",
    ]
    a = session_of(lines, "x")
    assert len(a.state.runs) == 2


def test_auto_resolving_to_fp8_without_a_warning():
    run = analyse("qwen35-397b-nvfp4-tp8-auto-fp8.log").state.current
    assert run.configured_kv_dtype == "auto"
    assert run.effective[:2] == ("fp8_e4m3", "pool_line")
    assert run.scales == "unknown"


def test_fp4_recipe_name_beats_the_logical_torch_dtype():
    run = analyse("qwen3-235b-tp8-nvfp4-kv.log").state.current
    assert run.effective[0] == "nvfp4"


def test_old_auto_is_the_model_dtype():
    run = analyse("sglang-0.3-legacy.log").state.current
    assert run.effective[:2] == ("fp16", "model_dtype")
    assert not run.pools


def test_mla_pool_kind():
    run = analyse("deepseek-v3-tp8-mla.log").state.current
    assert {p.kind for p in run.pools.values()} == {"mla"}
    assert len(run.capacity) == 8  # 0.4.6 prints the capacity line on every TP rank


def test_swa_pools_are_kept_apart():
    run = analyse("gpt-oss-120b-tp4-e5m2-restart.log").state.current
    labels = {(p.rank, p.label) for p in run.pools.values()}
    assert ("TP0", "Full") in labels and ("TP0", "SWA") in labels
    assert run.primary_kv_pool().label == "Full"
    assert run.swa_split["full_tokens"] == run.primary_kv_pool().tokens


def test_memory_stays_bounded_on_long_runtime():
    base = ("[2026-01-01 10:00:00 TP0] Decode batch, #running-req: 5, #token: 100, token usage: "
            "0.50, cuda graph: True, gen throughput (token/s): 100.00, #queue-req: 0")
    a = session_of((base for _ in range(5000)), "x")
    rt = a.state.current.runtime
    assert rt.decode_batches == 5000
    assert len(rt.timeline) == rt.timeline.maxlen


def test_apply_tolerates_events_with_missing_fields():
    from parsers import Event

    a = Session()
    for kind in ("decode_batch", "prefill_batch", "kv_pool", "capacity", "retraction", "oom",
                 "server_args", "kv_dtype", "mamba_pool", "load_weight_end"):
        a.state.apply(Event(kind=kind), "x", 1, "text")
    a.report()  # must not raise


def test_override_lines_before_the_dump_belong_to_that_start():
    """SGLang logs model-specific KV dtype overrides while resolving arguments, just before the
    dump: they open the start, and the dump joins it (corpus: repofile-54751690598)."""
    start = [
        "[2026-05-13 03:21:06] Setting KV cache dtype to fp8_e4m3 for DeepseekV4ForCausalLM.",
        "[2026-05-13 03:21:07] server_args=ServerArgs(model_path='/m/DeepSeek-V4', tp_size=4, "
        "kv_cache_dtype='fp8_e4m3')",
        "[2026-05-13 02:15:17 TP0] Load weight begin. avail mem=180.00 GB",
        "[2026-05-13 02:15:30 TP0] max_total_num_tokens=1000, chunked_prefill_size=8192, "
        "max_prefill_tokens=16384, max_running_requests=500, context_len=4096, "
        "available_gpu_mem=3.00 GB",
    ]
    a = session_of(start, "x")
    assert len(a.state.runs) == 1
    run = a.state.current
    assert run.kv_dtype_lines and run.server_args["tp_size"] == 4
    a.feed_lines("x", start, 5)  # the same server started again
    assert len(a.state.runs) == 2
    assert a.state.runs[1].kv_dtype_lines and a.state.runs[1].server_args
    assert a.state.runs[1].start.line == 6


def test_a_draft_model_never_becomes_the_model():
    """Speculative decoding loads a draft (EAGLE3, MTP/NextN) on the same ranks after the target:
    the report's model and weights stay the target's."""
    lines = [
        "[2026-01-01 10:00:00] server_args=ServerArgs(model_path='/m/Llama-3.1-8B', tp_size=1, "
        "speculative_algorithm='EAGLE3')",
        "[2026-01-01 10:00:01 TP0] Load weight begin. avail mem=78.00 GB",
        "[2026-01-01 10:00:09 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, "
        "avail mem=63.00 GB, mem usage=15.00 GB.",
        "[2026-01-01 10:00:10 TP0] Load weight begin. avail mem=20.00 GB",
        "[2026-01-01 10:00:11 TP0] Load weight end. type=LlamaForCausalLMEagle3, "
        "dtype=torch.bfloat16, avail mem=18.51 GB, mem usage=1.49 GB.",
    ]
    a = session_of(lines, "x")
    run = a.state.current
    assert len(a.state.runs) == 1
    assert run.weights["TP0"]["model_class"] == "LlamaForCausalLM"
    assert run.draft_weights["TP0"]["model_class"] == "LlamaForCausalLMEagle3"
    report = a.report().to_json()
    assert report["model"]["model_class"] == "LlamaForCausalLM"
    assert report["weights"]["usage_gib"] == 15.0
    assert report["weights"]["avail_before_gib"] == 78.0  # the target's baseline


def test_a_cut_dump_leaves_the_kv_dtype_setting_unknown():
    """A pasted `server_args=ServerArgs(...)` cut before `kv_cache_dtype` says nothing about the
    setting: `auto` (SGLang's default) only when the dump lists every argument
    (`run.args_complete`); a dump that prints the field keeps its value."""
    cut = ["[2026-01-01 10:00:00] server_args=ServerArgs(model_path='/m/Llama-3.1-8B', "
           "tp_size=1, dtype='auto', trust_remote_co"]
    a = session_of(cut, "x")
    run = a.state.current
    assert run.server_args.get("model_path") == "/m/Llama-3.1-8B"
    assert run.configured_kv_dtype is None
    assert a.report().kv_cache.configured_dtype is None
    run.args_complete = True
    assert run.configured_kv_dtype == "auto"
    whole = ["[2026-01-01 10:00:00] server_args=ServerArgs(model_path='/m/Llama-3.1-8B', "
             "tp_size=1, kv_cache_dtype='fp8_e4m3', dtype='auto')"]
    b = session_of(whole, "x")
    assert b.state.current.configured_kv_dtype == "fp8_e4m3"
    b2 = session_of([whole[0].replace("'fp8_e4m3'", "'auto'")], "x")
    assert b2.state.current.configured_kv_dtype == "auto"


def _weights_then(second: str, dump: str) -> Session:
    lines = [
        f"[2026-01-01 10:00:00] server_args=ServerArgs(model_path='/m/Llama-3.1-8B', {dump})",
        "[2026-01-01 10:00:01 TP0] Load weight begin. avail mem=78.00 GB",
        "[2026-01-01 10:00:09 TP0] Load weight end. elapsed=8.00 s, type=LlamaForCausalLM, "
        "avail mem=63.00 GB, mem usage=15.00 GB.",
        second,
    ]
    a = session_of(lines, "x")
    return a


def test_a_classless_weight_end_never_overwrites_the_targets_weights():
    """SGLang prints `Load weight end. ... type=<class>` once per model runner, the draft
    worker's too (0.5.8 model_executor/model_runner.py:949-955; 0.5.23 :1371-1379), so a line
    with no class is a cut one: once the target's weights are known it is the draft's when a
    speculative config is present, else it is dropped. The overlap line (`Committed real weights
    after CUDA graph capture`, 0.5.23 model_runner_components/startup_weight_load.py:537) is
    never a draft's (draft workers are not supported there, :353)."""
    cut = "[2026-01-01 10:00:11 TP0] Load weight end. elapsed=1.49 s, ty"
    spec = _weights_then(cut, "tp_size=1, speculative_algorithm='EAGLE3')")
    run = spec.state.current
    assert len(spec.state.runs) == 1
    assert run.weights["TP0"]["model_class"] == "LlamaForCausalLM"
    assert run.weights["TP0"]["usage_gib"] == 15.0
    assert run.draft_weights["TP0"]["elapsed_s"] == 1.49
    assert spec.report().weights.usage_gib == 15.0
    plain = _weights_then(cut, "tp_size=1, speculative_algorithm=None)")
    run = plain.state.current
    assert run.weights["TP0"]["usage_gib"] == 15.0 and not run.draft_weights
    overlap = ("[2026-01-01 10:00:30 TP0] Load weight end. Committed real weights after CUDA "
               "graph capture in 4.20 s (capture overlap window 3.10 s, startup overlap total "
               "9.00 s)")
    run = _weights_then(overlap, "tp_size=1, speculative_algorithm='EAGLE3')").state.current
    assert run.weights["TP0"]["usage_gib"] == 15.0 and not run.draft_weights


def test_the_fp4_fall_back_means_the_model_dtype_not_fp4():
    """`--kv-cache-dtype fp4_e2m1` on a torch without float4_e2m1fn_x2: SGLang serves the KV
    cache in the model dtype (0.5.8 model_executor/model_runner.py:1576-1579). Without the
    rank-0 `Using KV cache dtype` line the configured fp4 must not read as the KV dtype."""
    lines = [
        "[2026-01-01 10:00:00] server_args=ServerArgs(model_path='/m/Llama-3.1-8B', tp_size=2, "
        "kv_cache_dtype='fp4_e2m1')",
        "[2026-01-01 10:00:09 TP1] Load weight end. type=LlamaForCausalLM, "
        "dtype=torch.bfloat16, avail mem=63.00 GB, mem usage=15.00 GB.",
        "[2026-01-01 10:00:09 TP1] --kv-cache-dtype falls back to 'auto' because this torch "
        "version does not support torch.float4_e2m1fn_x2",
    ]
    a = session_of(lines, "x")
    run = a.state.current
    assert len(a.state.runs) == 1
    assert run.configured_kv_dtype == "fp4_e2m1"
    dtype, basis, ev = run.effective
    assert (dtype, basis) == ("bf16", "fallback_line") and ev.line == 3
    b = Session()
    b.feed_lines("x", [lines[0], lines[2]])  # no weight line: the model dtype is unknown
    assert b.state.current.effective[:2] == ("auto", "fallback_line")


def test_dsa_backend_lines_state_the_kv_dtype_and_do_not_split_the_start():
    """`Set DSA backends for fp8_e4m3 KV Cache` is logged while SGLang resolves its arguments,
    just before the dump (0.5.9 server_args.py:1179; 0.5.23 arg_groups/overrides.py:738): it
    joins the start the dump makes."""
    start = [
        "[2026-05-13 03:21:06] Setting KV cache dtype to fp8_e4m3 for DeepSeek DSA on SM10 "
        "device.",
        "[2026-05-13 03:21:06] Set DSA backends for fp8_e4m3 KV Cache: prefill=flashmla_auto, "
        "decode=flashmla_kv.",
        "[2026-05-13 03:21:07] server_args=ServerArgs(model_path='/m/DeepSeek-V3.2', tp_size=8, "
        "kv_cache_dtype='fp8_e4m3')",
        "[2026-05-13 02:15:30 TP0] max_total_num_tokens=1000, chunked_prefill_size=8192, "
        "max_prefill_tokens=16384, max_running_requests=500, context_len=4096, "
        "available_gpu_mem=3.00 GB",
    ]
    a = session_of(start, "x")
    assert len(a.state.runs) == 1
    assert a.state.current.effective[0] == "fp8_e4m3"
    a.feed_lines("x", start[1:], 5)  # a restart that prints only the backend line before its dump
    assert len(a.state.runs) == 2 and a.state.runs[1].start.line == 6


def test_the_dsa_tp_mode_line_is_a_start_line_that_states_the_sizes():
    """`DSA with TP mode is active, dp_size=1, tp_size=4, ...` is logged while SGLang resolves its
    arguments, before the dump (0.5.8 server_args.py:1147, 0.5.9 :1247; `attn_dp_size=` in
    0.5.23 arg_groups/model_hook.py:332): it states TP and DP, and a restart that prints it
    opens the new run there, never leaving it to the run before."""
    tp_line = ("[2026-05-01 15:16:08] WARNING server_args.py:1248: DSA with TP mode is active, "
               "dp_size=1, tp_size=4, attn_tp_size=4, attention weights will be sharded across "
               "4 ranks.")
    runtime = ["[2026-05-01 15:10:00 TP0] Decode batch, #running-req: 3, #token: 300, "
               "token usage: 0.01, cuda graph: True, gen throughput (token/s): 50.00, "
               "#queue-req: 0"]
    start = [tp_line,
             "[2026-05-01 15:16:08] Setting KV cache dtype to bfloat16 for DeepSeek DSA on SM8 "
             "device.",
             "[2026-05-01 15:16:08] server_args=ServerArgs(model_path='/m/DeepSeek-V3.2', "
             "tp_size=4, kv_cache_dtype='bfloat16')"]
    a = session_of(runtime + start, "x")
    assert len(a.state.runs) == 2
    first, run = a.state.runs
    assert first.server_args.get("tp_size") is None
    assert run.start.line == 4 and run.opened_ts == "2026-05-01 15:16:08"
    assert run.server_args["tp_size"] == 4
    alone = session_of([tp_line], "x")
    sa = alone.state.current.server_args
    assert (sa.get("tp_size"), sa.get("dp_size")) == (4, 1)
    cut = Session()  # a dump cut before tp_size: the sizes the line stated stay
    cut.feed_lines("x", [tp_line, "[2026-05-01 15:16:08] server_args=ServerArgs(model_path="
                         "'/m/DeepSeek-V3.2', kv_cache_dtype='bfloat16', trust_remote_co"])
    sa = cut.state.current.server_args
    assert len(cut.state.runs) == 1
    assert (sa.get("model_path"), sa.get("tp_size"), sa.get("dp_size")) == (
        "/m/DeepSeek-V3.2", 4, 1)
    newer = Session()
    newer.feed_lines("x", ["[2026-05-01 15:16:08] DSA with TP mode is active, attn_dp_size=2, "
                           "tp_size=8, attn_tp_size=4, attention weights will be sharded "
                           "across 4 ranks."])
    sa = newer.state.current.server_args
    assert (sa.get("tp_size"), sa.get("attn_dp_size")) == (8, 2)


def test_start_up_steps_are_read_and_never_open_a_run():
    """`Init torch distributed ends. mem usage=.. GB` (0.5.8 model_executor/model_runner.py:
    800-802) and `Capture cuda graph begin. ... avail mem=.. GB` (:1999-2001) sit inside one
    start-up: they give their rank's figure and its rank tag, and the start-up stays one run."""
    lines = [
        "[2026-01-01 10:00:00] server_args=ServerArgs(model_path='/m/Llama-3.1-8B', tp_size=8, "
        "kv_cache_dtype='auto')",
        "[2026-01-01 10:00:05 TP7] Init torch distributed ends. mem usage=1.77 GB",
        "[2026-01-01 10:00:05 TP0] Init torch distributed ends. mem usage=1.96 GB",
        "[2026-01-01 10:00:06 TP0] Load weight begin. avail mem=78.00 GB",
        "[2026-01-01 10:00:09 TP0] Load weight end. type=LlamaForCausalLM, "
        "dtype=torch.bfloat16, avail mem=63.00 GB, mem usage=15.00 GB.",
        "[2026-01-01 10:00:12 TP0] Memory pool end. avail mem=12.00 GB",
        "[2026-01-01 10:00:12 TP0] Capture cuda graph begin. This can take up to several "
        "minutes. avail mem=11.82 GB",
        "[2026-01-01 10:00:20 TP0] max_total_num_tokens=1000, chunked_prefill_size=8192, "
        "max_prefill_tokens=16384, max_running_requests=500, context_len=4096, "
        "available_gpu_mem=3.00 GB",
    ]
    a = session_of(lines, "x")
    assert len(a.state.runs) == 1
    run = a.state.current
    assert run.dist_init == {"TP7": 1.77, "TP0": 1.96}
    assert run.cuda_graph_begin == {"TP0": 11.82}
    assert "TP7" in run.ranks
    b = Session()  # an excerpt that starts at the step lines: still one run with its dump
    b.feed_lines("x", lines[1:3] + lines[:1] + lines[3:])
    assert len(b.state.runs) == 1


def test_a_change_of_rank_tag_shape_is_a_new_server_start():
    """SGLang's scheduler tags its lines `[DP{d}] [PP{p}] [ATTN_CP..] [MOE_DP..] [TP{t}]
    [EP{e}]`, each part present by the start's configuration (0.5.8 managers/scheduler.py:
    2896-2903, 0.5.23 :6279-6291), so every rank of one start tags alike. A start-up line
    tagged in another shape, after the run started up, is another start whose dump the log
    does not hold; runtime lines never split a run by their tags."""
    first = [
        "[2026-01-01 10:00:00 TP0] Load weight begin. avail mem=78.00 GB",
        "[2026-01-01 10:00:09 TP1] Load weight begin. avail mem=78.00 GB",
        "[2026-01-01 10:00:20 TP0] max_total_num_tokens=1000, chunked_prefill_size=8192, "
        "max_prefill_tokens=16384, max_running_requests=500, context_len=4096, "
        "available_gpu_mem=3.00 GB",
        "[2026-01-01 10:01:00 TP0] Decode batch, #running-req: 3, #token: 300, token usage: "
        "0.01, cuda graph: True, gen throughput (token/s): 50.00, #queue-req: 0",
    ]
    second = [
        "[2026-01-01 11:00:00 DP0 TP0 EP0] Load weight begin. avail mem=78.00 GB",
        "[2026-01-01 11:00:00 DP1 TP1 EP1] Load weight begin. avail mem=78.00 GB",
        "[2026-01-01 11:00:20 DP0 TP0 EP0] max_total_num_tokens=2000, chunked_prefill_size=8192, "
        "max_prefill_tokens=16384, max_running_requests=500, context_len=4096, "
        "available_gpu_mem=3.00 GB",
    ]
    a = session_of(first + second, "x")
    assert len(a.state.runs) == 2
    assert a.state.runs[1].primary_capacity()["max_total_num_tokens"] == 2000
    assert a.state.runs[1].ranks == {"DP0 TP0 EP0", "DP1 TP1 EP1"}
    # before the run started up a new shape is the same start-up (an excerpt of mixed pastes)
    b = session_of(first[:2] + second[:1], "x")
    assert len(b.state.runs) == 1
    # runtime lines in another shape do not split
    c = session_of([*first, first[-1].replace(" TP0]", " DP0 TP0]")], "x")
    assert len(c.state.runs) == 1
    # vLLM's tags differ within one start (engine core, workers): no split there
    v = Session()
    v.feed_lines("x", [
        "(VllmWorker rank=0 pid=1) INFO 07-25 13:42:30 [gpu_model_runner.py:1] Model loading "
        "took 15.0 GiB and 10.000000 seconds",
        "(EngineCore_DP0 pid=1) INFO 07-25 13:42:38 [kv_cache_utils.py:2146] GPU KV cache size: "
        "1,823,372 tokens",
        "(EngineCore_DP0 pid=1) INFO 07-25 13:42:39 [gpu_model_runner.py:1] Model loading took "
        "15.0 GiB and 10.000000 seconds",
    ])
    assert len(v.state.runs) == 1
