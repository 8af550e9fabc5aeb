"""Event kinds: the one vocabulary of facts a log line can carry, whichever engine printed it.

For each kind: the field names it always carries (`KIND_FIELDS`; value None when the line's
variant does not print it), the extra names some variants add (`OPTIONAL_FIELDS`), and its
traits (`KIND_TRAITS`: where it sits in a log, how the fold treats it, how a viewer tones it).
Every layer reads kinds from here; `tests/test_vocabularies.py` fails when a kind lacks any of
them, a fold handler, or sample lines.
"""

from __future__ import annotations

from dataclasses import dataclass

KIND_FIELDS: dict[str, tuple[str, ...]] = {
    "server_args": (
        # SGLang: "repr" (ServerArgs(...), <=0.5.18) or "dict" (0.5.19+). vLLM: "namespace"
        # (`args: Namespace(...)`, <=0.9), "args" (`non-default args: {...}`, 0.10+), "config"
        # (the engine's `Initializing ... engine (vX) with config: ...`), "resolved" (one
        # resolved setting: `Using max model len N`, `Chunked prefill is enabled with ...`).
        # The settings every engine states, under one name each (a vLLM name is mapped to it,
        # parsers/vllm/args.py `_SHARED`). What only one engine has is its own optional field
        # (OPTIONAL_FIELDS), so a report carries each engine's own arguments and never the other
        # engine's names as nulls.
        "form",
        "model_path", "served_model_name", "dtype", "kv_cache_dtype", "quantization",
        "quantization_param_path", "tp_size", "dp_size", "pp_size", "context_length",
        "max_running_requests", "page_size", "attention_backend",
    ),
    "load_weight_begin": ("avail_gib",),
    "load_weight_end": ("model_class", "dtype", "quant", "avail_gib", "usage_gib", "elapsed_s"),
    # origin: "resolved" | "override" (set at argument resolution) | "model_default" (an
    # override the engine's line says it made for the model or GPU, e.g. SGLang's "Setting KV
    # cache dtype to fp8_e4m3 for DeepSeek DSA on SM10 device.") | "fallback" (the setting
    # was not served: dtype "auto", the model dtype)
    "kv_dtype": ("dtype", "origin"),
    # "long" | "short" | "load_error" (SGLang, and vLLM V0's loader); "unit_scale" (vLLM's
    # "Using KV cache scaling factor 1.0 for fp8_e4m3": both scales are 1.0 after loading).
    "fp8_scales_missing": ("form",),
    "fp8_scales_loaded": ("path",),
    "kv_pool": ("label", "dtype", "tokens", "k_gib", "v_gib", "kv_gib"),
    "mamba_pool": ("slots", "conv_gib", "ssm_gib"),
    "swa_split": ("full_tokens", "swa_tokens"),
    "memory_pool_end": ("avail_gib",),
    # Memory the engine takes out of the KV budget before it sizes the pool, for what it
    # allocates after (SGLang 0.5.18+: the multimodal embedding cache and feature-transport
    # pools, purpose "multimodal").
    "kv_budget_reserved": ("reserved_gib", "purpose"),
    "cuda_graph_end": ("elapsed_s", "usage_gib", "avail_gib"),
    # Start-up steps with the figure they print: the memory the distributed init took, the
    # memory free when the graph capture begins (an OOM after it is the capture's).
    "dist_init_end": ("usage_gib", "elapsed_s"),
    "cuda_graph_begin": ("avail_gib",),
    "capacity": (
        "max_total_num_tokens", "chunked_prefill_size", "max_prefill_tokens",
        "max_running_requests", "context_len", "available_gpu_mem_gib",
    ),
    "prefill_batch": (
        "new_seq", "new_token", "cached_token", "token_usage", "full_token_usage",
        "swa_token_usage", "mamba_usage", "running_req", "queue_req", "cache_hit_rate",
        "input_throughput", "cuda_graph",
    ),
    "decode_batch": (
        "running_req", "token", "full_token", "swa_token", "token_usage", "full_token_usage",
        "swa_token_usage", "mamba_usage", "gen_throughput", "queue_req", "cuda_graph",
        "accept_len", "retracted_req",
    ),
    "retraction": ("retracted_reqs", "new_token_ratio_before", "new_token_ratio_after"),
    "max_total_tokens_capped": ("message", "requested", "profiled"),
    "mem_unbalanced": ("message",),
    "oom": ("message",),
    # A KV dtype the engine itself warns about (SGLang: "NVFP4 KV Cache might lead to an
    # accuracy drop!"); dtype is the recipe's name in the kvtui.core.dtypes spelling.
    "kv_accuracy_warning": ("dtype",),
    # max_running_requests lowered to what the Mamba (linear-attention) state cache holds.
    "mamba_cap": ("max_running_requests", "max_mamba_cache_size", "slots_per_request"),
    # max_running_requests lowered below the operator's request by the KV pool (per DP worker).
    "requests_reduced": ("requested", "max_running_requests"),
    # A hybrid-SWA pool's own total (the Full and SWA sub-pools together) and its two sizes.
    "swa_pool": ("gib", "swa_tokens", "full_tokens"),
    # How the SWA pool was sized when not by the plain ratio (per-request rings, a cap).
    "swa_sizing": ("mode", "swa_tokens"),
    # DeepSeek-V4's pool budget: bytes per full-attention token, the budget, the tokens it buys.
    "dsv4_memory": ("bytes_per_full_token", "available_gib", "full_tokens"),
    # DeepSeek-V4's sub-pools: full and SWA in tokens, the C4/C128 compressed pools in entries
    # (one per 4 and per 128 tokens), their states in ring rows.
    "dsv4_pool": ("full_tokens", "swa_tokens", "c4_entries", "c128_entries", "c4_state_rows",
                  "c128_state_rows"),
    # A request rejected (or truncated) for being longer than the engine allows.
    "input_too_long": ("input_tokens", "max_tokens"),
    # A server process died on an exception (its traceback follows on the next lines).
    "process_exception": ("process",),
    # A memory-accounting check found KV slots that nobody owns.
    "pool_leak": ("pool",),
    # The engine's own release, as it prints it (vLLM: "vLLM API server version X", its banner).
    "engine_version": ("version",),
    # Accuracy (kvtui.core.accuracy): the engine let a context length longer than the model's
    # own window through (`allowed`: its env var was set and it went on; False: it refused).
    "context_override": ("context_length", "derived", "allowed"),
    # Where the chat template came from: "model" (the checkpoint's own), "python" (the
    # engine's rendering of it), "builtin" (the engine's template guessed from the model path),
    # "fallback" (the engine's template for a model type that has none), "argument"
    # (--chat-template), "none".
    "chat_template": ("origin", "name"),
    # The content format the engine detected in the chat template it uses (vLLM, at the first
    # chat request): a template is in use, whose source the chat_template lines tell.
    "chat_format": ("format",),
    # The parsers the engine found the chat template calls for (SGLang's template detection).
    "template_features": ("reasoning_parser", "tool_call_parser"),
    # The model's generation config applied as the default sampling parameters.
    "generation_defaults": ("params",),
    # Weights quantized while loading, from a checkpoint that is not (SGLang's report).
    "online_quant": ("method", "layers"),
    # FP8 attention quantises the query (and the softmax probabilities) too, with their own
    # scales. form: "q_from_k" (no q scale in the checkpoint: k_scale is used) or
    # "uncalibrated" (q and/or prob scale 1.0). Not the KV cache's scales: kv-fp8-unscaled is
    # about those.
    "fp8_qscale_missing": ("form", "q_scale", "prob_scale"),
    # How the engine budgeted GPU memory before sizing the KV cache (vLLM's memory profile).
    "memory_profile": (
        "total_gib", "gpu_memory_utilization", "requested_gib", "weights_gib",
        "non_torch_gib", "activation_gib", "kv_gib",
    ),
    # How the engine laid out its KV pages: tokens per page it settled on, padding layers its
    # hybrid grouping added, padding of the state pages to the attention page size.
    "kv_layout": ("block_size", "padding_layers", "padding_waste_pct", "mamba_padding_pct"),
    # One process's place in the parallel layout, as the engine assigns it: its rank in the
    # process group of `world_size` ranks, and its index in each group whose sizes multiply to
    # the world (vLLM's "rank 3 in world size 8 is assigned as DP rank 0, PP rank 0, TP rank
    # 3"). The fold turns the places seen into the sizes they prove (kvtui.core.state).
    "parallel_rank": ("global_rank", "world_size", "dp_rank", "pp_rank", "tp_rank"),
    # Speculative decoding's acceptance over an interval (vLLM's "SpecDecoding metrics" line):
    # accept_len the mean tokens per draft step, the bonus token included (SGLang's decode
    # line's `accept len`), accept_rate the drafted tokens accepted, a fraction.
    "spec_decode": ("accept_len", "accept_rate"),
}

KINDS: tuple[str, ...] = tuple(KIND_FIELDS)

# Extra keys a kind may carry when the line's variant prints them (absent otherwise). They are
# listed so consumers and tests can tell a known extra from a typo; none shadows RESERVED_KEYS.
# SGLang's server args read by the capacity calculator's SGLang sizing rules
# (kvtui.engines.sglang.sizing.args): listed once, here; SGLang's parser ends its
# `parsers.sglang.server_args.SERVER_ARG_FIELDS` with them.
SGLANG_SIZING_ARGS: tuple[str, ...] = (
    "prefill_attention_backend", "decode_attention_backend", "max_mamba_cache_size",
    "mamba_ssm_dtype", "mamba_full_memory_ratio", "mamba_scheduler_strategy",
    "mamba_radix_cache_strategy", "linear_attn_backend", "disable_overlap_schedule",
    "swa_full_tokens_ratio", "disable_hybrid_swa_memory", "hybrid_kvcache_ratio",
    "speculative_algorithm", "speculative_draft_model_path", "speculative_num_draft_tokens",
    "nsa_prefill_backend", "nsa_decode_backend", "dsa_prefill_backend", "dsa_decode_backend",
)

# Arguments either engine's dump may print that decide accuracy (chat template, parsers,
# sampling defaults, model overrides); SGLang's and vLLM's own names.
ACCURACY_ARGS: tuple[str, ...] = (
    "chat_template", "tool_call_parser", "reasoning_parser", "sampling_defaults",
    "json_model_override_args", "enable_auto_tool_choice", "generation_config",
    "hf_overrides",
)

OPTIONAL_FIELDS: dict[str, tuple[str, ...]] = {
    "server_args": (
        # SGLang's own, which its dump always carries (None when absent, in the order of
        # `parsers.sglang.server_args.SERVER_ARG_FIELDS`), the sizing rules' last.
        "ep_size", "attn_dp_size", "enable_dp_attention", "mem_fraction_static",
        "max_total_tokens", "chunked_prefill_size", "max_prefill_tokens", "disable_radix_cache",
        *SGLANG_SIZING_ARGS,
        # vLLM's own, present only when its line prints them: `version` the release the config
        # line names; `resolved` the values are the engine's resolved configuration rather
        # than what was asked; `partial` one resolved setting (never a server start, unless
        # `before_dump`); `resolved_kv_dtype` the KV dtype the engine resolved (its config line's
        # kv_cache_dtype, `auto` read as the model dtype it prints beside it); `complete` the
        # dump lists every argument the operator gave (an absent one is the default).
        "version", "resolved", "partial", "resolved_kv_dtype", "complete", "architecture",
        "gpu_memory_utilization", "max_num_batched_tokens", "enable_prefix_caching",
        "enable_expert_parallel", "enforce_eager", "dcp_size", "kv_cache_memory_bytes",
        "num_gpu_blocks_override", "mamba_ssm_cache_dtype", "calculate_kv_scales",
        "speculative_method", "num_speculative_tokens", "performance_mode", "async_scheduling",
        # SGLang: a part logged while the arguments are resolved, before the dump (`DSA with TP
        # mode is active`): partial, yet it opens the start, as a KV dtype override line does.
        "before_dump",
        # What the accuracy checklist reads (kvtui.core.accuracy), present only when the
        # dump printed the name (a value of None then means "not given").
        *ACCURACY_ARGS,
        # Where the server serves /metrics (the engine seam's `metrics_endpoint`), present
        # only when the dump printed them: the HTTP port (both engines), SGLang's switch.
        "port", "enable_metrics",
    ),
    "load_weight_begin": (),
    # overlap: the --startup-weight-load-mode overlap line; the rest split the checkpoint's
    # quantization string (`quant=fp8, fmt=e4m3`): quant is the method, these its parts.
    "load_weight_end": ("overlap", "quant_bits", "quant_algo", "quant_fmt", "requant_method"),
    # reason: the override target, e.g. "DeepSeek DSA on SM8 device"; the DSA backends SGLang
    # set with the KV dtype (`Set DSA backends for ... KV Cache: prefill=.., decode=..`).
    "kv_dtype": ("reason", "dsa_prefill_backend", "dsa_decode_backend"),
    "fp8_scales_missing": ("tp_rank",),  # form "load_error" only
    "fp8_scales_loaded": (),
    # post_capture: "VA upper bound"/post-capture; draft: the post-capture draft pool line.
    # scope "all": the size is every KV layer of the rank together, K and V (vLLM's "Available
    # KV cache memory"), not one pool's. configured: the size is the one the operator set, not
    # what the engine measured (vLLM's --kv-cache-memory-bytes: the "reserved ... as specified
    # by kv_cache_memory_bytes config" line).
    "kv_pool": ("post_capture", "avail_gib", "draft", "scope", "configured"),
    "mamba_pool": ("intermediate_ssm_gib", "intermediate_conv_gib"),
    "swa_split": (),
    "memory_pool_end": (),
    # remaining_gib: the budget left, as the engine prints it (vLLM 0.33's "KV cache memory
    # reduced to X GiB").
    "kv_budget_reserved": ("remaining_gib",),
    "cuda_graph_end": ("graph",),  # what was captured, e.g. "target verify CUDA graph"
    "dist_init_end": (),
    "cuda_graph_begin": ("graph",),  # "cuda graph", "npu graph", ...
    # vLLM: the pool in blocks (`# GPU blocks: N`; tokens = blocks x page_size), the
    # concurrency it prints for `context_len`-token requests, a forced block count.
    # per_worker: the figure is one worker's, and the engine runs every worker at the smallest
    # one it printed (vLLM's unify_kv_cache_configs): a larger repeat is not the pool.
    "capacity": ("available_cpu_mem_gib", "gpu_blocks", "cpu_blocks", "page_size",
                 "max_concurrency", "gpu_blocks_override", "per_worker",
                 "default_page_size"),
    "prefill_batch": (
        "mixed_running_req", "pending_token", "replay_token", "unbootstrapped_req",
        "transferring_req", "bootstrap_req", "inflight_req", "prealloc_req", "optimistic_req",
        "waiting_image_req", "prefill_tflops", "token", "full_token", "swa_token",
    ),
    "decode_batch": (
        "preempted_reqs",  # requests preempted since the last stats line (vLLM)
        "mamba_num", "accept_rate", "preallocated_usage", "prealloc_req", "transfer_req",
        "host_receive_req", "largest_len", "waiting_image_req", "cache_miss", "gpu_token",
        "gpu_token_usage", "cpu_token", "cpu_token_usage", "decode_tflops", "read_bw_gbps",
        "write_bw_gbps", "prompt_throughput", "prefix_cache_hit_rate", "swapped_req",
    ),
    "retraction": (
        "wording", "aborted_retracted_reqs", "new_tokens_gained", "mamba_num_gained",
        "mode", "cumulative",  # vLLM V0 preemption: RECOMPUTE/SWAP, total so far
    ),
    "max_total_tokens_capped": (),
    "mem_unbalanced": ("min_gpu_memory_gib", "local_gpu_memory_gib"),
    "kv_accuracy_warning": (),
    "mamba_cap": (),
    "requests_reduced": (),
    "swa_pool": ("post_capture",),
    "swa_sizing": ("swa_full_tokens_ratio", "request_cap_tokens", "prefix_tails", "ring_size",
                   "ring_cost_tokens", "paged_swa_tokens"),
    "dsv4_memory": ("unified", "unified_fp8", "dspark_draft_bf16", "c128_state_gib",
                    "c2_state_gib", "swa_gib", "swa_ring_gib", "c4_state_gib"),
    "dsv4_pool": ("max_num_reqs", "c4_logical_entries", "unified", "unified_fp8"),
    "input_too_long": ("truncated",),
    "process_exception": (),
    "pool_leak": ("total_tokens", "available_tokens"),
    # vLLM's "KV cache is needed, which is larger than the available" family.
    # process: the engine's own process that printed a CUDA allocator's OOM (vLLM's
    # `(VllmWorker rank=0 pid=9) ` prefix), which names the engine where the text does not.
    "oom": ("reason", "needed_gib", "available_gib", "max_model_len", "estimated_max_model_len",
            "requested", "available", "process"),
    "engine_version": (),
    "context_override": (),
    "chat_template": (),
    "chat_format": (),
    "template_features": (),
    "generation_defaults": ("origin",),
    "online_quant": (),
    "fp8_qscale_missing": (),
    # the CUDA graph memory the utilization figures account for (vLLM 0.1x-0.33)
    "memory_profile": ("equivalent_gpu_memory_utilization", "suggested_gpu_memory_utilization",
                       "cuda_graph_gib",
                       # V1's start-up summary (vLLM 0.10.2+): free memory then, what weights
                       # and non-torch took together, and the two --kv-cache-memory values it
                       # suggests (to fit the requested budget, to fill the free memory)
                       "free_gib", "consumed_gib", "kv_cache_memory_bytes_to_fit",
                       "kv_cache_memory_bytes_to_fill",
                       # which line gave `kv_gib`, in the engine's words: "kv_cache_size"
                       # (V0's "Memory profiling results: ... kv_cache_size=", 0.6.4),
                       # "reserved" (V0's "the rest of the memory reserved for KV Cache is",
                       # 0.6.5-0.10.2), "in_use" (V1's "Current kv cache memory in use is")
                       "kv_said",
                       # vLLM 0.34's extensible KV cache, sized after warmup: whether it is on
                       # (False: "Disabling the extensible KV cache"), the "Memory after warmup"
                       # figures, the blocks it was remapped from and to (its "Extended KV
                       # cache to N blocks (X GiB)" is a post-capture kv_pool)
                       "extensible", "warmup_free_gib", "kv_committed_gib",
                       "transient_kept_gib", "transient_peak_gib", "warmup_blocks",
                       "warmup_kv_gib", "remapped_from_blocks", "remapped_to_blocks"),
    # pp_partition: the layers of each PP stage, "11,11,10" (vLLM's "Hidden layers were
    # unevenly partitioned")
    # mamba_page_aligned: the attention page was sized to hold a Mamba state (a hybrid model)
    # hybrid_manager_off: vLLM turned its hybrid KV cache manager off (chunked local attention)
    # ds_mla_fp8: DeepSeek sparse MLA stores FP8 as the 656-byte fp8_ds_mla row (False: the
    # plain 576 bytes)
    "kv_layout": ("mamba_cache_mode", "pp_partition", "mamba_page_aligned",
                  "hybrid_manager_off", "ds_mla_fp8"),
    # pcp_rank: the index in vLLM's prefill-context-parallel group (0.12+), another factor
    "parallel_rank": ("pcp_rank",),
    "spec_decode": ("accepted_tokens", "drafted_tokens", "accepted_throughput",
                    "drafted_throughput", "per_position", "system_efficiency", "spec_tokens",
                    "emitted_tokens"),
}

# Keys every event's JSON line carries besides its fields; no field may shadow them.
RESERVED_KEYS: frozenset[str] = frozenset({"source", "line", "kind", "rank", "ts"})


@dataclass(frozen=True, slots=True)
class KindTraits:
    """What a kind is to the layers above the parsers.

    `phase`: "startup" (configuration, memory, pools), "runtime" (batch lines, the bulk of a log)
    or "error". `batch`: a decode/prefill line, folded column-wise and only dated by its first
    line in a run. `joinable`: may continue a run across a chunk cut of a big file (its fold is
    mergeable). `alerting`: worth showing by itself under the log's "alerts" filter. `tone`: how
    a viewer colours the line (the UI maps tones to styles).
    """

    phase: str
    tone: str
    batch: bool = False
    joinable: bool = False
    alerting: bool = False


KIND_TRAITS: dict[str, KindTraits] = {
    "server_args": KindTraits("startup", "config"),
    "load_weight_begin": KindTraits("startup", "load"),
    "load_weight_end": KindTraits("startup", "load"),
    "kv_dtype": KindTraits("startup", "dtype", alerting=True),
    "fp8_scales_missing": KindTraits("startup", "danger", alerting=True),
    "fp8_scales_loaded": KindTraits("startup", "good"),
    "kv_pool": KindTraits("startup", "memory"),
    "mamba_pool": KindTraits("startup", "memory"),
    "swa_split": KindTraits("startup", "memory"),
    "memory_pool_end": KindTraits("startup", "load"),
    "kv_budget_reserved": KindTraits("startup", "memory"),
    "cuda_graph_end": KindTraits("startup", "load"),
    "dist_init_end": KindTraits("startup", "load"),
    "cuda_graph_begin": KindTraits("startup", "load"),
    "capacity": KindTraits("startup", "capacity"),
    "prefill_batch": KindTraits("runtime", "prefill", batch=True, joinable=True),
    "decode_batch": KindTraits("runtime", "decode", batch=True, joinable=True),
    "retraction": KindTraits("runtime", "warn", joinable=True, alerting=True),
    "max_total_tokens_capped": KindTraits("startup", "warn", alerting=True),
    "mem_unbalanced": KindTraits("startup", "warn", alerting=True),
    "oom": KindTraits("error", "danger", joinable=True, alerting=True),
    "kv_accuracy_warning": KindTraits("startup", "danger", alerting=True),
    "mamba_cap": KindTraits("startup", "warn", alerting=True),
    "requests_reduced": KindTraits("startup", "warn", alerting=True),
    "swa_pool": KindTraits("startup", "memory"),
    "swa_sizing": KindTraits("startup", "memory"),
    "dsv4_memory": KindTraits("startup", "capacity"),
    "dsv4_pool": KindTraits("startup", "memory"),
    # Not joinable yet: their fold (Run.notices) is not merged across a chunk cut, so a chunk
    # whose first run shows one is read sequentially instead (kvtui.core.pipeline.chunks).
    "input_too_long": KindTraits("runtime", "warn", alerting=True),
    "process_exception": KindTraits("error", "danger", alerting=True),
    "pool_leak": KindTraits("runtime", "danger", alerting=True),
    "engine_version": KindTraits("startup", "config"),
    "context_override": KindTraits("startup", "danger", alerting=True),
    "chat_template": KindTraits("startup", "config"),
    "chat_format": KindTraits("startup", "config"),
    "template_features": KindTraits("startup", "config"),
    "generation_defaults": KindTraits("startup", "config"),
    "online_quant": KindTraits("startup", "warn", alerting=True),
    "fp8_qscale_missing": KindTraits("startup", "warn", alerting=True),
    "memory_profile": KindTraits("startup", "memory"),
    "kv_layout": KindTraits("startup", "memory"),
    "parallel_rank": KindTraits("startup", "config"),
    # an event of its own (`kvtui events`, a loop's compare); the fold keeps no figure of it
    "spec_decode": KindTraits("runtime", "decode", joinable=True),
}

TONES: tuple[str, ...] = ("config", "load", "dtype", "danger", "good", "memory", "capacity",
                          "prefill", "decode", "warn")
BATCH_KINDS: frozenset[str] = frozenset(k for k, t in KIND_TRAITS.items() if t.batch)
JOINABLE_KINDS: frozenset[str] = frozenset(k for k, t in KIND_TRAITS.items() if t.joinable)
ALERTING_KINDS: frozenset[str] = frozenset(k for k, t in KIND_TRAITS.items() if t.alerting)
