"""Lines that tell whether a deployment serves the model as its makers meant: a context length
stretched past the model's window, the chat template, the parsers its chat format calls for,
the model's own sampling defaults, weights quantized while loading.

Each wording is SGLang's own (0.5.23 cited per parser); the accuracy checklist
(`kvtui.core.accuracy`) reads the events. The normal wording is told from the alarm here:
"Using default HuggingFace chat template with detected content format" means the model's own
template was found, not a fallback.
"""

from __future__ import annotations

from typing import Any

import regex

from parsers.catalogue import Format, Variant
from parsers.sglang.releases import P

Parsed = tuple[dict[str, Any], str | None]

# configs/model_config.py `_derive_context_length` (0.5.23 :1295-1316): the message, logged as a
# warning when SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN is set (the server goes on with the
# longer length), else raised as a ValueError with "To allow overriding this maximum, set the
# env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1" after it (the server stops).
_CONTEXT = regex.compile(r"User-specified context_length \((\d+)\) is greater than the derived "
                         r"context_length \((\d+)\)")


def parse_context_override(msg: str) -> Parsed | None:
    m = _CONTEXT.search(msg)
    if m is None:
        return None
    refused = "To allow overriding" in msg or msg.startswith("ValueError")
    return ({"context_length": int(m.group(1)), "derived": int(m.group(2)),
             "allowed": not refused},
            "context_override:refused" if refused else "context_override:allowed")


# parser/template_manager.py (0.5.23): :202 the model's own (HuggingFace) template found; :207
# none at all; :232 --chat-template given; :263 a built-in template guessed from the model path;
# :320 SGLang's Python rendering of the model's template in place of its Jinja source.
_TEMPLATES: tuple[tuple[str, str, str], ...] = (
    ("Using default HuggingFace chat template with detected content format: ", "model",
     "chat_template:model"),
    ("No chat template found, defaulting to 'string' content format", "none",
     "chat_template:none"),
    ("Loading chat template from argument: ", "argument", "chat_template:argument"),
    ("Inferred chat template from model path: ", "builtin", "chat_template:builtin"),
    ("Using Python chat template '", "python", "chat_template:python"),
)


def parse_chat_template(msg: str) -> Parsed | None:
    for head, source, variant in _TEMPLATES:
        if msg.startswith(head):
            rest = msg[len(head):].strip()
            if source == "python":
                name: str | None = rest.split("'", 1)[0] or None
            elif source in ("argument", "builtin"):
                name = rest or None
            else:
                name = None
            return {"origin": source, "name": name}, variant
    return None


# parser/template_manager.py:226 (0.5.23): "Auto-detected template features: " and the
# reasoning_config / reasoning_parser / tool_call_parser the template implies, comma-joined. The
# suggestion is used only for a parser given as "auto" (entrypoints/engine.py:215-239).
_FEATURE = regex.compile(r"\b(reasoning_parser|tool_call_parser)=([\w.-]+)")


def parse_template_features(msg: str) -> Parsed | None:
    if not msg.startswith("Auto-detected template features: "):
        return None
    fields: dict[str, Any] = {"reasoning_parser": None, "tool_call_parser": None}
    for m in _FEATURE.finditer(msg):
        fields[m.group(1)] = m.group(2)
    return fields, "template_features:detected"


# entrypoints/openai/serving_chat.py:424 (0.5.23): the model's generation_config.json gave the
# default sampling parameters (--sampling-defaults model, the default).
_GEN_HEAD = "Using default chat sampling params from model generation config: "


def parse_generation_defaults(msg: str) -> Parsed | None:
    if not msg.startswith(_GEN_HEAD):
        return None
    params = msg[len(_GEN_HEAD):].strip()
    # a paste cut inside the dict states no parameters rather than some of them
    closed = params.startswith("{") and params.endswith("}")
    return ({"params": params[:240] if closed else None, "origin": "model"},
            "generation_defaults:model")


# model_executor/model_runner_components/load_model_utils.py:171 (0.5.23): `report_online_
# quantization`, after the weights were quantized while loading.
_ONLINE = regex.compile(r"Online (\S+) quantization: quantized (\d+) layers")


def parse_online_quant(msg: str) -> Parsed | None:
    m = _ONLINE.match(msg)
    if m is None:
        return None
    return {"method": m.group(1), "layers": int(m.group(2))}, "online_quant:report"


# --- the catalogue: the kinds this module parses, their layouts and releases ----------------------
FORMATS: tuple[Format, ...] = (
    Format("context_override", ("Warning: User-specified context_length",),
           parse_context_override, (
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
        "Using Python chat template"), parse_chat_template, (
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
           parse_template_features, (
        Variant("template_features:detected", None,
                "Auto-detected template features: [reasoning_config=.., ][reasoning_parser=.., ]"
                "[tool_call_parser=..]",
                "0.5.23 parser/template_manager.py:226 (0.5.13+; 0.5.12 has none)",
                "[2026-11-24 09:14:08] Auto-detected template features: "
                "reasoning_parser=qwen3, tool_call_parser=qwen3_coder",
                ("reasoning_parser", "tool_call_parser")),
    )),
    Format("generation_defaults", ("Using default chat sampling params from model",),
           parse_generation_defaults, (
        Variant("generation_defaults:model", None,
                "Using default chat sampling params from model generation config: {params}",
                "0.5.23 entrypoints/openai/serving_chat.py:424 (0.5.4+; 0.5.2 has none)",
                "[2026-02-04 11:30:31] Using default chat sampling params from model generation "
                "config: {'repetition_penalty': 1.1, 'temperature': 0.7, 'top_k': 20, "
                "'top_p': 0.8}", ("params",)),
    )),
    Format("online_quant", ("Online ",), parse_online_quant, (
        Variant("online_quant:report", None,
                "Online {quantization} quantization: quantized {n} layers of types: {types}",
                "0.5.23 model_executor/model_runner_components/load_model_utils.py:171 (0.5.13+)",
                P + "Online fp8 quantization: quantized 448 layers of types: "
                "{'QKVParallelLinear', 'RowParallelLinear'}", ("method", "layers")),
    )),
)
