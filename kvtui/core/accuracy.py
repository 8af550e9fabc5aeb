"""The accuracy checklist: every setting a log shows that can cost a deployment accuracy.

Why a checklist beside the alerts: the question that starts a deploy session is "are we doing
anything that could reduce model accuracy?", and its answer is a list, the settings that are
right included, each with the line that shows it. The KV cache is one item (its rules are the
KV alerts'); the others are the weights' format (a pre-quantized checkpoint or weights
quantized while loading), the context length against the model's own window, prompts cut or
refused for length, the chat template, the tool-call / reasoning parsers its template calls
for, and the model's own sampling defaults.

The same function judges an item and raises its alert (`RULES`, in `kvtui.core.alerts`), so a
checklist and the alerts never disagree. What only an engine can say (its flags, its env vars,
which of its load lines prove the checkpoint carries no quantization config) sits behind the
engine seam: the engine's `accuracy` (`AccuracyTerms`, `kvtui/engines/<name>/accuracy.py`).
Where the log cannot tell, the item says so (state "unknown" or "info") and no alert fires.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kvtui.core import severity
from kvtui.core.accuracy_terms import AccuracyTerms
from kvtui.core.evidence import Evidence
from kvtui.core.report_types import AccuracyItem, Alert, snapshot

if TYPE_CHECKING:
    from kvtui.core.checkpoint.facts import CheckpointFacts
    from kvtui.core.engine import Engine
    from kvtui.core.state import Run

ITEMS: tuple[tuple[str, str], ...] = (
    ("kv_cache", "KV cache"), ("weights", "Weights"), ("context", "Context length"),
    ("length", "Prompts cut for length"), ("chat_template", "Chat template"),
    ("parsers", "Tool / reasoning parsers"), ("generation", "Sampling defaults"))
# the alert rules an item's state comes from (besides its own)
KV_RULES = ("kv-fp8-unscaled", "kv-auto-fp8", "kv-fp8-e5m2", "kv-fp4", "kv-fp8",
            "fp8-attention-scales", "checkpoint-kv-scales")


@dataclass(frozen=True)
class Judged:
    """An item's verdict; a `rule` with a `title` raises that alert (where it costs accuracy
    and the log shows it), a `rule` alone names the alert that already says it."""

    state: str
    summary: str
    evidence: Evidence | None = None
    fix: str | None = None
    confidence: str | None = None
    rule: str | None = None
    title: str = ""
    detail: str = ""


def terms(engine: Engine | None) -> AccuracyTerms | None:
    """The engine's accuracy terms (None: no engine known, or one that states none)."""
    return engine.accuracy if engine is not None else None


def _started(run: Run) -> bool:
    """Did the run get past building its model config (where both engines check the context
    length against the model's window)? A weight load or a pool says so; with the start's
    argument dump in the log too, the check's warning would be in it (an excerpt that begins
    later may have cut it)."""
    return bool(run.weights or run.pools or run.capacity)


# --- the items ------------------------------------------------------------------------------
def judge_weights(run: Run, engine: Engine | None,
                  checkpoint: CheckpointFacts | None = None) -> Judged:
    t = terms(engine)
    quant = run.server_args.get("quantization")
    if checkpoint is not None and quant and checkpoint.quant_method is None \
            and checkpoint.has_config:
        return _online(str(quant), run.server_args_evidence, "high",
                       "the checkpoint's config.json has no quantization_config")
    got = t.weights(run) if t is not None else None
    if got is None:
        if run.weights:  # a load line of a layout that does not print the quantization
            return Judged("unknown", "the weight-load line names no quantization and no "
                                     "argument does")
        return Judged("unknown", "no weight-load line or argument says")
    origin, what, ev, confidence = got
    if origin == "checkpoint":
        return Judged("info", f"{what}, pre-quantized checkpoint",
                      ev, confidence=confidence)
    if origin == "online":
        why = ("the engine reported quantizing them" if confidence == "high" else
               "the weight-load line names no checkpoint quantization")
        return _online(what, ev, confidence, why)
    if origin == "requant":
        target, _, source = what.partition(" from ")
        return _online(target, ev, confidence, "the weight-load line names the "
                       "re-quantization", source or None)
    if origin == "none":
        shown = f"not quantized ({what})" if what and what != "auto" else "not quantized"
        return Judged("ok", shown, ev)
    return Judged("info", f"{what} (given as an argument: pre-quantized or quantized while "
                  "loading, the log does not say)", ev)


def _online(method: str, ev: Evidence | None, confidence: str, why: str,
            source: str | None = None) -> Judged:
    """Weights quantized to `method` while loading, from a BF16 checkpoint or (`source`) from
    a checkpoint quantized in another format."""
    frm = f"the {source} checkpoint" if source else "the BF16 weights"
    detail = (f"The weights were quantized to {method} while loading ({why}): a checkpoint "
              "the model's makers quantized was calibrated on data; quantizing on the fly "
              f"rounds {frm} with no calibration, which costs more accuracy than a published "
              "checkpoint of the same format.")
    fix = (f"Serve a pre-quantized {method} checkpoint of this model if one is published (then "
           "the argument is not needed), or drop the quantization argument to serve "
           + (f"the {source} checkpoint as it is." if source else "it in BF16."))
    shown = f"{method}, re-quantized from {source} while loading" if source else \
        f"{method}, quantized while loading"
    return Judged("warning", shown, ev, fix, confidence, "weights-quantized-on-load",
                  f"Weights quantized to {method} while loading", detail)


def model_window(checkpoint: CheckpointFacts | None) -> str | None:
    """The model's own window and RoPE scaling as its config.json states them (the checkpoint
    read by `kvtui ssh` / `--checkpoint`); None when no config was read. The engines derive
    their limit from these (SGLang 0.5.23 utils/hf_transformers/common.py:677-696:
    max_position_embeddings times the RoPE factor, unless the scaling names its original
    window or is llama3's)."""
    if checkpoint is None or not checkpoint.model_config:
        return None
    cfg = checkpoint.model_config  # a multimodal model's text config already merged in
    window = cfg.get("max_position_embeddings")
    if not isinstance(window, int):
        return None
    rope = cfg.get("rope_scaling") or cfg.get("rope_parameters")
    said = f"config.json: max_position_embeddings {window:,}"
    if isinstance(rope, dict) and (rope.get("factor") or rope.get("rope_type") or rope.get("type")):
        kind = rope.get("rope_type") or rope.get("type") or "?"
        factor = rope.get("factor")
        original = rope.get("original_max_position_embeddings")
        said += f", RoPE {kind}" + (f" x{factor}" if factor else "") + (
            f" of {original:,}" if isinstance(original, int) else "")
    else:
        said += ", no RoPE scaling"
    return said


def judge_context(run: Run, engine: Engine | None,
                  checkpoint: CheckpointFacts | None = None) -> Judged:
    t = terms(engine)
    window = model_window(checkpoint)
    notice = run.notices.get("context_override")
    cap = run.primary_capacity() or {}
    context = cap.get("context_len") or run.server_args.get("context_length")
    rope = _rope_override(run)
    if notice is not None:
        f = notice.fields
        asked, derived = f.get("context_length"), f.get("derived")
        if not f.get("allowed"):
            return Judged("info", f"{asked:,} asked, above the model's {derived:,}: the engine "
                          "refused to start", notice.evidence)
        env = t.context_env if t is not None else "the engine's override env var"
        flag = t.context_flag if t is not None else "the context-length argument"
        detail = (f"The context length was set to {asked:,} tokens, past the {derived:,} the "
                  "model's config allows (its window, with its RoPE scaling). "
                  + (t.context_allowed if t is not None and t.context_allowed else
                     "The engine let it through.")
                  + " Its own warning says positions past the window \"may lead to incorrect "
                  "model outputs\": long prompts degrade or turn to garbage.")
        fix = (f"Set {flag} {derived} (or leave it unset) and unset {env}; to serve longer "
               "contexts, use the RoPE scaling the model's makers publish for it (YaRN in its "
               "config), which raises the window the engine derives.")
        if window:
            detail += f" The checkpoint's {window}."
        return Judged("critical", f"{asked:,} > the model's {derived:,} ({env})",
                      notice.evidence, fix, "high", "context-beyond-model",
                      f"Context length {asked:,} past the model's window ({derived:,})", detail)
    if context and _started(run) and run.server_args_evidence is not None:
        # not asked for: the engine took the model's own (a value only its resolved config
        # line states is its own, vLLM's `max_seq_len`)
        asked_for = run.server_args.get("context_length") is not None \
            and "context_length" not in run.resolved_keys
        text = (f"{context:,} tokens, within the model's window (no start-up warning)"
                if asked_for else f"{context:,} tokens, the model's own window (not set)")
        if window:
            text += f"; {window}"
        if rope:
            text += f"; RoPE scaling overridden ({rope})"
        ev = run.capacity_evidence or run.server_args_evidence
        return Judged("info" if rope else "ok", text, ev)
    return Judged("unknown", "no start-up lines past the model's config")


def _rope_override(run: Run) -> str | None:
    for key in ("json_model_override_args", "hf_overrides"):
        value = run.server_args.get(key)
        if value and "rope" in str(value):
            return f"{key}={str(value)[:80]}"
    return None


def judge_length(run: Run, engine: Engine | None) -> Judged:
    notice = run.notices.get("input_too_long")
    if notice is not None:
        count = notice.evidence.count
        cut = bool(notice.fields.get("truncated"))
        return Judged("warning", f"{count:,} request(s) {'truncated' if cut else 'rejected'} "
                      "over the run", notice.evidence, rule="input-too-long")
    rt = run.runtime
    t = terms(engine)
    if t is not None and t.length_unlogged:
        return Judged("unknown", t.length_unlogged)
    if rt.prefill_batches or rt.decode_batches:
        caveat = f" ({t.length_caveat})" if t is not None and t.length_caveat else ""
        return Judged("ok", f"none logged over {rt.prefill_batches + rt.decode_batches:,} "
                      f"batch lines{caveat}")
    return Judged("unknown", "no request served in the log")


def judge_template(run: Run, engine: Engine | None) -> Judged:
    t = terms(engine)
    flag = t.template_flag if t is not None else "--chat-template"
    notice = run.notices.get("chat_template")
    given = run.server_args.get("chat_template")
    if notice is not None:
        source, name = notice.fields.get("origin"), notice.fields.get("name")
        ev = notice.evidence
        if source == "model":
            return Judged("ok", "the model's own", ev)
        if source == "python":
            return Judged("ok", f"the model's own, rendered by the engine ({name})", ev)
        if source == "argument":
            return Judged("info", f"given by {flag} {name}", ev)
        if source == "builtin":
            return Judged(
                "info", f"the engine's built-in '{name}' (guessed from the model path)", ev,
                f"Check that '{name}' is the model's own format, or pass its template with "
                f"{flag}.", "low")
        if source == "fallback":
            return Judged(
                "info", "the engine's fallback for the model type (the model has none)", ev,
                f"Check the fallback matches how the model was trained, or pass its template "
                f"with {flag}.", "low")
        effect = t.no_template if t is not None else (
            "chat requests are refused or rendered without the role markers the model was "
            "trained on")
        detail = (f"The server found no chat template for this model: {effect}, so chat and "
                  "tool-call answers degrade or fail.")
        fix = (f"Pass the model's template with {flag} (a .jinja file from the model's "
               "repository), or serve the instruct / chat checkpoint, which carries one.")
        return Judged("warning", "none found for this model", ev, fix, "high",
                      "chat-template-missing", "No chat template for this model", detail)
    if given:
        return Judged("info", f"given by {flag} {given}", run.server_args_evidence)
    used = run.notices.get("chat_format")
    if used is not None:
        # a template in use, no fallback line and no error: the tokenizer's, the model's own
        return Judged("ok", f"the model's own (content format {used.fields.get('format')})",
                      used.evidence)
    return Judged("unknown", "no template line in the log")


def judge_parsers(run: Run, engine: Engine | None) -> Judged:
    t = terms(engine)
    sa = run.server_args
    features = run.notices.get("template_features")
    missing: list[tuple[str, str, str]] = []  # (what, suggested, flag)
    if features is not None:
        for key, what, flag in (("tool_call_parser", "tool-call",
                                 t.tool_flag if t else "--tool-call-parser"),
                                ("reasoning_parser", "reasoning",
                                 t.reasoning_flag if t else "--reasoning-parser")):
            suggested = features.fields.get(key)
            if suggested and key in sa and sa.get(key) in (None, ""):
                missing.append((what, str(suggested), flag))
    if missing and features is not None:
        names = " and ".join(f"{what} ({s})" for what, s, _ in missing)
        fix = "Add " + " ".join(f"{flag} {s}" for _, s, flag in missing) + "."
        detail = (f"The engine read the model's chat template and found it calls for a {names} "
                  "parser, but none was given: tool calls come back as plain text in the "
                  "answer instead of `tool_calls` (an agent sees no call), and the reasoning is "
                  "left inside the content.")
        return Judged("warning", f"{names} parser expected by the chat template, not enabled",
                      features.evidence, fix, "medium", "parser-not-enabled",
                      f"The chat template calls for a {names} parser; none is enabled", detail)
    given = {k: sa.get(k) for k in ("tool_call_parser", "reasoning_parser") if sa.get(k)}
    if given:
        # "auto" takes the template's suggestion (SGLang 0.5.23 entrypoints/engine.py:215-239):
        # what it became is the detection line's, and without one the log does not say
        shown, unsure = [], False
        for k, v in given.items():
            if v == "auto":
                found = features.fields.get(k) if features is not None else None
                unsure |= features is None
                v = f"{found} (auto)" if found else "auto, none detected"
            shown.append(f"{k.split('_')[0]}: {v}")
        return Judged("info" if unsure else "ok", ", ".join(shown),
                      features.evidence if features is not None and not unsure
                      else run.server_args_evidence)
    if "tool_call_parser" in sa or "reasoning_parser" in sa or (
            t is not None and t.absent_is_default(run)):
        return Judged("info", "none given (no line says whether the model's chat format needs one)",
                      run.server_args_evidence)
    return Judged("unknown", "not in the argument dump")


def judge_generation(run: Run, engine: Engine | None) -> Judged:
    t = terms(engine)
    notice = run.notices.get("generation_defaults")
    if notice is not None:
        params = notice.fields.get("params") or ""
        return Judged("ok", f"the model's generation config applied {params}".rstrip(),
                      notice.evidence)
    if t is not None and t.generation_arg in run.server_args:
        value = run.server_args.get(t.generation_arg)
        if value == t.generation_off:
            detail = (f"{t.generation_arg}={value}: requests that do not set temperature / "
                      "top_p / top_k get the engine's defaults, not the ones the model's makers "
                      "recommend in its generation_config.json (if it has one); reasoning "
                      "models loop or ramble at the wrong temperature.")
            return Judged("warning", f"the model's generation config not applied "
                          f"({t.generation_arg}={value})", run.server_args_evidence,
                          t.generation_fix, "low", "generation-defaults-ignored",
                          "The model's recommended sampling defaults are not applied", detail)
        if value not in (None, ""):
            return Judged("ok", f"the model's, if it has a generation config "
                          f"({t.generation_arg}={value})", run.server_args_evidence)
    if t is not None and t.generation_on and t.absent_is_default(run) \
            and t.generation_arg not in run.server_args:
        # every argument the operator gave is listed: an absent one is the engine's default
        return Judged("ok", f"the model's, if it has a generation config ({t.generation_arg}="
                      f"{t.generation_on}, the default)", run.server_args_evidence)
    return Judged("unknown", "no generation-config line")


def judge_kv(run: Run, alerts: Sequence[Alert]) -> Judged:
    found = sorted((a for a in alerts if a.rule in KV_RULES),
                   key=lambda a: severity.rank(a.severity))
    if found:
        a = found[0]
        return Judged(a.severity, a.title, a.evidence, a.fix, a.confidence, a.rule)
    eff, _, ev = run.effective
    if eff:
        return Judged("ok", f"{eff}, no KV-cache alert", ev)
    return Judged("unknown", "no KV dtype line or argument")


JUDGES: dict[str, Callable[[Run, Any], Judged]] = {
    "length": judge_length, "chat_template": judge_template,
    "parsers": judge_parsers, "generation": judge_generation,
}


def checklist(run: Run, alerts: Sequence[Alert], engine: Engine | None,
              checkpoint: CheckpointFacts | None = None) -> tuple[AccuracyItem, ...]:
    """The current run's checklist, one item per setting, in `ITEMS` order; empty when no
    engine is known (no line was recognised)."""
    if engine is None:
        return ()
    out = []
    for key, label in ITEMS:
        if key == "kv_cache":
            j = judge_kv(run, alerts)
        elif key == "weights":
            j = judge_weights(run, engine, checkpoint)
        elif key == "context":
            j = judge_context(run, engine, checkpoint)
        else:
            j = JUDGES[key](run, engine)
        out.append(AccuracyItem(key, label, j.state, j.summary, snapshot(j.evidence), j.fix,
                                j.confidence if j.state != "ok" else None, j.rule))
    return tuple(out)


def _alert(j: Judged) -> Alert | None:
    if j.rule is None or j.state not in ("critical", "warning") or not j.title:
        return None
    return Alert(j.rule, j.state, j.title, j.detail, j.evidence, j.fix or "",
                 j.confidence or "high")


def rule_context(st: Any, run: Run, ctx: Any) -> Alert | None:
    return _alert(judge_context(run, ctx.engine, ctx.checkpoint))


def rule_weights(st: Any, run: Run, ctx: Any) -> Alert | None:
    return _alert(judge_weights(run, ctx.engine, ctx.checkpoint))


def rule_template(st: Any, run: Run, ctx: Any) -> Alert | None:
    return _alert(judge_template(run, ctx.engine))


def rule_parsers(st: Any, run: Run, ctx: Any) -> Alert | None:
    return _alert(judge_parsers(run, ctx.engine))


def rule_generation(st: Any, run: Run, ctx: Any) -> Alert | None:
    return _alert(judge_generation(run, ctx.engine))


RULES: tuple[tuple[str, Callable[[Any, Run, Any], Alert | None]], ...] = (
    ("context-beyond-model", rule_context),
    ("weights-quantized-on-load", rule_weights),
    ("chat-template-missing", rule_template),
    ("parser-not-enabled", rule_parsers),
    ("generation-defaults-ignored", rule_generation),
)
