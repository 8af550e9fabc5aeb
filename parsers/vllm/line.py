"""`parse_line`: one vLLM log line in, one `Event` (or None) out.

The head (`parsers.prefix.vllm_head`: level, `MM-DD HH:MM:SS`, `[file.py:N]`, the process prefix
and whatever envelope is in front) is split off first; dispatch is then on the first four
characters of the message, as in the SGLang grammar, so the bulk of a serving log (uvicorn
access lines, tracebacks, progress bars) costs one `str.find` and a dict lookup. Messages that
can sit anywhere in a line (errors inside traceback text, the banner) are searched for by a
short fallback.

Detection (kvtui.engines.vllm `identifies`) relies on this grammar answering only to vLLM's own
wording: a line without a vLLM head is read only when its message is vLLM's alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from parsers.envelope import dynamo_head, payload_start
from parsers.event import Event
from parsers.prefix import UNTIMED, vllm_head, vllm_process
from parsers.text import CARET, normalize
from parsers.vllm.accuracy import (
    NO_TEMPLATE,
    parse_chat_format,
    parse_chat_template,
    parse_context_override,
    parse_generation_defaults,
    parse_too_long,
)
from parsers.vllm.args import (
    parse_engine_config,
    parse_loading,
    parse_namespace,
    parse_non_default,
    parse_resolved,
)
from parsers.vllm.errors import parse_error
from parsers.vllm.runtime import parse_preemption, parse_spec_decode, parse_stats
from parsers.vllm.startup import (
    parse_available,
    parse_capacity,
    parse_extended_pool,
    parse_extensible,
    parse_graph,
    parse_kv_dtype,
    parse_layout,
    parse_memory_profile,
    parse_mm_reserved,
    parse_rank_assignment,
    parse_reserved,
    parse_scales,
    parse_version,
    parse_weights,
)

_Result = tuple[str, dict[str, Any]] | None
_Handler = Callable[[str], _Result]


def _kind(kind: str, fields: dict[str, Any] | None) -> _Result:
    return None if fields is None else (kind, fields)


def _h_init(msg: str) -> _Result:
    fields = parse_engine_config(msg)
    if fields is not None:
        return "server_args", fields
    return _kind("kv_pool", parse_reserved(msg))  # "Initial free memory ..., reserved ..."


def _h_non_default(msg: str) -> _Result:
    return _kind("server_args", parse_non_default(msg))


def _h_args(msg: str) -> _Result:
    return _kind("server_args", parse_namespace(msg))


def _h_using(msg: str) -> _Result:
    fields = parse_kv_dtype(msg)
    if fields is not None:
        return "kv_dtype", fields
    hit = parse_scales(msg)
    if hit is not None:
        return hit
    layout = parse_layout(msg)  # the DeepSeek sparse-MLA FP8 row format
    if layout is not None:
        return "kv_layout", layout
    return _kind("server_args", parse_resolved(msg))


def _h_scales(msg: str) -> _Result:
    return parse_scales(msg)


def _h_default(msg: str) -> _Result:
    fields = parse_generation_defaults(msg)
    if fields is not None:
        return "generation_defaults", fields
    return parse_scales(msg)


def _h_detected(msg: str) -> _Result:
    return _kind("chat_format", parse_chat_format(msg))


def _h_user(msg: str) -> _Result:
    return _kind("context_override", parse_context_override(msg))


def _h_chunked(msg: str) -> _Result:
    return _kind("server_args", parse_resolved(msg))


def _h_loading(msg: str) -> _Result:
    return _kind("server_args", parse_loading(msg))


def _h_weights(msg: str) -> _Result:
    fields = parse_weights(msg)
    if fields is not None:
        return "load_weight_end", fields
    if msg.startswith("Loading chat template fallback"):
        return _kind("chat_template", parse_chat_template(msg))
    return parse_scales(msg)  # "Loaded KV cache scaling factors from ..."


def _h_available(msg: str) -> _Result:
    return _kind("kv_pool", parse_available(msg))


def _h_mm_reserved(msg: str) -> _Result:
    return _kind("kv_budget_reserved", parse_mm_reserved(msg))


def _h_capacity(msg: str) -> _Result:
    return _kind("capacity", parse_capacity(msg))


def _h_memory(msg: str) -> _Result:
    return _kind("memory_profile", parse_memory_profile(msg))


def _h_extensible(msg: str) -> _Result:
    return _kind("memory_profile", parse_extensible(msg))


def _h_extended(msg: str) -> _Result:
    # "Extended KV cache to ..." (the pool) or "Extensible KV cache off: ..." (a fallback)
    hit = _kind("kv_pool", parse_extended_pool(msg))
    return hit if hit is not None else _h_extensible(msg)


def _h_graph(msg: str) -> _Result:
    fields = parse_graph(msg)
    if fields is not None:
        return "cuda_graph_end", fields
    return _kind("memory_profile", parse_memory_profile(msg))


def _h_setting(msg: str) -> _Result:
    return _kind("kv_layout", parse_layout(msg))


def _h_engine(msg: str) -> _Result:
    # "Engine 000: Avg prompt throughput: ..." (V1 stats, the engine index first)
    fields = parse_stats(msg)
    if fields is not None:
        return "decode_batch", fields
    return _kind("capacity", parse_capacity(msg))


def _h_stats(msg: str) -> _Result:
    return _kind("decode_batch", parse_stats(msg))


def _h_sequence(msg: str) -> _Result:
    return _kind("retraction", parse_preemption(msg))


def _h_spec(msg: str) -> _Result:
    return _kind("spec_decode", parse_spec_decode(msg))


def _h_version(msg: str) -> _Result:
    return _kind("engine_version", parse_version(msg))


def _h_rank(msg: str) -> _Result:
    return _kind("parallel_rank", parse_rank_assignment(msg))


_HANDLERS: dict[str, _Handler] = {
    "Init": _h_init,
    "non-": _h_non_default,
    "args": _h_args,
    "Usin": _h_using,
    "Chun": _h_chunked,
    "Reso": _h_chunked,
    "Asyn": _h_chunked,
    "Ther": _h_setting,
    "Star": _h_loading,
    "Chec": _h_scales,
    "Defa": _h_default,
    "User": _h_user,
    "Dete": _h_detected,
    "Load": _h_weights,
    "Mode": _h_weights,
    "Avai": _h_available,
    "Rese": _h_mm_reserved,
    "GPU ": _h_capacity,
    "# GP": _h_capacity,
    "Maxi": _h_capacity,
    "Over": _h_capacity,
    "Memo": _h_memory,
    "Rema": _h_extensible,
    "Exte": _h_extended,
    "Disa": _h_extensible,
    "gpu_": _h_extensible,
    "the ": _h_memory,
    "mode": _h_memory,
    "In v": _h_memory,
    "CUDA": _h_graph,
    "Grap": _h_graph,
    "Esti": _h_memory,
    "Free": _h_memory,  # V1's start-up memory summary
    "Befo": _h_memory,  # V1's XPU worker (xpu_worker.py)
    "Afte": _h_memory,
    "Add ": _h_setting,
    "Sett": _h_setting,
    "Padd": _h_setting,
    "Mamb": _h_setting,
    "Forc": _h_setting,
    "Hidd": _h_setting,
    "Engi": _h_engine,
    "vllm": _h_capacity,
    "Avg ": _h_stats,
    "Sequ": _h_sequence,
    "Spec": _h_spec,  # V1 "SpecDecoding metrics: ..."; V0 "Speculative metrics: ..."
    "vLLM": _h_version,
    "rank": _h_rank,
}

# Messages read even without a vLLM head: wordings no other engine prints.
_BARE_OK = ("Using KV cache scaling factor 1.0 for fp8", "Using uncalibrated q_scale",
            "Checkpoint does not provide a q scaling factor", "Available KV cache memory:",
            "GPU KV cache size:", "Maximum concurrency for ", "Add ", "Engine ",
            "Initializing a V1 LLM engine", "Initializing an LLM engine",
            "Initializing a V0 LLM engine", "non-default args:",
            "Default vLLM sampling parameters have been overridden",
            # a prompt refused for length, as the client got it (parsers/vllm/accuracy.py)
            "This model's maximum context length is ",
            # the weights line as prose quotes it (a blog on vLLM 0.19 quotes "Model loading
            # took 13.72 GiB memory and 62.336108 seconds"); SGLang says "Load weight end."
            "Model loading took ", "Loading model weights took ",
            # V0's pool and profile lines, pasted without heads (vllm-project/vllm#10517)
            "# GPU blocks: ", "Memory profiling results: ",
            "GPU blocks: ",  # the same pasted without its "# " (the ", # CPU blocks" tail)
            # V0's preemption warning quoted alone (GAIR-NLP/LIMO#29); `parse_preemption`
            # reads only the full "... is preempted by PreemptionMode.X mode because ..."
            "Sequence group ",
            # the speculative-decoding metrics line quoted alone (V1, V0)
            "SpecDecoding metrics: ", "Speculative metrics: ",
            # 0.7-0.10 names the device (executor_base.py): "# cuda blocks: N, # CPU blocks: M"
            "# cuda blocks: ", "# rocm blocks: ", "# xpu blocks: ", "# hpu blocks: ",
            "# tpu blocks: ", "# HPU blocks: ", "# TPU blocks: ")


def _fallback(msg: str) -> _Result:
    if "User-specified max_model_len" in msg:  # the ValueError's text in a traceback
        return _kind("context_override", parse_context_override(msg))
    if NO_TEMPLATE in msg:  # a chat request's error: the model has no chat template
        return _kind("chat_template", parse_chat_template(msg))
    if "maximum context length is" in msg or "than the maximum model length" in msg:
        return _kind("input_too_long", parse_too_long(msg))
    if "max seq len" in msg or "cache blocks" in msg or "emory" in msg:
        return _kind("oom", parse_error(msg))
    if "version" in msg:
        return _kind("engine_version", parse_version(msg))
    # Another device's pool: "XPU KV cache size: N tokens, ..." (0.30+), and V0's "# cuda
    # blocks: N, # CPU blocks: M" (0.7-0.10: the platform's device name)
    if " KV cache size: " in msg[:24] or (msg[:2] == "# " and " blocks: " in msg[:24]):
        return _kind("capacity", parse_capacity(msg))
    return None


def parse_unchecked(text: str) -> Event | None:
    """`parse_line` without the safety net, so tests can see a would-be exception."""
    if ("\x1b" in text or CARET in text or "\r" in text or "\t" in text or text[-1:] == "\n"
            or text[:1] == " "):
        text = normalize(text)
    head = vllm_head(text)
    if head is None and "0" <= text[:1] <= "9" and text[10:11] == "T":
        # NVIDIA Dynamo's `VllmColorFormatter` prints `{ts} {level:>5} {module.func}: {msg}` in
        # place of vLLM's head (parsers.envelope): the level is there, the time is Dynamo's
        dynamo = dynamo_head(text)
        if dynamo is not None and vllm_head(text[dynamo[0]:]) is None:
            head = (dynamo[0], dynamo[1], None)
    if head is None and ("0" <= text[:1] <= "9" or text[:5] == "[pod/"):
        # An untimed head behind a client's envelope (`2026-05-21T02:05:31Z (APIServer
        # pid=568) INFO [model.py:531] ...`, a controller that re-stamps vLLM's lines): the
        # head grammar takes an untimed head only at the line's start, so read it after the
        # envelope.
        cut = payload_start(text)
        if cut:
            head = vllm_head(text[cut:])
            if head is not None:
                head = (head[0] + cut, head[1], head[2])
    if head is None:
        start, ts, rank = 0, None, None
    else:
        start, ts, rank = head
    headed = ts is not None
    if ts == UNTIMED:
        ts = None  # a level-and-file head whose time the paste cut out: vLLM's all the same
    msg = text[start:] if start else text
    hit: _Result
    if msg[:5] == "INFO:":
        return None  # a uvicorn access line of the API server, the other bulk of a log
    if not headed:
        # No level-and-time head: a traceback tail, a quoted fragment, a paste that lost its
        # head. Only vLLM's own wordings are read then.
        if not msg.startswith(_BARE_OK) and "Error" not in msg[:40]:
            hit = _fallback(msg) if ("max seq len" in msg or "Mamba cache blocks" in msg) \
                else None
            return None if hit is None else Event(hit[0], rank, ts, hit[1])
    elif msg[:1] == " ":
        msg = msg.lstrip(" ")
    handler = _HANDLERS.get(msg[:4])
    hit = handler(msg) if handler is not None else None
    if hit is None:
        hit = _fallback(msg)
    if hit is None:
        return None
    if hit[0] == "oom" and start and hit[1].get("reason") == "torch":
        # the CUDA allocator's text names no engine; the vLLM process that printed it does
        process = vllm_process(text, start)
        if process is not None:
            hit[1]["process"] = process
    return Event(hit[0], rank, ts, hit[1])


def parse_line(text: str) -> Event | None:
    """Parse one vLLM log line; never raises, returns None for anything unrecognised."""
    try:
        return parse_unchecked(text)
    except Exception:
        return None
