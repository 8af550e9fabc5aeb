"""The engine-neutral side of the KV capacity what-if (UI-free): model specs, presets, the
parallel layout, the what-if frame.

Why the split: a model's KV shape (heads, head_dim, the hybrid layer layout, the MLA latent) and
the bundled presets are the same whichever engine serves it, and so is the frame the report, the
CLI and the TUI read a what-if through. How an engine sizes its pool from them is the engine's:
SGLang's calculator and its release-by-release rules are `kvtui.engines.sglang` (`calculator`,
`cell`, `sizing/`), vLLM's `kvtui.engines.vllm` (`calculator`, `sizing`); the core reaches them
only through the engine seam (`kvtui.core.engine.Engine.calculator`). Method: docs/calculator.md.

API
---
- ``resolve_model(text_or_spec) -> (ModelSpec, why)``: preset name / HF id / served path,
  config.json or model directory.
- ``ModelSpec``, ``from_hf_config``, ``from_path``, ``from_checkpoint``: the KV-relevant shape.
- ``preset_names()``, ``match_preset(name)``, ``preset_spec(id)``: the bundled presets.
- ``spec_for_run(model, checkpoint, server_args, notes, args_name=..)``: the spec a run's
  what-if uses (checkpoint, given model, then a preset the log names), for every engine.
- ``Parallel(tp=.., attn_dp=.., attn_cp=.., pp=..)``: the layout a what-if sizes for.
- ``MemoryKnob``, ``parse_fraction``, ``DEFAULT_CONTEXTS``: the what-if frame.
"""

from __future__ import annotations

from kvtui.core.capacity.modelspec import ModelSpec, from_checkpoint, from_hf_config, from_path
from kvtui.core.capacity.parallel import Parallel
from kvtui.core.capacity.presets import (
    match_preset,
    preset_names,
    preset_spec,
    resolve_model,
    spec_for_run,
)
from kvtui.core.capacity.whatif import DEFAULT_CONTEXTS, MemoryKnob, parse_fraction

__all__ = [
    "DEFAULT_CONTEXTS", "MemoryKnob", "ModelSpec", "Parallel", "from_checkpoint",
    "from_hf_config", "from_path", "match_preset", "parse_fraction", "preset_names",
    "preset_spec", "resolve_model", "spec_for_run",
]
