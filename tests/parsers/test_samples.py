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
         "quant": "modelopt_fp4", "quant_algo": "NVFP4", "avail_gib": 101.1,
         "usage_gib": 23.8},
    ),
    (
        P + "Load weight end. elapsed=3.00 s, type=M, avail mem=10.00 GB, mem usage=1.00 GB.",
        "load_weight_end",
        {"quant": None, "avail_gib": 10.0},
    ),
    (
        "Load weight end. quant=fp8, fmt=e4m3, avail mem=12.75 GB, mem usage=125.15 GB.",
        "load_weight_end",
        {"quant": "fp8", "quant_fmt": "e4m3", "avail_gib": 12.75, "usage_gib": 125.15},
    ),
    (
        P + "Load weight end. Committed real weights after CUDA graph capture in 4.20 s "
        "(capture overlap window 3.10 s, startup overlap total 9.00 s)",
        "load_weight_end",
        {"elapsed_s": 4.2, "overlap": True},
    ),
    # --- start-up steps ----------------------------------------------------------------------
    # 0.5.2 model_executor/model_runner.py:691, 0.5.8 :801
    ("[2026-01-01 10:00:01 TP7] Init torch distributed ends. mem usage=1.77 GB",
     "dist_init_end", {"usage_gib": 1.77, "elapsed_s": None}),
    # 0.5.9 model_executor/model_runner.py:850-851
    ("[2026-01-01 10:00:01] Init torch distributed ends. elapsed=0.26 s, mem usage=0.09 GB",
     "dist_init_end", {"usage_gib": 0.09, "elapsed_s": 0.26}),
    ("[2026-01-01 10:00:01 TP0] Init torch distributed ends. mem usage=1", "dist_init_end",
     {"usage_gib": None}),  # cut inside the value
    # 0.5.8 model_executor/model_runner.py:2000, 0.5.9 :2147 (`npu graph` on Ascend)
    ("[2026-01-01 10:00:20 TP0] Capture cuda graph begin. This can take up to several "
     "minutes. avail mem=11.82 GB", "cuda_graph_begin",
     {"avail_gib": 11.82, "graph": "cuda graph"}),
    ("[2026-01-01 10:00:20 DP1 TP1] Capture npu graph begin. This can take up to several "
     "minutes. avail mem=11.91 GB", "cuda_graph_begin",
     {"avail_gib": 11.91, "graph": "npu graph"}),
    ("[2026-01-01 10:00:20 TP4] Capture cuda graph begin. This can take up to several mi",
     "cuda_graph_begin", {"avail_gib": None}),
    # --- KV dtype ---------------------------------------------------------------------------
    (P + "Using KV cache dtype: torch.float8_e4m3fn", "kv_dtype",
     {"dtype": "torch.float8_e4m3fn", "origin": "resolved"}),
    ("[2026-01-01 00:00:00] Setting KV cache dtype to fp8.", "kv_dtype",
     {"dtype": "fp8", "origin": "override"}),
    ("[2026-01-01 00:00:00] Setting KV cache dtype to fp8_e4m3 for DeepSeek NSA.", "kv_dtype",
     {"dtype": "fp8_e4m3", "origin": "model_default", "reason": "DeepSeek NSA"}),
    ("Setting KV cache dtype to bfloat16 for DeepSeek DSA on SM8 device.", "kv_dtype",
     {"dtype": "bfloat16", "origin": "model_default"}),
    ("Setting KV cache dtype to bfloat16 for DeepSeek DSA on XPU.", "kv_dtype",
     {"dtype": "bfloat16", "origin": "model_default"}),
    ("Setting KV cache dtype to fp8_e4m3 for DeepseekV4ForCausalLM.", "kv_dtype",
     {"dtype": "fp8_e4m3", "origin": "model_default", "reason": "DeepseekV4ForCausalLM"}),
    ("Use fp8_e4m3 KV cache by default for Muse Spark", "kv_dtype",
     {"dtype": "fp8_e4m3", "origin": "model_default", "reason": "Muse Spark"}),
    # logged before the dump: 0.5.9 server_args.py:1247 (`dp_size=`), 0.5.23
    # arg_groups/model_hook.py:332 (`attn_dp_size=`)
    ("[2026-01-01 00:00:00] WARNING server_args.py:1248: DSA with TP mode is active, dp_size=1, "
     "tp_size=4, attn_tp_size=4, attention weights will be sharded across 4 ranks.",
     "server_args", {"tp_size": 4, "dp_size": 1, "partial": True, "before_dump": True}),
    ("NSA with TP mode is active, dp_size=2, tp_size=8, attn_tp_size=8, attention weights will "
     "be sharded across 8 ranks.", "server_args", {"tp_size": 8, "dp_size": 2}),
    ("DSA with TP mode is active, attn_dp_size=2, tp_size=8, attn_tp_size=4, attention weights "
     "will be sharded across 4 ranks.", "server_args", {"tp_size": 8, "attn_dp_size": 2}),
    # The DSA (NSA) attention backends chosen for the resolved KV dtype, at argument
    # resolution: 0.5.6 server_args.py:997 (NSA), 0.5.8 :1182 (DSA), only for FP8 KV ...
    ("[2026-01-01 00:00:00] Setting DSA backend to flashmla_auto for prefill and flashmla_kv "
     "for decode for FP8 KV Cache.", "kv_dtype",
     {"dtype": "fp8_e4m3", "origin": "override", "reason": "DSA backends"}),
    # ... then for any: 0.5.9 server_args.py:1179 (NSA), 0.5.23 arg_groups/overrides.py:738
    ("[2026-01-01 00:00:00] Set NSA backends for fp8_e4m3 KV Cache: prefill=flashmla_auto, "
     "decode=flashmla_kv.", "kv_dtype",
     {"dtype": "fp8_e4m3", "origin": "override", "reason": "DSA backends",
      "dsa_prefill_backend": "flashmla_auto", "dsa_decode_backend": "flashmla_kv"}),
    # the backends pick the FP8 latent's layout (raw for trtllm: 0.5.23
    # mem_cache/kv_cache_configurator.py:3425-3440)
    ("[2026-01-01 00:00:00] Set DSA backends for fp8_e4m3 KV Cache: prefill=trtllm, "
     "decode=trtllm.", "kv_dtype",
     {"dtype": "fp8_e4m3", "dsa_prefill_backend": "trtllm", "dsa_decode_backend": "trtllm"}),
    ("[2026-01-01 00:00:00] Set DSA backends for bfloat16 KV Cache: prefill=flashmla_sparse, "
     "decode=fa3.", "kv_dtype", {"dtype": "bfloat16", "origin": "override"}),
    # torch without an FP4 dtype: the model dtype instead (0.5.8 model_executor/
    # model_runner.py:1576-1579)
    (P + "--kv-cache-dtype falls back to 'auto' because this torch version does not support "
     "torch.float4_e2m1fn_x2", "kv_dtype", {"dtype": "auto", "origin": "fallback"}),
    (
        "[2026-05-01 15:16:08] WARNING server_args.py:1146: Setting KV cache dtype to "
        "bfloat16 for DeepSeek DSA on SM8 device.",
        "kv_dtype",
        {"dtype": "bfloat16", "origin": "model_default"},
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
    # 0.5.18+ kv_cache_configurator.py:143 (0.5.23 :215); as a DeepSeek-V4.1-Flash run report
    # in a public repository shows it ("[2026-09-11 23:46:11 TP0 EP0] Reserving 0.10 GB ...")
    ("[2026-09-11 23:46:11 TP0 EP0] Reserving 0.10 GB of the KV budget for post-sizing "
     "multimodal allocations (feature-transport pools + embedding cache).",
     "kv_budget_reserved", {"reserved_gib": 0.1, "purpose": "multimodal"}),
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
        P + "max_total_tokens=131072 is larger than the profiled value -48210. Use the "
        "profiled value instead.",
        "max_total_tokens_capped", {"requested": 131072, "profiled": -48210},
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
    # --- capacity limits the engine reports (0.5.14-0.5.23) -------------------------------
    (  # real (a hybrid GDN model's boot log, 2026): the cap is the mamba state cache
        P + "max_running_requests is capped to 200 by the mamba state cache "
        "(max_mamba_cache_size=1000, 5 state slots per request). To raise it: increase "
        "--mamba-full-memory-ratio or --max-mamba-cache-size, or halve the state size with "
        "--mamba-ssm-dtype bfloat16.",
        "mamba_cap",
        {"max_running_requests": 200, "max_mamba_cache_size": 1000, "slots_per_request": 5},
    ),
    ("max_running_requests is capped to 0 by the mamba state cache", "mamba_cap",
     {"max_running_requests": 0, "max_mamba_cache_size": None}),
    (
        P + "max_running_requests was reduced from the requested 512 to 96 (per dp worker) due "
        "to the available KV cache capacity.",
        "requests_reduced", {"requested": 512, "max_running_requests": 96},
    ),
    ("[2026-08-14 21:03:09] NVFP4 KV Cache might lead to an accuracy drop!",
     "kv_accuracy_warning", {"dtype": "nvfp4"}),
    (P + "FP4_MX_BLOCK16 KV Cache might lead to an accuracy drop!", "kv_accuracy_warning",
     {"dtype": "fp4_mx_block16"}),
    (P + "FP4 (E2M1) KV Cache might lead to a accuracy drop!", "kv_accuracy_warning",
     {"dtype": "fp4_e2m1"}),
    (  # real (a Gemma-4 boot log, 2026)
        "SWAKVPool mem usage: 79.94 GB, swa size: 798276, full size: 997846",
        "swa_pool", {"gib": 79.94, "swa_tokens": 798276, "full_tokens": 997846},
    ),
    (P + "SWAKVPool mem usage: 13.966064453125 GB, swa size: 300288, full size: 375360",
     "swa_pool", {"gib": 13.966064453125, "full_tokens": 375360}),
    (P + "SWAKVPool VA upper bound: 31.46 GB, swa size: 300288, full size: 375360", "swa_pool",
     {"gib": 31.46, "post_capture": True}),
    (
        P + "SWA per-request ring accounting enabled: ring_size=256, ring_cost_tokens=256, "
        "size_swa=65536 (paged size_swa=423424 bypassed)",
        "swa_sizing",
        {"mode": "ring", "swa_tokens": 65536, "ring_size": 256, "ring_cost_tokens": 256,
         "paged_swa_tokens": 423424},
    ),
    (  # real (DeepSeek-V4-Flash on 4 x DGX Spark, 2026)
        "DSV4 SWA sizing: mode=ratio (explicit), swa_tokens=549888, swa_full_tokens_ratio=0.22",
        "swa_sizing",
        {"mode": "ratio (explicit)", "swa_tokens": 549888, "swa_full_tokens_ratio": 0.22},
    ),
    (P + "DSV4 SWA sizing: mode=cap, swa_tokens=45568, request_cap+headroom=45568, "
     "prefix_tails=64", "swa_sizing",
     {"mode": "cap", "request_cap_tokens": 45568, "prefix_tails": 64}),
    (
        P + "DSV4 memory calculation: unified=False, unified_fp8=True, dspark_draft_bf16=False, "
        "bytes_per_full_token=176983.05, available_bytes=87.26 GB, c128_state_fixed=0.12 GB, "
        "c2_state_fixed=0.00 GB, swa_fixed=1.50 GB, swa_ring_fixed=0.00 GB, "
        "c4_state_fixed=0.30 GB, full_token=529408",
        "dsv4_memory",
        {"unified": False, "unified_fp8": True, "bytes_per_full_token": 176983.05,
         "available_gib": 87.26, "swa_gib": 1.5, "c4_state_gib": 0.3, "full_tokens": 529408},
    ),
    (  # real (corpus repofile-54751690598: a pre-release spelling)
        "[2026-05-13 02:15:18 DP0 TP0] DSv4 memory calculation: bytes_per_full_token=176983.05, "
        "available_bytes=87.26 GB, full_token=529408",
        "dsv4_memory", {"available_gib": 87.26, "full_tokens": 529408},
    ),
    (  # real (DeepSeek-V4-Flash on 4 x DGX Spark, 2026; the paste ends the line with ", ...")
        "DSV4 pool sizes: full=2499840, swa=549888, c4=624960, c128=19530, ...",
        "dsv4_pool",
        {"full_tokens": 2499840, "swa_tokens": 549888, "c4_entries": 624960,
         "c128_entries": 19530, "c4_state_rows": None},
    ),
    (
        P + "Initialize DeepSeekV4TokenToKVPool with max_num_reqs=256 swa_size=423424 "
        "c4_size=132352 c4_logical_size=132352 c128_size=4136 c4_state_pool_size=52928 "
        "c128_state_pool_size=846848 unified=False unified_fp8=False",
        "dsv4_pool",
        {"max_num_reqs": 256, "swa_tokens": 423424, "c4_logical_entries": 132352,
         "c128_state_rows": 846848, "unified": False, "full_tokens": None},
    ),
    # --- errors ---------------------------------------------------------------------------
    (  # real (corpus sglang-issue-4048)
        "[2025-03-03 07:15:02 TP5] Input length (150021 tokens) exceeds the maximum allowed "
        "length (65536 tokens). Use a shorter input or enable --allow-auto-truncate.",
        "input_too_long", {"input_tokens": 150021, "max_tokens": 65536, "truncated": False},
    ),
    (
        P + "Request length is longer than the KV cache pool size or the max context length. "
        "Truncated. len(req.origin_input_ids)=70000, max_req_input_len=65535.",
        "input_too_long", {"input_tokens": 70000, "max_tokens": 65535, "truncated": True},
    ),
    ("[2026-03-01 12:00:00] The input (140000 tokens) is longer than the model's context "
     "length (131072 tokens). Truncating the input.", "input_too_long",  # 0.5.23 :1340
     {"input_tokens": 140000, "max_tokens": 131072, "truncated": True}),
    ("ValueError: The input (140000 tokens) is longer than the model's context length (131072 "
     "tokens).", "input_too_long",  # 0.5.23 tokenizer_manager.py:1348
     {"input_tokens": 140000, "max_tokens": 131072, "truncated": False}),
    ('{"object": "error", "message": "Input length (9000 tokens) exceeds the maximum allowed '
     'length (8192 tokens). Use a shorter input"}', "input_too_long",
     {"input_tokens": 9000, "max_tokens": 8192}),
    ("[2025-10-12 20:03:51] Scheduler hit an exception: Traceback (most recent call last):",
     "process_exception", {"process": "Scheduler"}),
    (P + "DataParallelController hit an exception: Traceback (most recent call last):",
     "process_exception", {"process": "DataParallelController"}),
    ("KV cache pool leak detected!", "pool_leak", {"pool": "KV cache pool"}),
    (
        P + "token_to_kv_pool_allocator memory leak detected! self.max_total_num_tokens=1024, "
        "available_size=1000, evictable_size=0, protected_size=0",
        "pool_leak",
        {"pool": "token_to_kv_pool_allocator", "total_tokens": 1024, "available_tokens": 1000},
    ),
    ("/x/sglang/srt/managers/scheduler.py:1093: UserWarning: token_to_kv_pool_allocator memory "
     "leak detected! available_size=5, protected_size=0, self.max_total_num_tokens=9",
     "pool_leak", {"available_tokens": 5, "total_tokens": 9}),
    ("AssertionError: Full Pool Mem Leak Detected! [full] total=1000, available=900, "
     "evictable=50, protected=0", "pool_leak",
     {"pool": "Full Pool", "total_tokens": 1000, "available_tokens": 900}),
    ("AssertionError: Mem Leak Detected! total_tokens=10 vs self.max_total_num_tokens=12",
     "pool_leak", {"pool": None, "total_tokens": 12}),
    # --- real lines with columns newer than the layouts above ------------------------------
    (  # real (a Ray-hosted engine, 2025-10): the actor prefix, the iteration number, and the
        # closing ", " trimmed to ","
        "(SGLangEngine pid=111711, ip=10.15.36.1) [2025-10-31 03:45:20 TP0] Decode batch [39913], "
        "#running-req: 78, #token: 432100, token usage: 0.27, cuda graph: True, "
        "gen throughput (token/s): 7269.16, #queue-req: 0,",
        "decode_batch",
        {"running_req": 78, "token": 432100, "token_usage": 0.27, "cuda_graph": True,
         "gen_throughput": 7269.16, "queue_req": 0},
    ),
    (  # real (PD decode, DP attention, 2025-11)
        "[2025-11-04 05:32:32 DP31 TP31 EP31] Decode batch, #running-req: 7, #token: 7040, "
        "token usage: 0.00, pre-allocated usage: 0.00, #prealloc-req: 0, #transfer-req: 0, "
        "gen throughput (token/s): 6.73, #queue-req: 0,",
        "decode_batch",
        {"running_req": 7, "preallocated_usage": 0.0, "prealloc_req": 0, "transfer_req": 0,
         "gen_throughput": 6.73, "queue_req": 0},
    ),
    (  # real (a hybrid Mamba model, 2026-03): the 0.5.4-0.5.8 layout with its closing ", "
        "[2026-03-03 11:39:21] Decode batch, #running-req: 8, #full token: 924599, "
        "full token usage: 0.15, mamba num: 8, mamba usage: 0.67, cuda graph: True, "
        "gen throughput (token/s): 26.46, #queue-req: 0, ",
        "decode_batch",
        {"full_token": 924599, "full_token_usage": 0.15, "mamba_num": 8, "mamba_usage": 0.67,
         "queue_req": 0},
    ),
    ("[2026-03-03 11:39:20] Prefill batch, #new-seq: 1, #new-token: 4096, #cached-token: 0, "
     "full token usage: 0.15, mamba usage: 0.67, #running-req: 7, #queue-req: 0, ",
     "prefill_batch", {"new_token": 4096, "full_token_usage": 0.15, "mamba_usage": 0.67}),
    (  # real (2026-09): speculative decoding on a hybrid model
        "[2026-09-08 00:21:09] Decode batch, #running-req: 1, #full token: 768320, "
        "full token usage: 0.83, mamba num: 4, mamba usage: 0.40, accept len: 2.85, "
        "accept rate: 0.62, cuda graph: True, gen throughput (token/s): 0.73, #queue-req: 0",
        "decode_batch", {"full_token": 768320, "accept_len": 2.85, "accept_rate": 0.62},
    ),
    (  # a patched build's columns (iter latency, modeled throughput ...) are skipped by name
        "[2026-07-10 04:44:07 TP0] Decode batch, #running-req: 8, #full token: 8000, "
        "iter latency (ms): 20.0000, accept len: 2.00, valid draft len: 1.00, accept rate: 1.00, "
        "modeled throughput (token/s): 1000.00, modeled step: 1, "
        "gen throughput (token/s): 800.00, #queue-req: 0",
        "decode_batch",
        {"running_req": 8, "full_token": 8000, "accept_len": 2.0, "gen_throughput": 800.0,
         "queue_req": 0},
    ),
    (  # real (a docs page's abridged excerpt, 2025-11): columns cut out by the writer
        "[2025-11-04 05:27:13 DP0 TP0 EP0] Load weight end. avail mem=75.11 GB, "
        "mem usage=107.07 GB",
        "load_weight_end", {"avail_gib": 75.11, "usage_gib": 107.07, "model_class": None},
    ),
    ("Load weight end. elapsed=2415.46 s, type=Gemma4ForConditionalGeneration,",
     "load_weight_end", {"elapsed_s": 2415.46, "model_class": "Gemma4ForConditionalGeneration"}),
    (  # real (a PD-disaggregated Kimi-K2 prefill server, 2026-07): `fwd occupancy` closes it
        "[2026-07-21 08:04:41 TP0 EP0] Prefill batch, #new-seq: 1, #new-token: 64, "
        "#cached-token: 10048, token usage: 0.00, #running-req: 0, #queue-req: 0, "
        "#pending-token: 0, #bootstrap-req: 0, #inflight-req: 1, cuda graph: False, "
        "input throughput (token/s): 178.18, est. prefill TFLOPS/s (per GPU): 9.90, "
        "fwd occupancy: nan%",
        "prefill_batch",
        {"new_token": 64, "cached_token": 10048, "pending_token": 0, "inflight_req": 1,
         "cuda_graph": False, "input_throughput": 178.18, "prefill_tflops": 9.9},
    ),
    # --- accuracy (parsers/sglang/accuracy.py; rendered from 0.5.23's log calls) -------------
    (  # configs/model_config.py:1299, logged when SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1
        P + "Warning: User-specified context_length (524288) is greater than the derived "
        "context_length (262144). This may lead to incorrect model outputs or CUDA errors. Note "
        "that the derived context_length may differ from max_position_embeddings in the "
        "model's config.",
        "context_override", {"context_length": 524288, "derived": 262144, "allowed": True},
    ),
    (  # :1314, the ValueError without the env var (the server stops)
        "ValueError: Warning: User-specified context_length (40960) is greater than the derived "
        "context_length (32768). This may lead to incorrect model outputs or CUDA errors. Note "
        "that the derived context_length may differ from max_position_embeddings in the "
        "model's config. To allow overriding this maximum, set the env var "
        "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1",
        "context_override", {"context_length": 40960, "derived": 32768, "allowed": False},
    ),
    (  # 0.4.10 configs/model_config.py:165 (the env var on by default): no note
        P + "Warning: User-specified context_length (200000) is greater than the derived "
        "context_length (131072). This may lead to incorrect model outputs or CUDA errors.",
        "context_override", {"context_length": 200000, "derived": 131072, "allowed": True},
    ),
    ("ValueError: User-specified context_length (200000) is greater than the derived "  # :171
     "context_length (131072). This may lead to incorrect model outputs or CUDA errors. Note "
     "that the derived context_length may differ from max_position_embeddings in the model's "
     "config. To allow overriding this maximum, set the env var "
     "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1",
     "context_override", {"context_length": 200000, "allowed": False}),
    (  # parser/template_manager.py:202: the model's own template (the normal wording)
        "[2026-11-24 09:14:08] Using default HuggingFace chat template with detected content "
        "format: openai", "chat_template", {"origin": "model", "name": None},
    ),
    ("[2026-11-24 09:14:08] No chat template found, defaulting to 'string' content format",
     "chat_template", {"origin": "none", "name": None}),  # :207
    ("[2026-11-24 09:14:08] Loading chat template from argument: ./tool_chat.jinja",
     "chat_template", {"origin": "argument", "name": "./tool_chat.jinja"}),  # :232
    ("[2026-11-24 09:14:08] Inferred chat template from model path: llama-3-instruct",
     "chat_template", {"origin": "builtin", "name": "llama-3-instruct"}),  # :263
    ("[2026-11-24 09:14:08] Using Python chat template 'deepseek_v4' in place of the Jinja "
     "chat template, content format: openai",
     "chat_template", {"origin": "python", "name": "deepseek_v4"}),  # :320
    ("[2026-11-24 09:14:08] Auto-detected template features: reasoning_config=ReasoningConfig("
     "toggle_param='enable_thinking'), reasoning_parser=qwen3, tool_call_parser=qwen3_coder",
     "template_features", {"reasoning_parser": "qwen3", "tool_call_parser": "qwen3_coder"}),
    ("[2026-11-24 09:14:08] Auto-detected template features: tool_call_parser=llama3",
     "template_features", {"reasoning_parser": None, "tool_call_parser": "llama3"}),
    (  # real (corpus repofile-53259568910); entrypoints/openai/serving_chat.py:424
        "[2026-02-04 11:30:31] Using default chat sampling params from model generation config: "
        "{'repetition_penalty': 1.1, 'temperature': 0.7, 'top_k': 20, 'top_p': 0.8}",
        "generation_defaults",
        {"params": "{'repetition_penalty': 1.1, 'temperature': 0.7, 'top_k': 20, "
                   "'top_p': 0.8}", "origin": "model"},
    ),
    (  # model_executor/model_runner_components/load_model_utils.py:171
        P + "Online fp8 quantization: quantized 448 layers of types: "
        "{'QKVParallelLinear', 'RowParallelLinear'}",
        "online_quant", {"method": "fp8", "layers": 448},
    ),
    (  # the accuracy arguments are read only where the dump prints them
        "[2026-06-01 10:00:00] server_args={'model_path': 'm', 'tp_size': 2, "
        "'chat_template': None, 'tool_call_parser': 'qwen3_coder', 'reasoning_parser': None, "
        "'sampling_defaults': 'openai'}",
        "server_args",
        {"tool_call_parser": "qwen3_coder", "reasoning_parser": None, "chat_template": None,
         "sampling_defaults": "openai", "tp_size": 2},
    ),
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
        "[Gloo] Rank 0 is connected to 0 peer ranks. Expected number of connected peer ranks",
        "(EngineCore pid=1) INFO 07-25 13:42:38 [kv_cache_utils.py:2146] GPU KV cache size: "
        "1,823,372 tokens",
        "INFO 08-19 07:51:08 distributed_gpu_executor.py:56] # GPU blocks: 22982, # CPU "
        "blocks: 6241",
        "(EngineCore pid=196) WARNING 08-17 20:38:37 [kv_cache.py:151] Using KV cache scaling "
        "factor 1.0 for fp8_e4m3.",
        "ValueError: To serve at least one request with the model's max seq len (100000), "
        "(4.26 GiB KV cache is needed, which is larger than the available KV cache memory",
        "[2026-01-15 12:40:05 DP0 TP0] The available memory for KV cache is 17.42 GB.",
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
