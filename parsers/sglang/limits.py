"""Lines that limit capacity after the pools are sized: caps, FP4 warnings, SWA and DeepSeek-V4
pool accounting.

These are the lines 0.5.14-0.5.23 print while sizing (the pool configurator and the KV cache
configurator) whose numbers differ from the capacity line's or explain it: concurrency cut by the
Mamba state cache or by the KV pool, the SWA pool's own memory, DeepSeek-V4's budget and
sub-pools. Columns are read by name (`parsers.sglang.fields`); each parser returns
`(fields, variant)` as in `parsers.sglang.startup`.
"""

from __future__ import annotations

from typing import Any

import regex

from parsers.catalogue import Format, Variant
from parsers.kinds import KIND_FIELDS
from parsers.sglang.fields import cols
from parsers.sglang.releases import P, between, since

Parsed = tuple[dict[str, Any], str | None]

# 0.5.17+ mem_cache/kv_cache_configurator.py (0.5.23 :3141):
# "max_running_requests is capped to %d by the mamba state cache (max_mamba_cache_size=%d,
# %d state slots per request). To raise it: ..."
_MAMBA_CAP = regex.compile(
    r"max_running_requests is capped to (-?\d+) by the mamba state cache"
    r"(?: \(max_mamba_cache_size=(\d+)(?:, (\d+) state slots? per request)?)?"
)


def parse_mamba_cap(msg: str) -> Parsed | None:
    m = _MAMBA_CAP.match(msg)
    if m is None:
        return None
    cap, size, slots = m.groups()
    return ({"max_running_requests": int(cap),
             "max_mamba_cache_size": None if size is None else int(size),
             "slots_per_request": None if slots is None else int(slots)}, "mamba_cap:capped")


# 0.5.14+ (0.5.14 model_executor/model_runner_kv_cache_mixin.py:1013, 0.5.23
# mem_cache/kv_cache_configurator.py:3167): "max_running_requests was reduced from the
# requested %d to %d (per dp worker) due to the available KV cache capacity."
_REDUCED = regex.compile(r"max_running_requests was reduced from the requested (-?\d+) to (-?\d+)")


def parse_reduced(msg: str) -> Parsed | None:
    m = _REDUCED.match(msg)
    if m is None:
        return None
    return ({"requested": int(m.group(1)), "max_running_requests": int(m.group(2))},
            "requests_reduced:per_dp_worker")


# 0.5.5-0.5.15 model_runner.py (0.5.5 :1537): "FP4 (E2M1) KV Cache might lead to a accuracy drop!"
# 0.5.16+ mem_cache/kv_cache_dtype.py (0.5.16 :66, 0.5.23 :80): "%s KV Cache might lead to an
# accuracy drop!" with the recipe upper-cased (NVFP4, FP4_MX_BLOCK16).
_ACCURACY = regex.compile(r"(?P<dtype>[\w() ]+?) KV Cache might lead to an? accuracy drop")
_RECIPES = {"FP4 (E2M1)": "fp4_e2m1", "NVFP4": "nvfp4", "FP4_MX_BLOCK16": "fp4_mx_block16"}


def parse_accuracy(msg: str) -> Parsed | None:
    m = _ACCURACY.match(msg)
    if m is None:
        return None
    printed = m.group("dtype")
    dtype = _RECIPES.get(printed, printed.lower())
    return {"dtype": dtype}, ("kv_accuracy_warning:fp4_e2m1" if printed == "FP4 (E2M1)"
                              else "kv_accuracy_warning:recipe")


# mem_cache/swa_memory_pool.py: "SWAKVPool mem usage: {mem_usage} GB, swa size: {size_swa},
# full size: {size}" (0.5.4-0.5.6 an unformatted float, 0.5.7+ `:.2f`; 0.5.18+ "VA upper
# bound" instead of "mem usage" under post-capture sizing).
_SWA_POOL_HEAD = regex.compile(r"SWAKVPool (mem usage|VA upper bound): (-?\d+(?:\.(\d+))?) ?GB")
_SWA_POOL = cols(("swa size", "swa_tokens", "i", True), ("full size", "full_tokens", "i", True))


def parse_swa_pool(msg: str) -> Parsed | None:
    m = _SWA_POOL_HEAD.match(msg)
    if m is None:
        return None
    fields: dict[str, Any] = {"gib": float(m.group(2)), "swa_tokens": None, "full_tokens": None}
    _SWA_POOL.read(msg, fields, start=m.end())
    if m.group(1) == "VA upper bound":
        fields["post_capture"] = True
        return fields, "swa_pool:va"
    decimals = m.group(3) or ""
    return fields, "swa_pool:mem_usage" if len(decimals) == 2 else "swa_pool:raw"


# model_executor/pool_configurator.py DSV4PoolConfigurator (0.5.13+; 0.5.23 :1689):
# "DSV4 memory calculation: [unified=.., unified_fp8=.., dspark_draft_bf16=.., ]
#  bytes_per_full_token=.., available_bytes=.. GB, [c128_state_fixed=.. GB, c2_state_fixed=..,
#  swa_fixed=.., swa_ring_fixed=.., c4_state_fixed=.. GB, ]full_token=.."
_DSV4_MEMORY = cols(
    ("bytes_per_full_token", "bytes_per_full_token", "f"),
    ("available_bytes", "available_gib", "g"), ("full_token", "full_tokens", "i", True),
    ("unified", "unified", "b"), ("unified_fp8", "unified_fp8", "b"),
    ("dspark_draft_bf16", "dspark_draft_bf16", "b"),
    ("c128_state_fixed", "c128_state_gib", "g"), ("c2_state_fixed", "c2_state_gib", "g"),
    ("swa_fixed", "swa_gib", "g"), ("swa_ring_fixed", "swa_ring_gib", "g"),
    ("c4_state_fixed", "c4_state_gib", "g"),
)


def parse_dsv4_memory(msg: str) -> Parsed | None:
    if not msg.startswith(("DSV4 memory calculation:", "DSv4 memory calculation:")):
        return None
    fields: dict[str, Any] = dict.fromkeys(("bytes_per_full_token", "available_gib",
                                            "full_tokens"))
    seen = _DSV4_MEMORY.read(msg, fields, start=24)
    if msg[2] == "v":
        variant: str | None = "dsv4_memory:dev"  # a pre-release spelling (corpus, 2026-05)
    elif "dspark_draft_bf16" in seen or "c2_state_fixed" in seen:
        variant = "dsv4_memory:v0.5.21"
    elif "unified" in seen or "swa_ring_fixed" in seen:
        variant = "dsv4_memory:v0.5.20"
    elif "c128_state_fixed" in seen:
        variant = "dsv4_memory:v0.5.15"
    elif "full_token" in seen:
        variant = "dsv4_memory:v0.5.12"
    else:
        variant = None
    return fields, variant


# mem_cache/deepseek_v4_memory_pool.py (0.5.12 :389; 0.5.23 :1019), space-separated `{name=}`s:
# "Initialize DeepSeekV4TokenToKVPool with max_num_reqs=.. swa_size=.. c4_size=..
#  c4_logical_size=.. c128_size=.. c4_state_pool_size=.. c128_state_pool_size=..
#  [unified=.. unified_fp8=.. (0.5.21+)]"; and model_executor/pool_configurator.py `_to_config`
# (0.5.12 :421; 0.5.23 :1606): "DSV4 pool sizes: full=.., swa=.., c4=.., c128=.., c4_state=..,
# c128_state=..". The c4 and c128 pools hold one compressed entry per 4 and per 128 tokens
# (0.5.12 pool_configurator.py:404-413); the two state pools are ring rows, not tokens.
_DSV4_INIT = cols(
    ("max_num_reqs", "max_num_reqs", "i", True), ("swa_size", "swa_tokens", "i", True),
    ("c4_size", "c4_entries", "i", True), ("c4_logical_size", "c4_logical_entries", "i", True),
    ("c128_size", "c128_entries", "i", True),
    ("c4_state_pool_size", "c4_state_rows", "i", True),
    ("c128_state_pool_size", "c128_state_rows", "i", True),
    ("unified", "unified", "b"), ("unified_fp8", "unified_fp8", "b"),
)
_DSV4_SIZES = cols(
    ("full", "full_tokens", "i", True), ("swa", "swa_tokens", "i", True),
    ("c4", "c4_entries", "i", True), ("c128", "c128_entries", "i", True),
    ("c4_state", "c4_state_rows", "i", True), ("c128_state", "c128_state_rows", "i", True),
)


def parse_dsv4_pool(msg: str) -> Parsed | None:
    fields: dict[str, Any] = dict.fromkeys(KIND_FIELDS["dsv4_pool"])
    if msg.startswith("DSV4 pool sizes:"):
        _DSV4_SIZES.read(msg, fields, start=16, closed=True)
        return fields, "dsv4_pool:sizes"
    if not msg.startswith("Initialize DeepSeekV4TokenToKVPool with"):
        return None
    seen = _DSV4_INIT.read(msg, fields, start=39, closed=True)
    if "unified" in seen:
        return fields, "dsv4_pool:init_unified"
    if "c4_logical_size" in seen:
        return fields, "dsv4_pool:init"
    # No c4_logical_size though c128_size follows where it would stand: a pre-release build.
    return fields, "dsv4_pool:init_dev" if "c128_size" in seen else None


# pool_configurator.py (0.5.21+; 0.5.23 :1480): "DSV4 SWA sizing: mode={mode}, swa_tokens=..,
# swa_full_tokens_ratio=.." or "mode=cap, swa_tokens=.., request_cap+headroom=..,
# prefix_tails=.."; mem_cache/allocator/swa.py (0.5.20+; 0.5.23 :145): "SWA per-request ring
# accounting enabled: ring_size=.., ring_cost_tokens=.., size_swa=.. (paged size_swa=.. bypassed)"
_SWA_SIZING = cols(
    ("swa_tokens", "swa_tokens", "i", True), ("swa_full_tokens_ratio", "swa_full_tokens_ratio",
                                              "f", True),
    ("request_cap+headroom", "request_cap_tokens", "i", True),
    ("prefix_tails", "prefix_tails", "i", True), ("ring_size", "ring_size", "i", True),
    ("ring_cost_tokens", "ring_cost_tokens", "i", True), ("size_swa", "swa_tokens", "i", True),
)
_SWA_MODE = regex.compile(r"mode=(.+?), swa_tokens=")
_PAGED = regex.compile(r"\(paged size_swa=(\d+) bypassed\)")


def parse_swa_sizing(msg: str) -> Parsed | None:
    fields: dict[str, Any] = {"mode": None, "swa_tokens": None}
    if msg.startswith("DSV4 SWA sizing:"):
        m = _SWA_MODE.search(msg, 16)
        if m is not None:
            fields["mode"] = m.group(1)
        _SWA_SIZING.read(msg, fields, start=16)
        return fields, "swa_sizing:dsv4"
    if msg.startswith("SWA per-request ring accounting enabled"):
        fields["mode"] = "ring"
        _SWA_SIZING.read(msg, fields, start=39)
        p = _PAGED.search(msg)
        if p is not None:
            fields["paged_swa_tokens"] = int(p.group(1))
        return fields, "swa_sizing:ring"
    return None


# --- the catalogue: the kinds this module parses, their layouts and releases ----------------------
FORMATS: tuple[Format, ...] = (
    Format("kv_accuracy_warning", ("FP4 (E2M1) KV Cache might", "NVFP4 KV Cache might",
                                   "FP4_MX_BLOCK16 KV Cache might"),
           parse_accuracy, (
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
    Format("swa_pool", ("SWAKVPool ",), parse_swa_pool, (
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
           parse_swa_sizing, (
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
           parse_dsv4_memory, (
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
           parse_dsv4_pool, (
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
    Format("mamba_cap", ("max_running_requests is capped",), parse_mamba_cap, (
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
           parse_reduced, (
        Variant("requests_reduced:per_dp_worker", since("0.5.14"),
                "max_running_requests was reduced from the requested %d to %d (per dp worker) "
                "due to the available KV cache capacity.",
                "0.5.14 model_executor/model_runner_kv_cache_mixin.py:1013, 0.5.23 "
                "mem_cache/kv_cache_configurator.py:3167",
                P + "max_running_requests was reduced from the requested 512 to 96 (per dp "
                "worker) due to the available KV cache capacity.",
                ("requested", "max_running_requests")),
    )),
)
