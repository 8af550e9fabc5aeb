"""Format features of SGLang lines that date the release a log came from.

Almost every line format changed at some release (sglang-log-lines.md sections 1-7). The fold
asks for the hints of the first event of each kind in a run and keeps them as plain strings
"<kind>:<feature>"; `kvtui.engines.sglang.version` maps each string to the releases that print it.
"""

from __future__ import annotations

from parsers.event import Event


def hints(ev: Event, text: str) -> list[str]:
    """The dating hints one event (and its raw line) shows."""
    h: list[str] = []
    k = ev.kind
    if ev.ts is not None:
        h.append("ts:ms" if "." in ev.ts else ("ts:time_only" if "-" not in ev.ts
                                               else "ts:date"))
    if k == "server_args":
        h.append(f"server_args:{ev.get('form') or 'repr'}")
        if "attn_dp_size" in text:
            h.append("server_args:attn_dp_size")
        if "page_size" in text:
            h.append("server_args:page_size")
    elif k == "kv_dtype":
        h.append(f"kv_dtype:{ev.get('origin') or 'resolved'}")
    elif k == "kv_pool":
        if ev.get("dtype"):
            h.append("kv_pool:dtype")
        if ev.get("label"):
            h.append("kv_pool:label")
        if ev.get("tokens") is None:
            h.append("kv_pool:no_tokens")
    elif k == "load_weight_end":
        if ev.get("elapsed_s") is not None:
            h.append("load_weight_end:elapsed")
        if ev.get("dtype") is None:
            h.append("load_weight_end:no_dtype")
        if ev.get("usage_gib") is None:
            h.append("load_weight_end:no_usage")
    elif k == "capacity":
        h.append("capacity:avail" if ev.get("available_gpu_mem_gib") is not None
                 else "capacity:no_avail")
        if ev.get("chunked_prefill_size") is None:
            h.append("capacity:no_chunked")
    elif k == "decode_batch":
        h.append("decode:comma" if "Decode batch," in text or "Decode batch [" in text
                 else "decode:period")
        if ev.get("cuda_graph") is not None:
            h.append("decode:cuda_graph")
    elif k == "prefill_batch":
        h.append("prefill:comma" if "Prefill batch," in text else "prefill:period")
    elif k == "retraction":
        if "#new_tokens_gained" in text:
            h.append("retraction:gained")
        elif "Decode out of memory happened" in text:
            h.append("retraction:old")
        else:
            h.append("retraction:pool_full")
    elif k == "mamba_pool":
        h.append("mamba_pool:slots" if ev.get("slots") is not None else "mamba_pool:no_slots")
    return h
