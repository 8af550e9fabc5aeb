"""Which sizing rules change inside the release range a log allows, said in the report.

Why: a log rarely dates itself to one release. kvtui computes with the newest release the log
allows (`Calculator.rules_version`), and when a rule the model depends on changed inside the
range, the report says which rule, at which release, so a reader knows the figure's scope.
"""

from __future__ import annotations

from typing import Protocol

from kvtui.core.capacity.modelspec import ModelSpec
from kvtui.engines.sglang.sizing.args import SizingArgs
from kvtui.engines.sglang.version import VersionRange, fmt

Version = tuple[int, int, int]


class Calculator(Protocol):
    """The facts of a run the notes read (`kvtui.engines.sglang.calculator.Calculator` has
    them): a protocol, so that this module does not import the calculator that imports it."""

    current_dtype: str
    spec: ModelSpec | None
    version: VersionRange
    mrr_user: int | None

    @property
    def sargs(self) -> SizingArgs: ...

    @property
    def rules_version(self) -> Version: ...

    @property
    def kind(self) -> str | None: ...

# rule -> (the releases where it changed, when it applies to a model)
BOUNDARIES: dict[str, tuple[tuple[Version, ...], str]] = {
    "hybrid state split (fixed count / ratio / padding slot)":
        (((0, 5, 4), (0, 5, 7), (0, 5, 8), (0, 5, 13), (0, 5, 17)), "linear"),
    "state slots per running request (radix-cache strategy)":
        (((0, 5, 4), (0, 5, 7), (0, 5, 8), (0, 5, 10), (0, 5, 13), (0, 5, 14)), "linear"),
    "SSM state dtype (config mamba_ssm_dtype read)": (((0, 5, 9),), "linear"),
    "hybrid sliding-window pool (which architectures, token split)":
        (((0, 4, 10), (0, 5, 7), (0, 5, 8), (0, 5, 9), (0, 5, 10), (0, 5, 11)), "swa"),
    "FP4 cell (scales, dequant workspace, printed sizes)":
        (((0, 5, 6), (0, 5, 16), (0, 5, 21)), "fp4"),
    "DSA FP8 latent (656 B stored from 0.5.5, budgeted from 0.5.17; raw 576 B with trtllm "
    "from 0.5.9, SM100's FP8 default from 0.5.10)":
        (((0, 5, 5), (0, 5, 9), (0, 5, 10), (0, 5, 17)), "dsa"),
    "draft layers in the target's cell": (((0, 5, 14), (0, 5, 16)), "spec"),
    "max_running_requests with --max-running-requests": (((0, 5, 10), (0, 5, 14)), "mrr"),
    "V sized with v_head_dim": (((0, 5, 7),), "vdim"),
}


def _relevant(calc: Calculator, what: str) -> bool:
    spec = calc.spec
    if spec is None:
        return what == "mrr" and calc.mrr_user is not None
    return {
        "linear": calc.kind is not None,
        "swa": spec.has_swa,
        "fp4": calc.current_dtype in ("nvfp4", "fp4_mx_block16", "fp4_e2m1"),
        "dsa": spec.is_dsa,
        "spec": calc.sargs.spec_decoding,
        "mrr": calc.mrr_user is not None,
        "vdim": spec.v_head_dim != spec.head_dim and not spec.is_mla,
    }.get(what, False)


def version_notes(calc: Calculator) -> list[str]:
    vr = calc.version
    if vr.lo == vr.hi and any(r.startswith(("--sglang-version", "sglang ")) for r in vr.reasons):
        return [f"SGLang rules of {fmt(calc.rules_version)} ({vr.reasons[0]})"]
    out = [f"SGLang rules of {fmt(calc.rules_version)} (the newest release "
           + ("kvtui knows: no log or no dating clue; pass --sglang-version to choose)"
              if vr.undated else "the log allows)")]
    if vr.undated:
        return out
    for rule, (changes, what) in BOUNDARIES.items():
        inside = [v for v in changes if vr.lo < v <= vr.hi]
        if inside and _relevant(calc, what):
            out.append(f"the log allows {vr.label()}: {rule} changed at "
                       + ", ".join(fmt(v) for v in inside)
                       + f"; figures follow {fmt(calc.rules_version)}")
    return out
