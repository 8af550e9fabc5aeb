"""What an engine tells the accuracy checklist (`kvtui.core.accuracy`): its flags, env vars and
its reading of the weight-load lines.

Why apart from the checklist: the engine seam (`kvtui.core.engine`) names these terms, and the
checklist names the seam's `Engine`; with the terms here, below both, there is no circle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kvtui.core.evidence import Evidence

if TYPE_CHECKING:
    from kvtui.core.state import Run

# A weights verdict from the engine: (origin, what, evidence, confidence); origin "checkpoint"
# (pre-quantized), "online" (quantized while loading), "requant" ("TARGET from SOURCE": a
# quantized checkpoint re-quantized while loading), "none" (not quantized), "given" (a
# quantization the operator named, the log not saying whether the checkpoint carries it).
WeightsOrigin = tuple[str, str, Evidence | None, str]


@dataclass(frozen=True)
class AccuracyTerms:
    """What an engine says about the accuracy settings: its flags and env vars, and its reading
    of the weight-load lines (`weights(run)`, None when its lines say nothing)."""

    context_flag: str
    context_env: str
    template_flag: str
    tool_flag: str
    reasoning_flag: str
    # the argument that drops the model's sampling defaults, its value that does, the fix
    generation_arg: str
    generation_off: str
    generation_fix: str
    weights: Callable[[Run], WeightsOrigin | None]
    # the argument's default, which applies the model's generation config ("" if none)
    generation_on: str = ""
    # does an argument the run's dumps leave out stand for its default (a dump of only the
    # operator's arguments, complete)?
    absent_is_default: Callable[[Run], bool] = lambda run: False
    # what a chat request gets when the model has no chat template, in the engine's terms
    no_template: str = ""
    # when the engine lets a context longer than the model's window through (its env var)
    context_allowed: str = ""
    # why the log's silence says nothing of prompts refused for length, where it does not
    # (the engine logs them below the usual level); "" when it logs every one
    length_unlogged: str = ""
    # what the log's silence does not cover, where it covers the rest
    length_caveat: str = ""
