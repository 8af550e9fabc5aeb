"""Startup lines: weight load, KV dtype, FP8 scales, pool sizes, graph capture, capacity.

Each pattern makes every column after the head optional because real pastes are cut
mid-line; a cut line still yields the columns it shows. All "GB" are GiB (SGLang divides by
2^30), hence the `_gib` names.
"""

from __future__ import annotations

import math
from typing import Any

import regex

_NUM = r"-?\d+(?:\.\d+)?"


def _f(s: str | None) -> float | None:
    """A float, or None for an absent or non-finite value (a 400-digit number is inf)."""
    if s is None:
        return None
    x = float(s)
    return x if math.isfinite(x) else None


def _i(s: str | None) -> int | None:
    return None if s is None else int(s)


_LOAD_BEGIN = regex.compile(rf"Load weight begin\.(?: avail mem=({_NUM}) ?GB)?")
_LOAD_END = regex.compile(
    rf"Load weight end\.(?: elapsed=({_NUM}) s,)?(?: type=(\w+),)?(?: dtype=([\w.]+),)?"
    rf"(?: (quant=[^,]*(?:, (?!avail mem=)[^,]*)*),)?(?: avail mem=({_NUM}) ?GB)?"
    rf"(?:, mem usage=({_NUM}) ?GB)?"
)
_LOAD_END_OVERLAP = regex.compile(
    rf"Load weight end\. Committed real weights after CUDA graph capture in ({_NUM}) s"
)


def parse_load_weight(msg: str) -> tuple[str, dict[str, Any]] | None:
    if msg.startswith("Load weight begin."):
        m = _LOAD_BEGIN.match(msg)
        return "load_weight_begin", {"avail_gib": _f(m.group(1)) if m else None}
    if not msg.startswith("Load weight end."):
        return None
    o = _LOAD_END_OVERLAP.match(msg)
    if o is not None:
        return "load_weight_end", {
            "model_class": None, "dtype": None, "quant": None, "avail_gib": None,
            "usage_gib": None, "elapsed_s": _f(o.group(1)), "overlap": True,
        }
    m = _LOAD_END.match(msg)
    assert m is not None  # every group after the literal head is optional
    elapsed, model_class, dtype, quant, avail, usage = m.groups()
    return "load_weight_end", {
        "model_class": model_class, "dtype": dtype, "quant": quant,
        "avail_gib": _f(avail), "usage_gib": _f(usage), "elapsed_s": _f(elapsed),
    }


_KV_USING = regex.compile(r"Using KV cache dtype: ([\w.]+)")
_KV_SETTING = regex.compile(r"Setting KV cache dtype to ([\w.]+?)\.?(?: for (.+?))?\.?\s*$")
_KV_MUSE = regex.compile(r"Use (\w+) KV cache by default for (.+?)\.?\s*$")


def parse_kv_dtype(msg: str) -> dict[str, Any] | None:
    m = _KV_USING.match(msg)
    if m is not None:
        return {"dtype": m.group(1), "origin": "resolved"}
    m = _KV_SETTING.match(msg) or _KV_MUSE.match(msg)
    if m is not None:
        return {"dtype": m.group(1), "origin": "override", "reason": m.group(2)}
    return None


_SCALES_TP = regex.compile(r"in TP rank (\d+)")


def parse_fp8_scales(msg: str) -> tuple[str, dict[str, Any]] | None:
    if msg.startswith("Using FP8 KV cache but no scaling factors provided"):
        form = "long" if "This may lead to less accurate results" in msg else "short"
        return "fp8_scales_missing", {"form": form}
    if msg.startswith("Defaulting to KV cache scaling factors = 1.0"):
        m = _SCALES_TP.search(msg)
        tp_rank = _i(m.group(1)) if m is not None else None
        return "fp8_scales_missing", {"form": "load_error", "tp_rank": tp_rank}
    if msg.startswith("Loaded KV cache scaling factors from "):
        path = msg[len("Loaded KV cache scaling factors from ") :].strip()
        return "fp8_scales_loaded", {"path": path or None}
    return None


_KV_POOL = regex.compile(
    r"(?:(?P<label>\S.*?) )?KV Cache (?P<state>is allocated|VA upper bound)\."
    r"(?: dtype: (?P<dtype>[\w.]+),?)?"
    r"(?: #tokens: (?P<tokens>\d+),?)?"
    rf"(?: K size: (?P<k>{_NUM}) ?GB,?)?(?: V size: (?P<v>{_NUM}) ?GB)?"
    rf"(?: KV size: (?P<kv>{_NUM}) ?GB)?"
)
_POST_CAPTURE_POOL = regex.compile(
    rf"Post-capture KV sizing: KV cache allocated\.(?: dtype: ([\w.]+),)?(?: #tokens: (\d+),)?"
    rf"(?: KV size: ({_NUM}) ?GB,)?(?: avail mem=({_NUM}) ?GB)?"
)


def parse_kv_pool(msg: str) -> dict[str, Any] | None:
    m = _KV_POOL.match(msg)
    if m is None:
        p = _POST_CAPTURE_POOL.match(msg)
        if p is None:
            return None
        dtype, tokens, kv, avail = p.groups()
        return {
            "label": None, "dtype": dtype, "tokens": _i(tokens), "k_gib": None,
            "v_gib": None, "kv_gib": _f(kv), "post_capture": True, "avail_gib": _f(avail),
        }
    return {
        "label": m.group("label"), "dtype": m.group("dtype"), "tokens": _i(m.group("tokens")),
        "k_gib": _f(m.group("k")), "v_gib": _f(m.group("v")), "kv_gib": _f(m.group("kv")),
        "post_capture": m.group("state") == "VA upper bound",
    }


_MAMBA = regex.compile(
    r"Mamba Cache is allocated\.(?: max_mamba_cache_size: (\d+),)?"
    rf"(?: conv_state size: ({_NUM}) ?GB,?)?(?: ssm_state size: ({_NUM}) ?GB)?"
)
_MAMBA_ISS = regex.compile(rf"intermediate_ssm_state_cache size: ({_NUM}) ?GB")
_MAMBA_ICW = regex.compile(rf"intermediate_conv_window_cache size: ({_NUM}) ?GB")


def parse_mamba(msg: str) -> dict[str, Any] | None:
    m = _MAMBA.match(msg)
    if m is None:
        return None
    fields: dict[str, Any] = {
        "slots": _i(m.group(1)), "conv_gib": _f(m.group(2)), "ssm_gib": _f(m.group(3)),
    }
    if "intermediate_" in msg:
        iss = _MAMBA_ISS.search(msg)
        icw = _MAMBA_ICW.search(msg)
        fields["intermediate_ssm_gib"] = _f(iss.group(1)) if iss else None
        fields["intermediate_conv_gib"] = _f(icw.group(1)) if icw else None
    return fields


_SWA = regex.compile(
    r"(?:Use [Ss]liding window memory pool(?: \(all SWA\))?\.|Post-capture KV sizing:) "
    r"(?:full_layer_tokens=(\d+),? ?)?(?:swa_layer_tokens=(\d+))?"
)


def parse_swa(msg: str) -> dict[str, Any] | None:
    m = _SWA.match(msg)
    if m is None or (m.group(1) is None and m.group(2) is None):
        return None
    return {"full_tokens": _i(m.group(1)), "swa_tokens": _i(m.group(2))}


_POOL_END = regex.compile(rf"Memory pool end\.(?: avail mem=({_NUM}) ?GB)?")


def parse_pool_end(msg: str) -> dict[str, Any] | None:
    m = _POOL_END.match(msg)
    return None if m is None else {"avail_gib": _f(m.group(1))}


# Old: `Capture cuda graph end. Time elapsed: X s. mem usage=Y GB. avail mem=Z GB.`
# New: `Capture target decode CUDA graph end. [bs=[..], ]elapsed=X s, mem usage=.., avail mem=..`
_GRAPH_END = regex.compile(
    r"Capture (?P<graph>.{1,80}?) end\.(?: bs=\[[^\]]*\],?)?"
    rf"(?: (?:Time elapsed: |elapsed=)(?P<t>{_NUM}) s[.,]?)?"
    rf"(?: mem usage=(?P<u>{_NUM}) ?GB[.,]?)?(?: avail mem=(?P<a>{_NUM}) ?GB)?"
)


def parse_graph_end(msg: str) -> dict[str, Any] | None:
    m = _GRAPH_END.match(msg)
    if m is None or " graph" not in m.group("graph").lower():
        return None
    return {
        "elapsed_s": _f(m.group("t")), "usage_gib": _f(m.group("u")),
        "avail_gib": _f(m.group("a")), "graph": m.group("graph"),
    }


_CAP_FIELDS = regex.compile(
    rf"(max_total_num_tokens|chunked_prefill_size|max_prefill_tokens|max_running_requests|"
    rf"context_len|available_gpu_mem|available_cpu_mem)=({_NUM}|None)(?= ?GB|,|\)|\s|$)"
)
_CAP_NAMES = {
    "max_total_num_tokens": "max_total_num_tokens",
    "chunked_prefill_size": "chunked_prefill_size",
    "max_prefill_tokens": "max_prefill_tokens",
    "max_running_requests": "max_running_requests",
    "context_len": "context_len",
    "available_gpu_mem": "available_gpu_mem_gib",
    "available_cpu_mem": "available_cpu_mem_gib",
}


def parse_capacity(msg: str) -> dict[str, Any] | None:
    fields: dict[str, Any] = {
        "max_total_num_tokens": None, "chunked_prefill_size": None, "max_prefill_tokens": None,
        "max_running_requests": None, "context_len": None, "available_gpu_mem_gib": None,
    }
    for m in _CAP_FIELDS.finditer(msg):
        name = _CAP_NAMES[m.group(1)]
        raw = m.group(2)
        if raw == "None":
            value: Any = None
        elif name.endswith("_gib"):
            value = _f(raw)
        else:
            try:
                value = int(raw)
            except ValueError:
                value = None
        fields.setdefault(name, None)
        if fields[name] is None:
            fields[name] = value
    if fields["max_total_num_tokens"] is None:
        return None
    return fields


_CAPPED = regex.compile(
    r"max_total_tokens=(-?\d+) is larger than the profiled value (-?\d+)"
)


def parse_capped(msg: str) -> dict[str, Any] | None:
    m = _CAPPED.match(msg)
    if m is None:
        return None
    return {"message": msg.strip(), "requested": int(m.group(1)), "profiled": int(m.group(2))}


_UNBALANCED = regex.compile(
    rf"(?:min_per_gpu_memory|pre_model_load_memory)=({_NUM})(?: ?GB)?, "
    rf"local_gpu_memory=({_NUM})"
)


def parse_unbalanced(msg: str) -> dict[str, Any] | None:
    if not msg.startswith("The memory capacity is unbalanced"):
        return None
    fields: dict[str, Any] = {"message": msg.strip()}
    m = _UNBALANCED.search(msg)
    if m is not None:
        fields["min_gpu_memory_gib"] = _f(m.group(1))
        fields["local_gpu_memory_gib"] = _f(m.group(2))
    return fields
