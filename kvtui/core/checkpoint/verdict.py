"""From the scale tensors read to a verdict per engine, with the evidence behind it.

What the engines do with a layer's values (sglang 0.5.23 layers/quantization/kv_cache.py:51-83,
vllm 0.33.0 layers/quantization/kv_cache.py:117-169): both scales > 0 are used as they are; a
scale never loaded keeps its init of -1 (SGLang, vLLM) or 1 (vLLM compressed-tensors) and a
layer with neither scale runs at 1.0; a positive k_scale with no v_scale is copied to V (the
legacy kv_scale path); a v_scale without a positive k_scale fails an assertion at start-up
(`assert layer.k_scale > 0.0`), as does NaN; since SGLang 0.5.18 a layer whose two scales are
both <= 0 falls back to 1.0 (before, and in vLLM, a zero fails the assertion); inf is used as
is, which quantizes every cached value to zero. So zero, negative, NaN and inf are never a
calibration, whichever of these an engine does with them.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable

from kvtui.core.checkpoint import kvnames
from kvtui.core.checkpoint.facts import Finding, KVScaleFacts, KVScaleVerdict, ScaleTensor
from kvtui.core.checkpoint.kvnames import QuantDecl

_MAX_EVIDENCE = 6


def _names(tensors: Iterable[ScaleTensor]) -> tuple[str, ...]:
    return tuple(t.name for t in tensors)[:_MAX_EVIDENCE]


def _layers_text(layers: Iterable[int]) -> str:
    """[0, 1, 2, 5] -> "0-2, 5"."""
    out: list[str] = []
    run: list[int] = []
    for i in sorted(set(layers)):
        if run and i == run[-1] + 1:
            run.append(i)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [i]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ", ".join(out)


def _these(layers: list[int], verb: str = "have") -> str:
    """"layer 3 has" / "layers 1-2, 5 have"."""
    one = len(layers) == 1
    verb = ("has" if verb == "have" else verb) if one else verb
    return f"layer{'' if one else 's'} {_layers_text(layers)} {verb}".rstrip()


def _n(count: int, what: str = "scale tensor") -> str:
    """"1 scale tensor" / "3 scale tensors"."""
    return f"{count} {what}{'' if count == 1 else 's'}"


def _bad(v: float) -> bool:
    return not math.isfinite(v) or v <= 0.0


def judge(engine: str, kv: KVScaleFacts, decl: QuantDecl, *, architecture: str | None,
          num_hidden_layers: int | None, declared: list[str]) -> KVScaleVerdict:
    """The verdict of `engine` on the scales in `kv` (which this does not change)."""
    from kvtui.core.engine import load

    rules = load(engine).kv_scales
    out = KVScaleVerdict(engine=engine, verdict="absent")
    if not decl.known or (architecture and not rules.remaps(architecture)):
        out.confidence = "medium"
    _config_findings(out, kv, decl, declared)
    if not kv.tensors:
        _finish(out, kv)
        return out
    params, why = kvnames.creates_scale_params(rules, decl)
    loaded: list[ScaleTensor] = []
    ignored: list[ScaleTensor] = []
    for t in kv.tensors:
        (loaded if params and rules.target(t.name, decl.family) else ignored).append(t)
    if ignored:
        reason = (why if not params else
                  f"{engine} renames none of them to an attention layer's k_scale/v_scale "
                  f"(e.g. {ignored[0].name})")
        out.findings.append(Finding(
            "unloadable", f"{len(ignored)} of {len(kv.tensors)} KV-scale tensors are not "
            f"loaded: {reason}; those layers run with scale 1.0", _names(ignored)))
    vectors = [t for t in loaded if len(t.values or ()) > 1]
    if vectors and not rules.accepts_vector(decl):
        out.findings.append(Finding(
            "unloadable", f"{_n(len(vectors))} "
            f"{'is a per-head vector' if len(vectors) == 1 else 'are per-head vectors'} (shape "
            f"{list(vectors[0].shape or ())}); {engine} loads only a scalar per layer and fails "
            "at weight loading", _names(vectors)))
        loaded = [t for t in loaded if t not in vectors]
    out.loaded_tensors = len(loaded)
    _value_findings(out, loaded)
    _coverage_findings(out, engine, kv, loaded, num_hidden_layers)
    _finish(out, kv)
    return out


def _value_findings(out: KVScaleVerdict, loaded: list[ScaleTensor]) -> None:
    read = [t for t in loaded if t.values is not None]
    broken = [t for t in read if any(_bad(v) for v in t.values or ())]
    if broken:
        sample = ", ".join(f"{t.name}={_show(t.values)}" for t in broken[:3])
        out.findings.append(Finding(
            "broken", f"{_n(len(broken))} {'holds' if len(broken) == 1 else 'hold'} zero, "
            "negative, NaN or inf values "
            f"({sample}): not a calibration; the engine falls back to 1.0, copies the other "
            "scale, or fails at start-up", _names(broken)))
    good = [t for t in read if t not in broken]
    values = [v for t in good for v in (t.values or ())]
    for kind, attr in (("k", "k_range"), ("v", "v_range")):
        vs = [v for t in good if t.kind in (kind, "kv") for v in (t.values or ())]
        if vs:
            setattr(out, attr, (min(vs), max(vs)))
    if not values:
        return
    ones = [t for t in good if all(v == 1.0 for v in t.values or ())]
    if len(ones) == len(good):
        out.findings.append(Finding(
            "trivial", f"all {len(good)} loaded scale tensors are exactly 1.0: as good as no "
            "scales (the values an uncalibrated export writes)", _names(good)))
    elif all(len({v for t in good if t.kind == kind for v in t.values or ()}) <= 1
             for kind in ("k", "v", "kv")):
        same = sorted({v for t in good for v in t.values or ()})
        out.findings.append(Finding(
            "uniform", f"all {len(good)} loaded scale tensors hold the same value per kind "
            f"({', '.join(f'{v:.6g}' for v in same)}): a global scale, not a per-layer "
            "calibration", _names(good)))
    else:
        ones_note = f"; {len(ones)} of them exactly 1.0" if ones else ""
        out.findings.append(Finding(
            "calibrated", f"{_n(len(good), 'loaded scale tensor')} with varied values "
            f"({min(values):.4g} to {max(values):.4g}{ones_note})", _names(good)))


def _show(values: tuple[float, ...] | None) -> str:
    vs = values or ()
    shown = ", ".join(f"{v:.4g}" for v in vs[:4])
    return shown if len(vs) == 1 else f"[{shown}{', ...' if len(vs) > 4 else ''}]"


def _coverage_findings(out: KVScaleVerdict, engine: str, kv: KVScaleFacts,
                       loaded: list[ScaleTensor], num_hidden_layers: int | None) -> None:
    have: dict[tuple[str, int], set[str]] = defaultdict(set)  # kinds present
    usable: dict[tuple[str, int], set[str]] = defaultdict(set)  # kinds with sound values
    for t in loaded:
        if t.layer is not None:
            kinds = ("k", "v") if t.kind == "kv" else (t.kind,)
            have[(t.stack, t.layer)].update(kinds)
            if t.values is not None and not any(_bad(v) for v in t.values):
                usable[(t.stack, t.layer)].update(kinds)
    stacks = {t.stack for t in kv.tensors if t.layer is not None}
    expected: set[tuple[str, int]] = set()
    for stack in stacks:
        layers = kv.attention_layers.get(stack)
        if not layers and num_hidden_layers:
            layers = list(range(num_hidden_layers))
        if not layers:
            layers = sorted({t.layer for t in kv.tensors if t.stack == stack
                             and t.layer is not None})
        # MTP / draft layers appended after the last hidden layer load only with speculative
        # decoding; their scales (or lack of them) do not decide the served model's verdict.
        cut = num_hidden_layers if num_hidden_layers and len(stacks) == 1 else None
        expected.update((stack, i) for i in layers if cut is None or i < cut)
    out.expected_layers = len(expected)
    out.scaled_layers = sum(1 for key in expected if usable.get(key) == {"k", "v"})
    unread = {(t.stack, t.layer) for t in kv.tensors if t.values is None}
    none = sorted(i for s, i in expected if not have.get((s, i)) and (s, i) not in unread)
    v_only = sorted(i for s, i in expected if have.get((s, i)) == {"v"})
    k_only = sorted(i for s, i in expected if have.get((s, i)) == {"k"})
    if none and loaded:
        out.findings.append(Finding(
            "partial", f"{len(none)} of {len(expected)} attention layers have no {engine}-"
            f"loadable scale ({_these(none, '')}): {'it runs' if len(none) == 1 else 'they run'} "
            "with scale 1.0"))
    if v_only:
        out.findings.append(Finding(
            "partial", f"{_these(v_only)} a v_scale but no k_scale: the "
            "engine's start-up assertion `k_scale > 0` fails"))
    if k_only:
        out.findings.append(Finding(
            "partial", f"{_these(k_only)} a k_scale but no v_scale: the "
            "engine copies K's scale to V"))


def _config_findings(out: KVScaleVerdict, kv: KVScaleFacts, decl: QuantDecl,
                     declared: list[str]) -> None:
    """Config files that say something else than the tensors (or than each other)."""
    algos = {d.split("=", 1)[1] for d in declared if "kv_cache_quant_algo=" in d}
    if len(algos) > 1:
        out.findings.append(Finding(
            "config-mismatch", "the config files disagree on the KV quantization: "
            + "; ".join(declared), tuple(declared)))
    fp8_declared = (decl.kv_cache_quant_algo or "").upper() == "FP8" or (
        decl.kv_cache_scheme is not None and decl.kv_cache_scheme.get("type") == "float"
        and decl.kv_cache_scheme.get("num_bits") == 8)
    dynamic = bool((decl.kv_cache_scheme or {}).get("dynamic"))
    if fp8_declared and not kv.tensors and not dynamic and not kv.stopped \
            and not kv.missing_files:
        out.findings.append(Finding(
            "config-mismatch", f"{'; '.join(declared) or 'the config'} declares an FP8 KV "
            "cache, but the checkpoint has no KV-scale tensors: FP8 runs with scale 1.0",
            tuple(declared)))
    if kv.tensors and not fp8_declared and decl.family in ("modelopt", "compressed-tensors"):
        out.findings.append(Finding(
            "config-mismatch", f"the checkpoint has {len(kv.tensors)} KV-scale tensors but its "
            f"{decl.family} config declares no FP8 KV cache "
            f"({'; '.join(declared) or 'no kv_cache_quant_algo / kv_cache_scheme'})",
            _names(kv.tensors)))
    strategy = decl.scheme_strategy
    if kv.tensors and strategy in ("tensor", "attn_head"):
        shapes = {len(t.values) for t in kv.tensors if t.values is not None}
        vector = any(n > 1 for n in shapes)
        if (strategy == "tensor" and vector) or (strategy == "attn_head" and shapes == {1}):
            out.findings.append(Finding(
                "config-mismatch", f"kv_cache_scheme says strategy {strategy}, but the scale "
                f"tensors are {'per-head vectors' if vector else 'scalars'}",
                _names(kv.tensors)))


def _finish(out: KVScaleVerdict, kv: KVScaleFacts) -> None:
    unread = [t for t in kv.tensors if t.values is None]
    if unread or kv.stopped:
        why = []
        if unread:
            why.append(f"{_n(len(unread))} could not be read "
                       f"({unread[0].problem or 'unread'})")
        if kv.stopped:
            why.append(kv.stopped)
        out.findings.append(Finding("incomplete", "; ".join(why), _names(unread)))
    codes = {f.code for f in out.findings}
    for word in ("broken", "unloadable", "partial", "incomplete", "trivial", "uniform",
                 "calibrated"):
        if word in codes:
            out.verdict = word
            break
    else:
        out.verdict = "absent" if not kv.tensors else "unknown"
    # the first finding shown is the one that decided the verdict
    out.findings.sort(key=lambda f: (f.code != out.verdict,))
