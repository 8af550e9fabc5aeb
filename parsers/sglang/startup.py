"""Start-up lines: weight load, KV dtype, FP8 scales, pool sizes, graph capture, capacity.

Every parser reads its columns by name (`parsers.sglang.fields`), so a column that moved or a
column a newer release added changes nothing, and a paste cut mid-line still yields the columns
it shows. Each returns `(fields, variant)`: the variant is the catalogue's name for the release
range whose format the line shows (declared in `FORMATS` below), None when a cut line shows too
little to tell. All "GB" are GiB (SGLang divides by 2^30), hence the `_gib` names.
"""

from __future__ import annotations

from typing import Any

import regex

from parsers.catalogue import Format, Variant
from parsers.sglang.fields import cols, finite
from parsers.sglang.releases import EVERY, P, between, since, until

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


# --- the catalogue: the kinds this module parses, their layouts and releases ----------------------
FORMATS: tuple[Format, ...] = (
    Format("load_weight_begin", ("Load weight begin.",), parse_load_begin, (
        Variant("load_weight_begin:avail", EVERY,
                "Load weight begin. avail mem={:.2f} GB",
                "0.4.6 model_executor/model_runner.py:404, 0.5.23 :1274",
                P + "Load weight begin. avail mem=78.43 GB", ("avail_gib",)),
    )),
    Format("load_weight_end", ("Load weight end.",), parse_load_end, (
        Variant("load_weight_end:no_usage", until("0.4.3"),
                "Load weight end. type=..., dtype=..., avail mem=... GB",
                "sglang-log-lines.md 4 (0.2.15-0.4.3)",
                P + "Load weight end. type=LlamaForCausalLM, dtype=torch.float16, "
                "avail mem=60.12 GB", ("model_class", "dtype", "avail_gib"), weak=True),
        Variant("load_weight_end:dtype_usage", between("0.4.4", "0.5.8"),
                "Load weight end. type=..., dtype=..., avail mem=.. GB, mem usage=.. GB.",
                "0.4.6 model_executor/model_runner.py:477 (sglang-log-lines.md 4)",
                P + "Load weight end. type=Gemma3ForConditionalGeneration, "
                "dtype=torch.bfloat16, avail mem=131.08 GB, mem usage=8.13 GB.",
                ("model_class", "dtype", "avail_gib", "usage_gib")),
        Variant("load_weight_end:dtype", until("0.5.8"),
                "Load weight end. type=..., dtype=..., (cut)", "sglang-log-lines.md 4",
                P + "Load weight end. type=LlamaForCausalLM, dtype=torch.float16, avail",
                ("model_class", "dtype")),
        Variant("load_weight_end:elapsed_dtype", between("0.5.9", "0.5.9"),
                "Load weight end. elapsed=.. s, type=.., dtype=.., avail mem=.., mem usage=..",
                "sglang-log-lines.md 4 (0.5.9 model_executor/model_runner.py)",
                P + "Load weight end. elapsed=0.38 s, type=Qwen2ForCausalLM, "
                "dtype=torch.bfloat16, avail mem=77.45 GB, mem usage=0.98 GB.",
                ("elapsed_s", "model_class", "dtype", "avail_gib", "usage_gib")),
        Variant("load_weight_end:elapsed", since("0.5.9"),
                "Load weight end. elapsed=.. s, type=.. (cut)", "sglang-log-lines.md 4",
                P + "Load weight end. elapsed=3.00 s, type=M", ("elapsed_s",)),
        Variant("load_weight_end:no_dtype", since("0.5.10"),
                "Load weight end. elapsed=.. s, type=.., [quant=.., ]avail mem=.., mem usage=..",
                "0.5.10+ model_executor/model_runner.py (0.5.23 :1373); quant string from "
                "configs/model_config.py get_quantization_config_log_str (0.5.23 :1899)",
                P + "Load weight end. elapsed=41.27 s, type=Qwen3NextForCausalLM, "
                "quant=modelopt_fp4, quant_algo=NVFP4, avail mem=101.10 GB, mem usage=23.80 GB.",
                ("elapsed_s", "model_class", "quant", "quant_algo", "avail_gib", "usage_gib")),
        Variant("load_weight_end:overlap", since("0.5.18"),
                "Load weight end. Committed real weights after CUDA graph capture in %.2f s ...",
                "0.5.18 model_runner_components/startup_weight_load.py:531",
                P + "Load weight end. Committed real weights after CUDA graph capture in 4.20 s "
                "(capture overlap window 3.10 s, startup overlap total 9.00 s)",
                ("elapsed_s", "overlap")),
    )),
    Format("kv_dtype", ("Using KV cache dtype:", "Setting KV cache dtype to ", "Use ",
                        "Setting DSA backend to ", "Setting NSA backend to ",
                        "Set DSA backends for ", "Set NSA backends for ",
                        "--kv-cache-dtype falls back to "),
           parse_kv_dtype, (
        Variant("kv_dtype:resolved", between("0.5.3", "0.5.12"),
                "Using KV cache dtype: {self.kv_cache_dtype}",
                "0.5.3 model_executor/model_runner.py:1425, 0.5.12 :2386",
                P + "Using KV cache dtype: torch.float8_e4m3fn", ("dtype", "origin")),
        Variant("kv_dtype:override", since("0.5.3"),
                "Setting KV cache dtype to ... (a wording not listed below)",
                "sglang-log-lines.md 2.4",
                "[2026-01-01 00:00:00] Setting KV cache dtype to bf16 for some reason.",
                ("dtype", "origin")),
        Variant("kv_dtype:nsa_fp8", between("0.5.3", "0.5.4"),
                "Setting KV cache dtype to fp8.", "0.5.3 server_args.py:832, 0.5.4 :1032",
                "[2026-01-01 00:00:00] Setting KV cache dtype to fp8.", ("dtype", "origin")),
        Variant("kv_dtype:nsa", between("0.5.5", "0.5.7"),
                "Setting KV cache dtype to {dtype} for DeepSeek NSA.",
                "0.5.5 server_args.py:1085, 0.5.7 :1068",
                "[2026-01-01 00:00:00] Setting KV cache dtype to fp8_e4m3 for DeepSeek NSA.",
                ("dtype", "reason")),
        Variant("kv_dtype:dsa", since("0.5.8"),
                "Setting KV cache dtype to {dtype} for DeepSeek DSA on SM{major} device.",
                "0.5.8 server_args.py:1168, 0.5.23 arg_groups/overrides.py:537",
                "Setting KV cache dtype to bfloat16 for DeepSeek DSA on SM8 device.",
                ("dtype", "reason")),
        Variant("kv_dtype:dsa_xpu", since("0.5.20"),
                "Setting KV cache dtype to bfloat16 for DeepSeek DSA on XPU.",
                "0.5.20 arg_groups/model_overrides/deepseek_v2.py:148",
                "Setting KV cache dtype to bfloat16 for DeepSeek DSA on XPU.", ("dtype",)),
        Variant("kv_dtype:arch", since("0.5.12"),
                "Setting KV cache dtype to {kv_cache_dtype} for {model_arch}.",
                "0.5.12 arg_groups/deepseek_v4_hook.py:30, 0.5.23 arg_groups/overrides.py:904",
                "Setting KV cache dtype to fp8_e4m3 for DeepseekV4ForCausalLM.",
                ("dtype", "reason")),
        Variant("kv_dtype:muse", since("0.5.23"),
                "Use fp8_e4m3 KV cache by default for Muse Spark",
                "0.5.23 arg_groups/overrides.py:319",
                "Use fp8_e4m3 KV cache by default for Muse Spark", ("dtype", "reason")),
        # Absent from 0.5.4 and 0.5.9; NSA in 0.5.6, DSA in 0.5.8 (either spelling read).
        Variant("kv_dtype:dsa_backend_fp8", between("0.5.5", "0.5.8"),
                "Setting {NSA|DSA} backend to flashmla_auto for prefill and flashmla_kv for "
                "decode for FP8 KV Cache.", "0.5.6 server_args.py:997, 0.5.8 :1182",
                "[2026-01-01 00:00:00] Setting NSA backend to flashmla_auto for prefill and "
                "flashmla_kv for decode for FP8 KV Cache.", ("dtype", "reason")),
        # Absent from 0.5.8; NSA in 0.5.9, DSA in 0.5.13, 0.5.16, 0.5.20 and 0.5.23.
        Variant("kv_dtype:dsa_backends", since("0.5.9"),
                "Set {NSA|DSA} backends for {kv_cache_dtype} KV Cache: prefill=.., decode=..",
                "0.5.9 server_args.py:1179, 0.5.13 :1799, 0.5.23 arg_groups/overrides.py:738",
                "[2026-01-01 00:00:00] Set DSA backends for fp8_e4m3 KV Cache: "
                "prefill=flashmla_auto, decode=flashmla_kv.", ("dtype", "reason")),
        # Beside the FP4 (E2M1) accuracy warning's branch (0.5.5-0.5.15, sglang-log-lines.md
        # 2.4); present in 0.5.6, 0.5.8, 0.5.9 and 0.5.13, absent from 0.5.16.
        Variant("kv_dtype:fp4_fallback", between("0.5.5", "0.5.15"),
                "--kv-cache-dtype falls back to 'auto' because this torch version does not "
                "support torch.float4_e2m1fn_x2",
                "0.5.6 model_executor/model_runner.py:1662, 0.5.8 :1577, 0.5.13 :2282",
                P + "--kv-cache-dtype falls back to 'auto' because this torch version does not "
                "support torch.float4_e2m1fn_x2", ("dtype",)),
    )),
    Format("fp8_scales_missing", ("Using FP8 KV cache but no scaling factors",
                                  "Defaulting to KV cache scaling factors"),
           parse_fp8_missing, (
        Variant("fp8_scales_missing:long", until("0.5.19"),
                "Using FP8 KV cache but no scaling factors provided. Defaulting to scaling "
                "factors of 1.0. This may lead to less accurate results!",
                "0.4.6 model_executor/model_runner.py:464, 0.5.19 "
                "model_runner_components/load_model_utils.py:134",
                P + "Using FP8 KV cache but no scaling factors provided. Defaulting to scaling "
                "factors of 1.0. This may lead to less accurate results!", ("form",)),
        Variant("fp8_scales_missing:short", since("0.5.20"),
                "Using FP8 KV cache but no scaling factors provided. Defaulting to scaling "
                "factors of 1.0.", "0.5.20 model_runner_components/load_model_utils.py:134",
                P + "Using FP8 KV cache but no scaling factors provided. Defaulting to "
                "scaling factors of 1.0.", ("form",), weak=True),
        Variant("fp8_scales_missing:load_error", EVERY,
                "Defaulting to KV cache scaling factors = 1.0 for all layers in TP rank %d as "
                "an error occurred during loading.",
                "0.4.6 model_loader/weight_utils.py:847, 0.5.23 :1971",
                P + "Defaulting to KV cache scaling factors = 1.0 for all layers in TP rank 3 "
                "as an error occurred during loading.", ("form", "tp_rank")),
    )),
    Format("fp8_scales_loaded", ("Loaded KV cache scaling factors from ",),
           parse_fp8_loaded, (
        Variant("fp8_scales_loaded:path", EVERY, "Loaded KV cache scaling factors from %s",
                "0.4.6 model_executor/model_runner.py:451, 0.5.23 "
                "model_runner_components/load_model_utils.py:128",
                P + "Loaded KV cache scaling factors from /models/kv_scales.json", ("path",)),
    )),
    Format("kv_pool", ("KV Cache is allocated", "KV Cache VA upper bound",
                       "Post-capture KV sizing: KV cache", "Post-capture KV sizing: draft"),
           parse_kv_pool, (
        Variant("kv_pool:no_tokens", between("0.4.2", "0.4.3"),
                "KV Cache is allocated. K size: {:.2f} GB, V size: {:.2f} GB.",
                "sglang-log-lines.md 5.1 (0.4.2-0.4.3 mem_cache/memory_pool.py)",
                P + "KV Cache is allocated. K size: 25.86 GB, V size: 25.86 GB.",
                ("k_gib", "v_gib")),
        Variant("kv_pool:tokens", between("0.4.4", "0.5.12"),
                "KV Cache is allocated. #tokens: {size}, K size: .. GB, V size: .. GB",
                "0.4.6 mem_cache/memory_pool.py:243, 0.5.12 :744",
                P + "KV Cache is allocated. #tokens: 423698, K size: 25.86 GB, V size: 25.86 GB",
                ("tokens", "k_gib", "v_gib")),
        Variant("kv_pool:mla", between("0.4.6", "0.5.12"),
                "KV Cache is allocated. #tokens: {size}, KV size: {:.2f} GB",
                "0.4.6 mem_cache/memory_pool.py:521, 0.5.12 :750",
                P + "KV Cache is allocated. #tokens: 10000, KV size: 0.65 GB",
                ("tokens", "kv_gib")),
        Variant("kv_pool:dtype", since("0.5.13"),
                "KV Cache is allocated. dtype: {dtype}, #tokens: N, K size: .., V size: ..",
                "0.5.13 mem_cache/memory_pool.py:819, :825 (MLA)",
                P + "KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 847396, "
                "K size: 25.86 GB, V size: 25.86 GB", ("dtype", "tokens", "k_gib", "v_gib")),
        Variant("kv_pool:label", since("0.5.17"),
                "{allocation_label} KV Cache is allocated. dtype: .., #tokens: .., ...",
                "0.5.17 mem_cache/memory_pool.py:1670",
                P + "Full KV Cache is allocated. dtype: torch.bfloat16, #tokens: 375360, "
                "K size: 10.48 GB, V size: 6.99 GB", ("label", "dtype", "tokens")),
        Variant("kv_pool:va", since("0.5.18"),
                "{cache_name} VA upper bound. dtype: .., #tokens: .., ...",
                "0.5.18 mem_cache/memory_pool.py, 0.5.23 :2088",
                P + "KV Cache VA upper bound. dtype: torch.bfloat16, #tokens: 900000, "
                "K size: 40.00 GB, V size: 40.00 GB", ("dtype", "tokens", "post_capture")),
        Variant("kv_pool:post_capture", since("0.5.17"),
                "Post-capture KV sizing: KV cache allocated. dtype: %s, #tokens: %d, KV size: "
                "%.2f GB, avail mem=%.2f GB",
                "0.5.17 model_runner_components/kv_pool_runtime.py:122, 0.5.23 :195",
                P + "Post-capture KV sizing: KV cache allocated. dtype: torch.bfloat16, "
                "#tokens: 1234, KV size: 2.00 GB, avail mem=3.00 GB",
                ("dtype", "tokens", "kv_gib", "avail_gib", "post_capture")),
        Variant("kv_pool:post_capture_draft", since("0.5.22"),
                "Post-capture KV sizing: draft KV cache allocated. dtype: %s, #tokens: %d, "
                "KV size: %.2f GB", "0.5.22 model_runner_components/kv_pool_runtime.py:204",
                P + "Post-capture KV sizing: draft KV cache allocated. dtype: torch.bfloat16, "
                "#tokens: 1234, KV size: 0.20 GB", ("dtype", "tokens", "kv_gib", "draft")),
    ), infixes=("KV Cache ",)),
    Format("mamba_pool", ("Mamba Cache is allocated.",), parse_mamba, (
        Variant("mamba_pool:no_slots", between("0.5.2", "0.5.3"),
                "Mamba Cache is allocated. conv_state size: {:.2f}GB, ssm_state size: {:.2f}GB ",
                "0.5.2 mem_cache/memory_pool.py:167 (sglang-log-lines.md 5.3)",
                P + "Mamba Cache is allocated. conv_state size: 0.84GB, ssm_state size: 17.16GB ",
                ("conv_gib", "ssm_gib")),
        Variant("mamba_pool:slots", since("0.5.4"),
                "Mamba Cache is allocated. max_mamba_cache_size: N, conv_state size: .., ...",
                "sglang-log-lines.md 5.3; 0.5.23 mem_cache/memory_pool.py:984",
                P + "Mamba Cache is allocated. max_mamba_cache_size: 512, conv_state size: "
                "0.84 GB, ssm_state size: 17.16 GB", ("slots", "conv_gib", "ssm_gib")),
    )),
    Format("swa_split", ("Use Sliding window memory pool", "Use sliding window memory pool",
                         "Post-capture KV sizing: full_layer"), parse_swa, (
        Variant("swa_split:capital", between("0.4.10", "0.5.6"),
                "Use Sliding window memory pool. full_layer_tokens=.., swa_layer_tokens=..",
                "0.4.10 model_executor/model_runner.py:1065, 0.5.6 :1605",
                P + "Use Sliding window memory pool. full_layer_tokens=100, swa_layer_tokens=80",
                ("full_tokens", "swa_tokens")),
        Variant("swa_split:lower", since("0.5.7"),
                "Use sliding window memory pool. full_layer_tokens=.., swa_layer_tokens=..",
                "0.5.7 model_executor/model_runner_kv_cache_mixin.py:268, 0.5.23 "
                "model_executor/pool_configurator.py:889",
                P + "Use sliding window memory pool. full_layer_tokens=375360, "
                "swa_layer_tokens=300288", ("full_tokens", "swa_tokens")),
        Variant("swa_split:all_swa", since("0.5.9"),
                "Use sliding window memory pool (all SWA). swa_layer_tokens=..",
                "0.5.9 model_executor/model_runner_kv_cache_mixin.py:269",
                P + "Use sliding window memory pool (all SWA). swa_layer_tokens=500000",
                ("swa_tokens",)),
        Variant("swa_split:post_capture", since("0.5.17"),
                "Post-capture KV sizing: full_layer_tokens=%d, swa_layer_tokens=%d",
                "0.5.17 model_runner_components/kv_pool_runtime.py:117",
                P + "Post-capture KV sizing: full_layer_tokens=10, swa_layer_tokens=8",
                ("full_tokens", "swa_tokens")),
    )),
    Format("kv_budget_reserved", ("Reserving ",), parse_kv_reserved, (
        Variant("kv_budget_reserved:multimodal", since("0.5.18"),
                "Reserving {:.2f} GB of the KV budget for post-sizing multimodal allocations "
                "(feature-transport pools + embedding cache).",
                "0.5.18 mem_cache/kv_cache_configurator.py:143, 0.5.23 :215 (absent in 0.5.17)",
                P + "Reserving 0.10 GB of the KV budget for post-sizing multimodal allocations "
                "(feature-transport pools + embedding cache).", ("reserved_gib", "purpose")),
    )),
    Format("memory_pool_end", ("Memory pool end.",), parse_pool_end, (
        Variant("memory_pool_end:avail", EVERY, "Memory pool end. avail mem={:.2f} GB",
                "sglang-log-lines.md 5.4 (0.5.23 model_runner_components/kv_pool_runtime.py"
                ":180)", P + "Memory pool end. avail mem=14.61 GB", ("avail_gib",)),
    )),
    Format("dist_init_end", ("Init torch distributed ends.",), parse_dist_init, (
        Variant("dist_init_end:usage", between("0.4.4", "0.5.8"),
                "Init torch distributed ends. mem usage={:.2f} GB",
                "0.5.2 model_executor/model_runner.py:691, 0.5.8 :801 (sglang-log-lines.md 4: "
                "0.4.4-0.5.8)",
                P + "Init torch distributed ends. mem usage=1.96 GB", ("usage_gib",)),
        Variant("dist_init_end:elapsed", between("0.5.9", "0.5.20"),
                "Init torch distributed ends. elapsed={:.2f} s, mem usage={:.2f} GB",
                "0.5.9 model_executor/model_runner.py:850, 0.5.13 :1226, 0.5.20 "
                "model_runner_components (sglang-log-lines.md 4: 0.5.9-0.5.20)",
                P + "Init torch distributed ends. elapsed=0.26 s, mem usage=0.09 GB",
                ("elapsed_s", "usage_gib")),
    )),
    # Present in 0.5.2, 0.5.6, 0.5.8, 0.5.9 and 0.5.13; 0.5.16 names what it captures instead.
    Format("cuda_graph_begin", ("Capture ",), parse_graph_begin, (
        Variant("cuda_graph_begin:minutes", until("0.5.15"),
                "Capture {cuda graph|cpu graph|npu graph|..} begin. This can take up to several "
                "minutes. avail mem={:.2f} GB",
                "0.5.2 model_executor/model_runner.py:1752, 0.5.8 :2000, 0.5.13 :2895",
                P + "Capture cuda graph begin. This can take up to several minutes. "
                "avail mem=11.82 GB", ("avail_gib", "graph")),
    )),
    Format("cuda_graph_end", ("Capture ",), parse_graph_end, (
        Variant("cuda_graph_end:time_elapsed", until("0.5.13"),
                "Capture {cuda graph|cpu graph|piecewise CUDA graph} end. Time elapsed: .. s. "
                "mem usage=.. GB. avail mem=.. GB.",
                "0.4.6 model_executor/model_runner.py:970, 0.5.13 :2913, :3049",
                P + "Capture cuda graph end. Time elapsed: 5.37 s. mem usage=1.44 GB. "
                "avail mem=38.05 GB.", ("elapsed_s", "usage_gib", "avail_gib", "graph")),
        Variant("cuda_graph_end:named", since("0.5.14"),
                "Capture {role} {decode|verify|prefill} {CUDA graph|...} end. elapsed=.. s, "
                "mem usage=.. GB, avail mem=.. GB.",
                "0.5.14 model_executor/model_runner.py:2588, 0.5.23 "
                "model_runner_components/cuda_graph_setup.py:788",
                P + "Capture target prefill CUDA graph end. elapsed=3.00 s, mem usage=0.20 GB, "
                "avail mem=5.00 GB.", ("elapsed_s", "usage_gib", "avail_gib", "graph")),
        Variant("cuda_graph_end:bs", since("0.5.22"),
                "Capture {name} end. bs=[..], elapsed=.. s, mem usage=.. GB, avail mem=.. GB.",
                "sglang-log-lines.md 5.4 (0.5.22+ model_runner_components/cuda_graph_setup.py)",
                P + "Capture target decode CUDA graph end. bs=[1, 2, 4], elapsed=12.50 s, "
                "mem usage=0.57 GB, avail mem=17.75 GB.", ("elapsed_s", "graph")),
    )),
    Format("capacity", ("max_total_num_tokens=",), parse_capacity, (
        Variant("capacity:no_chunked", until("0.4.1"),
                "max_total_num_tokens=.., max_prefill_tokens=.., max_running_requests=.., "
                "context_len=..", "sglang-log-lines.md 6 (0.2.15-0.4.1)",
                "[09:00:00 TP0] max_total_num_tokens=5000, max_prefill_tokens=16384, "
                "max_running_requests=2048, context_len=4096",
                ("max_total_num_tokens", "context_len"), weak=True),
        Variant("capacity:no_avail", between("0.4.2", "0.4.6"),
                "max_total_num_tokens=.., chunked_prefill_size=.., max_prefill_tokens=.., "
                "max_running_requests=.., context_len=..",
                "0.4.6 managers/scheduler.py:306 (sglang-log-lines.md 6)",
                P + "max_total_num_tokens=1061980, chunked_prefill_size=8192, "
                "max_prefill_tokens=16384, max_running_requests=3319, context_len=163840",
                ("max_total_num_tokens", "chunked_prefill_size", "context_len"), weak=True),
        Variant("capacity:avail", since("0.4.7"),
                "... context_len=.., available_gpu_mem=.. GB",
                "0.4.9 managers/scheduler.py:398, 0.5.23 :1270",
                P + "max_total_num_tokens=20480, chunked_prefill_size=-1, "
                "max_prefill_tokens=16384, max_running_requests=128, context_len=32768, "
                "available_gpu_mem=76.95 GB", ("available_gpu_mem_gib",)),
        Variant("capacity:cpu", since("0.5.2"),
                "... context_len=.., available_cpu_mem=.. GB", "0.5.2 managers/scheduler.py:417",
                P + "max_total_num_tokens=20480, chunked_prefill_size=None, "
                "max_prefill_tokens=16384, max_running_requests=128, context_len=32768, "
                "available_cpu_mem=500.00 GB", ("available_cpu_mem_gib",)),
    )),
    Format("max_total_tokens_capped", ("max_total_tokens=",), parse_capped, (
        Variant("max_total_tokens_capped:profiled", EVERY,
                "max_total_tokens={user} is larger than the profiled value {N}. Use the "
                "profiled value instead.",
                "0.4.6 model_executor/model_runner.py:776, 0.5.23 "
                "mem_cache/kv_cache_configurator.py:3102",
                P + "max_total_tokens=131072 is larger than the profiled value -561981. Use the "
                "profiled value instead.", ("requested", "profiled")),
    )),
    Format("mem_unbalanced", ("The memory capacity is unbalanced",),
           parse_unbalanced, (
        Variant("mem_unbalanced:min_per_gpu", until("0.5.9"),
                "The memory capacity is unbalanced. ... {min_per_gpu_memory=}, "
                "{local_gpu_memory=}, {local_gpu_memory * 0.9=}",
                "0.4.6 model_executor/model_runner.py:387, 0.5.9 :843",
                P + "The memory capacity is unbalanced. Some GPUs may be occupied by other "
                "processes. min_per_gpu_memory=70.00, local_gpu_memory=79.00, "
                "local_gpu_memory * 0.9=71.10",
                ("min_gpu_memory_gib", "local_gpu_memory_gib")),
        Variant("mem_unbalanced:pre_model_load", since("0.5.10"),
                "... {pre_model_load_memory=}, {local_gpu_memory=}, {local_gpu_memory * 0.9=}",
                "0.5.10 model_executor/model_runner.py:1014, 0.5.23 distributed/bootstrap.py"
                ":445 (sglang-log-lines.md 4 says 0.5.21+; the wheels say 0.5.10)",
                P + "The memory capacity is unbalanced. Some GPUs may be occupied by other "
                "processes. pre_model_load_memory=70.0, local_gpu_memory=79.0, "
                "local_gpu_memory * 0.9=71.1", ("min_gpu_memory_gib", "local_gpu_memory_gib")),
    )),
)
