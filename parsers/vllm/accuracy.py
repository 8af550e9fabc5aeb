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
