"""Bundled model presets: config values with their sources, and name matching.

Why presets at all: SGLang logs rarely carry the model's shape, and a log read on a laptop has no
config.json beside it. The JSON files in `presets/` hold the KV-relevant config fields (HF names,
`text_config` nesting kept) and, per value, where it came from, so a reader can audit any number
the calculator prints. `resolve_model` turns whatever names a model (a preset name, an HF id,
a served path, a config.json or a model directory) into its spec, for every engine, and
`spec_for_run` is the order every engine's calculator looks for one in.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from kvtui.core.capacity.modelspec import ModelSpec, from_checkpoint, from_hf_config, from_path

if TYPE_CHECKING:
    from collections.abc import Mapping

    from kvtui.core.checkpoint import CheckpointFacts

# Name parts that may follow a preset's name in a served path without changing the KV shape.
_SUFFIX_WORDS = frozenset({
    "instruct", "it", "chat", "base", "pt", "thinking", "hf", "fp8", "nvfp4", "fp4", "mxfp4",
    "mxfp8", "awq", "gptq", "int4", "int8", "w4a16", "w8a8", "w4a8", "bf16", "fp16", "dynamic",
    "quantized", "block", "static", "nvidia", "modelopt", "ep", "tp", "mtp", "eagle", "v1",
})


def _norm(name: str) -> str:
    return name.strip().strip("/").lower()


@lru_cache(maxsize=1)
def load_presets() -> dict[str, dict[str, Any]]:
    """All bundled presets by id (the raw JSON documents)."""
    out: dict[str, dict[str, Any]] = {}
    root = resources.files("kvtui.core.capacity").joinpath("presets")
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".json"):
            doc = json.loads(entry.read_text(encoding="utf-8"))
            out[doc["id"]] = doc
    return out


def preset_names() -> list[str]:
    return [doc["hf_id"] for doc in load_presets().values()]


def _names(doc: dict[str, Any]) -> list[str]:
    names = [doc["id"], doc["hf_id"], *doc.get("aliases", [])]
    out = []
    for n in names:
        out.append(_norm(n))
        out.append(_norm(n.rsplit("/", 1)[-1]))
    return out


def _suffix_ok(rest: str) -> bool:
    """True when what follows a preset name is only quantization/variant words or dates."""
    for word in re.split(r"[-_.]+", rest):
        if not word:
            continue
        if word in _SUFFIX_WORDS or (word.isdigit() and len(word) >= 4):
            continue
        return False
    return True


def match_preset(name: str | None) -> tuple[str, str] | None:
    """(preset id, how it matched) for an HF id, short name or served path; None if no match.

    `/models/nvidia/Qwen3.5-397B-A17B-NVFP4` resolves to Qwen3.5-397B-A17B: the last path
    component is compared with every preset name, and a trailing variant such as `-NVFP4`,
    `-Instruct` or a date is allowed; `GLM-4.5-Air` is not GLM-4.5 because `air` is not a variant
    word, and `DeepSeek-V3.2` is not DeepSeek-V3 (a version suffix is a different model).
    """
    if not name:
        return None
    full = _norm(name)
    base = _norm(full.rsplit("/", 1)[-1])
    two = "/".join(full.split("/")[-2:])
    best: tuple[int, str, str] | None = None
    for pid, doc in load_presets().items():
        for cand in _names(doc):
            if cand in (full, base, two):
                how = f"'{name}' is the preset {doc['hf_id']}"
                score = len(cand) + 1000
            elif base.startswith(cand) and _suffix_ok(base[len(cand):]) and \
                    base[len(cand):len(cand) + 1] in ("-", "_"):
                how = (f"'{name}' matches the preset {doc['hf_id']} "
                       f"(variant suffix '{base[len(cand):].lstrip('-_.')}' ignored)")
                score = len(cand)
            else:
                continue
            if best is None or score > best[0]:
                best = (score, pid, how)
    return (best[1], best[2]) if best else None


def preset_spec(pid: str) -> ModelSpec:
    doc = load_presets()[pid]
    if doc.get("unsupported"):
        # A family kvtui names but cannot size from stored values: the spec carries the plain
        # reason and every number downstream is replaced by it.
        cfg = doc.get("config") or {}
        return ModelSpec(name=doc["hf_id"], hf_id=doc["hf_id"], num_layers=0,
                         num_attention_heads=0, num_kv_heads=0, head_dim=0, v_head_dim=0,
                         architectures=tuple(cfg.get("architectures") or ()),
                         source=f"preset {doc['id']}", unsupported=str(doc["unsupported"]),
                         notes=tuple(doc.get("notes", ())),
                         field_sources=dict(doc.get("sources", {})))
    spec = from_hf_config(doc["config"], name=doc["hf_id"], source=f"preset {doc['id']}")
    return replace(spec, hf_id=doc["hf_id"], notes=tuple(doc.get("notes", ())),
                   field_sources=dict(doc.get("sources", {})))


def resolve_model(model: Any) -> tuple[ModelSpec, str]:
    """(spec, why) from a ModelSpec, a preset name / HF id / served path, a config.json or a model
    directory. Raises ValueError with the preset list when nothing matches."""
    if isinstance(model, ModelSpec):
        return model, f"model spec given ({model.source or model.name})"
    text = str(model)
    if os.path.exists(text):
        spec = from_path(text)
        return spec, f"read from {spec.source}"
    hit = match_preset(text)
    if hit:
        return preset_spec(hit[0]), hit[1]
    raise ValueError(f"--model {text!r}: not a file, a model directory or a preset. Presets: "
                     + ", ".join(preset_names()))


# The arguments that name the served model, in the order they are tried: the path (or HF id)
# the engine loaded, then the name it serves it under (both engines' parsers keep these keys).
_NAMING_ARGS = ("model_path", "served_model_name")


def spec_for_run(model: Any, checkpoint: CheckpointFacts | None, server_args: Mapping[str, Any],
                 notes: list[str], *, args_name: str) -> tuple[ModelSpec, str] | None:
    """(spec, why) for a run's what-if, whichever engine sizes it: the checkpoint's own
    config.json when no `model` is given (it is the deployment's truth), else the given model,
    else a preset a naming argument of the log matches (`args_name` says whose arguments, in the
    why). None when nothing names a known model: the engine says why, as only it knows what its
    log could have named (SGLang's weight line, vLLM's architecture)."""
    read = from_checkpoint(checkpoint, notes) if model is None else None
    if read is not None:
        return read
    if model is not None:
        return resolve_model(model)
    for key in _NAMING_ARGS:
        name = server_args.get(key)
        hit = match_preset(name) if isinstance(name, str) else None
        if hit:
            return preset_spec(hit[0]), f"auto-detected: {hit[1]} ({args_name} {key})"
    return None
