"""The SGLang sample logs (deterministic: same bytes every run), written by `generate.py`.

They are modelled line for line on SGLang's own format strings (see the version notes by
each scenario) and their numbers follow SGLang's capacity arithmetic, so a pool line, its
capacity line and the weight/memory lines agree with each other the way they do on a real server.
`generate.py` writes them with the vLLM logs (`vllm_samples.py`) and the restarted servers'
(`restarts.py`, which builds on this module's helpers).

The runtime helpers (`decode_line`, `prefill_line`, `access_line`) are reused by the
benchmarks in bench/ to make multi-million-line logs.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

GIB = 1 << 30
HERE = Path(__file__).resolve().parent


# --------------------------------------------------------------------------------------------
# A clock that advances in small steps, formatting SGLang's prefix.
@dataclass
class Clock:
    t: datetime
    time_only: bool = False

    def tick(self, seconds: float) -> None:
        self.t += timedelta(seconds=seconds)

    def stamp(self) -> str:
        return self.t.strftime("%H:%M:%S" if self.time_only else "%Y-%m-%d %H:%M:%S")

    def prefix(self, rank: str | None = None) -> str:
        return f"[{self.stamp()}{' ' + rank if rank else ''}] "


# --------------------------------------------------------------------------------------------
# ServerArgs dumps.
def server_args_repr(fields: dict[str, object]) -> str:
    return "server_args=ServerArgs(" + ", ".join(f"{k}={v!r}" for k, v in fields.items()) + ")"


def server_args_dict(fields: dict[str, object]) -> str:
    return "server_args=" + repr(dict(fields))


def base_server_args(model_path: str, **over: object) -> dict[str, object]:
    """A realistic 0.5.x field set, in 0.5.9's order (order differs by version; parsers must not
    rely on it). Includes the look-alike fields that must not be taken for tp_size and
    kv_cache_dtype."""
    f: dict[str, object] = {
        "model_path": model_path, "tokenizer_path": model_path, "tokenizer_mode": "auto",
        "skip_tokenizer_init": False, "load_format": "auto", "model_loader_extra_config": "{}",
        "trust_remote_code": True, "context_length": None, "is_embedding": False,
        "enable_multimodal": None, "revision": None, "model_impl": "auto", "host": "0.0.0.0",
        "port": 30000, "skip_server_warmup": False, "warmups": None, "nccl_port": None,
        "dtype": "auto", "quantization": None, "quantization_param_path": None,
        "kv_cache_dtype": "auto", "enable_fp32_lm_head": False, "mem_fraction_static": 0.85,
        "max_running_requests": None, "max_queued_requests": None, "max_total_tokens": None,
        "chunked_prefill_size": 8192, "max_prefill_tokens": 16384,
        "schedule_policy": "fcfs", "schedule_conservativeness": 1.0, "page_size": 1,
        "hybrid_kvcache_ratio": None, "swa_full_tokens_ratio": 0.8,
        "disable_hybrid_swa_memory": False, "device": "cuda", "tp_size": 1, "pp_size": 1,
        "pp_max_micro_batch_size": None, "stream_interval": 1, "stream_output": False,
        "random_seed": 42, "watchdog_timeout": 300, "dist_timeout": None,
        "download_dir": None, "base_gpu_id": 0, "gpu_id_step": 1, "log_level": "info",
        "log_requests": False, "log_requests_level": 2, "show_time_cost": False,
        "enable_metrics": False, "decode_log_interval": 40, "api_key": None,
        "served_model_name": model_path, "dp_size": 1, "load_balance_method": "round_robin",
        "attention_backend": None, "sampling_backend": "flashinfer",
        "speculative_algorithm": None, "speculative_draft_model_path": None,
        "speculative_draft_kv_cache_dtype": None, "speculative_num_steps": None,
        "ep_size": 1, "moe_a2a_backend": "none", "moe_runner_backend": "auto",
        "enable_dp_attention": False, "enable_dp_lm_head": False, "moe_dense_tp_size": None,
        "disable_radix_cache": False, "cuda_graph_max_bs": 256, "cuda_graph_bs": None,
        "disable_cuda_graph": False, "enable_torch_compile": False,
        "mamba_ssm_dtype": "float32", "max_mamba_cache_size": None,
    }
    f.update(over)
    return f


# --------------------------------------------------------------------------------------------
# Runtime lines (shared with the benchmarks).
def decode_line(fmt: str, *, running: int, tokens: int, usage: float, gen: float, queue: int,
                mamba: tuple[int, float] | None = None, graph: bool = True) -> str:
    """fmt: "0.3" (<=0.4.3), "0.4.6", "0.5.5" (trailing ", "), "0.5.9" (no trailing comma)."""
    if fmt in ("0.3", "0.4.6"):  # the same line in both
        return (f"Decode batch. #running-req: {running}, #token: {tokens}, token usage: "
                f"{usage:.2f}, gen throughput (token/s): {gen:.2f}, #queue-req: {queue}")
    if mamba is not None:
        usage_part = (f"#full token: {tokens}, full token usage: {usage:.2f}, mamba num: "
                      f"{mamba[0]}, mamba usage: {mamba[1]:.2f}")
    else:
        usage_part = f"#token: {tokens}, token usage: {usage:.2f}"
    line = (f"Decode batch, #running-req: {running}, {usage_part}, cuda graph: {graph}, "
            f"gen throughput (token/s): {gen:.2f}, #queue-req: {queue}")
    return line + ", " if fmt == "0.5.5" else line


def prefill_line(fmt: str, *, new_seq: int, new_tok: int, cached: int, usage: float,
                 running: int, queue: int, throughput: float = 0.0,
                 mamba_usage: float | None = None) -> str:
    """fmt: "0.3" (cache hit rate), "0.4.6", "0.5.5", "0.5.9" (throughput, then the graph
    flag), "0.5.10" (the flag first), "0.5.21" (#pending-token, 0.5.11+)."""
    if fmt == "0.3":
        rate = 100.0 * cached / max(1, cached + new_tok)
        return (f"Prefill batch. #new-seq: {new_seq}, #new-token: {new_tok}, #cached-token: "
                f"{cached}, cache hit rate: {rate:.2f}%, token usage: {usage:.2f}, "
                f"#running-req: {running}, #queue-req: {queue}")
    if fmt == "0.4.6":
        return (f"Prefill batch. #new-seq: {new_seq}, #new-token: {new_tok}, #cached-token: "
                f"{cached}, token usage: {usage:.2f}, #running-req: {running}, "
                f"#queue-req: {queue}")
    usage_part = (f"full token usage: {usage:.2f}, mamba usage: {mamba_usage:.2f}"
                  if mamba_usage is not None else f"token usage: {usage:.2f}")
    head = (f"Prefill batch, #new-seq: {new_seq}, #new-token: {new_tok}, #cached-token: "
            f"{cached}, {usage_part}, #running-req: {running}, #queue-req: {queue}, ")
    if fmt == "0.5.5":
        return head
    if fmt == "0.5.9":  # managers/scheduler_metrics_mixin.py:220-240 in 0.5.9
        return head + f"input throughput (token/s): {throughput:.2f}, cuda graph: False"
    if fmt == "0.5.10":
        return head + f"cuda graph: False, input throughput (token/s): {throughput:.2f}"
    return (head + f"#pending-token: 0, cuda graph: False, input throughput (token/s): "
            f"{throughput:.2f}")


def access_line(rng: random.Random) -> str:
    port = rng.randint(30000, 65000)
    path = rng.choice(["/v1/chat/completions", "/v1/chat/completions", "/v1/completions",
                       "/generate", "/health"])
    method = "GET" if path == "/health" else "POST"
    return f'INFO:     127.0.0.1:{port} - "{method} {path} HTTP/1.1" 200 OK'


# --------------------------------------------------------------------------------------------
# Capacity arithmetic used to make consistent numbers (sglang-log-lines.md section 8).
def mamba_split(rest_bytes: int, per_req: int, ratio: float = 0.9,
                padding: bool = False) -> tuple[int, int]:
    """(slots, kv_bytes) as handle_max_mamba_cache splits the rest: budget // per_req in
    0.5.4-0.5.16; from 0.5.17 the pool's padding slot is charged, (budget - per) // per slots
    and (slots + 1) x per subtracted (kv_cache_configurator.py:1816-1982 in 0.5.17)."""
    budget = rest_bytes * ratio / (1 + ratio)
    if padding:
        slots = int((budget - per_req) // per_req)
        return slots, rest_bytes - (slots + 1) * per_req
    slots = int(budget // per_req)
    return slots, rest_bytes - slots * per_req


def solve_rest_for_tokens(tokens: int, cell: int, per_req: int, padding: bool = False) -> int:
    """Smallest rest (bytes) whose Mamba split leaves exactly `tokens` KV tokens."""
    lo, hi = tokens * cell, tokens * cell * 4 + per_req * 4096
    while lo < hi:
        mid = (lo + hi) // 2
        if mamba_split(mid, per_req, padding=padding)[1] // cell >= tokens:
            hi = mid
        else:
            lo = mid + 1
    return lo


def gb(nbytes: float) -> str:
    return f"{nbytes / GIB:.2f}"


# --------------------------------------------------------------------------------------------
@dataclass
class Log:
    clock: Clock
    lines: list[str] = field(default_factory=list)

    def add(self, msg: str, rank: str | None = None) -> None:
        self.lines.append(self.clock.prefix(rank) + msg)

    def raw(self, text: str) -> None:
        self.lines.append(text)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _runtime(log: Log, rng: random.Random, *, fmt: str, prefill_fmt: str, pool: int,
             steps: int, rank: str | None, mamba_slots: int | None = None,
             pressure: bool = False, base_running: int = 24) -> None:
    """A few hundred runtime lines: request bursts, prefill, decode every 40 steps, access log."""
    running, queue, tokens = 0, 0, 0
    for step in range(steps):
        log.clock.tick(rng.uniform(0.4, 2.5))
        if rng.random() < 0.35:
            for _ in range(rng.randint(1, 3)):
                log.add(access_line(rng))
        if rng.random() < 0.3 or running == 0:
            new_seq = rng.randint(1, 6)
            new_tok = rng.randint(900, 8192)
            cached = rng.randint(0, 60000) if step > 3 else 0
            running = min(running + new_seq, base_running * (3 if pressure else 1))
            cap = 0.99 if pressure else 0.8
            tokens = min(int(pool * cap), tokens + new_tok + cached // 4)
            usage = tokens / pool
            mamba_usage = (running / mamba_slots) if mamba_slots else None
            log.add(prefill_line(prefill_fmt, new_seq=new_seq, new_tok=new_tok, cached=cached,
                                 usage=usage, running=running, queue=queue,
                                 throughput=rng.uniform(4000, 16000),
                                 mamba_usage=mamba_usage), rank)
        if pressure:
            queue = max(0, queue + rng.randint(-1, 4))
            tokens = min(int(pool * 0.995), tokens + rng.randint(200, 1500))
        else:
            queue = max(0, queue + rng.randint(-2, 2))
            tokens = max(0, min(int(pool * 0.8), tokens + rng.randint(-4000, 3000)))
        usage = tokens / pool
        gen = running * rng.uniform(28.0, 42.0)
        mamba = (running, running / mamba_slots) if mamba_slots else None
        log.add(decode_line(fmt, running=running, tokens=tokens, usage=usage, gen=gen,
                            queue=queue, mamba=mamba), rank)
        if pressure and usage > 0.985:
            retracted = rng.randint(1, 4)
            before = rng.uniform(0.35, 0.6)
            after = min(1.0, before + 0.3)
            gained = retracted * rng.randint(2000, 6000)
            if fmt == "0.3":
                log.add(f"Decode out of memory happened. #retracted_reqs: {retracted}, "
                        f"#new_token_ratio: {before:.4f} -> {after:.4f}", rank)
            else:
                log.add(f"KV cache pool is full. Retract requests. #retracted_reqs: "
                        f"{retracted}, #new_tokens_gained: {gained}, #new_token_ratio: "
                        f"{before:.4f} -> {after:.4f}", rank)
            running = max(1, running - retracted)
            queue += retracted
            tokens = int(pool * rng.uniform(0.8, 0.9))
        if not pressure and rng.random() < 0.1:
            running = max(1, running - rng.randint(1, 4))


# --------------------------------------------------------------------------------------------
# Qwen3.5-397B-A17B NVFP4 at TP=8 (hybrid Gated DeltaNet + full attention; Mamba state pool).
QWEN35_PER_REQ = (  # conv (bf16) + ssm (fp32) per linear layer, x45 linear layers, at TP=8
    ((128 * 64 + 2 * 16 * 128) // 8) * 3 * 2 + (64 // 8) * 128 * 128 * 4) * 45
QWEN35_CELL_FP8 = 1 * (256 + 256) * 15 * 1  # 7,680 B/token per GPU
QWEN35_FP8_TOKENS = 608_174


def qwen35(kv: str, *, fmt: str, seed: int, start: datetime | None = None) -> str:
    """kv: "fp8" (explicit fp8_e4m3, 0.5.10 format, the no-scaling-factor warning on every
    rank), "bf16" (the fix: --kv-cache-dtype bf16, 0.5.10 format), or "auto" (0.5.21 format:
    `auto` silently resolved to FP8 by the checkpoint's kv_cache_quant_algo, no warning)."""
    rng = random.Random(seed)
    log = Log(Clock(start or datetime(2026, 11, 24, 9, 14, 2)))
    tp = 8
    ranks = [f"TP{i}" for i in range(tp)]
    model = "/models/nvidia/Qwen3.5-397B-A17B-NVFP4"
    elem = 2 if kv == "bf16" else 1
    cell = QWEN35_CELL_FP8 * elem
    padding = fmt == "0.5.21"  # 0.5.17+ charges the Mamba pool's padding slot
    rest = solve_rest_for_tokens(QWEN35_FP8_TOKENS, QWEN35_CELL_FP8, QWEN35_PER_REQ, padding)
    slots, kv_bytes = mamba_split(rest, QWEN35_PER_REQ, padding=padding)
    tokens = kv_bytes // cell
    pre, mem_frac = 46.98 * GIB, 0.82
    after = rest + pre * (1 - mem_frac)
    usage = pre - after
    kv_dtype_arg = {"fp8": "fp8_e4m3", "bf16": "bf16", "auto": "auto"}[kv]
    args = base_server_args(model, tp_size=tp, kv_cache_dtype=kv_dtype_arg,
                            mem_fraction_static=mem_frac, quantization="modelopt_fp4",
                            served_model_name="qwen3.5-397b", context_length=262144,
                            chunked_prefill_size=8192, attention_backend="trtllm_mha",
                            cuda_graph_max_bs=64)
    if fmt == "0.5.21":
        log.add(server_args_dict(args))
    else:
        log.add(server_args_repr(args))
    log.clock.tick(6)
    log.add("Using default HuggingFace chat template with detected content format: openai")
    log.clock.tick(9)
    for r in ranks:
        if fmt == "0.5.21":
            log.add("Init parallel ends. elapsed=3.41 s", r)
            log.add("Memory baseline taken. mem usage=0.61 GB", r)
        else:
            log.add("Init torch distributed ends. elapsed=3.41 s, mem usage=0.61 GB", r)
    for r in ranks:
        log.add(f"Load weight begin. avail mem={gb(pre)} GB", r)
    for r in ranks:
        log.add("Detected nvfp4 checkpoint. Please note that the format is experimental and "
                "subject to change.", r)
    log.clock.tick(3)
    if kv == "fp8":
        for r in ranks:
            log.add("Using FP8 KV cache but no scaling factors provided. Defaulting to scaling "
                    "factors of 1.0. This may lead to less accurate results!", r)
    log.clock.tick(88)
    for i, r in enumerate(ranks):
        jitter = 0.01 * (i % 3)
        log.add(f"Load weight end. elapsed=91.37 s, type=Qwen3_5MoeForConditionalGeneration, "
                f"quant=modelopt_fp4, quant_algo=NVFP4, avail mem={after / GIB - jitter:.2f} GB, "
                f"mem usage={usage / GIB + jitter:.2f} GB.", r)
    log.clock.tick(1)
    if fmt != "0.5.21":
        torch_dtype = "torch.bfloat16" if kv == "bf16" else "torch.float8_e4m3fn"
        log.add(f"Using KV cache dtype: {torch_dtype}", "TP0")
    conv = slots * ((128 * 64 + 2 * 16 * 128) // 8) * 3 * 2 * 45
    ssm = slots * (64 // 8) * 128 * 128 * 4 * 45
    for r in ranks:
        log.add(f"Mamba Cache is allocated. max_mamba_cache_size: {slots}, conv_state size: "
                f"{gb(conv)}GB, ssm_state size: {gb(ssm)}GB ", r)
    k_bytes = (tokens + 1) * 1 * 256 * 15 * elem
    dtype_part = ""
    if fmt == "0.5.21":
        dtype_part = "dtype: torch.float8_e4m3fn, " if kv != "bf16" else "dtype: torch.bfloat16, "
    for r in ranks:
        log.add(f"KV Cache is allocated. {dtype_part}#tokens: {tokens}, K size: {gb(k_bytes)} GB,"
                f" V size: {gb(k_bytes)} GB", r)
    pool_end = after - rest
    for r in ranks:
        log.add(f"Memory pool end. avail mem={gb(pool_end)} GB", r)
    log.clock.tick(1)
    for r in ranks:
        if fmt == "0.5.21":  # 0.5.14+ name what they capture (cuda_graph_setup.py:720 in 0.5.21)
            log.add("Capture target decode CUDA graph begin. backend=full, num_tokens_per_req=1, "
                    f"bs=[1, 2, 4, 8, 16, 32, 64], avail mem={gb(pool_end)} GB", r)
        else:
            log.add(f"Capture cuda graph begin. This can take up to several minutes. avail mem="
                    f"{gb(pool_end)} GB", r)
    log.clock.tick(41)
    graph_after = pool_end - 1.87 * GIB
    for r in ranks:
        if fmt == "0.5.21":
            log.add(f"Capture target decode CUDA graph end. elapsed=41.12 s, mem usage=1.87 GB, "
                    f"avail mem={gb(graph_after)} GB.", r)
        else:
            log.add(f"Capture cuda graph end. Time elapsed: 41.12 s. mem usage=1.87 GB. "
                    f"avail mem={gb(graph_after)} GB.", r)
    ctx = 262144
    est = min(max(int(tokens / ctx * 512), 2048), 4096)
    # slots per request: 3 with no_buffer (0.5.4-0.5.13 default); from 0.5.14 "auto" picks
    # extra_buffer with overlap scheduling for Qwen3.5, 3 + 2 (kv_cache_configurator.py
    # :3062-3088 in 0.5.23, arg_groups/overrides.py:477-488)
    mrr = min(tokens // 2, est, slots // (5 if fmt == "0.5.21" else 3))
    log.add(f"max_total_num_tokens={tokens}, chunked_prefill_size=8192, max_prefill_tokens=16384,"
            f" max_running_requests={mrr}, context_len={ctx}, available_gpu_mem="
            f"{gb(graph_after)} GB", "TP0")
    log.clock.tick(2)
    log.add("INFO:     Started server process [48213]")
    log.add("INFO:     Waiting for application startup.")
    log.add("INFO:     Application startup complete.")
    log.add("INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)")
    log.clock.tick(1)
    log.add('INFO:     127.0.0.1:40178 - "GET /get_model_info HTTP/1.1" 200 OK')
    log.add("Prefill batch, #new-seq: 1, #new-token: 7, #cached-token: 0, full token usage: "
            "0.00, mamba usage: 0.01, #running-req: 0, #queue-req: 0, "
            + ("#pending-token: 0, " if fmt == "0.5.21" else "")
            + "cuda graph: False, input throughput (token/s): 0.00", "TP0")
    log.add('INFO:     127.0.0.1:40180 - "POST /generate HTTP/1.1" 200 OK')
    log.add("The server is fired up and ready to roll!")
    _runtime(log, rng, fmt="0.5.9", prefill_fmt="0.5.21" if fmt == "0.5.21" else "0.5.10",
             pool=tokens, steps=180, rank="TP0", mamba_slots=slots, base_running=16)
    return log.text()


# --------------------------------------------------------------------------------------------
def _finish_startup(log: Log, ranks: list[str | None], *, pool_end: float, tokens: int,
                    ctx: int, graph: tuple[float, float, float], new_graph: bool = False) -> None:
    """The end of a 0.5.x start-up: pool end, CUDA-graph memory, the capacity line (rank 0),
    and the HTTP server coming up. `graph` is (seconds to wait, elapsed, GiB used)."""
    for r in ranks:
        log.add(f"Memory pool end. avail mem={gb(pool_end)} GB", r)
    wait, elapsed, used = graph
    log.clock.tick(wait)
    after = pool_end - used * GIB
    for r in ranks:
        if new_graph:
            log.add(f"Capture target decode CUDA graph end. elapsed={elapsed:.2f} s, mem usage="
                    f"{used:.2f} GB, avail mem={gb(after)} GB.", r)
        else:
            log.add(f"Capture cuda graph end. Time elapsed: {elapsed:.2f} s. mem usage={used:.2f} "
                    f"GB. avail mem={gb(after)} GB.", r)
    est = min(max(int(tokens / ctx * 512), 2048), 4096)
    log.add(f"max_total_num_tokens={tokens}, chunked_prefill_size=8192, max_prefill_tokens=16384,"
            f" max_running_requests={min(tokens // 2, est)}, context_len={ctx}, "
            f"available_gpu_mem={gb(after)} GB", ranks[0])
    log.add("INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)")
    log.add("The server is fired up and ready to roll!")


def deepseek_v3() -> str:
    """DeepSeek-V3 (MLA) at TP=8 on H200, SGLang 0.4.6 format (TP always in the prefix,
    capacity line on every rank without available_gpu_mem)."""
    rng = random.Random(3)
    log = Log(Clock(datetime(2025, 5, 2, 14, 0, 11)))
    ranks = [f"TP{i}" for i in range(8)]
    pre, usage, mem_frac = 139.17 * GIB, 84.01 * GIB, 0.88
    after = pre - usage
    rest = after - pre * (1 - mem_frac)
    cell = (512 + 64) * 61 * 2
    tokens = int(rest // cell)
    args = base_server_args("deepseek-ai/DeepSeek-V3", tp_size=8, mem_fraction_static=mem_frac,
                            trust_remote_code=True, served_model_name="deepseek-v3",
                            chunked_prefill_size=8192)
    for k in ("mamba_ssm_dtype", "max_mamba_cache_size", "moe_a2a_backend",
              "moe_runner_backend"):
        args.pop(k)
    log.add(server_args_repr(args))
    log.clock.tick(12)
    for r in ranks:
        log.add(f"Load weight begin. avail mem={gb(pre)} GB", r)
    log.clock.tick(1)
    log.add("Detected fp8 checkpoint. Please note that the format is experimental and subject "
            "to change.", "TP0")
    log.clock.tick(310)
    for r in ranks:
        log.add(f"Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem="
                f"{gb(after)} GB, mem usage={gb(usage)} GB.", r)
    kv_bytes = (tokens + 1) * 576 * 61 * 2
    for r in ranks:
        log.add(f"KV Cache is allocated. #tokens: {tokens}, KV size: {gb(kv_bytes)} GB", r)
    pool_end = after - rest
    for r in ranks:
        log.add(f"Memory pool end. avail mem={gb(pool_end)} GB", r)
    for r in ranks:
        log.add(f"Capture cuda graph begin. This can take up to several minutes. avail mem="
                f"{gb(pool_end)} GB", r)
    log.clock.tick(63)
    for r in ranks:
        log.add(f"Capture cuda graph end. Time elapsed: 62.88 s. mem usage=2.71 GB. avail mem="
                f"{gb(pool_end - 2.71 * GIB)} GB.", r)
    ctx = 163840
    est = min(max(int(tokens / ctx * 512), 2048), 4096)
    mrr = min(tokens // 2, est)
    for r in ranks:
        log.add(f"max_total_num_tokens={tokens}, chunked_prefill_size=8192, max_prefill_tokens="
                f"16384, max_running_requests={mrr}, context_len={ctx}", r)
    log.add("INFO:     Started server process [1]")
    log.add("INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)")
    log.add("The server is fired up and ready to roll!")
    _runtime(log, rng, fmt="0.4.6", prefill_fmt="0.4.6", pool=tokens, steps=160, rank="TP0",
             base_running=40)
    return log.text()


def llama70b(mem_frac: float = 0.85, tokens: int | None = None,
             start: datetime | None = None) -> str:
    """Llama-3.1-70B-Instruct at TP=8 on H100, BF16 KV, SGLang 0.5.5-0.5.8 format. `tokens`:
    the pool a restart at another `mem_frac` sized (`restarts.py` asks kvtui's calculator)."""
    rng = random.Random(70)
    log = Log(Clock(start or datetime(2025, 12, 9, 8, 30, 0)))
    ranks = [f"TP{i}" for i in range(8)]
    pre, usage = 78.68 * GIB, 16.43 * GIB
    after = pre - usage
    rest = after - pre * (1 - mem_frac)
    cell = max(1, 8 // 8) * (128 + 128) * 80 * 2
    tokens = int(rest // cell) if tokens is None else tokens
    args = base_server_args("meta-llama/Llama-3.1-70B-Instruct", tp_size=8,
                            mem_fraction_static=mem_frac, served_model_name="llama-3.1-70b")
    log.add(server_args_repr(args))
    log.clock.tick(8)
    for r in ranks:
        log.add("Init torch distributed ends. mem usage=0.53 GB", r)
    for r in ranks:
        log.add(f"Load weight begin. avail mem={gb(pre)} GB", r)
    log.clock.tick(45)
    for r in ranks:
        log.add(f"Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem="
                f"{gb(after)} GB, mem usage={gb(usage)} GB.", r)
    log.add("Using KV cache dtype: torch.bfloat16", "TP0")
    k_bytes = (tokens + 1) * 1 * 128 * 80 * 2
    for r in ranks:
        log.add(f"KV Cache is allocated. #tokens: {tokens}, K size: {gb(k_bytes)} GB, V size: "
                f"{gb(k_bytes)} GB", r)
    _finish_startup(log, list(ranks), pool_end=after - rest, tokens=tokens, ctx=131072,
                    graph=(20, 19.73, 1.12))
    _runtime(log, rng, fmt="0.5.5", prefill_fmt="0.5.5", pool=tokens, steps=170, rank="TP0",
             base_running=64)
    return log.text()


def llama8b_retraction() -> str:
    """Llama-3.1-8B on one 24 GB GPU (no rank tag at TP=1), SGLang 0.5.9+ format, under
    pressure: the pool saturates, requests are retracted, the queue grows. The 131,072-token
    context does not even fit the pool."""
    rng = random.Random(8)
    log = Log(Clock(datetime(2026, 3, 1, 11, 58, 40)))
    pre, usage, mem_frac = 21.80 * GIB, 14.99 * GIB, 0.88
    after = pre - usage
    rest = after - pre * (1 - mem_frac)
    cell = 8 * (128 + 128) * 32 * 2
    tokens = int(rest // cell)
    args = base_server_args("meta-llama/Llama-3.1-8B-Instruct", mem_fraction_static=mem_frac,
                            served_model_name="llama-3.1-8b")
    log.add(server_args_repr(args))
    log.clock.tick(5)
    log.add("Init torch distributed ends. elapsed=0.41 s, mem usage=0.09 GB")
    log.add(f"Load weight begin. avail mem={gb(pre)} GB")
    log.clock.tick(7)
    log.add(f"Load weight end. elapsed=6.93 s, type=LlamaForCausalLM, avail mem={gb(after)} GB,"
            f" mem usage={gb(usage)} GB.")
    log.add("Using KV cache dtype: torch.bfloat16")
    k_bytes = (tokens + 1) * 8 * 128 * 32 * 2
    log.add(f"KV Cache is allocated. #tokens: {tokens}, K size: {gb(k_bytes)} GB, V size: "
            f"{gb(k_bytes)} GB")
    _finish_startup(log, [None], pool_end=after - rest, tokens=tokens, ctx=131072,
                    graph=(9, 8.81, 0.41))
    _runtime(log, rng, fmt="0.5.9", prefill_fmt="0.5.10", pool=tokens, steps=220, rank=None,
             pressure=True, base_running=12)
    return log.text()


def legacy_03() -> str:
    """Llama-2-13B on one A100, SGLang 0.3.x format: time-only timestamps, TP0 always shown,
    no KV pool line yet, the oldest capacity line, 'Decode out of memory happened.'"""
    rng = random.Random(13)
    log = Log(Clock(datetime(2024, 9, 20, 16, 40, 2), time_only=True))
    pre, after = 78.92, 54.37
    mem_frac = 0.88
    rest = (after - pre * (1 - mem_frac)) * GIB
    cell = 40 * 128 * 40 * 2 * 2
    tokens = int(rest // cell)
    args = {
        "model_path": "meta-llama/Llama-2-13b-chat-hf",
        "tokenizer_path": "meta-llama/Llama-2-13b-chat-hf", "tokenizer_mode": "auto",
        "skip_tokenizer_init": False, "load_format": "auto", "dtype": "auto",
        "kv_cache_dtype": "auto", "trust_remote_code": False, "context_length": None,
        "quantization": None, "served_model_name": "meta-llama/Llama-2-13b-chat-hf",
        "chat_template": None, "is_embedding": False, "host": "127.0.0.1", "port": 30000,
        "additional_ports": [30001, 30002, 30003, 30004], "mem_fraction_static": mem_frac,
        "max_running_requests": None, "max_num_reqs": None, "max_total_tokens": None,
        "chunked_prefill_size": 8192, "max_prefill_tokens": 16384,
        "schedule_policy": "lpm", "schedule_conservativeness": 1.0, "tp_size": 1,
        "stream_interval": 1, "random_seed": 771, "log_level": "info",
        "log_level_http": None, "log_requests": False, "show_time_cost": False,
        "api_key": None, "file_storage_pth": "SGLang_storage", "dp_size": 1,
        "load_balance_method": "round_robin", "disable_flashinfer": False,
        "disable_flashinfer_sampling": False, "disable_radix_cache": False,
        "disable_regex_jump_forward": False, "disable_cuda_graph": False,
        "disable_disk_cache": False, "enable_torch_compile": False, "enable_p2p_check": False,
        "enable_mla": False, "triton_attention_reduce_in_fp32": False,
    }
    log.add(server_args_repr(args))
    log.clock.tick(4)
    log.add(f"Load weight begin. avail mem={pre:.2f} GB", "TP0")
    log.clock.tick(21)
    log.add("Load weight end. type=LlamaForCausalLM, dtype=torch.float16, avail mem="
            f"{after:.2f} GB", "TP0")
    log.add(f"Memory pool end. avail mem={after - rest / GIB:.2f} GB", "TP0")
    log.add("Capture cuda graph begin. This can take up to several minutes.", "TP0")
    log.clock.tick(14)
    # 0.3.x: min(N // 2, req_to_token_pool.size - 1), the pool sized like 0.4's estimate.
    est = min(max(int(tokens / 4096 * 512), 2048), 4096)
    log.add(f"max_total_num_tokens={tokens}, max_prefill_tokens=16384, max_running_requests="
            f"{min(tokens // 2, est - 1)}, context_len=4096", "TP0")
    log.add("INFO:     Started server process [2047]")
    log.add("INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)")
    log.add("The server is fired up and ready to roll!")
    _runtime(log, rng, fmt="0.3", prefill_fmt="0.3", pool=tokens, steps=150, rank="TP0",
             pressure=True, base_running=60)
    return log.text()


def qwen3_235b_fp4() -> str:
    """Qwen3-235B-A22B at TP=8 with an explicit NVFP4 KV cache, SGLang 0.5.16+ format (the pool
    line prints its dtype; FP4 warning). Per GPU: 4 KV heads // 8 -> 1 (replicated), 94 layers.
    Cell (NVFP4KVCacheMethod.compute_cell_size, fp4_kv_cache_quant_method.py:536-555 in
    0.5.16-0.5.20): fp4 data H*(D/2)*L*2 + one block-scale layout H*(D/16)*L*2 + the FP8
    dequant workspace H*D*2 (x kv_size 1 x fp8 1), not multiplied by L. From 0.5.16 the pool's
    K/V sizes include the scale and workspace buffers (memory_pool.py:2118-2129), half each."""
    rng = random.Random(235)
    log = Log(Clock(datetime(2026, 8, 14, 21, 3, 9)))
    ranks = [f"TP{i}" for i in range(8)]
    pre, usage, mem_frac = 177.42 * GIB, 56.71 * GIB, 0.86
    after = pre - usage
    rest = after - pre * (1 - mem_frac)
    h, d, layers = 1, 128, 94
    cell = h * (d // 2) * layers * 2 + h * (d // 16) * layers * 2 + h * d * 2
    tokens = int(rest // cell)
    args = base_server_args("Qwen/Qwen3-235B-A22B", tp_size=8, kv_cache_dtype="nvfp4",
                            mem_fraction_static=mem_frac, served_model_name="qwen3-235b",
                            context_length=40960)
    log.add(server_args_repr(args))
    log.add("NVFP4 KV Cache might lead to an accuracy drop!")
    log.clock.tick(9)
    for r in ranks:
        log.add(f"Load weight begin. avail mem={gb(pre)} GB", r)
    log.clock.tick(140)
    for r in ranks:
        log.add(f"Load weight end. elapsed=139.80 s, type=Qwen3MoeForCausalLM, avail mem="
                f"{gb(after)} GB, mem usage={gb(usage)} GB.", r)
    k_bytes = (tokens + 1) * cell // 2
    for r in ranks:
        log.add(f"KV Cache is allocated. dtype: torch.float4_e2m1fn_x2, #tokens: {tokens}, "
                f"K size: {gb(k_bytes)} GB, V size: {gb(k_bytes)} GB", r)
    _finish_startup(log, list(ranks), pool_end=after - rest, tokens=tokens, ctx=40960,
                    graph=(30, 29.64, 2.02), new_graph=True)
    _runtime(log, rng, fmt="0.5.9", prefill_fmt="0.5.21", pool=tokens, steps=150, rank="TP0",
             base_running=96)
    return log.text()


def gpt_oss_e5m2_restart() -> str:
    """gpt-oss-120b at TP=4 with --kv-cache-dtype fp8_e5m2, SGLang 0.5.17+ format (labelled
    Full/SWA sub-pools). The first start dies in CUDA graph capture (OOM); the operator restarts
    with a lower --mem-fraction-static, and one GPU is shared with another process."""
    rng = random.Random(120)
    log = Log(Clock(datetime(2026, 9, 2, 7, 45, 0)))
    ranks = [f"TP{i}" for i in range(4)]
    model = "openai/gpt-oss-120b"
    # Run 1: mem_fraction_static 0.93 leaves too little for CUDA graphs.
    pre = 78.91 * GIB
    log.add(server_args_repr(base_server_args(model, tp_size=4, kv_cache_dtype="fp8_e5m2",
                                              mem_fraction_static=0.93,
                                              served_model_name="gpt-oss-120b")))
    log.clock.tick(7)
    for r in ranks:
        log.add(f"Load weight begin. avail mem={gb(pre)} GB", r)
    log.clock.tick(35)
    for r in ranks:
        log.add("Load weight end. elapsed=34.10 s, type=GptOssForCausalLM, quant=mxfp4, avail "
                "mem=61.37 GB, mem usage=17.54 GB.", r)
    log.add("Capture cuda graph failed: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 0 "
            "has a total capacity of 79.19 GiB of which 301.94 MiB is free.", "TP0")
    log.raw("Traceback (most recent call last):")
    log.raw('  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2875, '
            "in run_scheduler_process")
    log.raw("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 0 has"
            " a total capacity of 79.19 GiB of which 301.94 MiB is free.")
    log.clock.tick(1)
    log.add("Received sigquit from a child process. It usually means the child failed.")
    log.clock.tick(95)
    # Run 2: 0.85, works; TP2 shares its GPU with another process.
    mem_frac = 0.85
    log.add(server_args_repr(base_server_args(model, tp_size=4, kv_cache_dtype="fp8_e5m2",
                                              mem_fraction_static=mem_frac,
                                              served_model_name="gpt-oss-120b")))
    log.clock.tick(7)
    log.add("The memory capacity is unbalanced. Some GPUs may be occupied by other processes. "
            "min_per_gpu_memory=71.05, local_gpu_memory=78.91, local_gpu_memory * 0.9=71.02",
            "TP0")
    pre_min = 71.05 * GIB
    for i, r in enumerate(ranks):
        log.add(f"Load weight begin. avail mem={gb(pre_min if i == 2 else pre)} GB", r)
    log.clock.tick(35)
    after = pre_min - 17.54 * GIB
    for r in ranks:
        log.add(f"Load weight end. elapsed=33.87 s, type=GptOssForCausalLM, quant=mxfp4, avail "
                f"mem={gb(after)} GB, mem usage=17.54 GB.", r)
    rest = after - pre_min * (1 - mem_frac)
    heads, hd, n_full, n_swa, ratio = 8 // 4, 64, 18, 18, 0.8
    f_cell = heads * (hd + hd) * 1
    cell = f_cell * n_full + ratio * f_cell * n_swa
    full = int(rest // cell)
    swa = int(full * ratio)
    log.add(f"Use sliding window memory pool. full_layer_tokens={full}, swa_layer_tokens={swa}",
            "TP0")
    for r in ranks:
        for label, n in (("Full", full), ("SWA", swa)):
            size = (n + 1) * heads * hd * 18 * 1
            log.add(f"{label} KV Cache is allocated. dtype: torch.float8_e5m2, #tokens: {n}, "
                    f"K size: {gb(size)} GB, V size: {gb(size)} GB", r)
    _finish_startup(log, list(ranks), pool_end=after - rest, tokens=full, ctx=131072,
                    graph=(25, 24.61, 3.17), new_graph=True)
    _runtime(log, rng, fmt="0.5.9", prefill_fmt="0.5.21", pool=full, steps=150, rank="TP0",
             base_running=48)
    return log.text()


def llama70b_fp8_scaled() -> str:
    """Llama-3.1-70B at TP=8 with an FP8 E4M3 KV cache and calibrated scales
    (--quantization-param-path), SGLang 0.5.9 format: FP8 done right, no precision alert."""
    rng = random.Random(71)
    log = Log(Clock(datetime(2026, 2, 17, 13, 2, 30)))
    ranks = [f"TP{i}" for i in range(8)]
    pre, usage, mem_frac = 78.68 * GIB, 16.43 * GIB, 0.85
    after = pre - usage
    rest = after - pre * (1 - mem_frac)
    cell = 1 * (128 + 128) * 80 * 1
    tokens = int(rest // cell)
    scales = "/models/llama-3.1-70b/kv_cache_scales.json"
    args = base_server_args("meta-llama/Llama-3.1-70B-Instruct", tp_size=8,
                            kv_cache_dtype="fp8_e4m3", quantization_param_path=scales,
                            mem_fraction_static=mem_frac, served_model_name="llama-3.1-70b")
    log.add(server_args_repr(args))
    log.clock.tick(8)
    for r in ranks:
        log.add(f"Load weight begin. avail mem={gb(pre)} GB", r)
    log.clock.tick(44)
    for r in ranks:
        log.add(f"Loaded KV cache scaling factors from {scales}", r)
    for r in ranks:
        log.add(f"Load weight end. elapsed=43.90 s, type=LlamaForCausalLM, dtype=torch.bfloat16, "
                f"avail mem={gb(after)} GB, mem usage={gb(usage)} GB.", r)
    log.add("Using KV cache dtype: torch.float8_e4m3fn", "TP0")
    k_bytes = (tokens + 1) * 1 * 128 * 80 * 1
    for r in ranks:
        log.add(f"KV Cache is allocated. #tokens: {tokens}, K size: {gb(k_bytes)} GB, V size: "
                f"{gb(k_bytes)} GB", r)
    _finish_startup(log, list(ranks), pool_end=after - rest, tokens=tokens, ctx=131072,
                    graph=(20, 20.02, 1.12))
    _runtime(log, rng, fmt="0.5.9", prefill_fmt="0.5.9", pool=tokens, steps=150, rank="TP0",
             base_running=64)
    return log.text()


SAMPLES = {
    "qwen35-397b-nvfp4-tp8-fp8.log": lambda: qwen35("fp8", fmt="0.5.10", seed=35),
    "qwen35-397b-nvfp4-tp8-bf16.log": lambda: qwen35("bf16", fmt="0.5.10", seed=36),
    "qwen35-397b-nvfp4-tp8-auto-fp8.log": lambda: qwen35("auto", fmt="0.5.21", seed=37),
    "deepseek-v3-tp8-mla.log": deepseek_v3,
    "llama31-70b-tp8.log": llama70b,
    "llama31-8b-retraction.log": llama8b_retraction,
    "sglang-0.3-legacy.log": legacy_03,
    "qwen3-235b-tp8-nvfp4-kv.log": qwen3_235b_fp4,
    "gpt-oss-120b-tp4-e5m2-restart.log": gpt_oss_e5m2_restart,
    "llama31-70b-tp8-fp8-scaled.log": llama70b_fp8_scaled,
}
