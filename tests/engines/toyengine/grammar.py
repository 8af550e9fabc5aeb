"""ToyLM's log grammar: three line shapes, each an event of the shared vocabulary.

    TOY/1 start model=M kv=fp8 ctx=4096 tp=1          (1.x: a start line)
    TOY/2 start model=M kv=fp8 ctx=4096 tp=1          (2.x: the same, in its new head)
    TOY/2 version 2.1.0                               (a release line, 2.1+)
    TOY/1 pool tokens=32768                           (the pool, in the start's KV dtype)
"""

from __future__ import annotations

import re

from parsers import Event

_LINE = re.compile(r"^TOY/(?P<head>[12]) (?P<what>start|pool|version) ?(?P<rest>.*)$")


def _pairs(rest: str) -> dict[str, str]:
    return dict(p.split("=", 1) for p in rest.split() if "=" in p)


def parse_line(text: str) -> Event | None:
    m = _LINE.match(text)
    if m is None:
        return None
    what, rest = m["what"], m["rest"]
    head = f"head:{m['head']}"
    if what == "version":
        return Event("engine_version", fields={"version": rest.strip()}, variant=head)
    kv = _pairs(rest)
    if what == "start":
        return Event("server_args", variant=head, fields={
            "form": "toy", "model_path": kv.get("model"), "served_model_name": None,
            "dtype": None, "kv_cache_dtype": kv.get("kv"), "quantization": None,
            "quantization_param_path": None, "tp_size": int(kv.get("tp", "1")),
            "dp_size": None, "pp_size": None, "context_length": int(kv["ctx"]),
            "max_running_requests": None, "page_size": None, "attention_backend": None})
    return Event("capacity", variant=head, fields={
        "max_total_num_tokens": int(kv["tokens"]), "chunked_prefill_size": None,
        "max_prefill_tokens": None, "max_running_requests": None, "context_len": None,
        "available_gpu_mem_gib": None})
