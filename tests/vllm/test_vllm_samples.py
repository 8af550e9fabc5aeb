"""One hand-rendered sample line per variant of every vLLM format kvtui reads.

Lines are rendered from vLLM's format strings with made-up numbers; the release and file the
string was read from are named beside each (wheels 0.6.3, 0.6.5, 0.7.0, 0.8.0, 0.8.5, 0.9.2,
0.10.2, 0.11.0, 0.14.0, 0.22.0, 0.25.0, 0.28.0, 0.33.0). Each row checks the listed fields
exactly, that the event carries every contract key, and that SGLang's grammar does not claim
the line.
"""

from __future__ import annotations

from typing import Any

import pytest

import parsers.sglang as sglang
from parsers import KIND_FIELDS, OPTIONAL_FIELDS
from parsers.vllm import parse_line
from tests.helpers import session_of

H = "INFO 05-01 16:27:56 [kv_cache_utils.py:1087] "  # logger.py _FORMAT, 0.8.5-0.32
W = "WARNING 05-01 16:27:56 [kv_cache.py:166] "
E = "(EngineCore_DP0 pid=241) INFO 05-01 16:27:56 [gpu_worker.py:276] "  # 0.10.2+

SAMPLES: list[tuple[str, str, dict[str, Any]]] = [
    # --- configuration: entrypoints/utils.py:328 (0.10.2), api_utils.py:273 (0.25) -----------
    (
        "(APIServer pid=1) " + H + "non-default args: {'model_tag': 'Qwen/Qwen3-8B', "
        "'model': 'Qwen/Qwen3-8B', 'tensor_parallel_size': 2, 'max_model_len': 32768, "
        "'gpu_memory_utilization': 0.85, 'kv_cache_dtype': 'fp8', 'block_size': 32, "
        "'max_num_seqs': 128, 'served_model_name': ['qwen3'], "
        "'kv_transfer_config': KVTransferConfig(kv_connector='X', kv_ip='1.2.3.4', kv_port=5)}",
        "server_args",
        {"form": "args", "model_path": "Qwen/Qwen3-8B", "tp_size": 2, "pp_size": 1,
         "dp_size": 1, "context_length": 32768, "gpu_memory_utilization": 0.85,
         "kv_cache_dtype": "fp8", "page_size": 32, "max_running_requests": 128,
         "served_model_name": "qwen3", "dtype": "auto"},
    ),
    (  # a cut dump: no defaults are claimed for what the paste lost
        H + "non-default args: {'model': '/m', 'tensor_parallel_size': 4, 'kv_cache_d",
        "server_args",
        {"form": "args", "model_path": "/m", "tp_size": 4, "kv_cache_dtype": None,
         "pp_size": None},
    ),
    (  # entrypoints/openai/api_server.py:529 (0.6.3): every argument
        "INFO 10-17 08:00:01 api_server.py:529] args: Namespace(host=None, port=8000, "
        "model='meta-llama/Llama-3.1-8B-Instruct', tokenizer=None, dtype='auto', "
        "kv_cache_dtype='fp8_e4m3', quantization_param_path=None, max_model_len=8192, "
        "pipeline_parallel_size=1, tensor_parallel_size=1, block_size=16, "
        "gpu_memory_utilization=0.9, max_num_seqs=256, quantization=None)",
        "server_args",
        {"form": "namespace", "model_path": "meta-llama/Llama-3.1-8B-Instruct",
         "kv_cache_dtype": "fp8_e4m3", "context_length": 8192, "tp_size": 1, "page_size": 16,
         "max_running_requests": 256, "gpu_memory_utilization": 0.9},
    ),
    (  # engine/llm_engine.py:238 (0.6.3, V0)
        "INFO 10-17 08:00:02 llm_engine.py:238] Initializing an LLM engine (v0.6.3) with "
        "config: model='meta-llama/Llama-3.1-8B-Instruct', speculative_config=None, "
        "dtype=torch.bfloat16, max_seq_len=8192, tensor_parallel_size=1, "
        "pipeline_parallel_size=1, quantization=None, kv_cache_dtype=auto, "
        "enable_prefix_caching=False, mm_processor_kwargs=None)",
        "server_args",
        {"form": "config", "version": "0.6.3", "resolved": True, "dtype": "torch.bfloat16",
         "context_length": 8192, "kv_cache_dtype": "auto", "resolved_kv_dtype": "torch.bfloat16",
         "enable_prefix_caching": False},
    ),
    (  # v1/engine/core.py:140 (0.33.0), VllmConfig.__str__ (config/vllm.py:2809)
        "(EngineCore pid=7) " + H + "Initializing a V1 LLM engine (v0.33.0) with config: "
        "model='nvidia/Qwen3-8B-FP8', speculative_config=None, dtype=torch.bfloat16, "
        "max_seq_len=40960, tensor_parallel_size=1, pipeline_parallel_size=1, "
        "data_parallel_size=1, quantization=modelopt, kv_cache_dtype=fp8_e4m3, "
        "device_config=cuda, compilation_config={'level': 3, 'x': [1, 2]}",
        "server_args",
        {"form": "config", "version": "0.33.0", "model_path": "nvidia/Qwen3-8B-FP8",
         "kv_cache_dtype": "fp8_e4m3", "resolved_kv_dtype": "fp8_e4m3",
         "quantization": "modelopt", "dp_size": 1},
    ),
    (H + "Using max model len 32768", "server_args",
     {"form": "resolved", "partial": True, "context_length": 32768}),
    ("INFO 11-21 09:02:14 config.py:1136] Chunked prefill is enabled with "
     "max_num_batched_tokens=1024.", "server_args",
     {"form": "resolved", "partial": True, "max_num_batched_tokens": 1024}),
    (H + "Resolved architecture: Qwen3ForCausalLM", "server_args",
     {"form": "resolved", "architecture": "Qwen3ForCausalLM"}),
    # the model runner's load (V0 worker/model_runner.py:1060 in 0.6.3; V1
    # v1/worker/gpu_model_runner.py:3808-3811 in 0.14.1), vllm-project/vllm#33155
    (H + "Starting to load model openai/some-model...", "server_args",
     {"form": "resolved", "partial": True, "model_path": "openai/some-model"}),
    ("INFO 10-17 08:00:00 model_runner.py:1060] Starting to load model /data/my model v2...",
     "server_args", {"form": "resolved", "partial": True, "model_path": "/data/my model v2"}),
    # --- the release --------------------------------------------------------------------------
    ("INFO 10-17 08:00:00 api_server.py:528] vLLM API server version 0.6.3", "engine_version",
     {"version": "0.6.3"}),
    (H + " \u2584\u2584 \u2584\u2588 \u2588     \u2588  version 0.25.0", "engine_version",
     {"version": "0.25.0"}),
    # --- KV dtype: config.py:637 (0.6.3), config/cache.py:207 (0.14), :262 (0.22) -------------
    (H + "Using fp8 data type to store kv cache. It reduces the GPU memory footprint and boosts "
     "the performance. Meanwhile, it may cause accuracy drop without a proper scaling factor.",
     "kv_dtype", {"dtype": "fp8", "origin": "family"}),
    (H + "Using fp8_e4m3 data type to store kv cache. It reduces the GPU memory footprint and "
     "boosts the performance. Meanwhile, it may cause accuracy drop without a proper scaling "
     "factor", "kv_dtype", {"dtype": "fp8_e4m3", "origin": "resolved"}),
    (H + "Using fp8_per_token_head data type to store kv cache. It reduces the GPU memory "
     "footprint and boosts the performance. Dynamic per-token-head scales will be computed at "
     "runtime.", "kv_dtype", {"dtype": "fp8_per_token_head", "origin": "resolved"}),
    (H + "Using custom fp8 kv-cache format for DeepSeekV3.2", "kv_dtype",
     {"dtype": "fp8_ds_mla", "origin": "override", "reason": "DeepSeekV3.2"}),
    # --- scales: quantization/kv_cache.py -----------------------------------------------------
    (W + "Using KV cache scaling factor 1.0 for fp8_e4m3. If this is unintended, verify that "
     "k/v_scale scaling factors are properly set in the checkpoint.", "fp8_scales_missing",
     {"form": "unit_scale"}),
    ("(Worker_TP1 pid=307) WARNING 05-01 16:27:56 [kv_cache.py:101] Using KV cache scaling "
     "factor 1.0 for fp8_e4m3. This may cause accuracy issues. Please make sure k/v_scale "
     "scaling factors are available in the fp8 checkpoint.", "fp8_scales_missing",
     {"form": "unit_scale"}),
    ("WARNING 10-17 08:00:09 weight_utils.py:508] Defaulting to KV cache scaling factors = 1.0 "
     "for all layers in TP rank 3 as an error occurred during loading.", "fp8_scales_missing",
     {"form": "load_error", "tp_rank": 3}),
    ("INFO 10-17 08:00:09 model_runner.py:1125] Loaded KV cache scaling factors from "
     "/ckpt/kv_cache_scales.json", "fp8_scales_loaded", {"path": "/ckpt/kv_cache_scales.json"}),
    (W + "Checkpoint does not provide a q scaling factor. Setting it to k_scale. This only "
     "matters for FP8 Attention backends (flash-attn or flashinfer).", "fp8_qscale_missing",
     {"form": "q_from_k"}),
    (W + "Using uncalibrated q_scale 1.0 and/or prob_scale 1.0 with fp8 attention. This may "
     "cause accuracy issues. Please make sure q/prob scaling factors are available in the fp8 "
     "checkpoint.", "fp8_qscale_missing",
     {"form": "uncalibrated", "q_scale": 1.0, "prob_scale": 1.0}),
    # --- weights ------------------------------------------------------------------------------
    ("INFO 10-17 08:00:08 model_runner.py:1071] Loading model weights took 14.9888 GB",
     "load_weight_end", {"usage_gib": 14.9888}),
    (E + "Model loading took 1.1201 GiB and 0.596228 seconds", "load_weight_end",
     {"usage_gib": 1.1201, "elapsed_s": 0.596228}),
    (E + "Model loading took 19.75 GiB memory and 6.356814 seconds", "load_weight_end",
     {"usage_gib": 19.75, "elapsed_s": 6.356814}),
    # the XPU runner's V0 wording in GiB: xpu_model_runner.py:414 in 0.8.5, :415 in 0.9.2
    # ("... %.4f GB" to 0.8.0, :425)
    ("INFO 05-01 16:27:56 [xpu_model_runner.py:414] Loading model weights took 7.4800 GiB",
     "load_weight_end", {"usage_gib": 7.48}),
    # --- memory: v1/worker/gpu_worker.py; V0 worker/worker.py ---------------------------------
    (E + "Available KV cache memory: 69.66 GiB", "kv_pool", {"kv_gib": 69.66, "scope": "all"}),
    (E + "Available KV cache memory: 11.5 GiB (process-scoped)", "kv_pool",
     {"kv_gib": 11.5, "scope": "all"}),
    ("INFO 12-13 02:10:28 worker.py:237] Memory profiling results: duration=71.88 seconds, "
     "total_gpu_memory=79.15GiB, initial_memory_usage=19.68GiB, peak_torch_memory=34.32GiB, "
     "memory_usage_post_profile=35.32GiB, non_torch_memory=1.96GiB, kv_cache_size=34.96GiB, "
     "gpu_memory_utilization=0.90.", "memory_profile",
     {"total_gib": 79.15, "non_torch_gib": 1.96, "kv_gib": 34.96, "gpu_memory_utilization": 0.9}),
    ("INFO 04-12 08:21:19 [worker.py:267] the current vLLM instance can use total_gpu_memory "
     "(23.58GiB) x gpu_memory_utilization (0.99) = 23.35GiB", "memory_profile",
     {"total_gib": 23.58, "gpu_memory_utilization": 0.99, "requested_gib": 23.35}),
    ("INFO 04-12 08:21:19 [worker.py:267] model weights take 21.21GiB; non_torch_memory takes "
     "0.20GiB; PyTorch activation peak memory takes 0.37GiB; the rest of the memory reserved "
     "for KV Cache is 1.57GiB.", "memory_profile",
     {"weights_gib": 21.21, "non_torch_gib": 0.2, "activation_gib": 0.37, "kv_gib": 1.57}),
    ("(Worker_TP0 pid=104) " + H + "CUDA graph memory profiling is enabled (default since "
     "v0.21.0). The current --gpu-memory-utilization=0.9200 is equivalent to "
     "--gpu-memory-utilization=0.9143 without CUDA graph memory profiling. To maintain the same "
     "effective KV cache size as before, increase --gpu-memory-utilization to 0.9257.",
     "memory_profile", {"gpu_memory_utilization": 0.92,
                        "equivalent_gpu_memory_utilization": 0.9143,
                        "suggested_gpu_memory_utilization": 0.9257}),
    (H + "In v0.19, CUDA graph memory profiling will be enabled by default "
     "(VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1), which more accurately accounts for CUDA "
     "graph memory during KV cache allocation. To try it now, set "
     "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 and increase --gpu-memory-utilization from "
     "0.9000 to 0.9690 to maintain the same effective KV cache size.", "memory_profile",
     {"gpu_memory_utilization": 0.9, "suggested_gpu_memory_utilization": 0.969}),
    # V1's XPU worker, in MB (v1/worker/xpu_worker.py:88/:122 in 0.9.2, :100/:134 in 0.10.2,
    # :84/:119 in 0.14.0). Its total GPU memory is not read as total_gib: that field tells V0's
    # profiler to the vLLM calculator (kvtui/engines/vllm/fromrun.py v0_engine).
    ("(EngineCore_0 pid=5) INFO 05-01 16:27:56 [xpu_worker.py:100] Before memory profiling run, "
     "total GPU memory: 65536.00 MB, model load takes 15360.00 MB, free gpu memory is "
     "49152.00 MB.", "memory_profile", {"weights_gib": 15.0, "total_gib": None}),
    ("(EngineCore_0 pid=5) INFO 05-01 16:27:58 [xpu_worker.py:134] After memory profiling run, "
     "peak memory usage is 20480.00 MB,torch mem is 15872.00 MB, non-torch mem is 512.00 MB, "
     "free gpu memory is 40960.00 MB.", "memory_profile", {"non_torch_gib": 0.5}),
    # --- capacity: executor/gpu_executor.py:122 (0.6.3), v1/core/kv_cache_utils.py ------------
    # V0 0.7-0.10 names the platform's device_name: "# %s blocks: %d, # CPU blocks: %d"
    # (executor/executor_base.py:108 in 0.7.0, :111 in 0.8.0, :112 in 0.8.5, :114 in 0.10.2);
    # the 0.8.0 line as pasted with DeepSeek-R1 (`[executor_base.py:111] # cuda blocks: 4739,
    # # CPU blocks: 859`, a bench report in a public repository).
    ("INFO 03-14 18:57:59 [executor_base.py:111] # cuda blocks: 4739, # CPU blocks: 859",
     "capacity", {"gpu_blocks": 4739, "cpu_blocks": 859}),
    ("INFO 05-01 16:27:56 [executor_base.py:112] # xpu blocks: 2048, # CPU blocks: 512",
     "capacity", {"gpu_blocks": 2048, "cpu_blocks": 512}),
    ("INFO 05-30 16:23:28 executor_base.py:110] # rocm blocks: 5519, # CPU blocks: 9362",
     "capacity", {"gpu_blocks": 5519, "cpu_blocks": 9362}),
    ("INFO 12-01 10:00:00 hpu_executor.py:76] # HPU blocks: 9000, # CPU blocks: 100",  # 0.6.5
     "capacity", {"gpu_blocks": 9000, "cpu_blocks": 100}),
    ("INFO 08-19 07:51:08 distributed_gpu_executor.py:56] # GPU blocks: 22982, # CPU blocks: "
     "6241", "capacity", {"gpu_blocks": 22982, "cpu_blocks": 6241}),
    ("INFO 01-30 05:40:02 kv_cache_utils.py:395] # GPU blocks: 2207", "capacity",
     {"gpu_blocks": 2207}),
    ("INFO 10-17 08:00:20 gpu_executor.py:126] Maximum concurrency for 8192 tokens per "
     "request: 44.89x", "capacity", {"context_len": 8192, "max_concurrency": 44.89}),
    (H + "GPU KV cache size: 652,144 tokens", "capacity", {"max_total_num_tokens": 652144}),
    (H + "Maximum concurrency for 4,096 tokens per request: 159.21x", "capacity",
     {"context_len": 4096, "max_concurrency": 159.21}),
    (H + "GPU KV cache size: 1,823,372 tokens, Maximum concurrency for 1,048,576 tokens per "
     "request: 1.74x", "capacity",  # one line: update_kv_cache_capacity, 0.28+
     {"max_total_num_tokens": 1823372, "context_len": 1048576, "max_concurrency": 1.74}),
    (H + "XPU KV cache size: 98,304 tokens, Maximum concurrency for 8,192 tokens per request: "
     "12.00x", "capacity",  # the device name, 0.30+
     {"max_total_num_tokens": 98304, "context_len": 8192, "max_concurrency": 12.0}),
    (H + "Overriding num_gpu_blocks=0 with num_gpu_blocks_override=512", "capacity",
     {"gpu_blocks_override": 512}),
    ("INFO 2025-11-07 17:18:54.83 metrics.py:538] vllm cache_config_info with initialization "
     "after num_gpu_blocks is: 26071", "capacity", {"gpu_blocks": 26071}),
    # --- CUDA graphs: gpu_model_runner.py -----------------------------------------------------
    (E + "Graph capturing finished in 20 secs, took 0.65 GiB", "cuda_graph_end",
     {"elapsed_s": 20.0, "usage_gib": 0.65, "graph": "capture"}),
    (E + "Estimated CUDA graph memory: 1.62 GiB total", "memory_profile",
     {"cuda_graph_gib": 1.62}),
    (E + "CUDA graph pool memory: 1.58 GiB (actual), 1.62 GiB (estimated), difference: "
     "-0.04 GiB (-2.5%).", "cuda_graph_end", {"usage_gib": 1.58, "graph": "pool"}),
    # --- page layout: kv_cache_utils.py:982 (0.11), models/config.py:376 (0.11) --------------
    ("(EngineCore pid=7) WARNING 05-01 16:27:56 [kv_cache_utils.py:1208] Add 3 padding layers, "
     "may waste at most 6.25% KV cache memory", "kv_layout",
     {"padding_layers": 3, "padding_waste_pct": 6.25}),
    (H + "Setting attention block size to 1568 tokens to ensure that attention page size is "
     ">= mamba page size.", "kv_layout", {"block_size": 1568}),
    (H + "Padding mamba page size by 0.13% to ensure that mamba page size and attention page "
     "size are exactly equal.", "kv_layout", {"mamba_padding_pct": 0.13}),
    (H + "Forcing kv cache block size to 64 for FlashMLA backend.", "kv_layout",
     {"block_size": 64}),
    (H + "Setting kv cache block size to 128 for CUTLASS_MLA backend(s).", "kv_layout",
     {"block_size": 128}),
    # platforms/interface.py:752 in 0.28.0, :925 in 0.33.0 (--kv-cache-dtype-skip-layers)
    (H + "Setting attention block size to 48 tokens so the quantized primary KV page covers "
     "the higher-precision padded-spec page.", "kv_layout", {"block_size": 48}),
    # --- runtime: v1/metrics/loggers.py, engine/metrics.py, core/scheduler.py -----------------
    ("(APIServer pid=1) INFO 05-19 10:13:11 [loggers.py:271] Engine 000: Avg prompt "
     "throughput: 12068.8 tokens/s, Avg generation throughput: 734.9 tokens/s, Running: 18 "
     "reqs, Waiting: 33 reqs, GPU KV cache usage: 87.7%, Prefix cache hit rate: 12.5%",
     "decode_batch", {"prompt_throughput": 12068.8, "gen_throughput": 734.9, "running_req": 18,
                      "queue_req": 33, "token_usage": 0.877, "prefix_cache_hit_rate": 0.125}),
    (H + "Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 80.1 "
     "tokens/s, Running: 24 reqs, Waiting: 7 reqs, Preemptions: 3, GPU KV cache usage: 99.1%, "
     "Prefix cache hit rate: 0.0%", "decode_batch",
     {"running_req": 24, "queue_req": 7, "preempted_reqs": 3, "token_usage": 0.991}),
    ("INFO 05-25 06:50:29 [metrics.py:486] Avg prompt throughput: 0.0 tokens/s, Avg generation "
     "throughput: 15.5 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 2 reqs, GPU KV "
     "cache usage: 0.5%, CPU KV cache usage: 0.1%.", "decode_batch",
     {"running_req": 1, "swapped_req": 0, "queue_req": 2, "token_usage": 0.005,
      "cpu_token_usage": 0.001, "gen_throughput": 15.5}),
    ("WARNING 10-17 09:00:00 scheduler.py:1485] Sequence group cmpl-7f3a is preempted by "
     "PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can "
     "affect the end-to-end performance. Increase gpu_memory_utilization or "
     "tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption=51",
     "retraction", {"retracted_reqs": 1, "mode": "recompute", "cumulative": 51,
                    "wording": "preempted"}),
    # --- speculative decoding: v1/spec_decode/metrics.py:96-104 (0.10.2), :120-128 (0.34.0);
    # V0 engine/metrics.py:380-386 (0.6.3) -----------------------------------------------------
    ("(EngineCore_DP0 pid=9) INFO 05-01 10:01:00 [metrics.py:120] SpecDecoding metrics: Mean "
     "acceptance length: 2.74, Accepted throughput: 51.20 tokens/s, Drafted throughput: 87.90 "
     "tokens/s, Accepted: 512 tokens, Drafted: 879 tokens, Per-position acceptance rate: "
     "0.812, 0.571, 0.357, Avg Draft acceptance rate: 58.2%", "spec_decode",
     {"accept_len": 2.74, "accept_rate": 0.582, "accepted_throughput": 51.2,
      "drafted_throughput": 87.9, "accepted_tokens": 512, "drafted_tokens": 879,
      "per_position": "0.812, 0.571, 0.357"}),
    ("INFO 10-17 07:51:08 metrics.py:367] Speculative metrics: Draft acceptance rate: 0.651, "
     "System efficiency: 0.570, Number of speculative tokens: 5, Number of accepted tokens: "
     "3255, Number of draft tokens: 5000, Number of emitted tokens: 3421.", "spec_decode",
     {"accept_rate": 0.651, "system_efficiency": 0.57, "spec_tokens": 5,
      "accepted_tokens": 3255, "drafted_tokens": 5000, "emitted_tokens": 3421}),
    # --- errors: kv_cache_utils.py:716 (0.11), kv_cache_planning.py:75 (0.33) ----------------
    ("ERROR 04-02 12:33:23 [core.py:380] ValueError: To serve at least one request with the "
     "models's max seq len (32768), (0.95 GiB KV cache is needed, which is larger than the "
     "available KV cache memory (0.93 GiB). Try increasing `gpu_memory_utilization` or "
     "decreasing `max_model_len` when initializing the engine.", "oom",
     {"reason": "kv_cache_too_small", "max_model_len": 32768, "needed_gib": 0.95,
      "available_gib": 0.93}),
    ("(EngineCore pid=316) ValueError: To serve at least one request with the model's max seq "
     "len (100000), (4.26 GiB KV cache is needed, which is larger than the available KV cache "
     "memory (4.25 GiB). Based on the available memory, the estimated maximum model length is "
     "99744. Try increasing `gpu_memory_utilization`", "oom",
     {"reason": "kv_cache_too_small", "max_model_len": 100000, "needed_gib": 4.26,
      "available_gib": 4.25, "estimated_max_model_len": 99744}),
    ("ValueError: The model's max seq len (131072) is larger than the maximum number of tokens "
     "that can be stored in KV cache (40960). Try increasing `gpu_memory_utilization` or "
     "decreasing `max_model_len` when initializing the engine.", "oom",
     {"reason": "kv_cache_too_small", "max_model_len": 131072, "available": 40960}),
    ("ERROR 04-02 12:33:23 [core.py:380] ValueError: No available memory for the cache blocks. "
     "Try increasing `gpu_memory_utilization` when initializing the engine.", "oom",
     {"reason": "no_kv_memory"}),
    # multimodal/gpu_ipc_memory.py:255-266 in 0.33.0 (reserve_mm_ipc_gpu_memory)
    ("(Worker_TP0 pid=5) INFO 05-01 10:00:31 [gpu_ipc_memory.py:255] Reserving 2.05 GiB of GPU "
     "memory for frontend multimodal decoding (2 GiB raw-frame semaphore budget, 0.05 GiB "
     "decoder+CUDA-context across 1 API server(s) @ 0.05 GiB/server); KV cache memory reduced "
     "to 37.95 GiB.", "kv_budget_reserved",
     {"reserved_gib": 2.05, "purpose": "multimodal", "remaining_gib": 37.95}),
    ("ValueError: max_num_seqs (512) exceeds available Mamba cache blocks (433).", "oom",
     {"reason": "mamba_blocks", "requested": 512, "available": 433}),
    # --- the parallel layout: distributed/parallel_state.py (wordings quoted in startup.py) ---
    ("(VllmWorker rank=5 pid=71) INFO 05-01 16:27:56 [parallel_state.py:1005] rank 5 in world "
     "size 8 is assigned as DP rank 0, PP rank 1, TP rank 1", "parallel_rank",  # 0.8.5 :1005
     {"global_rank": 5, "world_size": 8, "dp_rank": 0, "pp_rank": 1, "tp_rank": 1}),
    (H + "rank 1 in world size 2 is assigned as DP rank 1, PP rank 0, TP rank 0, EP rank 1",
     "parallel_rank",  # 0.11.0 :1209
     {"global_rank": 1, "world_size": 2, "dp_rank": 1, "pp_rank": 0, "tp_rank": 0}),
    ("(Worker pid=9) INFO 05-01 16:27:56 [parallel_state.py:1923] rank 3 in world size 4 is "
     "assigned as DP rank 0, PP rank 0, PCP rank 0, TP rank 3, EP rank N/A, EPLB rank N/A",
     "parallel_rank",  # 0.17-0.29; a dense model's EP rank "N/A" (0.14+)
     {"global_rank": 3, "world_size": 4, "tp_rank": 3, "pcp_rank": 0}),
    (H + "rank 0 in world size 1 is assigned as DP rank 0, PP rank 0, PCP rank 0, TP rank 0, "
     "ETP rank 0, EP rank 0, EPLB rank N/A", "parallel_rank",  # 0.33.0 :2386
     {"global_rank": 0, "world_size": 1, "dp_rank": 0, "tp_rank": 0}),
    # --- V0's engine config line, renamed "a V0 LLM engine" (0.7.3 :235 .. 0.10.2 :222) -------
    ("INFO 05-01 16:27:56 [llm_engine.py:242] Initializing a V0 LLM engine (v0.8.3) with config: "
     "model='org/m', speculative_config=None, tokenizer='org/m', dtype=torch.float16, "
     "max_seq_len=8192, tensor_parallel_size=2, pipeline_parallel_size=1, kv_cache_dtype=auto, "
     "seed=None, served_model_name=org/m, use_async_output_proc=True", "server_args",
     {"form": "config", "version": "0.8.3", "model_path": "org/m", "tp_size": 2, "pp_size": 1,
      "context_length": 8192, "resolved_kv_dtype": "torch.float16"}),
    # --- accuracy (parsers/vllm/accuracy.py) -------------------------------------------------
    (  # 0.34.0 config/model.py:2722 (logger.warning_once, VLLM_ALLOW_LONG_MAX_MODEL_LEN=1)
        "WARNING 05-01 16:27:56 [model.py:2722] User-specified max_model_len (262144) is greater "
        "than the derived max_model_len (max_position_embeddings=131072 or model_max_length="
        "None in model's config.json). VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme "
        "caution. If the model uses relative position encoding (RoPE), positions exceeding "
        "derived_max_model_len lead to nan.", "context_override",
        {"context_length": 262144, "derived": 131072, "allowed": True}),
    (  # :2724, the ValueError (the engine stops)
        "ValueError: User-specified max_model_len (262144) is greater than the derived "
        "max_model_len (max_position_embeddings=131072 or model_max_length=None in model's "
        "config.json). To allow overriding this maximum, set the env var "
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used",
        "context_override", {"context_length": 262144, "derived": 131072, "allowed": False}),
    (  # 0.34.0 config/model.py:1931 (0.22.0 :1510, 0.28.0 :1714)
        "(APIServer pid=1) WARNING 05-01 16:27:56 [model.py:1931] Default vLLM sampling "
        "parameters have been overridden by the model's `generation_config.json`: "
        "`{'temperature': 0.6, 'top_k': 20, 'top_p': 0.95}`. If this is not intended, please "
        "relaunch vLLM instance with `--generation-config vllm`.", "generation_defaults",
        {"params": "{'temperature': 0.6, 'top_k': 20, 'top_p': 0.95}", "origin": "model"}),
    ("(APIServer pid=1) INFO 05-01 16:27:56 [hf.py:357] Loading chat template fallback for "
     "org/base-model as there isn't one defined on HF Hub.", "chat_template",  # 0.34.0
     {"origin": "fallback", "name": "org/base-model"}),
    ("ChatTemplateResolutionError: As of transformers v4.44, default chat template is no longer "
     "allowed, so you must provide a chat template if the tokenizer does not define one.",
     "chat_template", {"origin": "none", "name": None}),  # 0.34.0 renderers/hf.py:892
    ("DEBUG 05-01 16:30:00 [error_response.py:25] create_error_response called with "
     "VLLMValidationError: This model's maximum context length is 32768 tokens. However, your "
     "prompt contains 40000 input tokens, which exceeds this limit even without any output "
     "tokens. Please reduce the length of the input prompt.", "input_too_long",  # params.py:544
     {"input_tokens": 40000, "max_tokens": 32768, "truncated": False}),
    ("ValueError: The decoder prompt (length 40000) is longer than the maximum model length of "
     "32768. Make sure that `max_model_len` is no smaller than the number of text tokens.",
     "input_too_long", {"input_tokens": 40000, "max_tokens": 32768}),  # input_processor.py:583
    ("(APIServer pid=1) INFO 05-01 16:28:30 [hf.py:744] Detected the chat template content "
     "format to be 'string'. You can set `--chat-template-content-format` to override this.",
     "chat_format", {"format": "string"}),  # 0.34.0 renderers/hf.py:744
    (  # the accuracy arguments of `non-default args` (0.34.0 entrypoints/openai/cli_args.py)
        "(APIServer pid=1) " + H + "non-default args: {'model': 'Qwen/Qwen3-8B', "
        "'enable_auto_tool_choice': True, 'tool_call_parser': 'hermes', "
        "'reasoning_parser': 'qwen3', 'generation_config': 'vllm'}", "server_args",
        {"tool_call_parser": "hermes", "reasoning_parser": "qwen3",
         "enable_auto_tool_choice": True, "generation_config": "vllm"}),
]

# Every head form of the same message: the same event, its ts and rank read from the head.
HEADS: list[tuple[str, str | None, str | None]] = [
    ("INFO 05-01 16:27:56 [kv_cache_utils.py:634] ", "05-01 16:27:56", None),  # 0.8-0.32
    ("INFO 02-20 00:01:02 kv_cache_utils.py:522] ", "02-20 00:01:02", None),  # 0.5-0.7
    ("(EngineCore_DP0 pid=241) INFO 05-01 16:27:56 [core.py:1] ", "05-01 16:27:56", "DP0"),
    ("(Worker_TP1 pid=307) INFO 05-01 16:27:56 [core.py:1] ", "05-01 16:27:56", "TP1"),
    ("(Worker_PP1_TP3 pid=9) INFO 05-01 16:27:56 [core.py:1] ", "05-01 16:27:56", "PP1 TP3"),
    ("(APIServer pid=1) INFO 05-01 16:27:56 [core.py:1] ", "05-01 16:27:56", None),
    ("(EngineCore_0 pid=5) INFO 05-01 16:27:56 [core.py:1] ", "05-01 16:27:56", "DP0"),
    ("(VllmWorker rank=2 pid=5) INFO 05-01 16:27:56 [core.py:1] ", "05-01 16:27:56", "rank2"),
    ("vllm-1  | (APIServer pid=1) INFO 05-01 16:27:56 [core.py:1] ", "05-01 16:27:56", None),
    ("vllm-server  | INFO 05-01 16:27:56 [core.py:1] ", "05-01 16:27:56", None),
    ("Sep 22 23:46:42 gpu1 vllm[361991]: INFO 05-01 16:27:56 core.py:1] ", "05-01 16:27:56",
     None),
    ("[2024-07-08 15:17:34] INFO 05-01 16:27:56 metrics.py:334] ", "05-01 16:27:56", None),
    ("\x1b[0;36m(Worker_TP0 pid=104)\x1b[0;0m \x1b[32mINFO\x1b[0m \x1b[90m05-01 16:27:56\x1b[0m "
     "\x1b[90m[core.py:1]\x1b[0m ", "05-01 16:27:56", "TP0"),
    # the same colours as `cat -v` shows them (vllm-project/vllm#33155): parsers/text.py
    ("^[[0;36m(EngineCore_DP0 pid=70073)^[[0;0m INFO 05-01 16:27:56 [core.py:1] ",
     "05-01 16:27:56", "DP0"),
    ("INFO 2025-11-07 17:18:00.203 core.py:1] ", "2025-11-07 17:18:00.203", None),
    ("DEBUG 05-01 16:27:56 [v1/core/kv_cache_utils.py:1087] ", "05-01 16:27:56", None),
    ("      INFO 07-18 00:05:10 distributed_gpu_executor.py:56] ", "07-18 00:05:10", None),
    # a controller that re-stamps vLLM's lines and drops vLLM's own time (an evidence file of
    # a vLLM 0.17.0+rocm deployment: `2026-05-21T02:05:42Z (EngineCore_DP0 pid=659) INFO
    # [core.py:101] Initializing a V1 LLM engine ...`): the untimed head behind the envelope
    ("2026-05-21T02:05:42Z (EngineCore_DP0 pid=659) INFO [kv_cache_utils.py:1] ", None, "DP0"),
    ("2026-05-21T02:05:31.123Z (APIServer pid=568) INFO [kv_cache_utils.py:1] ", None, None),
]


@pytest.mark.parametrize(("line", "kind", "fields"), SAMPLES, ids=lambda x: str(x)[:40])
def test_sample_line(line: str, kind: str, fields: dict[str, Any]) -> None:
    ev = parse_line(line)
    assert ev is not None, line
    assert ev.kind == kind
    for name, value in fields.items():
        assert ev.fields.get(name) == value, (name, ev.fields)
    missing = set(KIND_FIELDS[kind]) - ev.fields.keys()
    assert not missing, missing
    known = set(KIND_FIELDS[kind]) | set(OPTIONAL_FIELDS[kind]) | {"message"}
    assert set(ev.fields) <= known, set(ev.fields) - known


@pytest.mark.parametrize(("line", "kind", "fields"), SAMPLES, ids=lambda x: str(x)[:40])
def test_sglang_does_not_claim_vllm_lines(line: str, kind: str, fields: dict[str, Any]) -> None:
    ev = sglang.parse_line(line)
    assert ev is None or ev.kind == "oom", (line, ev)


@pytest.mark.parametrize(("head", "ts", "rank"), HEADS, ids=lambda x: repr(x)[:30])
def test_every_head_form(head: str, ts: str | None, rank: str | None) -> None:
    ev = parse_line(head + "GPU KV cache size: 417,136 tokens")
    assert ev is not None and ev.kind == "capacity"
    assert (ev.ts, ev.rank) == (ts, rank)
    assert ev.fields["max_total_num_tokens"] == 417136


@pytest.mark.parametrize(
    "line",
    [
        "(APIServer pid=13026) INFO:     127.0.0.1:37582 - \"POST /v1/chat/completions HTTP/1.1\"",
        H + "Automatically detected platform cuda.",
        "Capturing CUDA graphs (decode, FULL): 100%|\u2588\u2588| 35/35",
        "(EngineCore pid=4021)     kv_cache_config = self._initialize_kv_caches(vllm_config)",
        "e is needed, which is larger than the available KV cache memory (4.25 GiB). Based on",
        "[2026-03-01 12:00:00 TP0] KV Cache is allocated. #tokens: 1, K size: 1.00 GB",
        "[2026-03-01 12:00:00 TP0] Decode batch, #running-req: 1, #token: 2, token usage: 0.10",
        "GPU KV cache size: many tokens",
        "",
        "] ",
    ],
)
def test_not_vllm_events(line: str) -> None:
    assert parse_line(line) is None


def test_sglang_samples_are_not_vllm_events() -> None:
    from tests.parsers.test_samples import SAMPLES as SGLANG_SAMPLES

    claimed = [(line, ev.kind) for line, _, _ in SGLANG_SAMPLES
               if (ev := parse_line(line)) is not None and ev.kind != "oom"]
    assert not claimed


@pytest.mark.parametrize("line", [line for line, kind, _ in SAMPLES if kind == "decode_batch"]
                         + [H + "Avg prompt throughput: 1.5 tokens/s, Avg generation throughput: "
                            "2.0 tokens/s, Running: 3 reqs, Waiting: 0 reqs, GPU KV cache usage: "
                            "0.1%"])
def test_the_stats_fast_path_reads_as_the_general_scan(line: str) -> None:
    """The one-match layout is an optimisation only: it must agree with the general scan."""
    from parsers.vllm.runtime import _fast, _scan

    msg = line[line.index("Avg prompt"):]
    fast = _fast(msg, 0)
    assert _scan(msg, 0) == (fast if fast is not None else _scan(msg, 0))
    if "Swapped" not in msg:
        assert fast is not None


def test_v1_preemptions_count_as_retractions():
    """vLLM V1's stats line says how many requests were preempted since the previous line
    (`Preemptions: N`, loggers.py `_reset`): each such line is a retraction episode."""

    head = "(APIServer pid=1) INFO 05-01 16:27:{:02d} [loggers.py:248] "
    lines = [head.format(i) + "Engine 000: Avg prompt throughput: 10.0 tokens/s, Avg generation "
             f"throughput: 50.0 tokens/s, Running: 24 reqs, Waiting: 7 reqs, "
             f"{'Preemptions: 3, ' if i % 2 else ''}GPU KV cache usage: 99.1%, "
             "Prefix cache hit rate: 0.0%" for i in range(6)]
    s = session_of(lines, "v")
    rt = s.state.current.runtime
    facts = s.report().runtime
    assert (facts.retractions, facts.retracted_reqs) == (3, 9)
    assert rt.retraction_evidence is not None and rt.retraction_evidence.line == 2
    assert "kv-retraction" in {a["rule"] for a in s.report().to_json()["alerts"]}
