"""The startup `server_args=` dump, in the dataclass-repr form (<=0.5.18) and dict form (0.5.19+).

The dump is tens of KB and its field order changes between releases, so it is scanned once
for every `name=value` / `'name': value` pair and the first occurrence of each wanted name is
kept (a nested record may repeat a name later). The look-behind stops `tp_size` from matching
inside `moe_dense_tp_size` and `kv_cache_dtype` inside `speculative_draft_kv_cache_dtype`.
A value must be followed by `,`, `)` or `}` so the half value at the end of a cut paste is
dropped rather than misread.
"""

from __future__ import annotations

from typing import Any

import regex

from parsers.catalogue import Format, Variant
from parsers.kinds import ACCURACY_ARGS, KIND_FIELDS, SGLANG_SIZING_ARGS
from parsers.literals import literal_scalar
from parsers.sglang.releases import between, since, until

SERVER_ARG_FIELDS: tuple[str, ...] = (
    "model_path", "served_model_name", "dtype", "kv_cache_dtype", "quantization",
    "quantization_param_path", "tp_size", "dp_size", "pp_size", "ep_size", "attn_dp_size",
    "enable_dp_attention", "context_length", "mem_fraction_static", "max_total_tokens",
    "chunked_prefill_size", "max_prefill_tokens", "max_running_requests", "page_size",
    "attention_backend", "disable_radix_cache",
    *SGLANG_SIZING_ARGS,  # read by the capacity calculator's SGLang sizing rules
)
_WANTED = frozenset(SERVER_ARG_FIELDS)
# Read only when the dump prints them (the accuracy checklist tells "not given" from "not
# printed"): chat_template, tool_call_parser, reasoning_parser, sampling_defaults,
# json_model_override_args (ServerArgs fields in 0.5.23 arg_groups/fields/serving.py).
_ACCURACY = frozenset(ACCURACY_ARGS)
# Where the server serves /metrics, read only when the dump prints them (the engine seam's
# `metrics_endpoint` says an absent one is the default): `port` (0.5.23
# arg_groups/fields/serving.py:66, default 30000) and `enable_metrics` (0.5.23
# arg_groups/fields/observability.py:70, default False; /metrics only with it:
# entrypoints/http_server.py:314-317).
_ENDPOINT = frozenset({"port", "enable_metrics"})
_OPTIONAL = _ACCURACY | _ENDPOINT
_ALL = len(_WANTED) + len(_ENDPOINT) + len(
    _ACCURACY & {"chat_template", "tool_call_parser", "reasoning_parser", "sampling_defaults",
                 "json_model_override_args"})

_PAIR = regex.compile(
    r"""(?<![\w.])'?([A-Za-z_]\w*)'?(?:=|: )('[^']*'|"[^"]*"|[^,)}'"]*)(?=[,)}])"""
)


def parse_server_args(msg: str) -> tuple[dict[str, Any], str] | None:
    """The wanted fields and the variant: the form, and whether the dump has `page_size`
    (a field from 0.4.4) or `attn_dp_size` (0.5.22+)."""
    if msg.startswith("server_args=ServerArgs("):
        form = "repr"
    elif msg.startswith("server_args={"):
        form = "dict"
    else:
        return None
    fields: dict[str, Any] = dict.fromkeys(SERVER_ARG_FIELDS)
    fields["form"] = form
    seen: set[str] = set()
    for m in _PAIR.finditer(msg, 12):
        name = m.group(1)
        if (name in _WANTED or name in _OPTIONAL) and name not in seen:
            seen.add(name)
            fields[name] = literal_scalar(m.group(2))
            if len(seen) == _ALL:
                break
    if form == "dict":
        return fields, "server_args:dict_attn_dp" if "attn_dp_size" in seen else "server_args:dict"
    return fields, "server_args:repr_page_size" if "page_size" in seen else "server_args:repr"


# Logged while the arguments are resolved, before the dump, for a DeepSeek DSA model whose
# attention is sharded over TP (NSA before the rename): 0.5.6 server_args.py:969, 0.5.8 :1147,
# 0.5.9 :1247, 0.5.20 arg_groups/model_hook.py:234 (`dp_size=`); 0.5.23 model_hook.py:332
# (`attn_dp_size=`). The `attn_tp_size=` it prints is tp_size itself before 0.5.23: not read.
_TP_MODE = regex.compile(r"[ND]SA with TP mode is active, (dp_size|attn_dp_size)=(\d+), "
                         r"tp_size=(\d+)")


def parse_tp_mode(msg: str) -> tuple[dict[str, Any], str] | None:
    """The sizes of `DSA with TP mode is active, ...`: one resolved part of the start's
    arguments, logged before its dump (`before_dump`: it opens the start, as a KV dtype
    override line does)."""
    m = _TP_MODE.match(msg)
    if m is None:
        return None
    fields: dict[str, Any] = dict.fromkeys(KIND_FIELDS["server_args"])
    fields.update(form="resolved", partial=True, resolved=True, before_dump=True,
                  tp_size=int(m.group(3)))
    fields[m.group(1)] = int(m.group(2))
    attn = m.group(1) == "attn_dp_size"
    return fields, "server_args:tp_mode_attn_dp" if attn else "server_args:tp_mode"


def parse_args_line(msg: str) -> tuple[dict[str, Any], str] | None:
    """The dump, or a line that states some of the start's arguments before it."""
    if msg.startswith("server_args="):
        return parse_server_args(msg)
    return parse_tp_mode(msg)


# --- the catalogue: the kinds this module parses, their layouts and releases ----------------------
FORMATS: tuple[Format, ...] = (
    Format("server_args", ("server_args=", "DSA with TP mode is active",
                           "NSA with TP mode is active"), parse_args_line, (
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
)
