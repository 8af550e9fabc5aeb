"""One hand-rendered sample line per version variant of every format in the reference.

Lines are rendered from SGLang's format strings (sglang-log-lines.md) with made-up numbers.
Each row checks the listed fields exactly and that the event carries every contract key.
"""

from __future__ import annotations

from typing import Any

import pytest

from parsers import KIND_FIELDS
from parsers.sglang import parse_line

P = "[2026-03-01 12:00:00 TP0] "

SAMPLES: list[tuple[str, str, dict[str, Any]]] = [
    # --- server_args ------------------------------------------------------------------------
    (
        "[2025-04-28 05:39:43] server_args=ServerArgs(model_path='meta-llama/Llama-3.2-1B', "
        "tokenizer_path='meta-llama/Llama-3.2-1B', dtype='auto', kv_cache_dtype='auto', "
        "quantization=None, quantization_param_path=None, context_length=None, "
        "mem_fraction_static=0.8639842241317652, max_running_requests=None, "
        "max_total_tokens=None, chunked_prefill_size=8192, max_prefill_tokens=16384, "
        "page_size=1, tp_size=1, dp_size=1, pp_size=1, moe_dense_tp_size=None, "
        "speculative_draft_kv_cache_dtype='fp8_e4m3', ep_size=1, enable_dp_attention=False, "
        "attention_backend='flashinfer', disable_radix_cache=False, served_model_name='llama')",
        "server_args",
        {"form": "repr", "model_path": "meta-llama/Llama-3.2-1B", "kv_cache_dtype": "auto",
         "tp_size": 1, "mem_fraction_static": 0.8639842241317652, "quantization": None,
         "chunked_prefill_size": 8192, "page_size": 1, "enable_dp_attention": False,
         "attention_backend": "flashinfer", "disable_radix_cache": False,
         "served_model_name": "llama", "attn_dp_size": None},
    ),
    (  # moe_dense_tp_size / speculative_draft_kv_cache_dtype first must not be taken
        "server_args=ServerArgs(moe_dense_tp_size=1, speculative_draft_kv_cache_dtype='bf16', "
        "attn_tp_size=2, tp_size=8, kv_cache_dtype='fp8_e5m2')",
        "server_args",
        {"tp_size": 8, "kv_cache_dtype": "fp8_e5m2", "form": "repr"},
    ),
    (
        "[2026-06-01 10:00:00] server_args={'model_path': 'Qwen/Qwen3-8B', 'quantization': None, "
        "'quantization_param_path': None, 'kv_cache_dtype': 'auto', "
        "'mem_fraction_static': 0.847, 'max_running_requests': None, 'max_total_tokens': None, "
        "'chunked_prefill_size': 8192, 'page_size': 1, 'tp_size': 2, 'dcp_size': 1, "
        "'pp_size': 1, 'attn_dp_size': 4, 'dp_size': 1, 'enable_dp_attention': True, "
        "'disable_radix_cache': False, 'nested': {'tp_size': 99}}",
        "server_args",
        {"form": "dict", "model_path": "Qwen/Qwen3-8B", "tp_size": 2, "attn_dp_size": 4,
         "mem_fraction_static": 0.847, "enable_dp_attention": True, "dp_size": 1},
    ),
    (  # cut dump: the half value at the end is dropped, the rest is kept
        "[00:19:29] server_args=ServerArgs(model_path='/m', kv_cache_dtype='auto', tp_size=2, "
        "mem_fraction_static=0.9, served_model_name='/m-cu",
        "server_args",
        {"model_path": "/m", "tp_size": 2, "mem_fraction_static": 0.9,
         "served_model_name": None},
    ),
    # --- weight load ------------------------------------------------------------------------
    (P + "Load weight begin. avail mem=78.43 GB", "load_weight_begin", {"avail_gib": 78.43}),
    (
        P + "Load weight end. type=LlamaForCausalLM, dtype=torch.float16, avail mem=60.12 GB",
        "load_weight_end",
        {"model_class": "LlamaForCausalLM", "dtype": "torch.float16", "avail_gib": 60.12,
         "usage_gib": None, "elapsed_s": None, "quant": None},
    ),
    (
        P + "Load weight end. type=Gemma3ForConditionalGeneration, dtype=torch.bfloat16, "
        "avail mem=131.08 GB, mem usage=8.13 GB.",
        "load_weight_end",
        {"model_class": "Gemma3ForConditionalGeneration", "avail_gib": 131.08,
         "usage_gib": 8.13},
    ),
    (
        P + "Load weight end. elapsed=0.38 s, type=Qwen2ForCausalLM, dtype=torch.bfloat16, "
        "avail mem=77.45 GB, mem usage=0.98 GB.",
        "load_weight_end",
        {"elapsed_s": 0.38, "dtype": "torch.bfloat16", "usage_gib": 0.98},
    ),
    (
        P + "Load weight end. elapsed=41.27 s, type=Qwen3NextForCausalLM, quant=modelopt_fp4, "
        "quant_algo=NVFP4, avail mem=101.10 GB, mem usage=23.80 GB.",
        "load_weight_end",
        {"elapsed_s": 41.27, "model_class": "Qwen3NextForCausalLM", "dtype": None,
         "quant": "quant=modelopt_fp4, quant_algo=NVFP4", "avail_gib": 101.1,
         "usage_gib": 23.8},
    ),
    (
        P + "Load weight end. elapsed=3.00 s, type=M, avail mem=10.00 GB, mem usage=1.00 GB.",
        "load_weight_end",
        {"quant": None, "avail_gib": 10.0},
    ),
    (
        "Load weight end. quant=fp8, fmt=e4m3, avail mem=12.25 GB, mem usage=125.65 GB.",
        "load_weight_end",
        {"quant": "quant=fp8, fmt=e4m3", "avail_gib": 12.25, "usage_gib": 125.65},
    ),
    (
        P + "Load weight end. Committed real weights after CUDA graph capture in 4.20 s "
        "(capture overlap window 3.10 s, startup overlap total 9.00 s)",
        "load_weight_end",
        {"elapsed_s": 4.2, "overlap": True},
    ),
    # --- KV dtype ---------------------------------------------------------------------------
    (P + "Using KV cache dtype: torch.float8_e4m3fn", "kv_dtype",
     {"dtype": "torch.float8_e4m3fn", "origin": "resolved"}),
    ("[2026-01-01 00:00:00] Setting KV cache dtype to fp8.", "kv_dtype",
     {"dtype": "fp8", "origin": "override"}),
    ("[2026-01-01 00:00:00] Setting KV cache dtype to fp8_e4m3 for DeepSeek NSA.", "kv_dtype",
     {"dtype": "fp8_e4m3", "origin": "override", "reason": "DeepSeek NSA"}),
    ("Setting KV cache dtype to bfloat16 for DeepSeek DSA on SM8 device.", "kv_dtype",
     {"dtype": "bfloat16", "origin": "override"}),
    ("Setting KV cache dtype to bfloat16 for DeepSeek DSA on XPU.", "kv_dtype",
     {"dtype": "bfloat16", "origin": "override"}),
    ("Setting KV cache dtype to fp8_e4m3 for DeepseekV4ForCausalLM.", "kv_dtype",
     {"dtype": "fp8_e4m3", "reason": "DeepseekV4ForCausalLM"}),
    ("Use fp8_e4m3 KV cache by default for Muse Spark", "kv_dtype",
     {"dtype": "fp8_e4m3", "origin": "override", "reason": "Muse Spark"}),
    (
        "[2026-05-01 15:16:08] WARNING server_args.py:1146: Setting KV cache dtype to "
        "bfloat16 for DeepSeek DSA on SM8 device.",
        "kv_dtype",
        {"dtype": "bfloat16", "origin": "override"},
    ),
    # --- FP8 scales -------------------------------------------------------------------------
    (
        P + "Using FP8 KV cache but no scaling factors provided. Defaulting to scaling factors "
        "of 1.0. This may lead to less accurate results!",
        "fp8_scales_missing", {"form": "long"},
    ),
    (P + "Using FP8 KV cache but no scaling factors provided. Defaulting to scaling factors of "
     "1.0.", "fp8_scales_missing", {"form": "short"}),
    (P + "Using FP8 KV cache but no scaling factors provided", "fp8_scales_missing",
     {"form": "short"}),
    (
        P + "Defaulting to KV cache scaling factors = 1.0 for all layers in TP rank 3 as an "
        "error occurred during loading.",
        "fp8_scales_missing", {"form": "load_error", "tp_rank": 3},
    ),
    (P + "Loaded KV cache scaling factors from /models/kv_scales.json", "fp8_scales_loaded",
     {"path": "/models/kv_scales.json"}),
    # --- KV pool ----------------------------------------------------------------------------
    (P + "KV Cache is allocated. K size: 25.86 GB, V size: 25.86 GB.", "kv_pool",
     {"tokens": None, "k_gib": 25.86, "v_gib": 25.86, "label": None}),
    (P + "KV Cache is allocated. #tokens: 423698, K size: 25.86 GB, V size: 25.86 GB",
     "kv_pool", {"tokens": 423698, "k_gib": 25.86, "v_gib": 25.86, "kv_gib": None}),
    (P + "KV Cache is allocated. #tokens: 10000, KV size: 0.65 GB", "kv_pool",
     {"tokens": 10000, "kv_gib": 0.65, "k_gib": None}),
    (
        P + "KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 847396, "
        "K size: 25.86 GB, V size: 25.86 GB",
        "kv_pool", {"dtype": "torch.float8_e4m3fn", "tokens": 847396, "k_gib": 25.86},
    ),
    (P + "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1000, KV size: 1.50 GB",
     "kv_pool", {"dtype": "torch.bfloat16", "kv_gib": 1.5}),
    (
        P + "Full KV Cache is allocated. dtype: torch.bfloat16, #tokens: 375360, "
        "K size: 10.48 GB, V size: 6.99 GB",
        "kv_pool", {"label": "Full", "tokens": 375360, "post_capture": False},
    ),
    (
        P + "SWA KV Cache is allocated. dtype: torch.bfloat16, #tokens: 300288, "
        "K size: 8.38 GB, V size: 5.59 GB",
        "kv_pool", {"label": "SWA", "v_gib": 5.59},
    ),
    (
        P + "MiniMax MSA-v1 main NVFP4 KV Cache is allocated. dtype: torch.float4_e2m1fn_x2, "
        "#tokens: 5000, KV size: 0.30 GB",
        "kv_pool", {"label": "MiniMax MSA-v1 main NVFP4", "dtype": "torch.float4_e2m1fn_x2"},
    ),
    (
        P + "KV Cache VA upper bound. dtype: torch.bfloat16, #tokens: 900000, "
        "K size: 40.00 GB, V size: 40.00 GB",
        "kv_pool", {"post_capture": True, "tokens": 900000},
    ),
    (
        P + "Post-capture KV sizing: KV cache allocated. dtype: torch.bfloat16, #tokens: 1234, "
        "KV size: 2.00 GB, avail mem=3.00 GB",
        "kv_pool", {"post_capture": True, "tokens": 1234, "kv_gib": 2.0, "avail_gib": 3.0},
    ),
    # --- Mamba pool -------------------------------------------------------------------------
    (P + "Mamba Cache is allocated. conv_state size: 0.84GB, ssm_state size: 17.16GB ",
     "mamba_pool", {"slots": None, "conv_gib": 0.84, "ssm_gib": 17.16}),
    (
        P + "Mamba Cache is allocated. max_mamba_cache_size: 512, conv_state size: 0.84 GB, "
        "ssm_state size: 17.16 GB",
        "mamba_pool", {"slots": 512, "conv_gib": 0.84, "ssm_gib": 17.16},
    ),
    (
        P + "Mamba Cache is allocated. conv_state size: 0.84GB, ssm_state size: 17.16GB "
        "intermediate_ssm_state_cache size: 2.00GB intermediate_conv_window_cache size: "
        "0.10GB ",
        "mamba_pool", {"intermediate_ssm_gib": 2.0, "intermediate_conv_gib": 0.1},
    ),
    # --- SWA split --------------------------------------------------------------------------
    (P + "Use Sliding window memory pool. full_layer_tokens=100, swa_layer_tokens=80",
     "swa_split", {"full_tokens": 100, "swa_tokens": 80}),
    (P + "Use sliding window memory pool. full_layer_tokens=375360, swa_layer_tokens=300288",
     "swa_split", {"full_tokens": 375360, "swa_tokens": 300288}),
    (P + "Use sliding window memory pool (all SWA). swa_layer_tokens=500000", "swa_split",
     {"full_tokens": None, "swa_tokens": 500000}),
    (P + "Post-capture KV sizing: full_layer_tokens=10, swa_layer_tokens=8", "swa_split",
     {"full_tokens": 10, "swa_tokens": 8}),
    # --- pool end / graphs ------------------------------------------------------------------
    (P + "Memory pool end. avail mem=14.61 GB", "memory_pool_end", {"avail_gib": 14.61}),
    (P + "Capture cuda graph end. Time elapsed: 5.37 s. mem usage=1.44 GB. avail mem=38.05 GB.",
     "cuda_graph_end", {"elapsed_s": 5.37, "usage_gib": 1.44, "avail_gib": 38.05}),
    (P + "Capture cpu graph end. Time elapsed: 2.00 s. mem usage=0.00 GB. avail mem=1.00 GB.",
     "cuda_graph_end", {"graph": "cpu graph"}),
    (
        P + "Capture target decode CUDA graph end. bs=[1, 2, 4], elapsed=12.50 s, "
        "mem usage=0.57 GB, avail mem=17.75 GB.",
        "cuda_graph_end",
        {"elapsed_s": 12.5, "usage_gib": 0.57, "avail_gib": 17.75,
         "graph": "target decode CUDA graph"},
    ),
    (P + "Capture draft decode NPU graph end. elapsed=1.00 s, mem usage=0.10 GB, "
     "avail mem=2.00 GB.", "cuda_graph_end", {"graph": "draft decode NPU graph"}),
    (P + "Capture target prefill CUDA graph end. elapsed=3.00 s, mem usage=0.20 GB, "
     "avail mem=5.00 GB.", "cuda_graph_end", {"elapsed_s": 3.0}),
    # --- capacity ---------------------------------------------------------------------------
    (
        "[09:00:00 TP0] max_total_num_tokens=5000, max_prefill_tokens=16384, "
        "max_running_requests=2048, context_len=4096",
        "capacity",
        {"max_total_num_tokens": 5000, "chunked_prefill_size": None,
         "max_prefill_tokens": 16384, "available_gpu_mem_gib": None},
    ),
    (
        P + "max_total_num_tokens=1061980, chunked_prefill_size=8192, max_prefill_tokens=16384, "
        "max_running_requests=3319, context_len=163840",
        "capacity", {"chunked_prefill_size": 8192, "context_len": 163840},
    ),
    (
        P + "max_total_num_tokens=20480, chunked_prefill_size=-1, max_prefill_tokens=16384, "
        "max_running_requests=128, context_len=32768, available_gpu_mem=76.95 GB",
        "capacity", {"chunked_prefill_size": -1, "available_gpu_mem_gib": 76.95},
    ),
    (
        P + "max_total_num_tokens=20480, chunked_prefill_size=None, max_prefill_tokens=16384, "
        "max_running_requests=128, context_len=32768, available_cpu_mem=500.00 GB",
        "capacity",
        {"chunked_prefill_size": None, "available_gpu_mem_gib": None,
         "available_cpu_mem_gib": 500.0},
    ),
    (
        P + "max_total_tokens=131072 is larger than the profiled value -561981. Use the "
        "profiled value instead.",
        "max_total_tokens_capped", {"requested": 131072, "profiled": -561981},
    ),
    (
        P + "The memory capacity is unbalanced. Some GPUs may be occupied by other processes. "
        "min_per_gpu_memory=70.00, local_gpu_memory=79.00, local_gpu_memory * 0.9=71.10",
        "mem_unbalanced", {"min_gpu_memory_gib": 70.0, "local_gpu_memory_gib": 79.0},
    ),
    # --- prefill ----------------------------------------------------------------------------
    (
        "[16:43:29 TP0] Prefill batch. #new-seq: 4, #new-token: 8192, #cached-token: 291, "
        "cache hit rate: 2.76%, token usage: 0.04, #running-req: 1, #queue-req: 38",
        "prefill_batch",
        {"new_seq": 4, "new_token": 8192, "cached_token": 291, "cache_hit_rate": 2.76,
         "token_usage": 0.04, "running_req": 1, "queue_req": 38},
    ),
    (
        "[16:43:29 TP0] Prefill batch. #new-seq: 1, #new-token: 5, #cached-token: 0, "
        "cache hit rate: 0.00%, #running-req: 0, #queue-req: 0",
        "prefill_batch", {"cache_hit_rate": 0.0, "token_usage": None, "running_req": 0},
    ),
    (
        P + "Prefill batch(mixed #running-req: 7). #new-seq: 1, #new-token: 10, "
        "#cached-token: 2, cache hit rate: 16.67%, token usage: 0.10, #queue-req: 3",
        "prefill_batch", {"running_req": 7, "mixed_running_req": 7, "queue_req": 3},
    ),
    (
        P + "Prefill batch. #new-seq: 2, #new-token: 2, #cached-token: 8027, token usage: 0.26, "
        "#running-req: 28, #queue-req: 0, ",
        "prefill_batch", {"new_seq": 2, "queue_req": 0, "cuda_graph": None},
    ),
    (
        P + "Prefill batch. #new-seq: 14, #new-token: 8192, #cached-token: 0, token usage: 0.92, "
        "#unbootstrapped-req: 0, #queue-req: 105, #transferring-req: 990, "
        "input throughput (token/s): 96875.08 ",
        "prefill_batch",
        {"unbootstrapped_req": 0, "transferring_req": 990, "input_throughput": 96875.08},
    ),
    (
        P + "Prefill batch. #new-seq: 1, #new-token: 9, #cached-token: 0, #token: full=100, "
        "swa=80, token usage: full=0.10, swa=0.20, #running-req: 1, #queue-req: 0",
        "prefill_batch",
        {"full_token": 100, "swa_token": 80, "full_token_usage": 0.1, "swa_token_usage": 0.2},
    ),
    (
        P + "Prefill batch. #new-seq: 1, #new-token: 9, #cached-token: 0, full token usage: 0.10, "
        "swa token usage: 0.20, #running-req: 1, #queue-req: 0, ",
        "prefill_batch", {"full_token_usage": 0.1, "swa_token_usage": 0.2},
    ),
    (
        P + "Prefill batch [12], #new-seq: 1, #new-token: 9, #cached-token: 0, "
        "full token usage: 0.10, mamba usage: 0.30, #running-req: 1, #queue-req: 0, ",
        "prefill_batch", {"mamba_usage": 0.3, "new_token": 9},
    ),
    (
        P + "Prefill batch, #new-seq: 1, #new-token: 2048, #cached-token: 0, token usage: 0.06, "
        "#running-req: 7, #queue-req: 0, input throughput (token/s): 9406.12, cuda graph: False",
        "prefill_batch", {"input_throughput": 9406.12, "cuda_graph": False, "running_req": 7},
    ),
    (
        P + "Prefill batch, #new-seq: 1, #new-token: 896, #cached-token: 0, token usage: 0.31, "
        "#running-req: 45, #queue-req: 81, #pending-token: 70187, npu graph: False, "
        "input throughput (token/s): 12.50",
        "prefill_batch", {"pending_token": 70187, "cuda_graph": False, "input_throughput": 12.5},
    ),
    (
        P + "Prefill batch, #new-seq: 1, #new-token: 1, #cached-token: 0, token usage: 0.31, "
        "#running-req: 4, #queue-req: 1, #pending-token: 7, #replay-token: 3, "
        "#bootstrap-req: 1, #inflight-req: 2, cuda graph: True, input throughput (token/s): "
        "1.00, est. prefill TFLOPS/s (per GPU): 3.25",
        "prefill_batch", {"replay_token": 3, "inflight_req": 2, "prefill_tflops": 3.25},
    ),
    (
        "new fill batch. #seq: 1. #cached_token: 0. #new_token: 8. #remaining_req: 0. "
        "#running_req: 0. tree_cache_hit_rate: 0.00%.",
        "prefill_batch",
        {"new_seq": 1, "cached_token": 0, "new_token": 8, "queue_req": 0, "running_req": 0,
         "cache_hit_rate": 0.0},
    ),
    ("new fill batch. #seq: 7. #cached_token: 1541. #new_token: 4. #remaining_req: 0. "
     "#running_req: 0", "prefill_batch", {"new_seq": 7, "cached_token": 1541}),
    ("GPU: 0 new fill batch. #seq: 2. #new_token: 5. #remaining_req: 1. #running_req: 3. ",
     "prefill_batch", {"new_seq": 2, "queue_req": 1, "running_req": 3}),
    # --- decode -----------------------------------------------------------------------------
    (
        "#running-req: 3, #token: 300, token usage: 0.01, gen throughput (token/s): 50.00, "
        "#queue-req: 0",
        "decode_batch", {"running_req": 3, "token": 300, "gen_throughput": 50.0},
    ),
    (
        "[gpu=0] Decode batch. #running-req: 2, #token: 9, token usage: 0.01, "
        "gen throughput (token/s): 5.00, #queue-req: 1",
        "decode_batch", {"running_req": 2, "queue_req": 1},
    ),
    (
        P + "Decode batch. #running-req: 8, #token: 62531, token usage: 0.12, "
        "gen throughput (token/s): 186.64, #queue-req: 0",
        "decode_batch",
        {"running_req": 8, "token": 62531, "token_usage": 0.12, "gen_throughput": 186.64,
         "queue_req": 0, "cuda_graph": None},
    ),
    (
        P + "Decode batch. #running-req: 8, #token: 100, token usage: 0.12, accept len: 2.50, "
        "gen throughput (token/s): 186.64, #queue-req: 0",
        "decode_batch", {"accept_len": 2.5},
    ),
    (
        P + "Decode batch. #running-req: 509, #token: 180776, token usage: 0.43, "
        "gen throughput (token/s): 7897.87, largest-len: 0, #queue-req: 0, ",
        "decode_batch", {"largest_len": 0, "queue_req": 0},
    ),
    (
        P + "Decode batch. #running-req: 9, #token: 10, token usage: 0.43, "
        "pre-allocated usage: 0.10, gen throughput (token/s): 7.00, #queue-req: 0, ",
        "decode_batch", {"preallocated_usage": 0.1},
    ),
    (
        P + "Decode batch. #running-req: 4, #token: 9071, token usage: 0.01, cuda graph: True, "
        "gen throughput (token/s): 12.00, #queue-req: 0",
        "decode_batch", {"cuda_graph": True, "token": 9071},
    ),
    (
        P + "Decode batch. #running-req: 4, #token: 9071, token usage: 0.01, "
        "pre-allocated usage: 0.00, #retracted-req: 2, cuda graph: False, "
        "gen throughput (token/s): 12.00, #queue-req: 0",
        "decode_batch", {"retracted_req": 2, "cuda_graph": False},
    ),
    (
        P + "Decode batch. #running-req: 4, #token: full=100, swa=50, token usage: full=0.10, "
        "swa=0.05, cuda graph: True, gen throughput (token/s): 12.00, #queue-req: 0",
        "decode_batch",
        {"full_token": 100, "swa_token": 50, "full_token_usage": 0.1, "swa_token_usage": 0.05,
         "token": None},
    ),
    (
        P + "Decode batch. #running-req: 4, #full token: 100, full token usage: 0.10, "
        "#swa token: 50, swa token usage: 0.05, cuda graph: True, "
        "gen throughput (token/s): 12.00, #queue-req: 0, ",
        "decode_batch", {"full_token": 100, "swa_token": 50, "swa_token_usage": 0.05},
    ),
    (
        P + "Decode batch [1234], #running-req: 4, #token: 9071, token usage: 0.01, "
        "accept len: 3.10, accept rate: 0.70, cuda graph: True, "
        "gen throughput (token/s): 12.00, #queue-req: 0, ",
        "decode_batch", {"accept_len": 3.1, "accept_rate": 0.7},
    ),
    (
        "[2025-11-11 04:06:30] Decode batch, #running-req: 28, #token: 22920, "
        "token usage: 0.13, cuda graph: True, gen throughput (token/s): 1086.59, #queue-req: 0, ",
        "decode_batch",
        {"running_req": 28, "token": 22920, "token_usage": 0.13, "cuda_graph": True,
         "gen_throughput": 1086.59, "queue_req": 0},
    ),
    (
        P + "Decode batch, #running-req: 8, #full token: 52311, full token usage: 0.05, "
        "mamba num: 8, mamba usage: 0.02, cuda graph: True, gen throughput (token/s): 812.33, "
        "#queue-req: 0",
        "decode_batch",
        {"full_token": 52311, "full_token_usage": 0.05, "mamba_num": 8, "mamba_usage": 0.02},
    ),
    (
        P + "Decode batch, #running-req: 3, #token: 266624, token usage: 0.43, accept len: 1.67, "
        "accept rate: 0.13, pre-allocated usage: 0.22, #prealloc-req: 0, #transfer-req: 1, "
        "#host-receive-req: 2, #retracted-req: 0, waiting-image-req: 1, cuda graph: True, "
        "gen throughput (token/s): 183.10, #queue-req: 0, est. decode TFLOPS/s (per GPU): 1.50, "
        "est. read BW (GB/s per GPU): 900.00, est. write BW (GB/s per GPU): 10.00",
        "decode_batch",
        {"transfer_req": 1, "host_receive_req": 2, "retracted_req": 0, "waiting_image_req": 1,
         "decode_tflops": 1.5, "read_bw_gbps": 900.0, "write_bw_gbps": 10.0},
    ),
    (
        P + "Decode batch, #running-req: 1, #token: 64, token usage: 0.00, "
        "gen throughput (token/s): 84.39, #queue-req: 0, #cache_miss: 1",
        "decode_batch", {"cache_miss": 1},
    ),
    (  # cut paste: the half value at the end is not trusted
        P + "Decode batch, #running-req: 11, #token: 14082, token usage: 0.0",
        "decode_batch", {"running_req": 11, "token": 14082, "token_usage": None},
    ),
    (
        "2025-09-13 09:09:15 TP0] Decode batch. #running-req: 4, #token: 9071, "
        "token usage: 0.01, cuda graph: True, gen throughput (to",
        "decode_batch", {"running_req": 4, "cuda_graph": True, "gen_throughput": None},
    ),
    # --- retraction -------------------------------------------------------------------------
    (
        P + "Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.8024 -> "
        "0.9085",
        "retraction",
        {"retracted_reqs": 1, "new_token_ratio_before": 0.8024, "new_token_ratio_after": 0.9085},
    ),
    (
        P + "KV cache pool is full. Retract requests. #retracted_reqs: 2, #new_token_ratio: "
        "0.4000 -> 0.7000",
        "retraction", {"retracted_reqs": 2, "new_token_ratio_after": 0.7},
    ),
    (
        P + "KV cache pool is full. Retract requests. #retracted_reqs: 2, "
        "#aborted_retracted_reqs: 1, #new_token_ratio: 0.4000 -> 0.7000",
        "retraction", {"aborted_retracted_reqs": 1, "new_token_ratio_before": 0.4},
    ),
    (
        P + "KV cache pool is full. Retract requests. #retracted_reqs: 3, "
        "#new_tokens_gained: 5120, #new_token_ratio: 0.4135 -> 0.7000",
        "retraction", {"retracted_reqs": 3, "new_tokens_gained": 5120},
    ),
    (
        P + "KV cache pool is full. Retract requests. #retracted_reqs: 3, "
        "#new_tokens_gained: 5120, #mamba_num_gained: 2, #new_token_ratio: 0.4135 -> 0.7000",
        "retraction", {"mamba_num_gained": 2, "new_token_ratio_after": 0.7},
    ),
    (
        P + "Testing retraction. #retracted_reqs: 3, #new_tokens_gained: 12",
        "retraction",
        {"retracted_reqs": 3, "new_token_ratio_before": None, "new_token_ratio_after": None},
    ),
    # --- OOM --------------------------------------------------------------------------------
    (P + "Prefill out of memory. Try to lower your batch size.", "oom", {"reason": "prefill"}),
    (P + "Decode out of memory. Try to lower your batch size.", "oom", {"reason": "decode"}),
    (P + "Out of memory. Try to lower your batch size.", "oom", {"reason": "alloc"}),
    ("RuntimeError: Prefill out of memory. Try to lower your batch size.", "oom",
     {"reason": "prefill"}),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 26.00 MiB.", "oom",
     {"reason": "torch"}),
    ("Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 1 MiB.",
     "oom", {"reason": "cuda_graph"}),
    (P + "Not enough memory. Please try to increase --mem-fraction-static.", "oom",
     {"reason": "not_enough_memory"}),
    (
        P + "Not enough memory. Please try to increase --mem-fraction-static. Current value: "
        "self.server_args.mem_fraction_static=0.8",
        "oom", {"reason": "not_enough_memory"},
    ),
    (
        "ValueError: Loaded weights leave no GPU memory for the KV cache under "
        "--mem-fraction-static=0.88. Raise --mem-fraction-static above 0.911",
        "oom", {"reason": "weights_leave_no_kv"},
    ),
    (P + "Out of memory even after retracting all other requests in the decode batch.", "oom",
     {"reason": "after_retract"}),
]


def _ids() -> list[str]:
    return [f"{i:03d}-{kind}" for i, (_line, kind, _f) in enumerate(SAMPLES)]


@pytest.mark.parametrize(("line", "kind", "expected"), SAMPLES, ids=_ids())
def test_sample(line: str, kind: str, expected: dict[str, Any]) -> None:
    event = parse_line(line)
    assert event is not None, line
    assert event.kind == kind
    missing = set(KIND_FIELDS[kind]) - event.fields.keys()
    assert not missing
    for name, value in expected.items():
        assert event.fields.get(name) == value, (name, event.fields)
        if value is not None:
            assert type(event.fields[name]) is type(value), name


@pytest.mark.parametrize(
    ("line", "ts", "rank"),
    [
        ("[2025-10-16 09:06:22 TP1] Memory pool end. avail mem=1.00 GB",
         "2025-10-16 09:06:22", "TP1"),
        ("[2025-10-16 09:06:22.123 DP1 PP0 ATTN_CP1 MOE_DP0 TP3 EP3] Memory pool end. "
         "avail mem=1.00 GB", "2025-10-16 09:06:22.123", "DP1 PP0 ATTN_CP1 MOE_DP0 TP3 EP3"),
        ("[16:43:29 TP0] Memory pool end. avail mem=1.00 GB", "16:43:29", "TP0"),
        ("[16:43:29] Memory pool end. avail mem=1.00 GB", "16:43:29", None),
        ("[2025-07-14 05:48:43] Memory pool end. avail mem=1.00 GB", "2025-07-14 05:48:43", None),
        ("Memory pool end. avail mem=1.00 GB", None, None),
        ("2025-09-13 09:09:15 TP0] Memory pool end. avail mem=1.00 GB",
         "2025-09-13 09:09:15", "TP0"),
        ("2026-02-27 10:00:01 INFO 12345 [DP0 TP0 EP0 model_runner.py:412] Memory pool end. "
         "avail mem=1.00 GB", "2026-02-27 10:00:01", "DP0 TP0 EP0"),
        ("2026-02-27 10:00:01 INFO 12345 [model_runner.py:412] Memory pool end. "
         "avail mem=1.00 GB", "2026-02-27 10:00:01", None),
        ("[gpu=0] Memory pool end. avail mem=1.00 GB", None, None),
        ("  [2025-10-16 09:06:22 TP1] Memory pool end. avail mem=1.00 GB\r\n",
         "2025-10-16 09:06:22", "TP1"),
    ],
)
def test_prefix_forms(line: str, ts: str | None, rank: str | None) -> None:
    event = parse_line(line)
    assert event is not None
    assert (event.kind, event.ts, event.rank) == ("memory_pool_end", ts, rank)
    assert event.fields["avail_gib"] == 1.0


@pytest.mark.parametrize(
    "line",
    [
        '[2026-03-01 12:00:00] INFO:     127.0.0.1:52314 - "POST /v1/chat/completions '
        'HTTP/1.1" 200 OK',
        "[2025-10-16 09:06:22 TP0] Capture cuda graph begin. This can take up to several "
        "minutes. avail mem=11.82 GB",
        "[2025-10-16 09:06:09 TP7] Init torch distributed ends. mem usage=1.77 GB",
        "[Gloo] Rank 0 is connected to 0 peer ranks. Expected number of connected peer ranks",
        "(EngineCore pid=1) INFO 07-25 13:42:38 [kv_cache_utils.py:2146] GPU KV cache size: "
        "1,823,372 tokens",
        "INFO 08-19 07:51:08 distributed_gpu_executor.py:56] # GPU blocks: 22982, # CPU "
        "blocks: 6241",
        "(EngineCore pid=196) WARNING 08-17 20:38:37 [kv_cache.py:151] Using KV cache scaling "
        "factor 1.0 for fp8_e4m3.",
        "ValueError: To serve at least one request with the model's max seq len (100000), "
        "(4.26 GiB KV cache is needed, which is larger than the available KV cache memory",
        "[2026-01-15 13:56:49 DP0 TP0] The available memory for KV cache is 17.67 GB.",
        "Decode batch",
        "",
        "[",
        "] ",
    ],
)
def test_not_sglang_events(line: str) -> None:
    assert parse_line(line) is None


@pytest.mark.parametrize(
    "line",
    [
        P + "Decode batch, #running-req: 33, #token: 268459, token usage: 0.12, cuda graph: True, "
        "gen throughput (token/s): 6851.05, #queue-req: 30\n",
        P + "Decode batch, #running-req: 6, #token: 1920, token usage: 0.94, cuda graph: False, "
        "gen throughput (token/s): 446.45, #queue-req: 5, ",
        P + "Decode batch. #running-req: 8, #token: 62531, token usage: 0.12, "
        "gen throughput (token/s): 186.64, #queue-req: 0",
    ],
)
def test_decode_hot_path_is_taken(line: str) -> None:
    """The split fast path must accept the dominant layouts, or speed silently regresses."""
    from parsers.sglang.runtime import decode_split

    fields = decode_split(line, len(P))
    assert fields is not None
    assert fields == parse_line(line).fields  # type: ignore[union-attr]
