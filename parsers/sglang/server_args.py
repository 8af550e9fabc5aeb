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

from parsers.kinds import SGLANG_SIZING_ARGS
from parsers.literals import literal_scalar

SERVER_ARG_FIELDS: tuple[str, ...] = (
    "model_path", "served_model_name", "dtype", "kv_cache_dtype", "quantization",
    "quantization_param_path", "tp_size", "dp_size", "pp_size", "ep_size", "attn_dp_size",
    "enable_dp_attention", "context_length", "mem_fraction_static", "max_total_tokens",
    "chunked_prefill_size", "max_prefill_tokens", "max_running_requests", "page_size",
    "attention_backend", "disable_radix_cache",
    *SGLANG_SIZING_ARGS,  # read by the capacity calculator's SGLang sizing rules
)
_WANTED = frozenset(SERVER_ARG_FIELDS)

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
        if name in _WANTED and name not in seen:
            seen.add(name)
            fields[name] = literal_scalar(m.group(2))
            if len(seen) == len(_WANTED):
                break
    if form == "dict":
        return fields, "server_args:dict_attn_dp" if "attn_dp_size" in seen else "server_args:dict"
    return fields, "server_args:repr_page_size" if "page_size" in seen else "server_args:repr"
