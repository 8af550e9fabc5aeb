"""Format features of vLLM lines that date the release a log came from.

The fold asks for the hints of the first event of each kind in a run and keeps them as plain
strings "<kind>:<feature>"; `kvtui.engines.vllm.version` maps each to the releases that print it.
A line format's hint is the id of its variant in vLLM's line catalogue (`parsers.vllm.catalog`),
which quotes the format with its releases and the release and file it was read from; the
heads' and process names' hints are dated in the version module itself.
"""

from __future__ import annotations

from parsers.envelope import payload_start
from parsers.event import Event
from parsers.prefix import UNTIMED, vllm_head
from parsers.vllm.startup import assignment_wording


def hints(ev: Event, text: str) -> list[str]:
    """The dating hints one event (and its raw line) shows."""
    h: list[str] = []
    k = ev.kind
    if ev.ts is not None and len(ev.ts) == 14:
        # vLLM's own `%m-%d %H:%M:%S` head (a custom logging config prints other stamps):
        # `[file.py:N]` (0.8+) or `file.py:N]` (0.5-0.7) right after the time.
        at = text.find(ev.ts)
        after = text[at + len(ev.ts) + 1: at + len(ev.ts) + 2] if at >= 0 else ""
        h.append("head:bracket" if after == "[" else "head:bare")
    elif ev.ts is None:
        head_ = vllm_head(text) or vllm_head(text[payload_start(text):])  # behind an envelope
        if head_ is not None and head_[1] == UNTIMED:
            h.append("head:bracket")  # `LEVEL [file.py:N]` with the time cut out
    # The process name heads the server's own line, after any client envelope (a saved
    # `kubectl logs --timestamps` puts 31 characters before it).
    start = payload_start(text)
    head = text[start : start + 40]
    if "(EngineCore_DP" in head:
        h.append("proc:engine_core_dp")
    elif "(EngineCore_" in head:
        h.append("proc:engine_core_n")
    elif "(Worker_" in head or "(Worker pid=" in head:
        h.append("proc:worker")
    elif "(VllmWorker rank=" in head:
        h.append("proc:vllm_worker_rank")
    elif "(VllmWorker " in head:
        h.append("proc:vllm_worker_named")
    if k == "engine_version" or (k == "server_args" and ev.get("version")):
        h.append(f"version:{ev.get('version')}")
    if k == "server_args" and ev.get("form") == "config":
        if "a V1 LLM engine" in text:
            h.append("engine:v1")
        else:
            h.append("engine:v0")
            h.append("engine:v0_named" if "a V0 LLM engine" in text else "engine:v0_unnamed")
    if k == "server_args":
        h.append(f"server_args:{ev.get('form')}")
    elif k == "engine_version":
        pass
    elif k == "capacity":
        if ev.get("gpu_blocks") is not None and " blocks: " in text:
            if ev.get("cpu_blocks") is not None:
                h.append("capacity:cpu_blocks")  # V0's pool line
                # "# GPU blocks" (<= 0.6) or the platform's lower-case device_name (0.7-0.10)
                word = text.rsplit("# ", 2)[-2].split(" ", 1)[0]  # "# <word> blocks: N, # CPU"
                if word in ("GPU", "HPU", "TPU"):
                    h.append("capacity:gpu_word")
                elif word.islower():
                    h.append("capacity:device_name")
            elif "# GPU blocks:" in text:
                h.append("capacity:gpu_blocks")
        elif ev.get("max_total_num_tokens") is not None:
            h.append("capacity:merged" if ev.get("max_concurrency") is not None
                     else "capacity:tokens")
    elif k == "kv_pool" and "Available KV cache memory: " in text:
        # format_gib drops trailing zeros (0.14+); "%.2f" keeps two digits (0.9.2-0.13).
        gib = text.rsplit("memory: ", 1)[-1].split(" ", 1)[0]
        if "." in gib and len(gib.split(".")[1]) != 2:
            h.append("avail:short")
        elif "." in gib:
            h.append("avail:two_digits")
    elif k == "fp8_scales_missing" and ev.get("form") == "unit_scale":
        h.append("scales:verify" if "If this is unintended" in text else "scales:may_cause")
    elif k == "kv_dtype":
        h.append(f"kv_dtype:{ev.get('origin')}")
    elif k == "load_weight_end":
        if "Loading model weights took" in text:
            # the XPU runner's (xpu_model_runner.py): "GB" to 0.8.0, "GiB" from 0.8.5
            if " GiB" in text:
                h.append("weights:xpu_gib")
            else:
                h.append("weights:xpu_gb" if "xpu_model_runner" in text else "weights:old")
        elif "GiB memory and" in text:
            h.append("weights:memory")
        else:
            h.append("weights:gib")
    elif k == "memory_profile" and "default since v0.21" in text:
        h.append("memory:cg_default")
    elif k == "memory_profile" and "will be enabled by default" in text:
        h.append("memory:cg_soon")
    elif k == "memory_profile" and ev.get("extensible") is not None:
        h.append("memory:extensible")
    elif k == "parallel_rank":
        # the group list an upstream release prints (a plugin's own list dates nothing)
        wording = assignment_wording(text)
        if wording is not None:
            h.append(f"assign:{wording}")
        if ", EP rank N/A" in text:
            h.append("assign:ep_na")
    elif k == "decode_batch":
        h.append("stats:engine" if "Engine " in text else
                 ("stats:v0" if "Swapped:" in text else "stats:v1"))
    return h
