"""KV capacity calculator and what-if, reproducing SGLang's own arithmetic (UI-free).

The version-by-version SGLang rules live in `kvtui.core.capacity.sglang`; the rest of this
package (ModelSpec, presets, Parallel, the what-if frame) is engine-neutral.

Why it exists: "what if the KV cache were BF16 instead of FP8" is answered wrongly by most
calculators (TP replication of KV heads, hybrid layers, head_dim, MLA). This package computes the
per-GPU cell exactly as SGLang does, checks it against the logged pool, and holds the logged byte
budget fixed to answer the what-if to the token. Method: docs/calculator.md.

API for the report and the TUI
------------------------------
- ``whatif_for_run(run, model=None, checkpoint=None) -> WhatIf | None``: the report's
  ``whatif`` (kvtui.core.report_types: ``current``, ``scenarios``, ``model``, ``version``,
  ``explanation``, ``memory_budget``, ``mamba``, ``inverse``); None when the run has no KV pool
  and no capacity line.
- ``calculator_for_run(run, model=None, checkpoint=None) -> Calculator | None``: the same inputs
  as an object for interactive use. On it:

  - ``calc.scenario(dtype, tp=None, mem_fraction_static=None, context_lengths=None,
    target_concurrency=None) -> Scenario``: one row (tokens, bytes_per_token, concurrency per
    context length, max_running_requests, flag, flag_advice, estimate, basis, fits_target).
    Changing ``tp`` or ``mem_fraction_static`` uses the memory lines of the log
    (``memory_budget``) and is marked ``estimate``; without them ``mem_fraction_static`` gives
    ``tokens: None`` and the reason in ``basis``.
  - ``calc.scenarios(dtypes=None, context_lengths=None)``: rows for the default dtypes.
  - ``inverse(calc, dtype, context_len, concurrency) -> Inverse``: tokens and GiB needed, GiB per
    GPU missing, the mem_fraction_static and TP that would fit.
  - ``calc.report(dtypes, context_lengths)``: what ``whatif_for_run`` returns.
- ``Calculator(current_dtype=..., tokens=..., pool_bytes=..., spec=..., parallel=Parallel(tp=..))``
  builds a what-if without a log (``kvtui whatif --model M --tp N --pool-gib G``).
- ``resolve_model(text_or_spec) -> (ModelSpec, why)``: preset name / HF id / served path,
  config.json or model directory.
- ``kv_cell(spec, dtype, Parallel(tp=..))`` and ``mamba_state(spec, tp)``: the raw cell maths.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kvtui.core.capacity.cell import Cell, kv_cell, mamba_state, pool_gib, pool_gib_line
from kvtui.core.capacity.fromrun import calculator_from_run
from kvtui.core.capacity.inverse import inverse
from kvtui.core.capacity.modelspec import ModelSpec, from_checkpoint, from_hf_config, from_path
from kvtui.core.capacity.parallel import Parallel
from kvtui.core.capacity.presets import match_preset, preset_names, preset_spec, resolve_model
from kvtui.core.capacity.whatif import (
    DEFAULT_CONTEXTS,
    DEFAULT_DTYPES,
    Calculator,
    MemoryFacts,
    sglang_max_running_requests,
)
from kvtui.core.report_types import WhatIf

if TYPE_CHECKING:
    from kvtui.core.checkpoint import CheckpointFacts

__all__ = [
    "DEFAULT_CONTEXTS", "DEFAULT_DTYPES", "Calculator", "Cell", "MemoryFacts", "ModelSpec",
    "Parallel", "calculator_for_run", "from_checkpoint", "from_hf_config", "from_path", "inverse",
    "kv_cell", "mamba_state", "match_preset", "pool_gib", "pool_gib_line", "preset_names",
    "preset_spec", "resolve_model", "sglang_max_running_requests", "whatif_for_run",
]


def calculator_for_run(run: Any, model: Any = None, checkpoint: CheckpointFacts | None = None,
                       **overrides: Any) -> Calculator | None:
    """The interactive calculator for a run (see the module docstring).

    `overrides`: tp, attn_dp, page_size, context_len, replacing what the log says, and
    sglang_version (the release whose rules apply; default: the newest the log allows)."""
    return calculator_from_run(run, model, checkpoint, **overrides)


def whatif_for_run(run: Any, model: Any = None, checkpoint: CheckpointFacts | None = None,
                   dtypes: list[str] | None = None,
                   context_lengths: list[int] | None = None,
                   **overrides: Any) -> WhatIf | None:
    """The `whatif` object of the report for one run, or None when the log has no KV pool."""
    calc = calculator_from_run(run, model, checkpoint, **overrides)
    if calc is None:
        return None
    return calc.report(dtypes, context_lengths)
