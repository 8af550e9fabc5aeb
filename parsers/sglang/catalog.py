"""SGLang's line catalogue: every kind of line declared once.

A `Format` names a kind of the shared vocabulary (`parsers.kinds`), the phrases its messages
start with (`heads`; the dispatch table of `parsers.sglang.line` is built from them), the
phrases that find it anywhere in a message (`infixes`, for errors that arrive inside traceback
text), its parser, and its `Variant`s: the layouts SGLang printed it in, each with the releases
that print it, where that was read (release and file:line in the wheel, or the section of
sglang-log-lines.md that cites them), the fields that layout prints and one sample line.

A parser returns `(fields, variant id)`; the id travels on the event (`Event.variant`) and is
the event's dating hint (`parsers.sglang.hints`): `kvtui.engines.sglang.version` reads the
release ranges from here, so a format's dating is written once, next to its text. Lines whose
layout a cut paste makes ambiguous report a coarser variant (`decode_batch:comma` rather than
`decode_batch:v0.5.9`) or none. `weak` marks a variant told apart only by a column that is
absent (a trimmed or cut paste looks the same), which counts half in the dating.

Releases before 0.2.15 (the oldest the reference read) have no range (`releases=None`): their
lines are recognised but date nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from parsers.sglang import accuracy, errors, limits, runtime, startup
from parsers.sglang.server_args import parse_args_line

Version = tuple[int, int, int]
Span = tuple[Version, Version | None]  # inclusive; None: up to the newest release
Parser = Callable[[str], tuple[dict[str, Any], str | None] | None]

P = "[2026-03-01 12:00:00 TP0] "  # the prefix of the sample lines


def _v(text: str) -> Version:
    a, b, c = (int(x) for x in text.split("."))
    return (a, b, c)


def since(lo: str) -> tuple[Span, ...]:
    return ((_v(lo), None),)


def until(hi: str) -> tuple[Span, ...]:
    return (((0, 2, 15), _v(hi)),)


def between(lo: str, hi: str) -> tuple[Span, ...]:
    return ((_v(lo), _v(hi)),)


EVERY: tuple[Span, ...] = (((0, 2, 15), None),)


@dataclass(frozen=True, slots=True)
class Variant:
    """One layout of a format: `id` is "<kind>:<name>"; `releases` None dates nothing."""

    id: str
    releases: tuple[Span, ...] | None
    text: str
    cite: str
    sample: str
    prints: tuple[str, ...] = ()
    weak: bool = False

    @property
    def dates(self) -> bool:
        return self.releases is not None and self.releases != EVERY


@dataclass(frozen=True, slots=True)
class Format:
    kind: str
    heads: tuple[str, ...]
    parse: Parser
    variants: tuple[Variant, ...]
    # Cheap substring tests: a message that failed the dispatch by its start and contains one
    # of these is handed to `parse` whole (which then looks for the format anywhere in it).
    # Each costs every unrecognised line a `str.__contains__`, so keep them few and short.
    infixes: tuple[str, ...] = ()


def _cast(fn: Callable[[str], Any]) -> Parser:
    return fn


CATALOG: tuple[Format, ...] = (
    Format("server_args", ("server_args=", "DSA with TP mode is active",
                           "NSA with TP mode is active"), _cast(parse_args_line), (
        Variant("server_args:repr", until("0.5.18"), "server_args=ServerArgs(...)",
                "0.4.6 entrypoints/engine.py:116, 0.5.18 entrypoints/engine.py:253 "
                "logger.info(f\"{server_args=}\")",
                "[2025-04-28 05:39:43] server_args=ServerArgs(model_path='m', tp_size=2, "
                "kv_cache_dtype='auto')", ("model_path", "tp_size", "kv_cache_dtype")),
        Variant("server_args:repr_page_size", between("0.4.4", "0.5.18"),
                "ServerArgs(...) with page_size (a field from 0.4.4, sglang-log-lines.md 2.1)",
                "sglang-log-lines.md 2.1 field availability",
                "[2025-04-28 05:39:43] server_args=ServerArgs(model_path='m', page_size=1, "
                "tp_size=1)", ("page_size",)),
        Variant("server_args:dict", since("0.5.19"), "server_args={'model_path': ...}",
                "0.5.19 entrypoints/engine.py resolved_dict(); 0.5.22+ _server_args_for_logging "
                "(0.5.23 entrypoints/engine.py:173)",
                "[2026-06-01 10:00:00] server_args={'model_path': 'm', 'tp_size': 2}",
                ("model_path", "tp_size")),
        Variant("server_args:dict_attn_dp", since("0.5.22"),
                "server_args={...} with attn_dp_size (0.5.22+)",
                "sglang-log-lines.md 2.1: attn_dp_size 0.5.22+ (arg_groups/parallel_hook.py)",
                "[2026-06-01 10:00:00] server_args={'model_path': 'm', 'tp_size': 8, "
                "'attn_dp_size': 8}", ("attn_dp_size",)),
        # Absent from 0.5.4; NSA in 0.5.6, DSA in 0.5.8 to 0.5.20; 0.5.23 prints attn_dp_size.
        Variant("server_args:tp_mode", between("0.5.5", "0.5.22"),
                "{NSA|DSA} with TP mode is active, dp_size=.., tp_size=.., attn_tp_size=.., "
                "attention weights will be sharded across .. ranks.",
                "0.5.6 server_args.py:969, 0.5.8 :1147, 0.5.20 arg_groups/model_hook.py:234",
                "[2026-01-01 00:00:00] DSA with TP mode is active, dp_size=1, tp_size=4, "
                "attn_tp_size=4, attention weights will be sharded across 4 ranks.",
                ("tp_size", "dp_size")),
        Variant("server_args:tp_mode_attn_dp", since("0.5.21"),
                "DSA with TP mode is active, attn_dp_size=.., tp_size=.., attn_tp_size=.., ...",
                "0.5.23 arg_groups/model_hook.py:332",
                "[2026-01-01 00:00:00] DSA with TP mode is active, attn_dp_size=2, tp_size=8, "
                "attn_tp_size=4, attention weights will be sharded across 4 ranks.",
                ("tp_size", "attn_dp_size")),
    )),
    Format("load_weight_begin", ("Load weight begin.",), _cast(startup.parse_load_begin), (
        Variant("load_weight_begin:avail", EVERY,
                "Load weight begin. avail mem={:.2f} GB",
                "0.4.6 model_executor/model_runner.py:404, 0.5.23 :1274",
                P + "Load weight begin. avail mem=78.43 GB", ("avail_gib",)),
    )),
    Format("load_weight_end", ("Load weight end.",), _cast(startup.parse_load_end), (
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
           _cast(startup.parse_kv_dtype), (
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
    Format("kv_accuracy_warning", ("FP4 (E2M1) KV Cache might", "NVFP4 KV Cache might",
                                   "FP4_MX_BLOCK16 KV Cache might"),
           _cast(limits.parse_accuracy), (
        Variant("kv_accuracy_warning:fp4_e2m1", between("0.5.5", "0.5.15"),
                "FP4 (E2M1) KV Cache might lead to a accuracy drop!",
                "0.5.5 model_executor/model_runner.py:1537, 0.5.15 :2475",
                P + "FP4 (E2M1) KV Cache might lead to a accuracy drop!", ("dtype",)),
        Variant("kv_accuracy_warning:recipe", since("0.5.16"),
                "%s KV Cache might lead to an accuracy drop! (NVFP4, FP4_MX_BLOCK16)",
                "0.5.16 mem_cache/kv_cache_dtype.py:66, 0.5.23 :80",
                "[2026-08-14 21:03:09] NVFP4 KV Cache might lead to an accuracy drop!",
                ("dtype",)),
    )),
    Format("fp8_scales_missing", ("Using FP8 KV cache but no scaling factors",
                                  "Defaulting to KV cache scaling factors"),
           _cast(startup.parse_fp8_missing), (
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
           _cast(startup.parse_fp8_loaded), (
        Variant("fp8_scales_loaded:path", EVERY, "Loaded KV cache scaling factors from %s",
                "0.4.6 model_executor/model_runner.py:451, 0.5.23 "
                "model_runner_components/load_model_utils.py:128",
                P + "Loaded KV cache scaling factors from /models/kv_scales.json", ("path",)),
    )),
    Format("kv_pool", ("KV Cache is allocated", "KV Cache VA upper bound",
                       "Post-capture KV sizing: KV cache", "Post-capture KV sizing: draft"),
           _cast(startup.parse_kv_pool), (
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
    Format("mamba_pool", ("Mamba Cache is allocated.",), _cast(startup.parse_mamba), (
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
                         "Post-capture KV sizing: full_layer"), _cast(startup.parse_swa), (
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
    Format("swa_pool", ("SWAKVPool ",), _cast(limits.parse_swa_pool), (
        Variant("swa_pool:raw", between("0.5.4", "0.5.6"),
                "SWAKVPool mem usage: {self.mem_usage} GB, swa size: .., full size: ..",
                "0.5.4 mem_cache/memory_pool.py:974, 0.5.6 :1206 (unformatted float)",
                P + "SWAKVPool mem usage: 13.966064453125 GB, swa size: 300288, "
                "full size: 375360", ("gib", "swa_tokens", "full_tokens")),
        Variant("swa_pool:mem_usage", since("0.5.7"),
                "SWAKVPool mem usage: {:.2f} GB, swa size: {size_swa}, full size: {size}",
                "0.5.7 mem_cache/memory_pool.py:1347, 0.5.17 mem_cache/swa_memory_pool.py:89",
                P + "SWAKVPool mem usage: 31.46 GB, swa size: 300288, full size: 375360",
                ("gib", "swa_tokens", "full_tokens")),
        Variant("swa_pool:va", since("0.5.18"),
                "SWAKVPool VA upper bound: {:.2f} GB, swa size: .., full size: ..",
                "0.5.18 mem_cache/swa_memory_pool.py:89, 0.5.23 :133",
                P + "SWAKVPool VA upper bound: 31.46 GB, swa size: 300288, full size: 375360",
                ("gib", "swa_tokens", "full_tokens", "post_capture")),
    )),
    Format("swa_sizing", ("DSV4 SWA sizing:", "SWA per-request ring accounting"),
           _cast(limits.parse_swa_sizing), (
        Variant("swa_sizing:ring", since("0.5.20"),
                "SWA per-request ring accounting enabled: ring_size=.., ring_cost_tokens=.., "
                "size_swa=.. (paged size_swa=.. bypassed)",
                "0.5.20 mem_cache/allocator/swa.py:133, 0.5.23 :145",
                P + "SWA per-request ring accounting enabled: ring_size=256, "
                "ring_cost_tokens=256, size_swa=65536 (paged size_swa=423424 bypassed)",
                ("mode", "swa_tokens", "ring_size", "ring_cost_tokens", "paged_swa_tokens")),
        Variant("swa_sizing:dsv4", since("0.5.21"),
                "DSV4 SWA sizing: mode=.., swa_tokens=.., swa_full_tokens_ratio=.. | mode=cap, "
                "swa_tokens=.., request_cap+headroom=.., prefix_tails=..",
                "0.5.21 model_executor/pool_configurator.py:1317, 0.5.23 :1480",
                P + "DSV4 SWA sizing: mode=ratio (explicit), swa_tokens=549888, "
                "swa_full_tokens_ratio=0.22", ("mode", "swa_tokens", "swa_full_tokens_ratio")),
    )),
    Format("dsv4_memory", ("DSV4 memory calculation:", "DSv4 memory calculation:"),
           _cast(limits.parse_dsv4_memory), (
        Variant("dsv4_memory:dev", None,
                "DSv4 memory calculation: bytes_per_full_token=.., available_bytes=.. GB, "
                "full_token=.. (a pre-release build's spelling)",
                "corpus repofile-54751690598 (2026-05); no release prints 'DSv4'",
                P + "DSv4 memory calculation: bytes_per_full_token=176983.05, "
                "available_bytes=87.26 GB, full_token=529408",
                ("bytes_per_full_token", "available_gib", "full_tokens")),
        Variant("dsv4_memory:v0.5.12", between("0.5.12", "0.5.14"),
                "DSV4 memory calculation: bytes_per_full_token=.., available_bytes=.. GB, "
                "full_token=..", "0.5.12 model_executor/pool_configurator.py:447",
                P + "DSV4 memory calculation: bytes_per_full_token=176983.05, "
                "available_bytes=87.26 GB, full_token=529408",
                ("bytes_per_full_token", "available_gib", "full_tokens")),
        Variant("dsv4_memory:v0.5.15", between("0.5.15", "0.5.19"),
                "... available_bytes=.. GB, c128_state_fixed=.. GB, full_token=..",
                "0.5.15 model_executor/pool_configurator.py:759, 0.5.19 :1031",
                P + "DSV4 memory calculation: bytes_per_full_token=176983.05, "
                "available_bytes=87.26 GB, c128_state_fixed=0.12 GB, full_token=529408",
                ("bytes_per_full_token", "available_gib", "c128_state_gib", "full_tokens")),
        Variant("dsv4_memory:v0.5.20", between("0.5.20", "0.5.20"),
                "DSV4 memory calculation: unified=.., unified_fp8=.., bytes_per_full_token=.., "
                "available_bytes=.., c128_state_fixed=.., swa_ring_fixed=.., c4_state_fixed=.., "
                "full_token=..", "0.5.20 model_executor/pool_configurator.py:1325",
                P + "DSV4 memory calculation: unified=False, unified_fp8=False, "
                "bytes_per_full_token=176983.05, available_bytes=87.26 GB, "
                "c128_state_fixed=0.12 GB, swa_ring_fixed=0.00 GB, c4_state_fixed=0.30 GB, "
                "full_token=529408", ("unified", "swa_ring_gib", "c4_state_gib", "full_tokens")),
        Variant("dsv4_memory:v0.5.21", since("0.5.21"),
                "... dspark_draft_bf16=.., ..., c2_state_fixed=.., swa_fixed=.., ...",
                "0.5.21 model_executor/pool_configurator.py:1517, 0.5.23 :1689",
                P + "DSV4 memory calculation: unified=False, unified_fp8=False, "
                "dspark_draft_bf16=False, bytes_per_full_token=176983.05, "
                "available_bytes=87.26 GB, c128_state_fixed=0.12 GB, c2_state_fixed=0.00 GB, "
                "swa_fixed=1.50 GB, swa_ring_fixed=0.00 GB, c4_state_fixed=0.30 GB, "
                "full_token=529408", ("dspark_draft_bf16", "c2_state_gib", "swa_gib",
                                      "available_gib", "full_tokens")),
    )),
    Format("dsv4_pool", ("DSV4 pool sizes:", "Initialize DeepSeekV4TokenToKVPool"),
           _cast(limits.parse_dsv4_pool), (
        Variant("dsv4_pool:sizes", since("0.5.12"),
                "DSV4 pool sizes: full=.., swa=.., c4=.., c128=.., c4_state=.., c128_state=..",
                "0.5.12 model_executor/pool_configurator.py:421, 0.5.23 :1606",
                P + "DSV4 pool sizes: full=2499840, swa=549888, c4=624960, c128=19530, "
                "c4_state=52928, c128_state=846848",
                ("full_tokens", "swa_tokens", "c4_entries", "c128_entries", "c4_state_rows",
                 "c128_state_rows")),
        Variant("dsv4_pool:init_dev", None,
                "Initialize DeepSeekV4TokenToKVPool with max_num_reqs=.. swa_size=.. c4_size=.. "
                "c128_size=.. c4_state_pool_size=.. c128_state_pool_size=.. (no c4_logical_size:"
                " a pre-release build)", "corpus repofile-54751690598 (2026-05)",
                P + "Initialize DeepSeekV4TokenToKVPool with max_num_reqs=256 swa_size=423424 "
                "c4_size=132352 c128_size=4136 c4_state_pool_size=52928 "
                "c128_state_pool_size=846848", ("max_num_reqs", "swa_tokens", "c4_entries")),
        Variant("dsv4_pool:init", between("0.5.12", "0.5.20"),
                "Initialize DeepSeekV4TokenToKVPool with {max_num_reqs=} {swa_size=} {c4_size=} "
                "{c4_logical_size=} {c128_size=} {c4_state_pool_size=} {c128_state_pool_size=}",
                "0.5.12 mem_cache/deepseek_v4_memory_pool.py:389, 0.5.19 :505",
                P + "Initialize DeepSeekV4TokenToKVPool with max_num_reqs=256 swa_size=423424 "
                "c4_size=132352 c4_logical_size=132352 c128_size=4136 c4_state_pool_size=52928 "
                "c128_state_pool_size=846848", ("max_num_reqs", "c4_logical_entries")),
        Variant("dsv4_pool:init_unified", since("0.5.21"),
                "... {c128_state_pool_size=} unified={..} unified_fp8={..}",
                "0.5.21 mem_cache/deepseek_v4_memory_pool.py:952, 0.5.23 :1023",
                P + "Initialize DeepSeekV4TokenToKVPool with max_num_reqs=256 swa_size=423424 "
                "c4_size=132352 c4_logical_size=132352 c128_size=4136 c4_state_pool_size=52928 "
                "c128_state_pool_size=846848 unified=False unified_fp8=False",
                ("max_num_reqs", "unified", "unified_fp8")),
    )),
    Format("kv_budget_reserved", ("Reserving ",), _cast(startup.parse_kv_reserved), (
        Variant("kv_budget_reserved:multimodal", since("0.5.18"),
                "Reserving {:.2f} GB of the KV budget for post-sizing multimodal allocations "
                "(feature-transport pools + embedding cache).",
                "0.5.18 mem_cache/kv_cache_configurator.py:143, 0.5.23 :215 (absent in 0.5.17)",
                P + "Reserving 0.10 GB of the KV budget for post-sizing multimodal allocations "
                "(feature-transport pools + embedding cache).", ("reserved_gib", "purpose")),
    )),
    Format("memory_pool_end", ("Memory pool end.",), _cast(startup.parse_pool_end), (
        Variant("memory_pool_end:avail", EVERY, "Memory pool end. avail mem={:.2f} GB",
                "sglang-log-lines.md 5.4 (0.5.23 model_runner_components/kv_pool_runtime.py"
                ":180)", P + "Memory pool end. avail mem=14.61 GB", ("avail_gib",)),
    )),
    Format("dist_init_end", ("Init torch distributed ends.",), _cast(startup.parse_dist_init), (
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
    Format("cuda_graph_begin", ("Capture ",), _cast(startup.parse_graph_begin), (
        Variant("cuda_graph_begin:minutes", until("0.5.15"),
                "Capture {cuda graph|cpu graph|npu graph|..} begin. This can take up to several "
                "minutes. avail mem={:.2f} GB",
                "0.5.2 model_executor/model_runner.py:1752, 0.5.8 :2000, 0.5.13 :2895",
                P + "Capture cuda graph begin. This can take up to several minutes. "
                "avail mem=11.82 GB", ("avail_gib", "graph")),
    )),
    Format("cuda_graph_end", ("Capture ",), _cast(startup.parse_graph_end), (
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
    Format("capacity", ("max_total_num_tokens=",), _cast(startup.parse_capacity), (
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
    Format("max_total_tokens_capped", ("max_total_tokens=",), _cast(startup.parse_capped), (
        Variant("max_total_tokens_capped:profiled", EVERY,
                "max_total_tokens={user} is larger than the profiled value {N}. Use the "
                "profiled value instead.",
                "0.4.6 model_executor/model_runner.py:776, 0.5.23 "
                "mem_cache/kv_cache_configurator.py:3102",
                P + "max_total_tokens=131072 is larger than the profiled value -561981. Use the "
                "profiled value instead.", ("requested", "profiled")),
    )),
    Format("mamba_cap", ("max_running_requests is capped",), _cast(limits.parse_mamba_cap), (
        Variant("mamba_cap:capped", since("0.5.17"),
                "max_running_requests is capped to %d by the mamba state cache "
                "(max_mamba_cache_size=%d, %d state slots per request). To raise it: ...",
                "0.5.17 mem_cache/kv_cache_configurator.py:1741, 0.5.23 :3141",
                P + "max_running_requests is capped to 6 by the mamba state cache "
                "(max_mamba_cache_size=32, 5 state slots per request). To raise it: increase "
                "--mamba-full-memory-ratio or --max-mamba-cache-size, or halve the state size "
                "with --mamba-ssm-dtype bfloat16.",
                ("max_running_requests", "max_mamba_cache_size", "slots_per_request")),
    )),
    Format("requests_reduced", ("max_running_requests was reduced",),
           _cast(limits.parse_reduced), (
        Variant("requests_reduced:per_dp_worker", since("0.5.14"),
                "max_running_requests was reduced from the requested %d to %d (per dp worker) "
                "due to the available KV cache capacity.",
                "0.5.14 model_executor/model_runner_kv_cache_mixin.py:1013, 0.5.23 "
                "mem_cache/kv_cache_configurator.py:3167",
                P + "max_running_requests was reduced from the requested 512 to 96 (per dp "
                "worker) due to the available KV cache capacity.",
                ("requested", "max_running_requests")),
    )),
    Format("mem_unbalanced", ("The memory capacity is unbalanced",),
           _cast(startup.parse_unbalanced), (
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
    Format("prefill_batch", ("Prefill batch", "new fill batch", "GPU: "),
           _cast(runtime.parse_prefill_any), (
        Variant("prefill_batch:fill", None,
                "new fill batch. #seq: .. #cached_token: .. #new_token: .. (0.1.x)",
                "sglang 0.1.x router/model_rpc.py (before the reference's oldest release)",
                "new fill batch. #seq: 7. #cached_token: 1541. #new_token: 4. "
                "#remaining_req: 0. #running_req: 0", ("new_seq", "cached_token")),
        Variant("prefill_batch:mixed", None,
                "Prefill batch(mixed #running-req: X). #new-seq: .. (mixed chunk)",
                "sglang-log-lines.md 7.1 (0.2.15-0.3.4 row)",
                P + "Prefill batch(mixed #running-req: 7). #new-seq: 1, #new-token: 10, "
                "#cached-token: 2, cache hit rate: 16.67%, token usage: 0.10, #queue-req: 3",
                ("new_seq", "running_req")),
        Variant("prefill_batch:hit_rate", until("0.4.3"),
                "Prefill batch. #new-seq: .., #new-token: .., #cached-token: .., cache hit "
                "rate: X.XX%, [token usage: .., ]#running-req: .., #queue-req: ..",
                "sglang-log-lines.md 7.1 (0.2.15-0.4.3 rows)",
                "[16:43:29 TP0] Prefill batch. #new-seq: 4, #new-token: 8192, #cached-token: "
                "291, cache hit rate: 2.76%, token usage: 0.04, #running-req: 1, #queue-req: 38",
                ("cache_hit_rate", "token_usage")),
        Variant("prefill_batch:v0.4.4", between("0.4.4", "0.5.3"),
                "Prefill batch. #new-seq: .., #new-token: .., #cached-token: .., token usage: "
                "X.XX, #running-req: .., #queue-req: ..[, ]",
                "0.4.6 managers/scheduler.py:993, 0.5.3 managers/scheduler_metrics_mixin.py:112",
                P + "Prefill batch. #new-seq: 2, #new-token: 2, #cached-token: 8027, "
                "token usage: 0.26, #running-req: 28, #queue-req: 0, ",
                ("new_seq", "token_usage", "queue_req")),
        Variant("prefill_batch:period", until("0.5.3"),
                "Prefill batch. #new-seq: .. (cut before the usage column)",
                "sglang-log-lines.md 7.1", P + "Prefill batch. #new-seq: 2, #new-token: 2, ",
                ("new_seq",), weak=True),
        Variant("prefill_batch:v0.5.4", between("0.5.4", "0.5.8"),
                "Prefill batch[ [N]], #new-seq: .., ..., #running-req: .., #queue-req: .., ",
                "0.5.4 managers/scheduler_metrics_mixin.py:126, 0.5.8 :208",
                P + "Prefill batch [12], #new-seq: 1, #new-token: 9, #cached-token: 0, "
                "full token usage: 0.10, mamba usage: 0.30, #running-req: 1, #queue-req: 0, ",
                ("mamba_usage", "full_token_usage", "queue_req")),
        Variant("prefill_batch:comma", since("0.5.4"),
                "Prefill batch, #new-seq: .. (cut)", "sglang-log-lines.md 7.1",
                P + "Prefill batch, #new-seq: 1, #new-token: 9, ", ("new_seq",)),
        Variant("prefill_batch:v0.5.9", between("0.5.9", "0.5.9"),
                "Prefill batch, ..., #queue-req: .., input throughput (token/s): .., "
                "cuda graph: B", "0.5.9 managers/scheduler_metrics_mixin.py:214",
                P + "Prefill batch, #new-seq: 1, #new-token: 2048, #cached-token: 0, "
                "token usage: 0.06, #running-req: 7, #queue-req: 0, input throughput "
                "(token/s): 9406.12, cuda graph: False", ("input_throughput", "cuda_graph")),
        Variant("prefill_batch:throughput", between("0.5.9", "0.5.10"),
                "Prefill batch, ..., #queue-req: .., input throughput (token/s): .. (no "
                "#pending-token, graph flag cut)", "sglang-log-lines.md 7.1",
                P + "Prefill batch, #new-seq: 1, #new-token: 2048, #cached-token: 0, "
                "token usage: 0.06, #running-req: 7, #queue-req: 0, input throughput "
                "(token/s): 9406.12", ("input_throughput",)),
        Variant("prefill_batch:v0.5.10", between("0.5.10", "0.5.10"),
                "Prefill batch, ..., #queue-req: .., cuda graph: B, input throughput "
                "(token/s): ..", "0.5.10 observability/scheduler_metrics_mixin.py:389",
                P + "Prefill batch, #new-seq: 1, #new-token: 512, #cached-token: 0, "
                "token usage: 0.10, #running-req: 3, #queue-req: 0, cuda graph: True, "
                "input throughput (token/s): 1200.50", ("input_throughput", "cuda_graph")),
        Variant("prefill_batch:v0.5.11", since("0.5.11"),
                "Prefill batch, ..., #queue-req: .., #pending-token: .., [...]graph: B, "
                "input throughput (token/s): ..",
                "0.5.11 observability/scheduler_metrics_mixin.py:365, 0.5.20 "
                "managers/scheduler_components/metrics_reporter.py:678",
                P + "Prefill batch, #new-seq: 1, #new-token: 896, #cached-token: 0, "
                "token usage: 0.31, #running-req: 45, #queue-req: 81, #pending-token: 70187, "
                "npu graph: False, input throughput (token/s): 12.50",
                ("pending_token", "cuda_graph", "input_throughput")),
        Variant("prefill_batch:v0.5.21", since("0.5.21"),
                "... #pending-token: .., #replay-token: .., ...",
                "sglang-log-lines.md 7.1 (0.5.21+ metrics_reporter.py)",
                P + "Prefill batch, #new-seq: 1, #new-token: 1, #cached-token: 0, token usage: "
                "0.31, #running-req: 4, #queue-req: 1, #pending-token: 7, #replay-token: 3, "
                "#bootstrap-req: 1, #inflight-req: 2, cuda graph: True, input throughput "
                "(token/s): 1.00, est. prefill TFLOPS/s (per GPU): 3.25",
                ("replay_token", "inflight_req", "prefill_tflops")),
    )),
    Format("decode_batch", ("Decode batch", "#running-req: "), _cast(runtime.parse_decode_any), (
        Variant("decode_batch:bare", None,
                "#running-req: .., #token: .., token usage: .., gen throughput (token/s): .., "
                "#queue-req: .. (0.1.x, no head)",
                "sglang 0.1.16 managers/router/model_rpc.py:245-249 (before the reference's "
                "oldest release)",
                "#running-req: 3, #token: 300, token usage: 0.01, gen throughput (token/s): "
                "50.00, #queue-req: 0", ("running_req", "token", "gen_throughput")),
        Variant("decode_batch:bare_no_gen", None,
                "#running-req: .., #token: .., token usage: .., #queue-req: .. (0.1.14, no "
                "head, no throughput)",
                "sglang 0.1.14 managers/router/model_rpc.py:226-231 (0.1.16 adds the "
                "throughput, :245-249)",
                "#running-req: 3, #token: 300, token usage: 0.01, #queue-req: 0",
                ("running_req", "token", "queue_req")),
        Variant("decode_batch:v0.2", until("0.4.6"),
                "Decode batch. #running-req: .., #token: .., token usage: .., gen throughput "
                "(token/s): .., #queue-req: .. (no graph, no trailing \", \")",
                "0.4.6 managers/scheduler.py:1044 (sglang-log-lines.md 7.2 0.2.15-0.4.3, "
                "0.4.6)", P + "Decode batch. #running-req: 8, #token: 62531, token usage: 0.12, "
                "gen throughput (token/s): 186.64, #queue-req: 0",
                ("running_req", "token", "token_usage", "gen_throughput", "queue_req"),
                weak=True),
        Variant("decode_batch:v0.4.4", between("0.4.4", "0.4.5"),
                "Decode batch. ... gen throughput (token/s): .., [largest-len: .., ]"
                "#queue-req: .., ", "sglang-log-lines.md 7.2 (0.4.4, 0.4.5 rows)",
                P + "Decode batch. #running-req: 509, #token: 180776, token usage: 0.43, "
                "gen throughput (token/s): 7897.87, largest-len: 0, #queue-req: 0, ",
                ("largest_len", "queue_req")),
        Variant("decode_batch:no_graph", until("0.4.6"),
                "Decode batch. ... gen throughput (token/s): .. (no graph column; cut)",
                "sglang-log-lines.md 7.2",
                P + "Decode batch. #running-req: 8, #token: 62531, token usage: 0.12, "
                "gen throughput (token/s): 186.64", ("running_req", "token_usage")),
        Variant("decode_batch:period", until("0.5.3"),
                "Decode batch. #running-req: .. (cut before the graph column)",
                "sglang-log-lines.md 7.2",
                P + "Decode batch. #running-req: 11, #token: 14082, token usage: 0.0",
                ("running_req", "token"), weak=True),
        Variant("decode_batch:v0.4.7", between("0.4.7", "0.4.9"),
                "Decode batch. ..., cuda graph: B, gen throughput (token/s): .., #queue-req: ..",
                "0.4.9 managers/scheduler.py:1361",
                P + "Decode batch. #running-req: 4, #token: 9071, token usage: 0.01, "
                "cuda graph: True, gen throughput (token/s): 12.00, #queue-req: 0",
                ("cuda_graph", "token"), weak=True),
        Variant("decode_batch:period_graph", between("0.4.7", "0.5.3"),
                "Decode batch. ..., cuda graph: B, ... (cut)", "sglang-log-lines.md 7.2",
                "2025-09-13 09:09:15 TP0] Decode batch. #running-req: 4, #token: 9071, "
                "token usage: 0.01, cuda graph: True, gen throughput (to",
                ("running_req", "cuda_graph")),
        Variant("decode_batch:v0.4.10", between("0.4.10", "0.5.3"),
                "Decode batch. #running-req: .., <usage>, ..., cuda graph: B, gen throughput "
                "(token/s): .., #queue-req: .., ",
                "0.4.10 managers/scheduler_metrics_mixin.py:170, 0.5.3 :215",
                P + "Decode batch. #running-req: 4, #full token: 100, full token usage: 0.10, "
                "#swa token: 50, swa token usage: 0.05, cuda graph: True, "
                "gen throughput (token/s): 12.00, #queue-req: 0, ",
                ("full_token", "swa_token", "swa_token_usage")),
        Variant("decode_batch:v0.5.4", between("0.5.4", "0.5.8"),
                "Decode batch[ [N]], #running-req: .., ..., #queue-req: .., ",
                "0.5.4 managers/scheduler_metrics_mixin.py:249, 0.5.8 :353",
                "[2025-11-11 04:06:30] Decode batch, #running-req: 28, #token: 22920, "
                "token usage: 0.13, cuda graph: True, gen throughput (token/s): 1086.59, "
                "#queue-req: 0, ", ("running_req", "cuda_graph", "queue_req")),
        Variant("decode_batch:comma", since("0.5.4"),
                "Decode batch, #running-req: .. (cut)", "sglang-log-lines.md 7.2",
                P + "Decode batch, #running-req: 11, #token: 14082, token usage: 0.0",
                ("running_req", "token")),
        Variant("decode_batch:v0.5.9", since("0.5.9"),
                "Decode batch, #running-req: .., ..., #queue-req: ..[, est. ...] (no trailing "
                "\", \")", "0.5.9 managers/scheduler_metrics_mixin.py:366, 0.5.23 "
                "managers/scheduler_components/metrics_reporter.py:963",
                P + "Decode batch, #running-req: 8, #full token: 52311, full token usage: 0.05, "
                "mamba num: 8, mamba usage: 0.02, cuda graph: True, gen throughput (token/s): "
                "812.33, #queue-req: 0", ("full_token", "mamba_num", "mamba_usage"), weak=True),
    )),
    Format("retraction", ("Decode out of memory happened", "KV cache pool is full",
                          "Testing retraction"), _cast(runtime.parse_retraction), (
        Variant("retraction:old", until("0.4.6"),
                "Decode out of memory happened. #retracted_reqs: .., #new_token_ratio: a -> b",
                "0.4.6 managers/scheduler.py:1336",
                P + "Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: "
                "0.8024 -> 0.9085", ("retracted_reqs", "new_token_ratio_after")),
        Variant("retraction:pool_full", between("0.4.7", "0.5.6"),
                "KV cache pool is full. Retract requests. #retracted_reqs: .., "
                "#new_token_ratio: a -> b", "0.4.9 managers/scheduler.py:1688",
                P + "KV cache pool is full. Retract requests. #retracted_reqs: 2, "
                "#new_token_ratio: 0.4000 -> 0.7000", ("retracted_reqs", "new_token_ratio_after")),
        Variant("retraction:pool_full_cut", since("0.4.7"),
                "KV cache pool is full. Retract requests. (cut)", "sglang-log-lines.md 7.3",
                P + "KV cache pool is full. Retract requests. #retracted_reqs: 2",
                ("retracted_reqs",)),
        Variant("retraction:aborted", between("0.5.3", "0.5.4"),
                "... #retracted_reqs: .., #aborted_retracted_reqs: .., #new_token_ratio: ..",
                "0.5.3 managers/scheduler.py:2018, 0.5.4 :1858",
                P + "KV cache pool is full. Retract requests. #retracted_reqs: 2, "
                "#aborted_retracted_reqs: 1, #new_token_ratio: 0.4000 -> 0.7000",
                ("aborted_retracted_reqs",)),
        Variant("retraction:gained", since("0.5.7"),
                "... #retracted_reqs: .., #new_tokens_gained: ..[, #new_token_ratio: ..]",
                "0.5.7 managers/scheduler.py:2131, 0.5.23 :4530",
                P + "KV cache pool is full. Retract requests. #retracted_reqs: 3, "
                "#new_tokens_gained: 5120, #new_token_ratio: 0.4135 -> 0.7000",
                ("new_tokens_gained",)),
        Variant("retraction:mamba", since("0.5.11"),
                "... #new_tokens_gained: .., #mamba_num_gained: .., ...",
                "0.5.11 managers/scheduler.py:2867, 0.5.23 :4532",
                P + "KV cache pool is full. Retract requests. #retracted_reqs: 3, "
                "#new_tokens_gained: 5120, #mamba_num_gained: 2, #new_token_ratio: 0.4135 -> "
                "0.7000", ("mamba_num_gained",)),
        Variant("retraction:test", since("0.5.7"),
                "Testing retraction. #retracted_reqs: .., #new_tokens_gained: ..",
                "0.5.7 managers/scheduler.py:2129, 0.5.23 :4528",
                P + "Testing retraction. #retracted_reqs: 3, #new_tokens_gained: 12",
                ("retracted_reqs",)),
    )),
    Format("input_too_long", ("Input length (", "Request length is longer than the KV",
                              "The input ("),
           _cast(errors.parse_input_too_long), (
        Variant("input_too_long:tokenizer_truncated", None,
                "The input ({n} tokens) is longer than the model's context length ({m} "
                "tokens). Truncating the input.",
                "0.5.23 managers/tokenizer_manager.py:1340 (0.5.5 :656; --allow-auto-truncate)",
                "[2026-03-01 12:00:00] The input (140000 tokens) is longer than the model's "
                "context length (131072 tokens). Truncating the input.",
                ("input_tokens", "max_tokens", "truncated")),
        Variant("input_too_long:tokenizer", None,
                "The input ({n} tokens) is longer than the model's context length ({m} tokens).",
                "0.5.23 managers/tokenizer_manager.py:1348 (0.4.10 :557), a ValueError",
                "ValueError: The input (140000 tokens) is longer than the model's context length "
                "(131072 tokens).", ("input_tokens", "max_tokens")),
        Variant("input_too_long:rejected", EVERY,
                "Input length ({n} tokens) exceeds the maximum allowed length "
                "({max_req_input_len} tokens). Use a shorter input or enable "
                "--allow-auto-truncate.", "0.4.6 managers/utils.py:34, 0.5.23 :283",
                "[2025-03-03 06:49:28 TP5] Input length (160062 tokens) exceeds the maximum "
                "allowed length (59862 tokens). Use a shorter input or enable "
                "--allow-auto-truncate.", ("input_tokens", "max_tokens")),
        Variant("input_too_long:truncated", EVERY,
                "Request length is longer than the KV cache pool size or the max context "
                "length. Truncated. len(req.origin_input_ids)=N, max_req_input_len=M.",
                "0.4.6 managers/utils.py:26, 0.5.23 :275",
                P + "Request length is longer than the KV cache pool size or the max context "
                "length. Truncated. len(req.origin_input_ids)=70000, max_req_input_len=65535.",
                ("input_tokens", "max_tokens", "truncated")),
    ), infixes=("length",)),
    Format("context_override", ("Warning: User-specified context_length",),
           _cast(accuracy.parse_context_override), (
        Variant("context_override:allowed", None,
                "Warning: User-specified context_length ({n}) is greater than the derived "
                "context_length ({derived}). This may lead to incorrect model outputs or CUDA "
                "errors. ...", "0.5.23 configs/model_config.py:1299 (logger.warning when "
                "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN is set, :1303); 0.4.10 :165 the same "
                "without the note (the env var on by default up to 0.4.10)",
                P + "Warning: User-specified context_length (524288) is greater than the "
                "derived context_length (262144). This may lead to incorrect model outputs or "
                "CUDA errors. Note that the derived context_length may differ from "
                "max_position_embeddings in the model's config.",
                ("context_length", "derived", "allowed")),
        Variant("context_override:refused", None,
                "ValueError: Warning: User-specified context_length ... To allow overriding "
                "this maximum, set the env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1",
                "0.5.23 configs/model_config.py:1314; 0.4.10 :171 without the leading "
                "'Warning: '",
                "ValueError: Warning: User-specified context_length (524288) is greater than "
                "the derived context_length (262144). This may lead to incorrect model outputs "
                "or CUDA errors. Note that the derived context_length may differ from "
                "max_position_embeddings in the model's config. To allow overriding this "
                "maximum, set the env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1",
                ("context_length", "derived", "allowed")),
    ), infixes=("derived context_length",)),
    Format("chat_template", (
        "Using default HuggingFace chat template", "No chat template found, defaulting",
        "Loading chat template from argument", "Inferred chat template from model path",
        "Using Python chat template"), _cast(accuracy.parse_chat_template), (
        Variant("chat_template:model", None,
                "Using default HuggingFace chat template with detected content format: {fmt}",
                "0.5.23 parser/template_manager.py:202 (in 0.4.10-0.5.23; dates nothing)",
                "[2026-11-24 09:14:08] Using default HuggingFace chat template with detected "
                "content format: openai", ("origin",)),
        Variant("chat_template:none", None,
                "No chat template found, defaulting to 'string' content format",
                "0.5.23 parser/template_manager.py:207",
                "[2026-11-24 09:14:08] No chat template found, defaulting to 'string' content "
                "format", ("origin",)),
        Variant("chat_template:argument", None, "Loading chat template from argument: {arg}",
                "0.5.23 parser/template_manager.py:232",
                "[2026-11-24 09:14:08] Loading chat template from argument: "
                "/templates/tool_chat.jinja", ("origin", "name")),
        Variant("chat_template:builtin", None, "Inferred chat template from model path: {name}",
                "0.5.23 parser/template_manager.py:263",
                "[2026-11-24 09:14:08] Inferred chat template from model path: llama-3-instruct",
                ("origin", "name")),
        Variant("chat_template:python", None,
                "Using Python chat template '{name}' in place of the Jinja chat template, "
                "content format: {fmt}", "0.5.23 parser/template_manager.py:320",
                "[2026-11-24 09:14:08] Using Python chat template 'deepseek_v4' in place of the "
                "Jinja chat template, content format: openai", ("origin", "name")),
    )),
    Format("template_features", ("Auto-detected template features: ",),
           _cast(accuracy.parse_template_features), (
        Variant("template_features:detected", None,
                "Auto-detected template features: [reasoning_config=.., ][reasoning_parser=.., ]"
                "[tool_call_parser=..]",
                "0.5.23 parser/template_manager.py:226 (0.5.13+; 0.5.12 has none)",
                "[2026-11-24 09:14:08] Auto-detected template features: "
                "reasoning_parser=qwen3, tool_call_parser=qwen3_coder",
                ("reasoning_parser", "tool_call_parser")),
    )),
    Format("generation_defaults", ("Using default chat sampling params from model",),
           _cast(accuracy.parse_generation_defaults), (
        Variant("generation_defaults:model", None,
                "Using default chat sampling params from model generation config: {params}",
                "0.5.23 entrypoints/openai/serving_chat.py:424 (0.5.4+; 0.5.2 has none)",
                "[2026-02-04 11:30:31] Using default chat sampling params from model generation "
                "config: {'repetition_penalty': 1.1, 'temperature': 0.7, 'top_k': 20, "
                "'top_p': 0.8}", ("params",)),
    )),
    Format("online_quant", ("Online ",), _cast(accuracy.parse_online_quant), (
        Variant("online_quant:report", None,
                "Online {quantization} quantization: quantized {n} layers of types: {types}",
                "0.5.23 model_executor/model_runner_components/load_model_utils.py:171 (0.5.13+)",
                P + "Online fp8 quantization: quantized 448 layers of types: "
                "{'QKVParallelLinear', 'RowParallelLinear'}", ("method", "layers")),
    )),
    Format("process_exception", (
        "Scheduler hit an exception", "TpModelWorkerClient hit an exception",
        "DataParallelController hit an exception", "TokenizerManager hit an exception",
        "DetokenizerManager hit an exception", "MultiTokenizerRouter hit an exception",
        "MultiDetokenizerRouter hit an exception"), _cast(errors.parse_exception), (
        Variant("process_exception:hit", EVERY,
                "{Process} hit an exception: {traceback}",
                "0.4.6 managers/scheduler.py:2040, 0.5.23 :6372 (and the other processes)",
                "[2025-10-12 21:14:09] Scheduler hit an exception: Traceback (most recent "
                "call last):", ("process",)),
    ), infixes=(" hit an exception",)),
    Format("pool_leak", ("KV cache pool leak detected", "token_to_kv_pool_allocator memory",
                         "req_to_token_pool memory"), _cast(errors.parse_leak), (
        Variant("pool_leak:old", None, "KV cache pool leak detected!",
                "sglang 0.1.x router/model_rpc.py (corpus sglang-issue-105)",
                "KV cache pool leak detected!", ("pool",)),
        Variant("pool_leak:memory_leak", EVERY,
                "{pool} memory leak detected! {token_msg}",
                "0.4.6 managers/scheduler.py:1093, 0.5.14+ "
                "managers/scheduler_components/invariant_checker.py _report_leak (0.5.23 :453)",
                P + "token_to_kv_pool_allocator memory leak detected! available_size=1000, "
                "protected_size=0, self.max_total_num_tokens=1024",
                ("pool", "available_tokens", "total_tokens")),
        Variant("pool_leak:busy_check", since("0.5.4"),
                "Mem Leak Detected! total_tokens=.. vs self.max_total_num_tokens=.. | "
                "{Full|SWA} Pool Mem Leak Detected! {msg}",
                "0.5.4 managers/scheduler_runtime_checker_mixin.py:119, 0.5.23 "
                "managers/scheduler_components/invariant_checker.py:344",
                "AssertionError: Full Pool Mem Leak Detected! [full] total=1000, "
                "available=900, evictable=50, protected=0", ("pool", "total_tokens")),
    ), infixes=("etected!",)),
    Format("oom", (
        "Prefill out of memory", "Decode out of memory. Try", "Out of memory",
        "Capture cuda graph failed", "Not enough memory", "Loaded weights leave no GPU",
        "Not enough GPU memory for hybrid", "Memory pool size is too small"),
        _cast(errors.parse_oom), (
        Variant("oom:prefill", EVERY, "Prefill out of memory. Try to lower your batch size.",
                "0.4.6 managers/schedule_batch.py:891, 0.5.23 mem_cache/allocation.py:239",
                P + "Prefill out of memory. Try to lower your batch size.", ("reason",)),
        Variant("oom:decode", EVERY, "Decode out of memory. Try to lower your batch size.",
                "sglang-log-lines.md 7.4 (0.4.4+)",
                P + "Decode out of memory. Try to lower your batch size.", ("reason",)),
        Variant("oom:alloc", EVERY, "Out of memory. Try to lower your batch size. | "
                "alloc_req_slots runs out of memory",
                "0.5.4 mem_cache/common.py:213, 0.5.23 mem_cache/allocation.py:163",
                P + "Out of memory. Try to lower your batch size.", ("reason",)),
        Variant("oom:after_retract", since("0.5.7"),
                "Out of memory even after retracting all other requests in the decode batch.",
                "0.5.7 managers/schedule_batch.py:1796, 0.5.23 :3516",
                P + "Out of memory even after retracting all other requests in the decode "
                "batch.", ("reason",)),
        Variant("oom:cuda_graph", EVERY,
                "Capture cuda graph failed: {e} (an OOM when e is one; errors.py)",
                "0.4.6 model_executor/cuda_graph_runner.py:279, 0.5.23 "
                "model_executor/runner/decode_cuda_graph_runner.py:603",
                "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate "
                "1 MiB.", ("reason",)),
        Variant("oom:not_enough_memory", EVERY,
                "Not enough memory. Please try to increase --mem-fraction-static.",
                "0.4.6 model_executor/model_runner.py:790",
                P + "Not enough memory. Please try to increase --mem-fraction-static.",
                ("reason",)),
        Variant("oom:not_enough_memory_self", between("0.5.3", "0.5.9"),
                "... Current value: {self.server_args.mem_fraction_static=}",
                "0.5.3 model_executor/model_runner.py:1498, 0.5.9 "
                "model_runner_kv_cache_mixin.py:418",
                P + "Not enough memory. Please try to increase --mem-fraction-static. Current "
                "value: self.server_args.mem_fraction_static=0.8", ("reason",)),
        Variant("oom:not_enough_memory_value", since("0.5.10"),
                "... Current value: mem_fraction_static={m}",
                "0.5.10 model_executor/model_runner_kv_cache_mixin.py:59, 0.5.23 "
                "model_executor/pool_configurator.py:98",
                P + "Not enough memory. Please try to increase --mem-fraction-static. Current "
                "value: mem_fraction_static=0.8", ("reason",)),
        Variant("oom:weights_leave_no_kv", since("0.5.14"),
                "Loaded weights leave no GPU memory for the KV cache under "
                "--mem-fraction-static={m}. ...",
                "0.5.14 model_executor/model_runner_kv_cache_mixin.py:111, 0.5.23 "
                "mem_cache/kv_cache_configurator.py:3051",
                "ValueError: Loaded weights leave no GPU memory for the KV cache under "
                "--mem-fraction-static=0.88. Raise --mem-fraction-static above 0.911",
                ("reason",)),
        Variant("oom:mamba_state", since("0.5.13"),
                "Not enough GPU memory for hybrid (mamba/linear-attention) state cache. ...",
                "0.5.13 model_executor/model_runner_kv_cache_mixin.py:169, 0.5.23 "
                "mem_cache/kv_cache_configurator.py:3394",
                P + "Not enough GPU memory for hybrid (mamba/linear-attention) state cache. "
                "Computed max_mamba_cache_size=0", ("reason",)),
        Variant("oom:pool_too_small", EVERY, "Memory pool size is too small",
                "0.4.6 managers/tp_worker.py:127, 0.5.23 :425",
                "AssertionError: Memory pool size is too small", ("reason",)),
        Variant("oom:torch", EVERY, "torch.OutOfMemoryError: CUDA out of memory. ...",
                "torch's allocator (any engine)",
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 26.00 MiB.",
                ("reason",)),
    ), infixes=("emory", "graph failed")),
)

BY_KIND: dict[str, Format] = {f.kind: f for f in CATALOG}
VARIANTS: dict[str, Variant] = {v.id: v for f in CATALOG for v in f.variants}


def dating() -> dict[str, tuple[tuple[Span, ...], str, bool]]:
    """variant id -> (release spans, why, weak) for every variant that dates a log."""
    return {v.id: (v.releases, v.text, v.weak) for v in VARIANTS.values()
            if v.releases is not None and v.dates}
