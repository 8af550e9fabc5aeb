"""Precision and capacity alerts: pure rules over the current run's facts.

Each rule reads the folded state (and the what-if, for capacity rules) and returns at most one
`Alert` carrying its evidence line and the exact change that fixes it. Rules look only at the
current run, so a restart with a safe setting clears the previous run's alerts by itself, and a
rule whose facts are contradicted by later lines simply stops firing.

Wording matters here: these texts are read at 2 a.m. during a bad deploy. Say what happened,
what it costs, and what to type.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kvtui.core import accuracy, dtypes, severity
from kvtui.core.capacity.answers import knob_answer, knob_answers
from kvtui.core.capacity.whatif import floor_fit
from kvtui.core.engine import first_name, load, retraction_groups, term
from kvtui.core.evidence import Evidence
from kvtui.core.report_types import Alert, Inverse, WhatIf
from kvtui.core.runtime import SATURATION, batch_usage
from kvtui.core.state import Run, State
from kvtui.core.units import fmt_bytes_gib
from parsers import BATCH_KINDS, Event

if TYPE_CHECKING:
    from kvtui.core.checkpoint import CheckpointFacts, KVScaleVerdict
    from kvtui.core.engine import Engine, Flags


@dataclass(frozen=True)
class AlertOptions:
    min_context_concurrency: float = 2.0  # low-context-concurrency below this many requests
    target_concurrency: float | None = None  # bf16-does-not-fit below this (default 1)
    saturation_batches: int = 5  # pool-saturated after this many consecutive batches >= 0.95
    queue_growth_batches: int = 20  # ... or a queue growing on this many decode lines, no drop
    calibration_tolerance: float = 0.02


# ------------------------------------------------------------------------------------------
def _scale_verdict(checkpoint: CheckpointFacts | None, engine: str) -> KVScaleVerdict | None:
    """The checkpoint's KV-scale verdict for the engine, or None when its tensors were not
    read. An "incomplete" verdict is returned too; the rules treat it as a hint, not as
    proof."""
    return checkpoint.kv_scale_verdict(engine) if checkpoint is not None else None


def _read_scales_text(verdict: KVScaleVerdict) -> str:
    return f"\nThe checkpoint was read ({verdict.engine} rules): {verdict.summary()}."


def _checkpoint_read(checkpoint: CheckpointFacts | None) -> bool:
    """Was any of the checkpoint read? Facts with no source are a search that found nothing
    (`kvtui ssh` on a path that is not a directory on the host), and a directory with neither
    a config nor a tensor list gave nothing either: they support nothing beyond the log."""
    return checkpoint is not None and checkpoint.source is not None and (
        checkpoint.has_config or checkpoint.has_k_scale is not None
        or checkpoint.kv_scales is not None)


def _not_found_text(checkpoint: CheckpointFacts | None) -> str:
    """Where the checkpoint was looked for and not found, for an alert's detail ("" when it
    was read, or not looked for)."""
    if checkpoint is None or _checkpoint_read(checkpoint):
        return ""
    why = "; ".join(checkpoint.notes) or f"{checkpoint.model_path}: not found"
    return f"\nThe checkpoint was looked for but nothing of the checkpoint was read ({why})."


# The sentences only an engine can say (what its warning reads, what its silence means), by key;
# an engine's `wording` replaces any of them. These defaults are SGLang's, the first engine's.
WORDING: dict[str, str] = {
    "scales_missing.said": 'SGLang printed "no scaling factors provided"',
    "scales_missing.checkpoint_has_scales": (
        "The checkpoint itself has per-layer k_scale/v_scale tensors, which SGLang loads "
        "through the weight loader anyway: the warning only means --quantization-param-path "
        "was not given. Verify that this model class maps those tensors (a 'not found the "
        "expected name' warning would say it did not)."),
    "scales_missing.unknown": (
        "SGLang prints this warning whenever --quantization-param-path is absent, even when "
        "the checkpoint carries k_scale/v_scale tensors, so check the checkpoint's "
        "model.safetensors.index.json (kvtui ssh does this for you)."),
    "auto_fp8.since": ">= 0.5.3",
    "auto_fp8.silence": (
        "SGLang logs no warning for this (0.5.13+ prints nothing but the pool's dtype), and "
        "the scales default to 1.0 unless the checkpoint carries k_scale/v_scale."),
    "fp8.silence": "(no 'no scaling factors' warning, no 'Loaded KV cache scaling factors' "
                   "line). If the checkpoint has no k_scale/v_scale, scales default to 1.0.",
    "context.reject": ("SGLang will retract or reject long requests (\"Input length exceeds "
                       "the maximum allowed length\")"),
    "retraction.verb": "retracted",
    "retraction.nouns": "retractions",
    "retraction.Noun": "Retraction",
    "retraction.admit": "--max-running-requests, --schedule-conservativeness > 1",
    "oom.fix": (
        "Lower --mem-fraction-static if CUDA graph capture or activations run out; raise it "
        "if the KV pool is too small (\"Not enough memory\"); lower --cuda-graph-max-bs or "
        "--chunked-prefill-size for activation peaks."),
    # a profiled KV budget in bytes that is <= 0 (an engine that states its budget in GiB)
    "profiled_negative.budget_why": (
        "what the profile set aside (the weights, the activation peak and the reserved slack) "
        "already takes more than the --mem-fraction-static share of GPU memory, so there is "
        "no KV cache at all and the server stops at start-up."),
    # a pool line that counts no KV block (`_no_blocks`)
    "profiled_negative.blocks_why": (
        "what the profile set aside (the weights and the activation peak) leaves no room for "
        "one KV block, so there is no KV cache at all and the server stops at start-up."),
    "profiled_negative.budget_fix": (
        "Raise --mem-fraction-static (or free the GPU), lower --context-length, "
        "--max-running-requests or --chunked-prefill-size (a smaller activation peak), shard "
        "the weights over more GPUs (higher --tp-size), or serve a smaller / more quantized "
        "checkpoint."),
    # a run whose KV budget is a number of bytes the operator set (WhatIf.memory_knob)
    "oom.fix.fixed_budget": (
        "The KV budget is set by hand, and the engine does not profile around it: lower it if "
        "CUDA graph capture or activations run out; raise it, or lower the context length, "
        "when the KV cache cannot hold one request."),
}


def say(ctx: _Ctx, key: str) -> str:
    """The engine's sentence for `key`, else the core's."""
    own = ctx.engine.wording if ctx.engine is not None else {}
    return str(own.get(key) or WORDING[key])


def _flag(ctx: _Ctx, which: Callable[[Flags], str | None], default: str) -> str:
    """One of the engine's flags (`kvtui.core.engine.Flags`: `which` picks it), or SGLang's
    spelling."""
    value = which(ctx.engine.flags) if ctx.engine is not None else default
    return str(value) if value else ""


def _bytes_knob(ctx: _Ctx) -> dict[str, Any] | None:
    """The what-if's memory knob when the run's KV budget is a number of bytes (vLLM's
    --kv-cache-memory-bytes), else None: the engine's memory-fraction flag sizes it."""
    knob = ctx.whatif.memory_knob if ctx.whatif is not None else None
    return knob if knob and knob.get("unit") == "bytes" and knob.get("flag") else None


def _mem(ctx: _Ctx, requests: float | None = None) -> str:
    """The flag that gives the KV cache more memory, as a fix names it. On a run sized by a
    byte budget it is that flag with a value: the bytes `requests` requests of context_len
    take (whole blocks), or the current value to go above."""
    knob = _bytes_knob(ctx)
    if knob is None:
        return _flag(ctx, lambda f: f.mem_fraction, "--mem-fraction-static")
    flag, per = knob["flag"], knob.get("request_bytes")
    if requests is not None and isinstance(per, int) and per > 0:
        n = max(1, math.ceil(requests))
        need = n * per
        what = "one" if n == 1 else f"{n:,}"
        return (f"{flag} to {need} ({fmt_bytes_gib(need)} per GPU: {what} request"
                f"{'' if n == 1 else 's'} of {knob.get('context_len', 0):,} tokens)")
    value = knob.get("value")
    if isinstance(value, int):
        return f"{flag} above its {value} ({fmt_bytes_gib(value)} per GPU) now"
    return str(flag)


def _calibrated_scales(ctx: _Ctx) -> str:
    """Where calibrated FP8 scales come from on this engine."""
    path = _flag(ctx, lambda f: f.scales_path, "--quantization-param-path")
    ckpt = "a checkpoint with k_scale/v_scale tensors, e.g. calibrated with ModelOpt/llm-compressor"
    return f"{path} kv_cache_scales.json (or {ckpt})" if path else ckpt


# ------------------------------------------------------------------------------------------
def _rule_fp8_unscaled(st: State, run: Run, ctx: _Ctx) -> Alert | None:
    ev = run.scales_missing
    if ev is None or run.scales_loaded is not None:
        return None
    ck = ctx.checkpoint
    ck_scales = ck.has_k_scale if ck is not None else None
    ranks = f" on {ev.count} rank lines" if ev.count > 1 else ""
    detail = (
        f"{say(ctx, 'scales_missing.said')}{ranks}: the FP8 E4M3 KV cache stores "
        "K and V with a scale of 1.0. E4M3 has 3 mantissa bits (about 6% relative rounding "
        "error) and a maximum of 448, so any K/V value above 448 saturates and small values "
        "lose most of their precision. Over long contexts (agentic sessions, RAG) the "
        "attention scores drift and the model misremembers earlier turns, with no error "
        "anywhere."
    )
    sev, confidence = "critical", "high"
    title = "FP8 KV cache running with scaling factors of 1.0"
    verdict = _scale_verdict(ck, ctx.engine_name)
    if ctx.after_load:
        # The warning itself proves the loaded scales are 1.0: what the checkpoint holds only
        # explains why (all ones, or names this model class does not map).
        if verdict is not None:
            detail += _read_scales_text(verdict)
        elif ck_scales is True:
            detail += "\n" + say(ctx, "scales_missing.checkpoint_has_scales")
        else:
            detail += "\n" + say(ctx, "scales_missing.unknown")
    elif verdict is not None and verdict.verdict != "incomplete":
        if verdict.usable:
            sev, confidence = "warning", verdict.confidence
            title = ("FP8 KV warning printed, but the checkpoint's calibrated k_scale/v_scale "
                     "are loaded")
            detail += ("\nSGLang prints this warning whenever --quantization-param-path is "
                       "absent; the scales come from the checkpoint's weights instead.")
        elif verdict.verdict != "absent":
            title = f"FP8 KV cache running with scaling factors of 1.0 (checkpoint scales " \
                    f"{verdict.verdict})"
        detail += _read_scales_text(verdict)
    elif ck_scales is True:
        if verdict is not None:
            confidence = "medium"
            detail += _read_scales_text(verdict)
        sev = "warning"
        title = "FP8 KV warning printed, but the checkpoint carries k_scale/v_scale"
        detail += "\n" + say(ctx, "scales_missing.checkpoint_has_scales")
    elif ck_scales is False:
        detail += "\nThe checkpoint was inspected: it has no k_scale/v_scale tensors anywhere."
    else:
        detail += "\n" + say(ctx, "scales_missing.unknown") + _not_found_text(ck)
        confidence = "high" if _checkpoint_read(ck) else "medium"
    fix = (f"Serve the KV cache in BF16: {ctx.bf16_advice(run)}. Or keep FP8 with "
           f"calibrated scales: {_calibrated_scales(ctx)}.")
    # The pool scales each tile of values itself: the warning is printed all the same.
    inline = _inline_scaled(
        "kv-fp8-unscaled", ctx, run,
        "FP8 KV 'scales of 1.0' warning printed, but the pool scales every tile itself",
        f"{say(ctx, 'scales_missing.said')}{ranks}.", ev, confidence)
    return inline or Alert("kv-fp8-unscaled", sev, title, detail, ev, fix, confidence)


def _inline_scaled(rule: str, ctx: _Ctx, run: Run, title: str, said: str,
                   ev: Evidence | None, confidence: str) -> Alert | None:
    """The info an FP8 rule gives instead when the engine's pool keeps scales of its own
    beside its values (`Engine.fp8_scales_inline`: the static scales are not read at all),
    or None."""
    inline = ctx.engine.fp8_scales_inline(run, ctx.checkpoint) if ctx.engine is not None \
        else None
    if inline is None:
        return None
    return Alert(rule, "info", title, f"{said} {inline} What remains is FP8 E4M3's own "
                 "rounding (3 mantissa bits) on each scaled value.", ev,
                 f"Nothing to fix for the scales. For a 16-bit cache: {ctx.bf16_advice(run)}.",
                 confidence)


def _rule_auto_fp8(st: State, run: Run, ctx: _Ctx) -> Alert | None:
    if not dtypes.is_fp8(ctx.effective):
        return None
    conf = run.configured_kv_dtype
    chosen, basis, ev = run.effective
    # The engine's own "Setting KV cache dtype to X for <model>" line is printed only when the
    # dtype was left at auto (SGLang: `if kv_cache_dtype == "auto"` before each, 0.5.23
    # arg_groups/overrides.py:318, :502, :532, :902), so it proves `auto` without the dump.
    # (A dump names what the override made of it, ServerArgs logged once built:
    # entrypoints/engine.py:311 in 0.5.23; such a run, corpus dsv4_head, keeps kv-fp8 until
    # the DeepSeek-V4 pool's own scales are modelled.) Only where the engine knows how that
    # pool scales (DSA's NSA pool): DeepSeek-V4's keeps scales of its own that kvtui does not
    # model yet (mem_cache/deepseek_v4_memory_pool.py:300-320 in 0.5.23), so its line alone
    # keeps the generic kv-fp8 rather than a critical "scales of 1.0".
    engine_chose = (basis == "model_default_line" and conf is None and chosen is not None
                    and ctx.engine is not None
                    and ctx.engine.fp8_scales_inline(run, ctx.checkpoint) is not None)
    if conf != "auto" and not engine_chose:
        return None  # an explicit FP8 choice, or no dump seen (kv-fp8 covers that)
    if run.scales_missing is not None and not ctx.after_load:
        return None  # SGLang's warning only fires for a literal fp8_e4m3 setting
    confidence = "high"
    ck = ctx.checkpoint
    algo = ck.kv_cache_quant_algo if ck is not None else None
    where = basis_words(ctx, basis)
    if ev is not None:
        where += f" (line {ev.line})"
    label = (ctx.engine or load(first_name())).label
    since = say(ctx, "auto_fp8.since")
    kv_flag = _flag(ctx, lambda f: f.kv_cache_dtype, "--kv-cache-dtype")
    by_model = basis == "model_default_line"
    if by_model:
        # The engine says it chose the dtype for the model (and GPU): SGLang's DeepSeek DSA
        # default is fp8_e4m3 on SM100+ whatever the checkpoint declares (0.5.5
        # server_args.py:1078-1085, 0.5.23 arg_groups/overrides.py:532-538).
        why = (f"{label} set it itself, as its default for this model (and GPU), whatever the "
               "checkpoint declares")
    elif algo:
        why = (f"the checkpoint declares kv_cache_quant_algo \"{algo}\", and {label} {since} "
               "turns `auto` into FP8 for such a checkpoint")
    else:
        why = (f"{label} {since} turns `auto` into FP8 when the checkpoint's quantization config "
               "declares kv_cache_quant_algo FP8 (ModelOpt NVFP4/FP8 exports do); the checkpoint "
               "itself was not read (kvtui ssh, or kvtui check --checkpoint DIR, reads it)"
               + _not_found_text(ck).replace("\n", " ").rstrip("."))
    said = f"{kv_flag} was left at auto"
    fix = (f"Pin the KV dtype explicitly: {ctx.bf16_advice(run)}; or, if FP8 is intended, "
           f"say so with {kv_flag} fp8_e4m3 and supply calibrated scales.")
    inline = ctx.engine.fp8_scales_inline(run, ck) if ctx.engine is not None else None
    if inline is not None:
        # The pool keeps a scale per tile: an unasked FP8 switch, but nothing runs at 1.0.
        detail = (f"{said}, yet {where} shows the KV cache in {ctx.effective}: {why}. "
                  f"{inline} What remains is FP8 E4M3's own rounding (3 mantissa bits) on "
                  "each scaled value, where a 16-bit cache was perhaps expected.")
        fix = (f"If a 16-bit cache was meant, pin it: {ctx.bf16_advice(run)}; if FP8 is "
               f"intended, say so with {kv_flag} fp8_e4m3 (nothing to fix for the scales).")
        return Alert("kv-auto-fp8", "warning", f"KV cache switched to FP8 ({ctx.effective}) "
                     "by default: the pool scales every tile itself", detail,
                     ctx.effective_evidence, fix, confidence)
    silence = ("The line is a warning among the start-up lines, and the scales default to 1.0 "
               "unless the checkpoint carries k_scale/v_scale." if by_model
               else say(ctx, 'auto_fp8.silence'))
    detail = (
        f"{said}, yet {where} shows the KV cache in {ctx.effective}: {why}. "
        f"{silence} Long-context accuracy can degrade silently."
    )
    sev = "critical"
    verdict = _scale_verdict(ck, ctx.engine_name)
    if verdict is not None:
        detail += _read_scales_text(verdict)
        if verdict.usable:
            sev = "warning"  # FP8 as the exporter calibrated it; still an unasked switch
        elif verdict.verdict == "incomplete":
            confidence = "medium"
    return Alert("kv-auto-fp8", sev, f"KV cache silently switched to FP8 ({ctx.effective})",
                 detail, ctx.effective_evidence, fix, confidence)


def _rule_e5m2(st: State, run: Run, ctx: _Ctx) -> Alert | None:
    if ctx.effective != "fp8_e5m2":
        return None
    detail = ("FP8 E5M2 keeps only 2 mantissa bits: about 12.5% relative rounding error on "
              "every cached K and V value (E4M3: 6%, BF16: 0.4%). It trades precision for "
              "range that a KV cache rarely needs.")
    kv_flag = _flag(ctx, lambda f: f.kv_cache_dtype, "--kv-cache-dtype")
    path = _flag(ctx, lambda f: f.scales_path, "--quantization-param-path")
    scales = f" {path} ..." if path else " and a checkpoint that carries k_scale/v_scale"
    fix = (f"Use BF16 ({ctx.bf16_advice(run)}) or, for FP8, E4M3 with "
           f"calibrated scales ({kv_flag} fp8_e4m3{scales}).")
    return Alert("kv-fp8-e5m2", "warning", "FP8 E5M2 KV cache (2 mantissa bits)", detail,
                 ctx.effective_evidence, fix)


def _rule_fp4(st: State, run: Run, ctx: _Ctx) -> Alert | None:
    if not dtypes.is_fp4(ctx.effective):
        return None
    detail = (f"The KV cache is {ctx.effective} (FP4 E2M1: 1 mantissa bit, max 6, block "
              "scales). SGLang's own accuracy table for FP4 KV (docs, quantized_kv_cache.md) "
              "shows aime25 dropping from 0.7733 to 0.6000 on Qwen3-235B-A22B, 0.5067 to "
              "0.4000 on DeepSeek-R1-0528 and 0.7533 to 0.3533 on GPT-OSS-120B versus a 16-bit "
              "KV cache; the docs add that degradation is larger at long context.")
    fix = (f"Use FP8 E4M3 with calibrated scales, or BF16 "
           f"({ctx.bf16_advice(run)}).")
    return Alert("kv-fp4", "critical", f"FP4 KV cache ({ctx.effective})", detail,
                 ctx.effective_evidence, fix)


def _rule_fp8(st: State, run: Run, ctx: _Ctx) -> Alert | None:
    if ctx.effective not in ("fp8_e4m3", "mxfp8") or run.scales != "unknown":
        return None
    if "kv-auto-fp8" in ctx.fired:
        return None
    detail = (f"The KV cache is {ctx.effective} and the log says nothing about scaling "
              f"factors {say(ctx, 'fp8.silence')}")
    path = _flag(ctx, lambda f: f.scales_path, "--quantization-param-path")
    fix = ("Check the checkpoint for k_scale/v_scale tensors (kvtui ssh inspects it, or kvtui "
           "check --checkpoint DIR)" + (f", or supply {path}" if path else "")
           + "; or serve BF16: " + ctx.bf16_advice(run))
    sev, confidence = "warning", "medium"
    title = f"FP8 KV cache in effect ({ctx.effective})"
    inline = _inline_scaled("kv-fp8", ctx, run, f"{title}: the pool scales every tile itself",
                            f"The KV cache is {ctx.effective}.", ctx.effective_evidence,
                            confidence)
    if inline is not None:
        return inline
    verdict = _scale_verdict(ctx.checkpoint, ctx.engine_name)
    detail += _not_found_text(ctx.checkpoint)
    if verdict is not None:
        detail += _read_scales_text(verdict)
        if verdict.usable:
            sev, confidence = "info", verdict.confidence
            title = f"FP8 KV cache in effect ({ctx.effective}) with the checkpoint's scales"
        elif verdict.verdict != "incomplete":
            sev, confidence = "critical", verdict.confidence
            title = (f"FP8 KV cache in effect ({ctx.effective}) without usable scales "
                     f"(checkpoint scales {verdict.verdict})")
    return Alert("kv-fp8", sev, title, detail, ctx.effective_evidence, fix, confidence)


def _rule_attention_scales(st: State, run: Run, ctx: _Ctx) -> Alert | None:
    """Q and softmax-probability scales (vLLM 0.33.0 model_executor/layers/quantization/
    kv_cache.py:147-209): a checkpoint without q_scale gets K's scale ("only matters for FP8
    attention backends"); with `--kv-cache-dtype fp8` and a q or prob scale of 1.0 the engine
    warns that this "may cause accuracy issues"."""
    if run.qscale_missing is None:
        return None
    uncalibrated = "uncalibrated" in run.qscale_forms
    if uncalibrated:
        detail = ("The engine runs FP8 attention with an uncalibrated q_scale and/or prob_scale "
                  "of 1.0 (the checkpoint carries no calibrated query / softmax-probability "
                  "scales), and says this may cause accuracy issues. Where the attention "
                  "kernel itself computes in FP8 (flash-attn, FlashInfer), queries and "
                  "attention probabilities are rounded to E4M3 at a scale of 1.0, on top of "
                  "the KV cache's own rounding.")
        sev, title = "warning", "FP8 attention with uncalibrated q/prob scales (1.0)"
    else:
        detail = ("The checkpoint carries no q_scale, so the engine sets each layer's query "
                  "scale to its k_scale. This matters only for FP8 attention backends "
                  "(flash-attn, FlashInfer), which quantize the queries too.")
        sev, title = "info", "No q scaling factor in the checkpoint (q_scale := k_scale)"
    fix = ("Use a checkpoint calibrated with query and attention scales (e.g. llm-compressor "
           "with a kv_cache_scheme that also calibrates the attention), or serve the KV cache "
           f"in BF16: {ctx.bf16_advice(run)}.")
    return Alert("fp8-attention-scales", sev, title, detail, run.qscale_missing, fix, "medium")


def _rule_context_exceeds_pool(st: State, run: Run, ctx: _Ctx) -> Alert | None:
    cap = run.primary_capacity()
    if not cap:
        return None
    total, context = cap.get("max_total_num_tokens"), cap.get("context_len")
    if not total or not context or context <= total:
        return None
    conc = cap.get("max_concurrency")
    if isinstance(conc, (int, float)) and conc >= 1:
        return None  # the engine's own concurrency says one request fits (vLLM 0.9-0.19
        # hybrids print their pool divided by the number of layer groups)
    detail = (f"{term(ctx.engine, 'context_len')} is {context:,} tokens but the KV pool holds "
              f"only {total:,} tokens "
              f"per GPU: a single request at full context cannot fit, and "
              f"{say(ctx, 'context.reject')}.")
    mem = _mem(ctx, 1)
    ctx_flag = _flag(ctx, lambda f: f.context_length, "--context-length")
    fix = (f"Give the KV cache more memory (raise {mem}, or more GPUs / higher "
           f"TP), or cap {ctx_flag} at {total:,} or less.")
    return Alert("context-exceeds-pool", "critical",
                 f"Full context ({context:,}) exceeds the KV pool ({total:,} tokens)", detail,
                 run.capacity_evidence, fix)


def _current_concurrency(run: Run, ctx: _Ctx) -> tuple[float | None, int | None, int | None]:
    """The full-context requests the pool fits, cut to 2 decimals (`floor_fit`: 1.996 is not
    "2.00"), the pool's tokens and the context length."""
    cap = run.primary_capacity() or {}
    total = cap.get("max_total_num_tokens")
    context = cap.get("context_len")
    if total is None:
        pool = run.primary_kv_pool()
        total = pool.tokens if pool else None
    if not total or not context:
        return None, total, context
    conc = cap.get("max_concurrency")
    if isinstance(conc, (int, float)) and not isinstance(conc, bool):
        exact = _exact_concurrency(ctx)  # the figure unrounded, when the calculator has it
        # the engine's own, when it prints one
        return floor_fit(exact if exact is not None else float(conc)), total, context
    return floor_fit(total, context), total, context


def _exact_concurrency(ctx: _Ctx) -> float | None:
    """The unrounded figure behind the engine's printed concurrency (vLLM's "%.2fx"), where its
    calculator reproduced it (`Current.max_concurrency_exact`)."""
    cur = ctx.whatif.current if ctx.whatif is not None else None
    return cur.max_concurrency_exact if cur is not None else None


def _rule_low_concurrency(st: State, run: Run, ctx: _Ctx) -> Alert | None:
    conc, total, context = _current_concurrency(run, ctx)
    if conc is None or total is None or context is None:
        return None
    if conc < 1 or conc >= ctx.options.min_context_concurrency:
        return None  # < 1 is context-exceeds-pool's job
    running = (run.primary_capacity() or {}).get("max_running_requests")
    if running is None:
        running = run.server_args.get("max_running_requests")
    if isinstance(running, int) and not isinstance(running, bool) and 0 < running <= conc:
        # The server never runs more requests than the pool holds at full context (a single
        # long-context request by design, guqiong96/Lsglang#9: max_running_requests=1 at
        # 1.00): the running cap queues them, not the pool, and more memory would not help.
        return None
    detail = (f"The pool holds {total:,} tokens per GPU; at {term(ctx.engine, 'context_len')} "
              f"{context:,} that is "
              f"{conc:.2f} concurrent full-context requests{_logged_as(run, ctx, conc)}. A "
              "few long agentic sessions will queue behind each other or be retracted.")
    fix = (f"Raise {_mem(ctx, ctx.options.min_context_concurrency)} or TP, lower "
           f"{_flag(ctx, lambda f: f.context_length, '--context-length')}, or accept the queueing. "
           "See the what-if for what each KV dtype would give.")
    pool = run.primary_kv_pool()
    evidence = run.capacity_evidence or (pool.evidence if pool is not None else None)
    return Alert("low-context-concurrency", "warning",
                 f"Only {conc:.2f} full-context requests fit", detail, evidence, fix,
                 extra={"concurrency": conc})


def _logged_as(run: Run, ctx: _Ctx, conc: float) -> str:
    """The engine's printed figure, where it rounds the exact one to another number."""
    logged = (run.primary_capacity() or {}).get("max_concurrency")
    if _exact_concurrency(ctx) is None or not isinstance(logged, float) or \
            f"{logged:.2f}" == f"{conc:.2f}":
        return ""
    who = ctx.engine.label if ctx.engine is not None else "the engine"
    return f" ({who} logs {logged:.2f}x, rounded)"


def _rule_bf16_does_not_fit(st: State, run: Run, ctx: _Ctx) -> Alert | None:
    wi = ctx.whatif
    if not wi or not dtypes.is_low_precision(ctx.effective):
        return None
    scen = wi.scenario("bf16")
    if scen is None:
        return None
    conc = scen.concurrency
    cap = run.primary_capacity() or {}
    context = cap.get("context_len")
    key = str(context) if context else None
    value = conc.get(key) if key else None
    if value is None:
        return None
    target = ctx.options.target_concurrency or 1.0
    if value >= target:
        return None
    fits = _inverse_summary(wi.inverse, ctx)
    detail = (f"With the same KV byte budget, BF16 would hold {scen.tokens:,} tokens: "
              f"{value:.2f} concurrent requests at {term(ctx.engine, 'context_len')} "
              f"{context:,} (target "
              f"{target:g}).{fits}")
    need = (knob_answer(wi.inverse, "kv_cache_memory_bytes").needed
            if wi.inverse is not None else None)
    knob = _bytes_knob(ctx)
    more = (f"{knob['flag']} {need} ({fmt_bytes_gib(need)} per GPU, in BF16)"
            if knob is not None and need else _mem(ctx))
    ctx_flag = _flag(ctx, lambda f: f.context_length, "--context-length")
    fix = (f"Before switching to BF16, add KV memory (higher {more}, higher TP "
           f"or more GPUs) or lower {ctx_flag}; the "
           "what-if shows the numbers.")
    return Alert("bf16-does-not-fit", "warning",
                 f"BF16 KV would fit only {value:.2f} full-context requests", detail,
                 ctx.effective_evidence or run.capacity_evidence, fix,
                 extra={"bf16_concurrency": value})


def _inverse_summary(inv: Inverse | None, ctx: _Ctx) -> str:
    """The calculator's inverse answer in one sentence ("what would fit")."""
    if inv is None or not inv.dtype or inv.fits_now:
        return ""
    need = f"{inv.concurrency} x {inv.context_len:,}-token requests"
    if inv.kv_gib_needed is not None:  # a calculator without the pool's layout says tokens
        missing = (f" ({inv.missing_gib_per_gpu} GiB missing)"
                   if inv.missing_gib_per_gpu is not None else "")
        parts = [f" {inv.dtype} for {need} needs {inv.kv_gib_needed} GiB of KV per GPU{missing}"]
    elif inv.tokens_needed is not None:
        held = (f" (the pool holds {inv.tokens_available:,})"
                if inv.tokens_available is not None else "")
        parts = [f" {inv.dtype} for {need} needs {inv.tokens_needed:,} tokens of KV{held}"]
    else:
        parts = [f" {inv.dtype} does not hold {need}"]
    options = []
    knob = _bytes_knob(ctx)
    mem = knob["flag"] if knob is not None else _flag(ctx, lambda f: f.mem_fraction,
                                                      "--mem-fraction-static")
    answers = {a.name: a for a in knob_answers(inv)}
    # the first memory knob that fits (a byte budget is always accepted; a fraction only
    # when the engine takes it)
    fits = next((a for a in answers.values() if a.name != "tp" and a.needed and (
        a.feasible or a.name == "kv_cache_memory_bytes")), None)
    if fits is not None:
        options.append(f"{mem} {fits.needed}")
    if answers["tp"].needed:
        options.append(f"TP {answers['tp'].needed}")
    if options:
        parts.append(": that fits with " + " or ".join(options))
    return "".join(parts) + "."


def _rule_retraction(st: State, run: Run, ctx: _Ctx) -> Alert | None:
    rt = run.runtime
    retractions, retracted_reqs = rt.retraction_counts(retraction_groups(ctx.engine))
    if not retractions:
        return None
    ratio = ""
    if rt.new_token_ratio_first is not None and rt.new_token_ratio_last is not None:
        ratio = (f" new_token_ratio moved {rt.new_token_ratio_first:.4f} -> "
                 f"{rt.new_token_ratio_last:.4f}.")
    detail = (f"The KV pool ran out during decode {retractions:,} times; {retracted_reqs:,} "
              f"requests were {say(ctx, 'retraction.verb')} (their KV freed, to be recomputed "
              f"later).{ratio} {say(ctx, 'retraction.Noun')} costs latency and throughput and "
              "signals the pool is too small for this load.")
    fix = (f"Give the KV cache more room ({_mem(ctx)}, "
           "TP, an FP8 KV cache with calibrated scales) or admit less work "
           f"({say(ctx, 'retraction.admit')}).")
    return Alert("kv-retraction", "warning", f"{retractions:,} {say(ctx, 'retraction.nouns')} "
                 f"({retracted_reqs:,} requests)", detail, rt.retraction_evidence, fix)


def _rule_saturated(st: State, run: Run, ctx: _Ctx) -> Alert | None:
    rt = run.runtime
    opts = ctx.options
    if rt.saturation.longest >= opts.saturation_batches:
        detail = (f"Token usage stayed at or above {SATURATION:.2f} for "
                  f"{rt.saturation.longest:,} consecutive batches (peak "
                  f"{rt.peak_token_usage:.2f}). New requests wait for KV space.")
        ev = rt.saturated_evidence
    elif rt.queue_growth.longest >= opts.queue_growth_batches:
        detail = (f"The request queue grew on {rt.queue_growth.longest:,} decode lines without "
                  "dropping once "
                  f"(peak #queue-req {rt.peak_queue_req:,}).")
        ev = rt.queue_req.evidence
    else:
        return None
    fix = (f"More KV capacity ({_mem(ctx)}, TP, "
           "replicas) or less admitted load; check the timeline for when it started.")
    return Alert("pool-saturated", "warning", "KV pool saturated", detail, ev, fix)


def _rule_oom(st: State, run: Run, ctx: _Ctx) -> Alert | None:
    if not run.ooms:
        return None
    first = run.ooms[0]
    total = sum(e.count for e in run.ooms)
    msgs = "; ".join(m[:120] for m in run.oom_messages[:3])
    detail = f"{total:,} out-of-memory error line(s): {msgs}"
    knob = _bytes_knob(ctx)
    fix = say(ctx, "oom.fix") if knob is None else (
        say(ctx, "oom.fix.fixed_budget") + f" ({knob['flag']} is {knob.get('value')} now.)")
    return Alert("oom", "critical", "Out of memory", detail, first, fix)


def _rule_unbalanced(st: State, run: Run, ctx: _Ctx) -> Alert | None:
    ev = run.mem_unbalanced
    if ev is None:
        return None
    detail = ("Free memory differs between GPUs before weight loading; SGLang sizes every "
              "rank's KV pool by the minimum, so the whole deployment loses capacity to the "
              "busiest GPU (another process is probably using it).")
    fix = "Find the other process (nvidia-smi) and free that GPU, or pin the server elsewhere."
    return Alert("mem-unbalanced", "warning", "GPU memory unbalanced across ranks", detail, ev,
                 fix)


def _rule_calibration(st: State, run: Run, ctx: _Ctx) -> Alert | None:
    if ctx.whatif is None:
        return None
    cur = ctx.whatif.current
    ratio = cur.calibration_ratio
    if ratio is None or abs(ratio - 1.0) <= ctx.options.calibration_tolerance:
        return None
    why = cur.calibration_note or ""
    detail = (f"Measured {cur.bytes_per_token} B/token in the logged pool vs "
              f"{cur.compared_bytes_per_token} computed from the model spec (ratio "
              f"{ratio:.3f}). The spec may not match the served model. {why}").strip()
    fix = "Pass the served model's config.json with --model so the calculator uses it."
    pool = run.primary_kv_pool()
    return Alert("calibration-mismatch", "info", f"Pool size differs from the model spec "
                 f"(ratio {ratio:.2f})", detail, pool.evidence if pool else None, fix, "medium")


# ------------------------------------------------------------------------------------------
# Capacity limits and failures the engine itself reports (issue 12).


def _profiled_budget(run: Run) -> tuple[float, Evidence] | None:
    """The lowest KV budget in GiB a memory profile left (a whole-cache budget pool that was
    profiled, not set by hand: vLLM's "Available KV cache memory"), with its line."""
    pools = [p for p in run.pools.values() if p.kind == "kv" and not p.configured
             and p.role == "target" and p.kv_gib is not None and p.evidence is not None]
    if not pools:
        return None
    low = min(pools, key=lambda p: p.kv_gib if p.kv_gib is not None else math.inf)
    assert low.kv_gib is not None and low.evidence is not None
    return low.kv_gib, low.evidence


def _rule_profiled_negative(st: State, run: Run, ctx: _Ctx) -> Alert | None:
    """The memory profile left nothing for the KV cache: SGLang says it in tokens (the
    "larger than the profiled value" line), vLLM in GiB (its "Available KV cache memory").
    Either way the engine stops at start-up; the why and the fix are the engine's words."""
    mem = _flag(ctx, lambda f: f.mem_fraction, "--mem-fraction-static")
    tp = _flag(ctx, lambda f: f.tensor_parallel, "--tp-size")
    profiled = run.profiled_tokens
    ev = run.max_total_tokens_capped
    if profiled is not None and profiled <= 0 and ev is not None:
        detail = (f"The memory profile left {profiled:,} tokens for the KV cache: the weights "
                  f"(and the reserved slack) already take more than the {mem} share of GPU "
                  "memory, so there is no KV pool at all. The requested --max-total-tokens "
                  "cannot help; the server stops at start-up with \"Not enough memory\".")
        fix = (f"Raise {mem} (or free the GPU), shard the weights over more GPUs (higher "
               f"{tp}), or serve a smaller / more quantized checkpoint.")
        return Alert("profiled-capacity-negative", "critical",
                     f"No memory left for the KV cache (profiled {profiled:,} tokens)", detail,
                     ev, fix, extra={"profiled_tokens": profiled})
    budget = _profiled_budget(run)
    if budget is None or budget[0] > 0:
        return _no_blocks(run, ctx)
    gib, ev = budget
    shown = f"{gib:.2f}"  # as the engine prints its budget (to 0.01 GiB)
    detail = (f"The memory profile left {shown} GiB for the KV cache: "
              + say(ctx, "profiled_negative.budget_why"))
    fix = say(ctx, "profiled_negative.budget_fix")
    return Alert("profiled-capacity-negative", "critical",
                 f"No memory left for the KV cache (profiled {shown} GiB)", detail, ev, fix,
                 extra={"kv_budget_gib": gib})


def _no_blocks(run: Run, ctx: _Ctx) -> Alert | None:
    """A pool line that counts 0 (or fewer) KV blocks: the engine's own check stops it there
    (vLLM raises "No available memory for the cache blocks" right after printing "# GPU blocks:
    0": vllm/engine/llm_engine.py:205-211 in 0.2.0), so the log never shows a pool to serve from.
    """
    for cap in run.capacity.values():
        blocks = cap.get("gpu_blocks")
        if isinstance(blocks, int) and blocks <= 0 and run.capacity_evidence is not None:
            detail = (f"The KV cache pool has {blocks:,} blocks: "
                      + say(ctx, "profiled_negative.blocks_why"))
            return Alert("profiled-capacity-negative", "critical",
                         f"No memory left for the KV cache ({blocks:,} blocks)", detail,
                         run.capacity_evidence, say(ctx, "profiled_negative.budget_fix"),
                         extra={"gpu_blocks": blocks})
    return None


def _rule_input_too_long(st: State, run: Run, ctx: _Ctx) -> Alert | None:
    notice = run.notices.get("input_too_long")
    if notice is None:
        return None
    f = notice.fields
    count = notice.evidence.count
    limit = f.get("max_tokens")
    size = f.get("input_tokens")
    truncated = bool(f.get("truncated"))
    what = "truncated to fit" if truncated else "rejected"
    limit_text = f" (allowed: {limit:,} tokens)" if isinstance(limit, int) else ""
    size_text = f" the latest had {size:,} tokens{limit_text};" if isinstance(size, int) else ""
    detail = (f"{count:,} request line(s) were {what} for being longer than the server allows:"
              f"{size_text} the limit is the smaller of the context length and what the KV "
              "pool can hold. "
              + ("Truncated prompts lose their beginning silently." if truncated else
                 "Clients get an error (HTTP 400) instead of an answer."))
    ctx_flag = _flag(ctx, lambda f: f.context_length, "--context-length")
    fix = ("Give the KV cache more room (the what-if shows what each setting would hold) or "
           f"raise {ctx_flag} if the model allows; "
           "otherwise make clients send shorter inputs.")
    return Alert("input-too-long", "warning", f"{count:,} request(s) longer than allowed",
                 detail, notice.evidence, fix, extra={"requests": count})


def _rule_process_exception(st: State, run: Run, ctx: _Ctx) -> Alert | None:
    notice = run.notices.get("process_exception")
    if notice is None:
        return None
    process = notice.fields.get("process") or "A server process"
    detail = (f"{process} hit an exception and logged its traceback (on the lines after the "
              "evidence); the server stops serving, or serves without that process. The error "
              "itself is the traceback's last line.")
    fix = ("Read the traceback below the evidence line; an out-of-memory or a KV-pool "
           "error there has its own alert.")
    return Alert("process-exception", "critical", f"{process} hit an exception", detail,
                 notice.evidence, fix, extra={"lines": notice.evidence.count})


def _rule_pool_leak(st: State, run: Run, ctx: _Ctx) -> Alert | None:
    notice = run.notices.get("pool_leak")
    if notice is None:
        return None
    f = notice.fields
    pool = f.get("pool") or "the KV pool"
    free, total = f.get("available_tokens"), f.get("total_tokens")
    counted = isinstance(free, int) and isinstance(total, int)
    extra = {"lines": notice.evidence.count}
    if isinstance(free, int) and isinstance(total, int) and free > total:
        # More slots on the free list than the pool has: slots freed twice (or a miscount),
        # not slots lost. SGLang's idle check fires on any mismatch either way:
        # available + evictable != max_total_num_tokens - protected (sglang 0.5.8
        # managers/scheduler_runtime_checker_mixin.py:150-161, the message at :234-249).
        over = free - total
        detail = (f"The engine's memory check counted {free:,} free slots in {pool}, which has "
                  f"only {total:,}: {over:,} more than exist. Slots were released twice (a "
                  "double free) or the accounting is off; nothing leaked. A slot on the free "
                  "list twice may be handed to two requests at once, which then overwrite "
                  "each other's KV values (wrong output, no error), and a strict check stops "
                  "the server.")
        fix = ("Restart the server to rebuild the free list, and report the over-release "
               "upstream with the evidence line and the features in use (radix cache, "
               "speculative decoding, PD, retraction).")
        extra["over_released"] = over
        return Alert("pool-leak", "warning",
                     f"KV pool double free: {over:,} slots released twice ({pool})", detail,
                     notice.evidence, fix, extra=extra)
    nums = (f" ({free:,} of {total:,} slots accounted free when idle)" if counted else "")
    detail = (f"The engine's memory check found slots of {pool} that no request owns{nums}. "
              "Leaked slots stay taken: the usable pool shrinks for the rest of the run, and "
              "a strict check stops the server.")
    fix = ("Restart the server to recover the pool, and report the leak upstream with the "
           "evidence line and the features in use (radix cache, speculative decoding, PD).")
    return Alert("pool-leak", "warning", f"KV pool leak detected ({pool})", detail,
                 notice.evidence, fix, extra=extra)


def _rule_mamba_cap(st: State, run: Run, ctx: _Ctx) -> Alert | None:
    notice = run.notices.get("mamba_cap")
    if notice is None:
        return None
    f = notice.fields
    cap = f.get("max_running_requests")
    if not isinstance(cap, int):
        return None
    size, slots = f.get("max_mamba_cache_size"), f.get("slots_per_request")
    basis = (f" ({size:,} state slots, {slots} per request)"
             if isinstance(size, int) and isinstance(slots, int) else "")
    detail = (f"At most {cap:,} requests can run at once: the Mamba / linear-attention state "
              f"cache holds only that many{basis}, whatever the KV pool could hold. Requests "
              "beyond it queue.")
    sev = "critical" if cap <= 0 else "warning"
    fix = ("Give the state cache more memory: raise --mamba-full-memory-ratio or "
           "--max-mamba-cache-size, or halve each state with --mamba-ssm-dtype bfloat16 "
           "(the engine's own advice).")
    return Alert("mamba-cap", sev, f"Concurrency capped at {cap:,} by the Mamba state cache",
                 detail, notice.evidence, fix, extra={"max_running_requests": cap})


def _rule_requests_reduced(st: State, run: Run, ctx: _Ctx) -> Alert | None:
    notice = run.notices.get("requests_reduced")
    if notice is None:
        return None
    f = notice.fields
    asked, got = f.get("requested"), f.get("max_running_requests")
    if not isinstance(asked, int) or not isinstance(got, int):
        return None
    flag = _flag(ctx, lambda f: f.max_running_requests, "--max-running-requests")
    detail = (f"{flag} asked for {asked:,} concurrent requests per DP worker; the KV pool "
              f"holds only enough for {got:,}, so that is what runs.")
    fix = (f"Lower {flag} to {got:,} to say what the server really does, or give the KV cache "
           "more memory (the what-if shows what each setting would hold).")
    return Alert("requests-reduced", "warning",
                 f"max_running_requests reduced from {asked:,} to {got:,}", detail,
                 notice.evidence, fix, extra={"requested": asked, "max_running_requests": got})


# How a report names the line an effective KV dtype was read from (Run.effective's basis).
BASIS_WORDS: dict[str, str] = {
    "kv_dtype_line": "the 'Using KV cache dtype' line",
    # vLLM's `Initializing a V1 LLM engine (vX) with config: ... kv_cache_dtype=...`
    "config_line": "the engine config line",
    "pool_line": "the KV pool line",
    "override_line": "the 'Setting KV cache dtype' override line",
    # 'Setting KV cache dtype to fp8_e4m3 for DeepSeek DSA on SM10 device.': SGLang's own
    # default for the model (and GPU), whatever the checkpoint declares
    "model_default_line": "the 'Setting KV cache dtype ... for <model>' default line",
    # 'Set DSA backends for fp8_e4m3 KV Cache: ...' (0.5.9+), 'Setting NSA backend to ... for
    # FP8 KV Cache.' (0.5.5-0.5.8): the backends SGLang chose for the KV dtype it resolved
    "dsa_backend_line": "the DSA attention-backend line",
    "fallback_line": "the '--kv-cache-dtype falls back to 'auto'' line",
    "server_args": "the server-args dump",
    "fp8_warning": "the FP8 scaling-factor warning",
    "model_dtype": "the model dtype at weight load",
    "accuracy_warning": "the engine's KV accuracy warning",
}


def basis_words(ctx: _Ctx, basis: str) -> str:
    """How an alert names the line that gave the KV dtype: the engine's own words for its line
    (wording key `basis.<basis>`: vLLM's dtype line is "Using fp8 data type to store kv cache",
    not SGLang's "Using KV cache dtype"), else the core's."""
    own = ctx.engine.wording if ctx.engine is not None else {}
    return str(own.get(f"basis.{basis}") or BASIS_WORDS.get(basis, "the log"))


def _rule_checkpoint_scales(st: State, run: Run, ctx: _Ctx) -> Alert | None:
    """Before a deploy (`kvtui check --checkpoint DIR` with no log yet): a checkpoint that
    declares an FP8 KV cache but carries no usable scales will be served with scaling factors
    of 1.0. Silent once a log shows the KV cache: the FP8 rules then say it with evidence."""
    ck = ctx.checkpoint
    if ck is None or ctx.effective is not None:
        return None
    algo, scheme = str(ck.kv_cache_quant_algo or "").upper(), ck.kv_cache_scheme
    if not (algo == "FP8" or scheme):
        return None
    verdict = _scale_verdict(ck, ctx.engine_name)
    if verdict is None or verdict.usable or verdict.verdict == "incomplete":
        return None
    declared = f"kv_cache_quant_algo {algo}" if algo else "an FP8 kv_cache_scheme"
    detail = (f"The checkpoint declares {declared}, so from SGLang 0.5.3 `--kv-cache-dtype auto` "
              "serves its KV cache in FP8 (vLLM from 0.14 likewise); its scales are "
              f"{verdict.verdict}: the cache will run with scaling factors of 1.0."
              + _read_scales_text(verdict))
    fix = (f"Serve the KV cache in BF16 ({ctx.bf16_advice(run)}), or calibrate the KV scales "
           "before deploying (ModelOpt / llm-compressor with a calibration set).")
    return Alert("checkpoint-kv-scales", "critical",
                 f"The checkpoint's FP8 KV cache has no usable scales ({verdict.verdict})",
                 detail, None, fix, verdict.confidence)


@dataclass
class _Ctx:
    options: AlertOptions
    whatif: WhatIf | None
    checkpoint: CheckpointFacts | None
    engine: Engine | None  # None when no line named the engine
    effective: str | None
    effective_evidence: Evidence | None
    fired: set[str] = field(default_factory=set)
    release: str | None = None

    def bf16_advice(self, run: Run) -> str:
        """The flag that gives a BF16 KV cache on the releases this log (or the host, or the
        user's pin) implies."""
        if self.engine is None:
            return "--kv-cache-dtype bf16"
        return str(self.engine.kv_dtype_advice("bf16", run, self.checkpoint,
                                                release=self.release))

    @property
    def engine_name(self) -> str:
        """Whose loading rules decide what the checkpoint's scales are worth."""
        return self.engine.name if self.engine is not None else first_name()

    @property
    def after_load(self) -> bool:
        """Does the engine's "scales are 1.0" warning prove the loaded scales are 1.0?"""
        return self.engine is not None and self.engine.scale_warning_after_load


Rule = Callable[[State, Run, _Ctx], Alert | None]

# Order matters only where a rule looks at what fired before it (kv-fp8 after kv-auto-fp8).
RULES: tuple[tuple[str, Rule], ...] = (
    ("kv-fp8-unscaled", _rule_fp8_unscaled),
    ("kv-auto-fp8", _rule_auto_fp8),
    ("kv-fp8-e5m2", _rule_e5m2),
    ("kv-fp4", _rule_fp4),
    ("kv-fp8", _rule_fp8),
    ("fp8-attention-scales", _rule_attention_scales),
    ("context-exceeds-pool", _rule_context_exceeds_pool),
    ("low-context-concurrency", _rule_low_concurrency),
    ("bf16-does-not-fit", _rule_bf16_does_not_fit),
    ("kv-retraction", _rule_retraction),
    ("pool-saturated", _rule_saturated),
    ("oom", _rule_oom),
    ("mem-unbalanced", _rule_unbalanced),
    ("calibration-mismatch", _rule_calibration),
    ("profiled-capacity-negative", _rule_profiled_negative),
    ("input-too-long", _rule_input_too_long),
    ("process-exception", _rule_process_exception),
    ("pool-leak", _rule_pool_leak),
    ("mamba-cap", _rule_mamba_cap),
    ("requests-reduced", _rule_requests_reduced),
    ("checkpoint-kv-scales", _rule_checkpoint_scales),
    # the accuracy checklist's rules beside the KV cache's (kvtui.core.accuracy)
    *accuracy.RULES,
)


def evaluate(state: State, *, whatif: WhatIf | None = None,
             options: AlertOptions | None = None, checkpoint: CheckpointFacts | None = None,
             engine: Engine | None = None, release: str | None = None) -> list[Alert]:
    """All alerts for the current run, most severe first, then by evidence line. `release`:
    the engine release pinned by the user (advice then follows it, not the log's dating)."""
    run = state.current
    eff, _, eff_ev = run.effective
    ctx = _Ctx(options or AlertOptions(), whatif, checkpoint, engine, eff, eff_ev,
               release=release)
    out: list[Alert] = []
    for name, rule in RULES:
        alert = rule(state, run, ctx)
        if alert is not None:
            ctx.fired.add(name)
            out.append(alert)
    out.sort(key=lambda a: (severity.rank(a.severity), a.evidence.line if a.evidence else 0))
    return out


def alert_watch(run: Run, options: AlertOptions | None = None) -> Callable[[Event], bool]:
    """A predicate over the events that follow `run`'s lines: may this one change the alerts?

    For "next alert" in a replay, which pauses on such a line and compares the alerts. Every
    kind that is not a batch line can feed some rule (a fact, an error, a retraction); a batch
    line matters only when it makes a saturation or queue-growth run reach the length that
    `pool-saturated` fires at, so the watch folds its own copy of those two runs.
    """
    opts = options or AlertOptions()
    rt = run.runtime
    saturation = dataclasses.replace(rt.saturation)
    growth = dataclasses.replace(rt.queue_growth)

    def may_change(ev: Event) -> bool:
        if ev.kind not in BATCH_KINDS:
            return True
        f = ev.fields
        fired = (saturation.longest >= opts.saturation_batches
                 or growth.longest >= opts.queue_growth_batches)
        u = batch_usage(f)
        if u is not None:
            saturation.add(u >= SATURATION)
        queue = f.get("queue_req")
        if queue is not None and ev.kind == "decode_batch":
            growth.add(queue)
        return not fired and (saturation.longest >= opts.saturation_batches
                              or growth.longest >= opts.queue_growth_batches)

    return may_change
