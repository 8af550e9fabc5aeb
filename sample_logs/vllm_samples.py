"""The vLLM sample logs (deterministic), written by `generate.py` beside the SGLang ones.

Each log follows vLLM's own format strings for the release it imitates (the wheels' files are
named beside each line) and its numbers follow vLLM's arithmetic, computed here independently of
kvtui: pages of `block x kv_heads_per_gpu x (head_dim + v_head_dim) x dtype bytes` per layer,
`num_blocks = available // (page x layers per group)`, the hybrid block raised to hold one Mamba
state, and the "GPU KV cache size" each release prints.

- vllm-llama31-8b-tp2-fp8-unscaled.log: 0.25.0, Llama-3.1-8B-Instruct at TP 2 with
  `--kv-cache-dtype fp8` and no k/v scales in the checkpoint (the scale-1.0 warning on both
  workers), then a busy hour with preemptions.
- vllm-qwen3-next-80b-tp4-hybrid.log: 0.11.0, Qwen3-Next-80B-A3B-Instruct at TP 4 (2 KV heads:
  each GPU keeps a replica of one), the hybrid allocator's block size and Mamba padding, and the
  0.9-0.19 "GPU KV cache size" that divides the pool by its four layer groups.
- vllm-llama31-70b-tp8-bf16.log: 0.33.0 (the process prefix inside the format, one capacity
  line), Llama-3.1-70B-Instruct at TP 8 in BF16, behind docker compose's `name  | ` column.
- vllm-gpt-oss-120b-tp2-extensible.log: 0.34.0, gpt-oss-120b at TP 2 on H100s with the
  extensible KV cache (sized after warmup, gpu_memory_utilization unset: 1.0) and its sliding
  window group reserving two scheduler batches in flight (async scheduling, 0.26+).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta

GIB = 1 << 30


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


@dataclass
class VLog:
    """A vLLM log being written: a clock and the lines, each with vLLM's head."""

    t: datetime
    compose: str = ""  # docker compose's "name  | " column
    lines: list[str] = field(default_factory=list)

    def tick(self, seconds: float) -> None:
        self.t += timedelta(seconds=seconds)

    def add(self, proc: str | None, level: str, where: str, msg: str) -> None:
        # logger.py _FORMAT (0.8-0.32; 0.33 puts "(%(vllm_process_name)s pid=%(process)d) "
        # into the format itself, which reads the same).
        head = f"({proc}) " if proc else ""
        self.lines.append(f"{self.compose}{head}{level} {self.t:%m-%d %H:%M:%S} [{where}] {msg}")

    def raw(self, text: str) -> None:
        self.lines.append(self.compose + text)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def fmt_gib(x: float) -> str:
    """format_gib: round(x / GiB, 2) printed as a float (utils/mem_utils.py, 0.14+)."""
    return f"{round(x / GIB, 2)}"


def access(log: VLog, rng: random.Random) -> None:
    port = rng.randint(30000, 60000)
    log.raw(f"(APIServer pid=1) INFO:     10.0.3.{rng.randint(2, 250)}:{port} - "
            "\"POST /v1/chat/completions HTTP/1.1\" 200 OK")


def stats(log: VLog, *, prompt: float, gen: float, running: int, waiting: int, usage: float,
          hit: float, preempt: int = 0, engine: bool = True) -> None:
    """v1/metrics/loggers.py LoggingStatLogger.log (0.14+: "Preemptions" when > 0)."""
    parts = [f"Avg prompt throughput: {prompt:.1f} tokens/s",
             f"Avg generation throughput: {gen:.1f} tokens/s", f"Running: {running} reqs",
             f"Waiting: {waiting} reqs"]
    if preempt:
        parts.append(f"Preemptions: {preempt}")
    parts += [f"GPU KV cache usage: {usage * 100:.1f}%", f"Prefix cache hit rate: {hit:.1f}%"]
    log.add("APIServer pid=1", "INFO", "loggers.py:271",
            ("Engine 000: " if engine else "") + ", ".join(parts))


def runtime(log: VLog, rng: random.Random, *, steps: int, pool: int, pressure: bool,
            preemptions: bool) -> None:
    """Stats every 10 s, access lines between them; under pressure the pool fills up."""
    running, waiting, used = 0, 0, 0
    for step in range(steps):
        for _ in range(rng.randint(0, 3)):
            log.tick(rng.uniform(0.5, 3.0))
            access(log, rng)
        log.tick(10.0)
        if pressure:
            running = min(96, running + rng.randint(0, 6))
            waiting = max(0, waiting + rng.randint(-2, 5))
            used = min(pool, used + rng.randint(pool // 40, pool // 12))
        else:
            running = max(1, min(48, running + rng.randint(-3, 4)))
            waiting = max(0, waiting + rng.randint(-1, 1))
            used = max(0, min(int(pool * 0.7), used + rng.randint(-pool // 30, pool // 25)))
        usage = used / pool
        preempt = 0
        if preemptions and usage > 0.985 and step % 3 == 0:
            preempt = rng.randint(1, 4)
            running -= preempt
            waiting += preempt
            used = int(pool * rng.uniform(0.96, 0.99))
        stats(log, prompt=rng.uniform(0, 9000) if step % 4 == 0 else 0.0,
              gen=running * rng.uniform(18.0, 31.0), running=max(0, running), waiting=waiting,
              usage=usage, hit=rng.uniform(20.0, 60.0), preempt=preempt)


# --------------------------------------------------------------------------------------------
def llama8b_fp8_unscaled() -> str:
    """0.25.0: banner (entrypoints/api_utils.py:339), non-default args (api_utils.py:273),
    engine config (v1/engine/core.py:115), the fp8 line (config/cache.py:287), the scale-1.0
    warning (quantization/kv_cache.py, 0.12+ wording), two capacity lines (kv_cache_utils.py
    2146-2147)."""
    rng = random.Random(1301)
    log = VLog(datetime(2026, 3, 2, 14, 5, 11))
    model = "meta-llama/Llama-3.1-8B-Instruct"
    tp, layers, heads, hd = 2, 32, 8, 128
    log.add("APIServer pid=1", "INFO", "api_utils.py:339",
            " \u2584\u2584 \u2584\u2588 \u2588     \u2588     \u2588 \u2580\u2584\u2580 \u2588  "
            "version 0.25.0")
    log.add("APIServer pid=1", "INFO", "api_utils.py:273",
            f"non-default args: {{'model_tag': '{model}', 'model': '{model}', "
            "'tensor_parallel_size': 2, 'max_model_len': 131072, 'kv_cache_dtype': 'fp8', "
            "'max_num_seqs': 96, 'enable_prefix_caching': True}")
    log.add("APIServer pid=1", "INFO", "model.py:532", "Resolved architecture: LlamaForCausalLM")
    log.add("APIServer pid=1", "INFO", "model.py:1543", "Using max model len 131072")
    log.add("APIServer pid=1", "INFO", "cache.py:287",
            "Using fp8 data type to store kv cache. It reduces the GPU memory footprint and "
            "boosts the performance. Meanwhile, it may cause accuracy drop without a proper "
            "scaling factor")
    log.add("APIServer pid=1", "INFO", "scheduler.py:226",
            "Chunked prefill is enabled with max_num_batched_tokens=8192.")
    log.tick(4)
    log.add("EngineCore_DP0 pid=212", "INFO", "core.py:115",
            f"Initializing a V1 LLM engine (v0.25.0) with config: model='{model}', "
            f"speculative_config=None, tokenizer='{model}', skip_tokenizer_init=False, "
            "tokenizer_mode=auto, revision=None, tokenizer_revision=None, "
            "trust_remote_code=False, dtype=torch.bfloat16, max_seq_len=131072, "
            "download_dir=None, load_format=auto, tensor_parallel_size=2, "
            "pipeline_parallel_size=1, data_parallel_size=1, disable_custom_all_reduce=False, "
            "quantization=None, enforce_eager=False, kv_cache_dtype=fp8, device_config=cuda, "
            f"seed=0, served_model_name={model}, enable_prefix_caching=True, "
            "enable_chunked_prefill=True, pooler_config=None, compilation_config={'level': 3}")
    weights = 16_060_522_496 / tp  # Llama-3.1-8B in bf16, split over TP 2
    log.tick(19)
    for w in range(tp):
        log.add(f"Worker_TP{w} pid={230 + w}", "WARNING", "kv_cache.py:151",
                "Using KV cache scaling factor 1.0 for fp8_e4m3. If this is unintended, verify "
                "that k/v_scale scaling factors are properly set in the checkpoint.")
        log.add(f"Worker_TP{w} pid={230 + w}", "INFO", "gpu_model_runner.py:5307",
                f"Model loading took {fmt_gib(weights)} GiB memory and 17.{412385 + w * 311} "
                "seconds")
    log.tick(21)
    total = 44.52 * GIB  # an L40S as torch.cuda.mem_get_info sees it
    util = 0.9
    graphs = int(0.41 * GIB)
    avail = int(total * util) - int(weights) - int(1.93 * GIB) - graphs
    for w in range(tp):
        log.add(f"Worker_TP{w} pid={230 + w}", "INFO", "gpu_model_runner.py:6100",
                "Estimated CUDA graph memory: 0.41 GiB total")
        log.add(f"Worker_TP{w} pid={230 + w}", "INFO", "gpu_worker.py:460",
                f"Available KV cache memory: {fmt_gib(avail)} GiB")
    cg = graphs / total
    log.add("Worker_TP0 pid=230", "INFO", "gpu_worker.py:475",
            f"CUDA graph memory profiling is enabled (default since v0.21.0). The current "
            f"--gpu-memory-utilization={util:.4f} is equivalent to --gpu-memory-utilization="
            f"{util - cg:.4f} without CUDA graph memory profiling. To maintain the same "
            f"effective KV cache size as before, increase --gpu-memory-utilization to "
            f"{util + cg:.4f}. To disable, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.")
    # One group of 32 layers; 4 KV heads per GPU x (128 + 128) x 1 byte per token and layer.
    block_bytes = 16 * (heads // tp) * (hd + hd) * 1 * layers
    blocks = avail // block_bytes
    per_req = cdiv(131072, 16)
    conc = blocks / per_req
    tokens = int(conc * 131072)
    log.add("EngineCore_DP0 pid=212", "INFO", "kv_cache_utils.py:2146",
            f"GPU KV cache size: {tokens:,} tokens")
    log.add("EngineCore_DP0 pid=212", "INFO", "kv_cache_utils.py:2147",
            f"Maximum concurrency for 131,072 tokens per request: {conc:.2f}x")
    log.tick(34)
    for w in range(tp):
        log.add(f"Worker_TP{w} pid={230 + w}", "INFO", "gpu_model_runner.py:6181",
                "Graph capturing finished in 29 secs, took 0.38 GiB")
    log.add("EngineCore_DP0 pid=212", "INFO", "core.py:310",
            "init engine (profile, create kv cache, warmup model) took 92.41 seconds")
    log.add("APIServer pid=1", "INFO", "api_server.py:1912",
            "Starting vLLM API server 0 on http://0.0.0.0:8000")
    runtime(log, rng, steps=120, pool=tokens, pressure=True, preemptions=True)
    return log.text()


def qwen3_next_hybrid() -> str:
    """0.11.0: non-default args (entrypoints/utils.py:233), the hybrid block size and Mamba
    padding (model_executor/models/config.py:376/397), "Available KV cache memory: %.2f GiB"
    (v1/worker/gpu_worker.py), the grouped capacity lines (kv_cache_utils.py:1087/1091)."""
    rng = random.Random(1302)
    log = VLog(datetime(2026, 2, 11, 9, 30, 4))
    model = "Qwen/Qwen3-Next-80B-A3B-Instruct"
    tp = 4
    log.add("APIServer pid=1", "INFO", "api_server.py:1839", "vLLM API server version 0.11.0")
    log.add("APIServer pid=1", "INFO", "utils.py:233",
            f"non-default args: {{'model_tag': '{model}', 'model': '{model}', "
            "'tensor_parallel_size': 4, 'gpu_memory_utilization': 0.9}")
    log.add("APIServer pid=1", "INFO", "model.py:547",
            "Resolved architecture: Qwen3NextForCausalLM")
    log.add("APIServer pid=1", "INFO", "model.py:1510", "Using max model len 262144")
    # Qwen3-Next at TP 4: 2 KV heads -> 1 per GPU (replicated); one token of one attention
    # layer = 1 x (256 + 256) x 2 = 1024 B. Gated DeltaNet state per layer and request:
    # conv (128*16*2 + 128*32) // 4 x 3 x 2 B + ssm 32 // 4 x 128 x 128 x 2 B (auto: bf16).
    attn = 1 * (256 + 256) * 2
    mamba = (8192 // tp) * 3 * 2 + (32 // tp) * 128 * 128 * 2
    block = 16 * cdiv(mamba, 16 * attn)
    page = block * attn
    log.add("APIServer pid=1", "INFO", "config.py:376",
            f"Setting attention block size to {block} tokens to ensure that attention page size "
            "is >= mamba page size.")
    log.add("APIServer pid=1", "INFO", "config.py:397",
            f"Padding mamba page size by {100 * (page - mamba) / mamba:.2f}% to ensure that mamba "
            "page size and attention page size are exactly equal.")
    log.add("APIServer pid=1", "INFO", "scheduler.py:222",
            "Chunked prefill is enabled with max_num_batched_tokens=2048.")
    log.tick(6)
    log.add("EngineCore_DP0 pid=190", "INFO", "core.py:77",
            f"Initializing a V1 LLM engine (v0.11.0) with config: model='{model}', "
            f"speculative_config=None, tokenizer='{model}', skip_tokenizer_init=False, "
            "tokenizer_mode=auto, revision=None, tokenizer_revision=None, "
            "trust_remote_code=False, dtype=torch.bfloat16, max_seq_len=262144, "
            "download_dir=None, load_format=auto, tensor_parallel_size=4, "
            "pipeline_parallel_size=1, data_parallel_size=1, disable_custom_all_reduce=False, "
            "quantization=None, enforce_eager=False, kv_cache_dtype=auto, device_config=cuda, "
            f"seed=0, served_model_name={model}, enable_prefix_caching=False, "
            "chunked_prefill_enabled=True, pooler_config=None, compilation_config={'level': 3}")
    log.tick(88)
    weights = 37.22 * GIB
    for w in range(tp):
        log.add(f"Worker_TP{w} pid={210 + w}", "INFO", "gpu_model_runner.py:2653",
                f"Model loading took {weights / GIB:.4f} GiB and {82.1 + w * 0.37:.6f} seconds")
    log.tick(40)
    avails = [31.87, 31.85, 31.87, 31.86]  # GiB, one per worker (%.2f)
    for w in range(tp):
        log.add(f"Worker_TP{w} pid={210 + w}", "INFO", "gpu_worker.py:298",
                f"Available KV cache memory: {avails[w]:.2f} GiB")
    # 12 full-attention layers and 36 linear ones: groups of 12, 1 + 3 groups.
    block_bytes = page * 12
    blocks = min(int(a * GIB) // block_bytes for a in avails)  # the smallest worker wins
    tokens = blocks // 4 * block
    conc = blocks / (cdiv(262144, block) + 3)
    log.add("EngineCore_DP0 pid=190", "INFO", "kv_cache_utils.py:1087",
            f"GPU KV cache size: {tokens:,} tokens")
    log.add("EngineCore_DP0 pid=190", "INFO", "kv_cache_utils.py:1091",
            f"Maximum concurrency for 262,144 tokens per request: {conc:.2f}x")
    log.tick(51)
    for w in range(tp):
        log.add(f"Worker_TP{w} pid={210 + w}", "INFO", "gpu_model_runner.py:3480",
                "Graph capturing finished in 47 secs, took 1.12 GiB")
    runtime(log, rng, steps=60, pool=tokens, pressure=False, preemptions=False)
    return log.text()


def llama70b_bf16(tp: int = 8, tokens: int | None = None,
                  start: datetime | None = None) -> str:
    """0.33.0: the process prefix in the format (logger.py:28), format_gib memory, one capacity
    line "GPU KV cache size: ..., Maximum concurrency ..." (kv_cache_utils.py
    update_kv_cache_capacity), behind docker compose. `tokens`: the pool a restart at another
    `tp` sized (`restarts.py` asks kvtui's calculator)."""
    rng = random.Random(1303)
    log = VLog(start or datetime(2026, 7, 20, 18, 2, 40), compose="vllm-70b  | ")
    model = "meta-llama/Llama-3.1-70B-Instruct"
    layers = 80
    log.add("APIServer pid=1", "INFO", "api_utils.py:339",
            " \u2584\u2584 \u2584\u2588 \u2588     \u2588     \u2588 \u2580\u2584\u2580 \u2588  "
            "version 0.33.0")
    log.add("APIServer pid=1", "INFO", "api_utils.py:281",
            f"non-default args: {{'model_tag': '{model}', 'model': '{model}', "
            f"'tensor_parallel_size': {tp}, 'max_model_len': 131072, 'kv_cache_dtype': "
            "'bfloat16', "
            "'gpu_memory_utilization': 0.92}")
    log.add("APIServer pid=1", "INFO", "model.py:561", "Resolved architecture: LlamaForCausalLM")
    log.tick(5)
    log.add("EngineCore pid=98", "INFO", "core.py:140",
            f"Initializing a V1 LLM engine (v0.33.0) with config: model='{model}', "
            f"speculative_config=None, tokenizer='{model}', skip_tokenizer_init=False, "
            "tokenizer_mode=auto, revision=None, tokenizer_revision=None, "
            "trust_remote_code=False, dtype=torch.bfloat16, max_seq_len=131072, "
            f"download_dir=None, load_format=auto, tensor_parallel_size={tp}, "
            "pipeline_parallel_size=1, data_parallel_size=1, decode_context_parallel_size=1, "
            "dcp_comm_backend=ag_rs, disable_custom_all_reduce=False, quantization=None, "
            "quantization_config=None, enforce_eager=False, aux_output_config=None, "
            "kv_cache_dtype=bfloat16, device_config=cuda, seed=0, "
            f"served_model_name={model}, enable_prefix_caching=True, "
            "enable_chunked_prefill=True, pooler_config=None, compilation_config={'mode': 3}")
    log.tick(61)
    weights = 141_107_412_992 / tp
    for w in range(tp):
        log.add(f"Worker_TP{w} pid={120 + w}", "INFO", "gpu_model_runner.py:5089",
                f"Model loading took {fmt_gib(weights)} GiB memory and {54.2 + w * 0.11:.6f} "
                "seconds")
    log.tick(33)
    total = 79.19 * GIB  # an H100 80GB
    avail = int(total * 0.92) - int(weights) - int(3.52 * GIB) - int(0.86 * GIB)
    for w in range(tp):
        log.add(f"Worker_TP{w} pid={120 + w}", "INFO", "gpu_worker.py:773",
                f"Available KV cache memory: {fmt_gib(avail)} GiB")
    # TP 8 over 8 KV heads: 1 per GPU; 80 layers x 1 x (128 + 128) x 2 B per token.
    block_bytes = 16 * (8 // tp) * 256 * 2 * layers
    blocks = avail // block_bytes if tokens is None else tokens // 16
    conc = blocks / cdiv(131072, 16)
    tokens = int(conc * 131072) if tokens is None else tokens
    log.add("EngineCore pid=98", "INFO", "kv_cache_utils.py:1147",
            f"GPU KV cache size: {tokens:,} tokens, Maximum concurrency for 131,072 tokens per "
            f"request: {conc:.2f}x")
    log.tick(40)
    for w in range(tp):
        log.add(f"Worker_TP{w} pid={120 + w}", "INFO", "gpu_model_runner.py:6410",
                "Graph capturing finished in 38 secs, took 0.86 GiB")
    runtime(log, rng, steps=60, pool=tokens, pressure=False, preemptions=False)
    return log.text()


def gpt_oss_extensible() -> str:
    """0.34.0: the extensible KV cache (v1/worker/extensible_kv_cache.py) sizes the pool after
    warmup: measure_kv_cache_bytes = min(requested - non-KV use, free + committed - margin) -
    max(transient peak, torch growth) (:592-618), margin max(1 GiB, 0.75 x peak) (:64-65),
    requested = ceil(total x 1.0) (v1/worker/utils.py:742-743; utilization None -> 1.0,
    config/cache.py:494-500), capped by the profiled capacity (kv_cache_planning.py:1883-1884);
    then "Memory after warmup" (:693-705), "Extended KV cache to %d blocks (%.2f GiB)." (:537)
    and the capacity line from the final blocks (kv_cache_planning.py:1864-1907, 1169).
    gpt-oss-120b: 18 sliding-window layers (128 tokens) and 18 full, 8 KV heads of 64, one group
    of each; a window group holds cdiv(min(127 + 2 x 8192, len), 16) + 1 blocks per request
    (v1/kv_cache_interface.py:919-955; two batches: config/vllm.py:560-575; 8192 the API
    server's max_num_batched_tokens on an H100, engine/arg_utils.py:3026-3029)."""
    rng = random.Random(3401)
    log = VLog(datetime(2026, 11, 3, 9, 14, 5))
    model = "openai/gpt-oss-120b"
    tp, max_len = 2, 131072
    log.add("APIServer pid=1", "INFO", "api_utils.py:339",
            " \u2584\u2584 \u2584\u2588 \u2588     \u2588     \u2588 \u2580\u2584\u2580 \u2588  "
            "version 0.34.0")
    log.add("APIServer pid=1", "INFO", "api_utils.py:281",
            f"non-default args: {{'model_tag': '{model}', 'model': '{model}', "
            f"'tensor_parallel_size': {tp}, 'max_model_len': {max_len}}}")
    log.add("APIServer pid=1", "INFO", "model.py:561", "Resolved architecture: GptOssForCausalLM")
    log.tick(6)
    log.add("EngineCore pid=77", "INFO", "core.py:140",
            f"Initializing a V1 LLM engine (v0.34.0) with config: model='{model}', "
            f"speculative_config=None, tokenizer='{model}', skip_tokenizer_init=False, "
            "tokenizer_mode=auto, revision=None, tokenizer_revision=None, "
            f"trust_remote_code=False, dtype=torch.bfloat16, max_seq_len={max_len}, "
            f"download_dir=None, load_format=auto, tensor_parallel_size={tp}, "
            "pipeline_parallel_size=1, data_parallel_size=1, decode_context_parallel_size=1, "
            "dcp_comm_backend=ag_rs, disable_custom_all_reduce=False, quantization=mxfp4, "
            "quantization_config=None, enforce_eager=False, aux_output_config=None, "
            "kv_cache_dtype=auto, device_config=cuda, seed=0, "
            f"served_model_name={model}, enable_prefix_caching=True, "
            "enable_chunked_prefill=True, pooler_config=None, compilation_config={'mode': 3}")
    log.tick(48)
    weights = int(30.45 * GIB)
    for w in range(tp):
        log.add(f"Worker_TP{w} pid={90 + w}", "INFO", "gpu_model_runner.py:5120",
                f"Model loading took {fmt_gib(weights)} GiB memory and {41.7 + w * 0.2:.6f} "
                "seconds")
    log.tick(21)
    total = int(79.19 * GIB)  # an H100 80GB; the utilization unset: 1.0
    requested = total
    non_torch, graphs_est, activations = int(1.21 * GIB), int(0.93 * GIB), int(2.1 * GIB)
    estimate = requested - weights - non_torch - activations - graphs_est  # gpu_worker.py:775
    for w in range(tp):
        log.add(f"Worker_TP{w} pid={90 + w}", "INFO", "gpu_worker.py:796",
                f"Available KV cache memory: {fmt_gib(estimate)} GiB")
    # TP 2 over 8 KV heads: 4 per GPU; (64 + 64) x 2 B each; 16-token blocks; groups of 18.
    block_bytes = 16 * 4 * 128 * 2 * 18
    capacity = estimate // block_bytes
    log.tick(52)
    # after warmup and CUDA graph capture (free memory at startup: the whole GPU here)
    committed = int(38.0 * GIB)
    graphs = int(0.88 * GIB)
    non_kv = weights + non_torch + graphs
    free = total - non_kv - committed
    peak, growth = int(2.1 * GIB), int(1.4 * GIB)
    kept = max(peak, growth)
    margin = max(GIB, int(peak * 0.75))
    measured = min(requested - non_kv, free + committed - margin) - kept
    blocks = min(measured // block_bytes, capacity)
    for w in range(tp):
        log.add(f"Worker_TP{w} pid={90 + w}", "INFO", "extensible_kv_cache.py:694",
                f"Memory after warmup: {fmt_gib(free)} GiB free, {fmt_gib(committed)} GiB "
                f"committed to the KV cache, {fmt_gib(kept)} GiB kept for transient activations "
                f"({fmt_gib(peak)} GiB allocated at peak, {fmt_gib(growth)} GiB of torch "
                f"reservation growth); {measured // block_bytes} KV cache blocks "
                f"({fmt_gib(measured // block_bytes * block_bytes)} GiB) fit within the "
                f"requested {fmt_gib(requested)} GiB. Torch may reserve up to "
                f"{fmt_gib(weights + free - (measured - committed))} GiB.")
    for w in range(tp):
        log.add(f"Worker_TP{w} pid={90 + w}", "INFO", "extensible_kv_cache.py:537",
                f"Extended KV cache to {blocks} blocks ({blocks * block_bytes / GIB:.2f} GiB).")
    per_request = cdiv(max_len, 16) + cdiv(min(127 + 2 * 8192, max_len), 16) + 1
    conc = blocks / per_request
    log.add("EngineCore pid=77", "INFO", "kv_cache_planning.py:1169",
            f"GPU KV cache size: {int(conc * max_len):,} tokens, Maximum concurrency for "
            f"{max_len:,} tokens per request: {conc:.2f}x")
    log.tick(3)
    runtime(log, rng, steps=40, pool=int(conc * max_len), pressure=False, preemptions=False)
    return log.text()


SAMPLES = {
    "vllm-llama31-8b-tp2-fp8-unscaled.log": llama8b_fp8_unscaled,
    "vllm-qwen3-next-80b-tp4-hybrid.log": qwen3_next_hybrid,
    "vllm-llama31-70b-tp8-bf16.log": llama70b_bf16,
    "vllm-gpt-oss-120b-tp2-extensible.log": gpt_oss_extensible,
}


def render_all() -> Iterator[tuple[str, str]]:
    for name, make in SAMPLES.items():
        yield name, make()
