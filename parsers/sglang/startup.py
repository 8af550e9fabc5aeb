"""Start-up lines: weight load, KV dtype, FP8 scales, pool sizes, graph capture, capacity.

Every parser reads its columns by name (`parsers.sglang.fields`), so a column that moved or a
column a newer release added changes nothing, and a paste cut mid-line still yields the columns
it shows. Each returns `(fields, variant)`: the variant is the catalogue's name for the release
range whose format the line shows (`parsers.sglang.catalog`), None when a cut line shows too
little to tell. All "GB" are GiB (SGLang divides by 2^30), hence the `_gib` names.
"""

from __future__ import annotations

from typing import Any

import regex

from parsers.sglang.fields import cols, finite

Parsed = tuple[dict[str, Any], str | None]


def _f(s: str | None) -> float | None:
    return None if s is None else finite(float(s))


# --- weight load ------------------------------------------------------------------------------
_BEGIN = cols(("avail mem", "avail_gib", "g"))


def parse_load_begin(msg: str) -> Parsed | None:
    if not msg.startswith("Load weight begin."):
        return None
    fields: dict[str, Any] = {"avail_gib": None}
    _BEGIN.read(msg, fields)
    return fields, "load_weight_begin:avail"


_END = cols(
    ("elapsed", "elapsed_s", "s"), ("type", "model_class", "w"), ("dtype", "dtype", "w"),
    ("avail mem", "avail_gib", "g"), ("mem usage", "usage_gib", "g"),
    # `get_quantization_config_log_str`: "quant={method}" then bits, quant_algo, fmt (and from
    # 0.5.17 requantization_method), each ", {name}={value}" (0.5.23 configs/model_config.py:1899)
    ("quant", "quant", "w"), ("bits", "quant_bits", "i", True), ("quant_algo", "quant_algo", "w"),
    ("fmt", "quant_fmt", "w"), ("requantization_method", "requant_method", "w"),
)
_OVERLAP = regex.compile(
    r"Load weight end\. Committed real weights after CUDA graph capture in (-?\d+(?:\.\d+)?) s"
)


def parse_load_end(msg: str) -> Parsed | None:
    if not msg.startswith("Load weight end."):
        return None
    o = _OVERLAP.match(msg)
    if o is not None:
        return {
            "model_class": None, "dtype": None, "quant": None, "avail_gib": None,
            "usage_gib": None, "elapsed_s": _f(o.group(1)), "overlap": True,
        }, "load_weight_end:overlap"
    fields: dict[str, Any] = dict.fromkeys(
        ("model_class", "dtype", "quant", "avail_gib", "usage_gib", "elapsed_s"))
    seen = _END.read(msg, fields, start=16)
    return fields, _load_end_variant(seen)


def _load_end_variant(seen: set[str]) -> str | None:
    if "elapsed" in seen:
        if "dtype" in seen:
            return "load_weight_end:elapsed_dtype"
        if "quant" in seen or {"type", "avail mem"} <= seen:
            return "load_weight_end:no_dtype"
        return "load_weight_end:elapsed"
    if "quant" in seen:
        return "load_weight_end:no_dtype"
    if "dtype" in seen:
        if "mem usage" in seen:
            return "load_weight_end:dtype_usage"
        if "avail mem" in seen:
            return "load_weight_end:no_usage"
        return "load_weight_end:dtype"
    return None


# --- KV dtype ---------------------------------------------------------------------------------
_KV_USING = regex.compile(r"Using KV cache dtype: ([\w.]+)")
_KV_SETTING = regex.compile(r"Setting KV cache dtype to ([\w.]+?)\.?(?: for (.+?))?\.?\s*$")
_KV_MUSE = regex.compile(r"Use (\w+) KV cache by default for (.+?)\.?\s*$")
_ARCH = regex.compile(r"\w+For\w+")
# The DSA attention backends set for the resolved KV dtype (NSA before the rename): FP8 only,
# 0.5.5-0.5.8 (0.5.6 server_args.py:997, 0.5.8 :1182); any dtype from 0.5.9 (server_args.py:1179,
# 0.5.23 arg_groups/overrides.py:738). Other `Set DSA backends for` lines (XPU, attention
# sinks, GLM on SM120) name no KV dtype: not matched.
_KV_BACKEND_FP8 = regex.compile(r"Setting [ND]SA backend to \w+ for prefill and \w+ for decode "
                                r"for FP8 KV Cache\b")
_KV_BACKENDS = regex.compile(r"Set [ND]SA backends for (\w+) KV Cache: "
                             r"(?:prefill=(\w+), decode=(\w+))?")
# torch without an FP4 dtype: KV in the model dtype (0.5.8 model_executor/model_runner.py:1576)
_KV_FP4_FALLBACK = "--kv-cache-dtype falls back to 'auto' because this torch version does not"


def parse_kv_dtype(msg: str) -> Parsed | None:
    m = _KV_USING.match(msg)
    if m is not None:
        return {"dtype": m.group(1), "origin": "resolved"}, "kv_dtype:resolved"
    m = _KV_SETTING.match(msg)
    if m is not None:
        reason = m.group(2)
        variant = _override_variant(m.group(1), reason)
        origin = "model_default" if variant in _MODEL_DEFAULTS else "override"
        return {"dtype": m.group(1), "origin": origin, "reason": reason}, variant
    m = _KV_MUSE.match(msg)
    if m is not None:
        return ({"dtype": m.group(1), "origin": "model_default", "reason": m.group(2)},
                "kv_dtype:muse")
    if _KV_BACKEND_FP8.match(msg):
        return ({"dtype": "fp8_e4m3", "origin": "override", "reason": "DSA backends"},
                "kv_dtype:dsa_backend_fp8")
    m = _KV_BACKENDS.match(msg)
    if m is not None:
        fields: dict[str, Any] = {"dtype": m.group(1), "origin": "override",
                                  "reason": "DSA backends"}
        if m.group(2):
            # The backends pick the FP8 latent's layout (raw for trtllm, scaled for the
            # flashmla ones: `calculate_mla_kv_cache_dim`, 0.5.23 mem_cache/
            # kv_cache_configurator.py:3425-3456), which the dump may not show.
            fields.update(dsa_prefill_backend=m.group(2), dsa_decode_backend=m.group(3))
        return fields, "kv_dtype:dsa_backends"
    if msg.startswith(_KV_FP4_FALLBACK):
        return {"dtype": "auto", "origin": "fallback"}, "kv_dtype:fp4_fallback"
    return None


# The overrides SGLang makes of `auto` for a model family or GPU whatever the checkpoint
# declares: DeepSeek DSA (fp8_e4m3 on SM100+, else bfloat16: 0.5.5 server_args.py:1078-1085,
# 0.5.23 arg_groups/overrides.py:532-538; bfloat16 on XPU, :503-507), DeepSeek-V4 by its class
# (0.5.12 arg_groups/deepseek_v4_hook.py:27-30, 0.5.23 overrides.py:900-904), Muse Spark
# (0.5.23 overrides.py:318-320).
_MODEL_DEFAULTS = frozenset({"kv_dtype:nsa", "kv_dtype:dsa", "kv_dtype:dsa_xpu", "kv_dtype:arch"})


def _override_variant(dtype: str, reason: str | None) -> str:
    if reason is None:
        return "kv_dtype:nsa_fp8" if dtype == "fp8" else "kv_dtype:override"
    if reason == "DeepSeek NSA":
        return "kv_dtype:nsa"
    if reason == "DeepSeek DSA on XPU":
        return "kv_dtype:dsa_xpu"
    if reason.startswith("DeepSeek DSA on SM"):
        return "kv_dtype:dsa"
    if _ARCH.fullmatch(reason):
        return "kv_dtype:arch"
    return "kv_dtype:override"


# --- FP8 scales -------------------------------------------------------------------------------
_SCALES_TP = regex.compile(r"in TP rank (\d+)")
_LOADED = "Loaded KV cache scaling factors from "


def parse_fp8_missing(msg: str) -> Parsed | None:
    if msg.startswith("Using FP8 KV cache but no scaling factors provided"):
        if "This may lead to less accurate results" in msg:
            return {"form": "long"}, "fp8_scales_missing:long"
        whole = msg.rstrip().endswith("scaling factors of 1.0.")
        return {"form": "short"}, "fp8_scales_missing:short" if whole else None
    if msg.startswith("Defaulting to KV cache scaling factors = 1.0"):
        m = _SCALES_TP.search(msg)
        tp_rank = int(m.group(1)) if m is not None else None
        return {"form": "load_error", "tp_rank": tp_rank}, "fp8_scales_missing:load_error"
    return None


def parse_fp8_loaded(msg: str) -> Parsed | None:
    if not msg.startswith(_LOADED):
        return None
    path = msg[len(_LOADED):].strip()
    return {"path": path or None}, "fp8_scales_loaded:path"


# --- KV pools ---------------------------------------------------------------------------------
_POOL = cols(
    ("dtype", "dtype", "w"), ("#tokens", "tokens", "i", True), ("K size", "k_gib", "g"),
    ("V size", "v_gib", "g"), ("KV size", "kv_gib", "g"), ("avail mem", "avail_gib", "g"),
)
_POOL_HEAD = regex.compile(
    r"(?:(?P<label>\S.*?) )?KV Cache (?P<state>is allocated|VA upper bound)\."
)
_POST_CAPTURE = regex.compile(r"Post-capture KV sizing: (?P<draft>draft )?KV cache allocated\.")


def parse_kv_pool(msg: str) -> Parsed | None:
    """`[label ]KV Cache is allocated|VA upper bound. ...` (any label, so it may start
    anywhere in the message) and the post-capture re-sizing lines."""
    fields: dict[str, Any] = dict.fromkeys(("label", "dtype", "tokens", "k_gib", "v_gib",
                                            "kv_gib"))
    p = _POST_CAPTURE.match(msg)
    if p is not None:
        fields["post_capture"] = True
        _POOL.read(msg, fields, start=p.end())
        if p.group("draft"):
            fields["draft"] = True
            return fields, "kv_pool:post_capture_draft"
        fields.setdefault("avail_gib", None)
        return fields, "kv_pool:post_capture"
    m = _POOL_HEAD.match(msg)
    if m is None:
        return None
    fields["label"] = m.group("label")
    va = m.group("state") == "VA upper bound"
    fields["post_capture"] = va
    seen = _POOL.read(msg, fields, start=m.end())
    fields.pop("avail_gib", None)
    return fields, _pool_variant(fields["label"], va, seen)


def _pool_variant(label: str | None, va: bool, seen: set[str]) -> str | None:
    if va:
        return "kv_pool:va"
    if label is not None:
        return "kv_pool:label"
    if "dtype" in seen:
        return "kv_pool:dtype"
    if "#tokens" in seen:
        # 0.4.4-0.5.12 print `#tokens` right after the head: no `dtype:` column is missing
        # from a cut line here, it is absent (0.5.13+ print it first).
        return "kv_pool:mla" if "KV size" in seen else "kv_pool:tokens"
    if "K size" in seen:
        return "kv_pool:no_tokens"
    return None


_MAMBA = cols(
    ("max_mamba_cache_size", "slots", "i", True), ("conv_state size", "conv_gib", "g"),
    ("ssm_state size", "ssm_gib", "g"),
    ("intermediate_ssm_state_cache size", "intermediate_ssm_gib", "g"),
    ("intermediate_conv_window_cache size", "intermediate_conv_gib", "g"),
)


def parse_mamba(msg: str) -> Parsed | None:
    if not msg.startswith("Mamba Cache is allocated."):
        return None
    fields: dict[str, Any] = {"slots": None, "conv_gib": None, "ssm_gib": None}
    seen = _MAMBA.read(msg, fields, start=25)
    if "intermediate_" in msg:
        fields.setdefault("intermediate_ssm_gib", None)
        fields.setdefault("intermediate_conv_gib", None)
    if "max_mamba_cache_size" in seen:
        return fields, "mamba_pool:slots"
    # 0.5.2-0.5.3 print conv_state right after the head: the slot count is absent, not cut.
    return fields, "mamba_pool:no_slots" if "conv_state size" in seen else None


_SWA = cols(("full_layer_tokens", "full_tokens", "i", True),
            ("swa_layer_tokens", "swa_tokens", "i", True))
_SWA_HEADS: tuple[tuple[str, str], ...] = (
    ("Use Sliding window memory pool.", "swa_split:capital"),
    ("Use sliding window memory pool (all SWA).", "swa_split:all_swa"),
    ("Use sliding window memory pool.", "swa_split:lower"),
    ("Post-capture KV sizing: full_layer_tokens", "swa_split:post_capture"),
)


def parse_swa(msg: str) -> Parsed | None:
    for head, variant in _SWA_HEADS:
        if msg.startswith(head):
            fields: dict[str, Any] = {"full_tokens": None, "swa_tokens": None}
            if not _SWA.read(msg, fields):
                return None
            return fields, variant
    return None


_POOL_END = cols(("avail mem", "avail_gib", "g"))


def parse_pool_end(msg: str) -> Parsed | None:
    if not msg.startswith("Memory pool end."):
        return None
    fields: dict[str, Any] = {"avail_gib": None}
    _POOL_END.read(msg, fields)
    return fields, "memory_pool_end:avail"


# The KV budget's share set aside for multimodal memory allocated after the pool is sized (the
# embedding cache, the GPU feature-transport pools): "Reserving %.2f GB of the KV budget for
# post-sizing multimodal allocations (feature-transport pools + embedding cache)." (0.5.18+:
# mem_cache/kv_cache_configurator.py:143 in 0.5.18, :215 in 0.5.23; printed when the reserve is
# above 0, once per sizing: again before the post-capture re-sizing).
_RESERVED = regex.compile(r"Reserving (\d+(?:\.\d+)?) GB of the KV budget for post-sizing "
                          r"multimodal allocations")


def parse_kv_reserved(msg: str) -> Parsed | None:
    m = _RESERVED.match(msg)
    if m is None:
        return None
    return {"reserved_gib": _f(m.group(1)), "purpose": "multimodal"}, \
        "kv_budget_reserved:multimodal"


# Old: `Capture cuda graph end. Time elapsed: X s. mem usage=Y GB. avail mem=Z GB.`
# New: `Capture target decode CUDA graph end. [bs=[..], ]elapsed=X s, mem usage=.., avail mem=..`
_GRAPH_HEAD = regex.compile(r"Capture (?P<graph>.{1,80}?) end\.")
_GRAPH = cols(("Time elapsed", "elapsed_s", "s"), ("elapsed", "elapsed_s", "s"),
              ("mem usage", "usage_gib", "g"), ("avail mem", "avail_gib", "g"))


def parse_graph_end(msg: str) -> Parsed | None:
    m = _GRAPH_HEAD.match(msg)
    if m is None or " graph" not in m.group("graph").lower():
        return None
    fields: dict[str, Any] = {"elapsed_s": None, "usage_gib": None, "avail_gib": None,
                              "graph": m.group("graph")}
    seen = _GRAPH.read(msg, fields, start=m.end())
    rest = msg[m.end():m.end() + 5]
    if "Time elapsed" in seen or rest.startswith(" Time"):
        variant: str | None = "cuda_graph_end:time_elapsed"
    elif rest.startswith(" bs=["):
        variant = "cuda_graph_end:bs"
    elif "elapsed" in seen or rest.startswith(" elap"):
        variant = "cuda_graph_end:named"
    else:
        variant = None
    return fields, variant


# `Init torch distributed ends. [elapsed=X s, ]mem usage=Y GB`
_DIST_INIT = cols(("elapsed", "elapsed_s", "s"), ("mem usage", "usage_gib", "g"))


def parse_dist_init(msg: str) -> Parsed | None:
    if not msg.startswith("Init torch distributed ends."):
        return None
    fields: dict[str, Any] = {"usage_gib": None, "elapsed_s": None}
    seen = _DIST_INIT.read(msg, fields, start=28)
    rest = msg[28:34]
    if "elapsed" in seen or rest.startswith(" elap"):
        return fields, "dist_init_end:elapsed"
    return fields, "dist_init_end:usage" if rest.startswith(" mem") else None


# `Capture {cuda graph|cpu graph|npu graph|..} begin. This can take up to several minutes. avail
# mem=X GB` (to 0.5.15; 0.5.16+ names what it captures and prints no such sentence)
_GRAPH_BEGIN = regex.compile(r"Capture (?P<graph>\w+ graph) begin\. This can take")
_GRAPH_BEGIN_MEM = cols(("avail mem", "avail_gib", "g"))


def parse_graph_begin(msg: str) -> Parsed | None:
    m = _GRAPH_BEGIN.match(msg)
    if m is None:
        return None
    fields: dict[str, Any] = {"avail_gib": None, "graph": m.group("graph")}
    _GRAPH_BEGIN_MEM.read(msg, fields, start=m.end())
    return fields, "cuda_graph_begin:minutes"


# --- the capacity line ------------------------------------------------------------------------
_CAPACITY = cols(
    ("max_total_num_tokens", "max_total_num_tokens", "i", True),
    ("chunked_prefill_size", "chunked_prefill_size", "i", True),
    ("max_prefill_tokens", "max_prefill_tokens", "i", True),
    ("max_running_requests", "max_running_requests", "i", True),
    ("context_len", "context_len", "i", True),
    ("available_gpu_mem", "available_gpu_mem_gib", "g"),
    ("available_cpu_mem", "available_cpu_mem_gib", "g"),
)


def parse_capacity(msg: str) -> Parsed | None:
    if not msg.startswith("max_total_num_tokens="):
        return None
    fields: dict[str, Any] = dict.fromkeys(
        ("max_total_num_tokens", "chunked_prefill_size", "max_prefill_tokens",
         "max_running_requests", "context_len", "available_gpu_mem_gib"))
    seen = _CAPACITY.read(msg, fields)
    if fields["max_total_num_tokens"] is None:
        return None
    if "available_cpu_mem" in seen:
        variant: str | None = "capacity:cpu"
    elif "available_gpu_mem" in seen:
        variant = "capacity:avail"
    elif "context_len" in seen:
        # The line ends at context_len before 0.4.7; a paste cut there looks the same (weak).
        variant = "capacity:no_avail" if "chunked_prefill_size" in seen else "capacity:no_chunked"
    else:
        variant = None
    return fields, variant


_CAPPED = regex.compile(r"max_total_tokens=(-?\d+) is larger than the profiled value (-?\d+)")


def parse_capped(msg: str) -> Parsed | None:
    m = _CAPPED.match(msg)
    if m is None:
        return None
    return ({"message": msg.strip(), "requested": int(m.group(1)),
             "profiled": int(m.group(2))}, "max_total_tokens_capped:profiled")


_UNBALANCED = cols(("min_per_gpu_memory", "min_gpu_memory_gib", "f"),
                   ("pre_model_load_memory", "min_gpu_memory_gib", "f"),
                   ("local_gpu_memory", "local_gpu_memory_gib", "f"))


def parse_unbalanced(msg: str) -> Parsed | None:
    if not msg.startswith("The memory capacity is unbalanced"):
        return None
    fields: dict[str, Any] = {"message": msg.strip()}
    seen = _UNBALANCED.read(msg.replace(" GB", ""), fields, closed=True)
    if "pre_model_load_memory" in seen:
        return fields, "mem_unbalanced:pre_model_load"
    if "min_per_gpu_memory" in seen:
        return fields, "mem_unbalanced:min_per_gpu"
    return fields, None
