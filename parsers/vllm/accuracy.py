"""vLLM's lines on a context length past the model's window and on the model's own sampling
defaults (the accuracy checklist, `kvtui.core.accuracy`).

- `User-specified max_model_len ({n}) is greater than the derived max_model_len ({key}={m} or
  model_max_length={l} in model's config.json).` then VLLM_ALLOW_LONG_MAX_MODEL_LEN's caution:
  a warning when that env var is set (the engine goes on), else the text of the ValueError it
  raises, with "To allow overriding this maximum, set the env var
  VLLM_ALLOW_LONG_MAX_MODEL_LEN=1" (0.34.0 config/model.py:2705-2727, 0.22.0 :2236, 0.28.0
  :2445);
- `Default vLLM sampling parameters have been overridden by {source}: `{params}`. If this is
  not intended, please relaunch vLLM instance with `--generation-config vllm`.` (0.34.0
  config/model.py:1931, 0.22.0 :1510, 0.28.0 :1714): the model's generation_config.json (or
  the folder given to --generation-config) set the default sampling parameters;
- `Loading chat template fallback for {model} as there isn't one defined on HF Hub.` (0.34.0
  renderers/hf.py:357, 0.22.0 :304, 0.28.0 :307): vLLM's own template for the model type, the
  model having none; and the error a chat request gets when there is no template at all, "As of
  transformers v4.44, default chat template is no longer allowed, so you must provide a chat
  template if the tokenizer does not define one." (0.34.0 :892, 0.22.0 :654, 0.28.0 :731);
- `Detected the chat template content format to be '{fmt}'. You can set
  `--chat-template-content-format` to override this.` (0.34.0 renderers/hf.py:744, 0.10.2
  entrypoints/chat_utils.py:539): logged once, at the first chat request, whatever the
  template's source (also when there is none: the error follows);
- a prompt refused for length: "This model's maximum context length is {M} tokens. However,
  your prompt contains {N} input tokens, ..." (0.34.0 renderers/params.py:544) and "The
  {decoder} prompt (length {N}) is longer than the maximum model length of {M}." (0.34.0
  v1/engine/input_processor.py:583). vLLM returns them to the client and logs them at DEBUG
  only (entrypoints/serve/exception_handling/error_response.py:25): a log shows them when
  debug logging was on, or pasted from a client's error.
"""

from __future__ import annotations

from typing import Any

import regex

from parsers.catalogue import Format, Variant

_CONTEXT = regex.compile(r"User-specified max_model_len \((\d+)\) is greater than (?:the )?"
                         r"derived max_model_len \((?:\w+=)?(\d+)")
_GEN = regex.compile(r"Default vLLM sampling parameters have been overridden by (.+?): `(.*?)`")


def parse_context_override(msg: str) -> dict[str, Any] | None:
    m = _CONTEXT.search(msg)
    if m is None:
        return None
    refused = "To allow overriding" in msg or "Error" in msg[:40]
    return {"context_length": int(m.group(1)), "derived": int(m.group(2)),
            "allowed": not refused}


def parse_generation_defaults(msg: str) -> dict[str, Any] | None:
    m = _GEN.match(msg)
    if m is None:
        return None
    source = m.group(1)
    return {"params": m.group(2)[:240] or None,
            "origin": "model" if "generation_config.json" in source else source}


_FALLBACK = regex.compile(r"Loading chat template fallback for (\S+) as there isn't one")
NO_TEMPLATE = "default chat template is no longer allowed"


def parse_chat_template(msg: str) -> dict[str, Any] | None:
    m = _FALLBACK.match(msg)
    if m is not None:
        return {"origin": "fallback", "name": m.group(1)}
    if NO_TEMPLATE in msg:
        return {"origin": "none", "name": None}
    return None


_CONTEXT_LIMIT = regex.compile(r"This model's maximum context length is (\d+) tokens\. However, "
                               r"your prompt contains (?:at least )?(\d+) input tokens")
_MODEL_LIMIT = regex.compile(r"The \w+ prompt \(length (\d+)\) is longer than the maximum "
                             r"model length of (\d+)")


def parse_too_long(msg: str) -> dict[str, Any] | None:
    m = _CONTEXT_LIMIT.search(msg)
    if m is not None:
        return {"input_tokens": int(m.group(2)), "max_tokens": int(m.group(1)),
                "truncated": False}
    m = _MODEL_LIMIT.search(msg)
    if m is not None:
        return {"input_tokens": int(m.group(1)), "max_tokens": int(m.group(2)),
                "truncated": False}
    return None


_FORMAT = regex.compile(r"Detected the chat template content format to be '(\w+)'")


def parse_chat_format(msg: str) -> dict[str, Any] | None:
    m = _FORMAT.match(msg)
    return None if m is None else {"format": m.group(1)}


# --- the catalogue: the kinds this module parses, their layouts and releases -----------------
FORMATS: tuple[Format, ...] = (
    Format("generation_defaults", ("Default vLLM sampling parameters have been overridden",),
           None, (
        Variant("generation_defaults:model", None,
                "Default vLLM sampling parameters have been overridden by {source}: `{params}`.",
                "config/model.py:1931 (0.34.0), :1510 (0.22.0), :1714 (0.28.0)",
                "(APIServer pid=1) WARNING 05-01 16:27:56 [model.py:1931] Default vLLM sampling "
                "parameters have been overridden by the model's `generation_config.json`: "
                "`{'temperature': 0.6, 'top_k': 20, 'top_p': 0.95}`. If this is not intended, "
                "please relaunch vLLM instance with `--generation-config vllm`.",
                ("origin", "params")),
    )),
    Format("context_override", ("User-specified max_model_len",), None, (
        Variant("context_override:allowed", None,
                "User-specified max_model_len ({n}) is greater than the derived max_model_len "
                "(...). VLLM_ALLOW_LONG_MAX_MODEL_LEN ... (a warning)",
                "config/model.py:2705-2727 (0.34.0), :2236 (0.22.0), :2445 (0.28.0)",
                "WARNING 05-01 16:27:56 [model.py:2722] User-specified max_model_len (262144) is "
                "greater than the derived max_model_len (max_position_embeddings=131072 or "
                "model_max_length=None in model's config.json). VLLM_ALLOW_LONG_MAX_MODEL_LEN "
                "must be used with extreme caution. If the model uses relative position "
                "encoding (RoPE), positions exceeding derived_max_model_len lead to nan. If the "
                "model uses absolute position encoding, positions exceeding "
                "derived_max_model_len will cause a CUDA array out-of-bounds error.",
                ("context_length", "derived", "allowed")),
        Variant("context_override:refused", None,
                "ValueError: User-specified max_model_len ... To allow overriding this maximum, "
                "set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1",
                "config/model.py:2705-2727 (0.34.0)",
                "ValueError: User-specified max_model_len (262144) is greater than the derived "
                "max_model_len (max_position_embeddings=131072 or model_max_length=None in "
                "model's config.json). To allow overriding this maximum, set the env var "
                "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used "
                "with extreme caution.", ("context_length", "derived")),
    ), infixes=("User-specified max_model_len",)),
    Format("chat_format", ("Detected the chat template content format",), None, (
        Variant("chat_format:detected", None,
                "Detected the chat template content format to be '{fmt}'.",
                "renderers/hf.py:744 (0.34.0), entrypoints/chat_utils.py:539 (0.10.2)",
                "(APIServer pid=1) INFO 05-01 16:28:30 [hf.py:744] Detected the chat template "
                "content format to be 'string'. You can set `--chat-template-content-format` to "
                "override this.", ("format",)),
    )),
    Format("chat_template", ("Loading chat template fallback",), None, (
        Variant("chat_template:fallback", None,
                "Loading chat template fallback for {model} as there isn't one defined on HF Hub.",
                "renderers/hf.py:357 (0.34.0), :304 (0.22.0), :307 (0.28.0)",
                "(APIServer pid=1) INFO 05-01 16:27:56 [hf.py:357] Loading chat template "
                "fallback for org/base-model as there isn't one defined on HF Hub.",
                ("origin", "name")),
        Variant("chat_template:none", None,
                "As of transformers v4.44, default chat template is no longer allowed, ...",
                "renderers/hf.py:892 (0.34.0), :654 (0.22.0), :731 (0.28.0)",
                "ChatTemplateResolutionError: As of transformers v4.44, default chat template is "
                "no longer allowed, so you must provide a chat template if the tokenizer does "
                "not define one.", ("origin",)),
    ), infixes=(NO_TEMPLATE,)),
    Format("input_too_long", (), None, (
        Variant("input_too_long:context", None,
                "This model's maximum context length is {M} tokens. However, your prompt "
                "contains {N} input tokens, ...", "renderers/params.py:544 (0.34.0)",
                "DEBUG 05-01 16:30:00 [error_response.py:25] create_error_response called with "
                "VLLMValidationError: This model's maximum context length is 32768 tokens. "
                "However, your prompt contains 40000 input tokens, which exceeds this limit "
                "even before generating any output.", ("input_tokens", "max_tokens")),
        Variant("input_too_long:model_length", None,
                "The {decoder} prompt (length {N}) is longer than the maximum model length of "
                "{M}.", "v1/engine/input_processor.py:583 (0.34.0)",
                "ValueError: The decoder prompt (length 40000) is longer than the maximum model "
                "length of 32768. Make sure that `max_model_len` is no smaller than the number "
                "of text tokens.", ("input_tokens", "max_tokens")),
    ), infixes=("maximum context length is", "than the maximum model length")),
)
