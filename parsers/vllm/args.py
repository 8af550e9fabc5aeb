"""vLLM's configuration lines: the CLI arguments and the engine's resolved configuration.

Three dumps, each read once for the names kvtui needs:
- `args: Namespace(model='...', tensor_parallel_size=1, ...)`: every CLI argument (the OpenAI
  server up to 0.9, `vllm/entrypoints/openai/api_server.py:529` in 0.6.3);
- `non-default args: {'model': '...', 'tensor_parallel_size': 2}`: only what differs from the
  defaults (0.10+, `vllm/entrypoints/utils.py:328` in 0.10.2, `api_utils.py` in 0.25), so an
  absent name means the default when the dump is complete;
- `Initializing an LLM engine (v0.6.3) with config: model='...', dtype=torch.bfloat16, ...`
  (V0 `engine/llm_engine.py:238` in 0.6.3, :233 in 0.7.0), `Initializing a V0 LLM engine
  (v0.8.5) ...` (the same V0 line renamed: `engine/llm_engine.py:235` in 0.7.3, :241 in
  0.8.5, :222 in 0.10.2, the last release with V0) / `Initializing a V1 LLM engine (v0.10.2) ...`
  (`v1/engine/core.py:76` in 0.10.2, `:140` in 0.33.0, `VllmConfig.__str__`): the engine's
  resolved values, including the release and the KV cache dtype after `auto` was resolved
  (0.14+ resolves it from the checkpoint's ModelOpt config: `EngineArgs.create_engine_config`,
  `engine/arg_utils.py:1398` in 0.14.0).

Values nest (`KVTransferConfig(...)`, `{...}` compilation configs, lists), so items are split
at the top level only. A dump cut by the paste loses its last item rather than misreading it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import regex

from parsers.catalogue import Format, Variant
from parsers.kinds import KIND_FIELDS
from parsers.literals import literal_scalar
from parsers.vllm.releases import between, since, until

# vLLM name -> the shared server_args name (parsers.kinds), where the meaning is the same.
_SHARED: dict[str, str] = {
    "model": "model_path", "served_model_name": "served_model_name", "dtype": "dtype",
    "kv_cache_dtype": "kv_cache_dtype", "quantization": "quantization",
    "quantization_param_path": "quantization_param_path", "tensor_parallel_size": "tp_size",
    "data_parallel_size": "dp_size", "pipeline_parallel_size": "pp_size",
    "max_model_len": "context_length", "max_seq_len": "context_length",
    "max_num_seqs": "max_running_requests", "block_size": "page_size",
    "attention_backend": "attention_backend",
}
# vLLM-only names kept under their own name (parsers.kinds OPTIONAL_FIELDS["server_args"]).
_OWN: dict[str, str] = {
    "gpu_memory_utilization": "gpu_memory_utilization",
    "max_num_batched_tokens": "max_num_batched_tokens",
    "enable_prefix_caching": "enable_prefix_caching",
    "enable_expert_parallel": "enable_expert_parallel", "enforce_eager": "enforce_eager",
    "decode_context_parallel_size": "dcp_size", "kv_cache_memory_bytes": "kv_cache_memory_bytes",
    "num_gpu_blocks_override": "num_gpu_blocks_override",
    "mamba_ssm_cache_dtype": "mamba_ssm_cache_dtype", "calculate_kv_scales": "calculate_kv_scales",
    "performance_mode": "performance_mode", "async_scheduling": "async_scheduling",
    # what the accuracy checklist reads (kvtui.core.accuracy; parsers.kinds ACCURACY_ARGS):
    # FrontendArgs / ModelConfig names (0.34.0 entrypoints/openai/cli_args.py, config/model.py)
    "chat_template": "chat_template", "tool_call_parser": "tool_call_parser",
    "reasoning_parser": "reasoning_parser", "enable_auto_tool_choice": "enable_auto_tool_choice",
    "generation_config": "generation_config", "hf_overrides": "hf_overrides",
    # the API server's port, where /metrics is served (0.34.0 entrypoints/common/cli_args.py:296
    # `port: int = 8000`; entrypoints/serve/instrumentator/metrics.py:55-80)
    "port": "port",
}
_WANTED = {**_SHARED, **_OWN, "model_tag": "model_tag", "speculative_config": "speculative_config"}
# Inside a speculative config (a dict in the args, a SpeculativeConfig(...) in the engine's line).
_SPEC_METHOD = regex.compile(r"""method['"]?\s*[:=]\s*['"]?(\w+)""")
_SPEC_TOKENS = regex.compile(r"""num_spec(?:ulative)?_tokens['"]?\s*[:=]\s*(\d+)""")

# The defaults an absent name stands for in a complete `non-default args` dump (the same in
# every release that prints it: `EngineArgs` in engine/arg_utils.py, 0.10.2-0.34.0). Not
# gpu_memory_utilization: its default moved with the release (0.9 to 0.19.0, 0.92 from 0.20.0,
# None in 0.34.0: config/cache.py), so the engine's calculator resolves an absent one by the
# release (kvtui/engines/vllm/version.py `default_utilization`).
_DEFAULTS: dict[str, Any] = {"tp_size": 1, "pp_size": 1, "dp_size": 1, "kv_cache_dtype": "auto",
                             "dtype": "auto"}

_TOKEN = regex.compile(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[(\[{]|[)\]}]|, """)
_VERSION = regex.compile(r"\(v(\d+\.\d+[\w.+\-]*)\) with config: ")


def _items(text: str, start: int) -> Iterator[tuple[str, bool]]:
    """Top-level items of a `, `-separated list from `start`; (item, closed): closed when the
    list's own closing bracket ended it (an unclosed last item may be cut by the paste)."""
    depth = 0
    begin = start
    for m in _TOKEN.finditer(text, start):
        tok = m.group()
        c = tok[0]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                yield text[begin : m.start()], True
                return
            depth -= 1
        elif tok == ", " and depth == 0:
            yield text[begin : m.start()], True
            begin = m.end()
    yield text[begin:], False


def _scalar(raw: str) -> Any:
    """A printed value as a JSON-able scalar (`literal_scalar`); a list is its first item
    (served_model_name: its first name); nested objects stay text."""
    raw = raw.strip()
    if raw.startswith("[") and raw.endswith("]"):
        inner = raw[1:-1].split(",")[0].strip()
        return literal_scalar(inner) if inner else None
    return literal_scalar(raw)


def _collect(pairs: Iterator[tuple[str, str]]) -> tuple[dict[str, Any], set[str]]:
    fields: dict[str, Any] = dict.fromkeys(KIND_FIELDS["server_args"])
    seen: set[str] = set()
    for key, raw in pairs:
        name = _WANTED.get(key)
        if name is None or name in seen:
            continue
        seen.add(name)
        if name == "speculative_config":
            method, tokens = _SPEC_METHOD.search(raw), _SPEC_TOKENS.search(raw)
            if method is not None:
                fields["speculative_method"] = method.group(1)
            if tokens is not None:
                fields["num_speculative_tokens"] = int(tokens.group(1))
            continue
        fields[name] = _scalar(raw)
    tag = fields.pop("model_tag", None)
    if fields["model_path"] is None and isinstance(tag, str):
        fields["model_path"] = tag
    return fields, seen


def _kv_pairs(text: str, start: int, sep: str) -> tuple[list[tuple[str, str]], bool]:
    pairs: list[tuple[str, str]] = []
    closed = False
    for item, ok in _items(text, start):
        closed = ok
        if not ok:
            break  # the cut tail of a paste
        key, found, value = item.partition(sep)
        if found:
            pairs.append((key.strip().strip("'\""), value))
    return pairs, closed


def parse_non_default(msg: str) -> dict[str, Any] | None:
    """`non-default args: {...}` (0.10+)."""
    if not msg.startswith("non-default args: {"):
        return None
    pairs, closed = _kv_pairs(msg, len("non-default args: {"), ": ")
    fields, seen = _collect(iter(pairs))
    if closed:
        for name, value in _DEFAULTS.items():
            if name not in seen:
                fields[name] = value
        fields["complete"] = True  # every argument the operator gave: absent means default
    fields["form"] = "args"
    return fields


def parse_namespace(msg: str) -> dict[str, Any] | None:
    """`args: Namespace(...)` (the OpenAI server up to 0.9: every argument)."""
    if not msg.startswith("args: Namespace("):
        return None
    pairs, closed = _kv_pairs(msg, len("args: Namespace("), "=")
    fields, _ = _collect(iter(pairs))
    fields["form"] = "namespace"
    if closed:
        fields["complete"] = True  # every argument, a default one as `None` or its value
    return fields


def parse_engine_config(msg: str) -> dict[str, Any] | None:
    """`Initializing an LLM engine (vX) with config: ...` / `Initializing a V0|V1 LLM engine`."""
    if not msg.startswith(("Initializing an LLM engine (v", "Initializing a V1 LLM engine (v",
                           "Initializing a V0 LLM engine (v")):
        return None
    m = _VERSION.search(msg, 0, 120)
    if m is None:
        return None
    pairs, _ = _kv_pairs(msg, m.end(), "=")
    fields, _ = _collect(iter(pairs))
    fields["form"] = "config"
    fields["version"] = m.group(1)
    fields["resolved"] = True
    kv = fields.get("kv_cache_dtype")
    if isinstance(kv, str):
        # `auto` is the model dtype, printed beside it (ModelConfig.dtype: torch.bfloat16).
        model_dtype = fields.get("dtype")
        fields["resolved_kv_dtype"] = (model_dtype if kv == "auto" and isinstance(
            model_dtype, str) and model_dtype.startswith("torch.") else kv)
        if fields["resolved_kv_dtype"] == "auto":
            fields["resolved_kv_dtype"] = None
    return fields


_MAX_LEN = regex.compile(r"Using max model len (\d+)")
_CHUNKED = regex.compile(r"Chunked prefill is enabled with max_num_batched_tokens=(\d+)")
_ARCH = regex.compile(r"Resolved architecture: (\w+)")
# VllmConfig turning async scheduling off where the operator left it to vLLM: "Async scheduling
# will be disabled because it is not supported with the `%s` distributed executor backend.",
# "Async scheduling is disabled for ROCm DeepEP high-throughput DBO ...", "Async scheduling is
# disabled because the V1 model runner does not support it with %s." (config/vllm.py:1698-1716
# in 0.33.0): the windowed groups then reserve one batch in flight, not two (sizing.py).
_ASYNC_OFF = regex.compile(r"Async scheduling (?:will be disabled|is disabled) ")


def _partial(before_dump: bool = False, **values: Any) -> dict[str, Any]:
    fields: dict[str, Any] = dict.fromkeys(KIND_FIELDS["server_args"])
    fields.update(values)
    fields["form"] = "resolved"
    fields["partial"] = True
    fields["resolved"] = True
    if before_dump:
        fields["before_dump"] = True
    return fields


# The model runner's "Starting to load model %s..." (self.model_config.model, the model as the
# engine resolved it: a hub id or a path): V0 worker/model_runner.py:1060 in 0.6.3, :1080 in
# 0.10.1; V1 v1/worker/gpu_model_runner.py:1953 in 0.10.1, :2602 in 0.11.0, :3808-3811 in 0.14.1
# (info_once), v1/worker/cpu_model_runner.py:87 in 0.10.1, :55 in 0.14.1. Read as a resolved
# part, so it names the model only where no dump or config line does (vllm-project/vllm#33155).
_LOADING = regex.compile(r"Starting to load model (\S(?:.*\S)?)\.\.\.\s*$")


def parse_loading(msg: str) -> dict[str, Any] | None:
    m = _LOADING.match(msg)
    if m is None:
        return None
    return _partial(model_path=m.group(1))


def parse_resolved(msg: str) -> dict[str, Any] | None:
    """One resolved setting: `Using max model len N` (config/model.py, 0.10+), `Chunked prefill
    is enabled with max_num_batched_tokens=N.` (config.py:1136 in 0.6.4, scheduler.py in 0.10+),
    `Resolved architecture: X`.

    All three are logged while `EngineArgs.create_engine_config` builds the ModelConfig and
    SchedulerConfig (engine/arg_utils.py only: 0.6.3 :837/:1021, 0.10.1 :904/:1281, 0.14.1
    :1223/:1631), before the engine prints its config line (V0 engine/llm_engine.py:238 in
    0.6.3, V1 v1/engine/core.py:74 in 0.10.1, :98 in 0.14.1): `before_dump`, so one opens the
    start it belongs to, and the dump keeps what it alone states (kvtui/core/state.py)."""
    m = _MAX_LEN.match(msg)
    if m is not None:
        return _partial(True, context_length=int(m.group(1)))
    m = _CHUNKED.match(msg)
    if m is not None:
        return _partial(True, max_num_batched_tokens=int(m.group(1)))
    m = _ARCH.match(msg)
    if m is not None:
        return _partial(True, architecture=m.group(1))
    if _ASYNC_OFF.match(msg):
        return _partial(True, async_scheduling=False)
    return None


# --- the catalogue: the kinds this module parses, their layouts and releases -----------------
FORMATS: tuple[Format, ...] = (
    Format("server_args", (
        "Initializing a V1 LLM engine (v", "Initializing an LLM engine (v",
        "Initializing a V0 LLM engine (v", "non-default args: {", "args: Namespace(",
        "Using max model len ", "Chunked prefill is enabled with", "Resolved architecture: ",
        "Async scheduling ", "Starting to load model "), None, (
        Variant("engine:v1", since("0.7.0"), "'Initializing a V1 LLM engine' (0.7+)",
                "v1/engine/core.py:74 (0.10.1), :98 (0.14.1)",
                "(EngineCore pid=7) INFO 05-01 16:27:56 [core.py:74] Initializing a V1 LLM "
                "engine (v0.33.0) with config: model='nvidia/Qwen3-8B-FP8', "
                "speculative_config=None, dtype=torch.bfloat16, max_seq_len=40960, "
                "tensor_parallel_size=1, pipeline_parallel_size=1, quantization=modelopt, "
                "kv_cache_dtype=auto", ("model_path", "tp_size", "version")),
        # V0's engine (engine/llm_engine.py) was removed in 0.11 (absent from the 0.11.0 wheel).
        Variant("engine:v0", until("0.10.2"),
                "'Initializing an LLM engine' (the V0 engine, <= 0.10)",
                "engine/llm_engine.py (0.6.3 :238, 0.10.2 :222); absent from the 0.11.0 wheel",
                "INFO 10-17 08:00:02 llm_engine.py:238] Initializing an LLM engine (v0.6.3) with "
                "config: model='meta-llama/Llama-3.1-8B-Instruct', speculative_config=None, "
                "dtype=torch.bfloat16, max_seq_len=8192, tensor_parallel_size=1, "
                "pipeline_parallel_size=1, kv_cache_dtype=fp8_e4m3",
                ("model_path", "tp_size", "version")),
        # "Initializing an LLM engine (v%s)" in 0.6.6 (:235) and 0.7.0 (:233), "Initializing a
        # V0 LLM engine (v%s)" in 0.7.3 (:235), 0.8.0 (:242), 0.10.2 (:222).
        Variant("engine:v0_named", between("0.7.1", "0.10.2"),
                "'Initializing a V0 LLM engine' (0.7.1-0.10.2)",
                "engine/llm_engine.py 0.7.3 :235, 0.8.0 :242, 0.10.2 :222",
                "INFO 05-01 16:27:56 [llm_engine.py:242] Initializing a V0 LLM engine (v0.8.3) "
                "with config: model='org/m', speculative_config=None, tokenizer='org/m', "
                "dtype=torch.float16, max_seq_len=8192, tensor_parallel_size=2, "
                "pipeline_parallel_size=1", ("model_path", "tp_size", "version")),
        Variant("engine:v0_unnamed", until("0.7.0"),
                "'Initializing an LLM engine' (V0, <= 0.7.0)",
                "engine/llm_engine.py 0.6.6 :235, 0.7.0 :233",
                "INFO 10-17 08:00:02 llm_engine.py:238] Initializing an LLM engine (v0.6.3) with "
                "config: model='m', dtype=torch.bfloat16, max_seq_len=8192, "
                "tensor_parallel_size=1", ("model_path", "version")),
        Variant("server_args:args", None, "non-default args: {...}",
                "entrypoints/utils.py:328 (0.10.2), entrypoints/api_utils.py:273 (0.25.0)",
                "(APIServer pid=1) INFO 05-01 16:27:56 [utils.py:328] non-default args: "
                "{'model': 'Qwen/Qwen3-8B', 'tensor_parallel_size': 2, 'max_model_len': 32768}",
                ("model_path", "tp_size", "context_length")),
        Variant("server_args:namespace", None, "args: Namespace(...)",
                "entrypoints/openai/api_server.py:529 (0.6.3)",
                "INFO 10-17 08:00:01 api_server.py:529] args: Namespace(host=None, port=8000, "
                "model='meta-llama/Llama-3.1-8B-Instruct', kv_cache_dtype='fp8_e4m3', "
                "max_model_len=8192, tensor_parallel_size=1)",
                ("model_path", "kv_cache_dtype", "context_length")),
        Variant("server_args:resolved", None,
                "Using max model len N | Chunked prefill is enabled with max_num_batched_tokens=N."
                " | Resolved architecture: X | Async scheduling ... disabled ... | Starting to "
                "load model X...",
                "engine/arg_utils.py (0.6.3 :837/:1021, 0.10.1 :904/:1281, 0.14.1 :1223/:1631); "
                "model runners' 'Starting to load model' (0.6.3 worker/model_runner.py:1060)",
                "INFO 05-01 16:27:56 [model.py:1630] Using max model len 32768",
                ("context_length",)),
    )),
)
