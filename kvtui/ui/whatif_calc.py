"""The what-if pane's rows: the log's deployment next to the one the user is typing.

Why this sits in ui/: it only arranges the engine calculator's answers into current-vs-target
rows. All arithmetic is the engine's (`Engine.calculator`: its `scenario`, `inverse`), the same code
`kvtui check` and `kvtui whatif` use, so the pane can never disagree with the report. No Textual
import: tests call `compute` directly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from kvtui.core.capacity.answers import knob_answer
from kvtui.core.capacity.calculator import Calculator
from kvtui.core.capacity.whatif import floor_fit
from kvtui.core.report_types import Current, Scenario
from kvtui.core.units import fmt_length


@dataclass
class WhatIfInputs:
    dtype: str = "bf16"
    tp: int | None = None
    mem_fraction: float | None = None  # the engine's memory knob, in its unit (memory_knob)
    contexts: list[int] = field(default_factory=lambda: [8192, 32768, 131072])
    concurrency: int | None = None
    preset: str | None = None  # preset id; None = the one matching the log's model
    config_path: str | None = None


@dataclass
class WhatIfResult:
    rows: list[tuple[str, str, str]] = field(default_factory=list)  # label, current, target
    flag: str = ""
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    model: str = ""
    target_tokens: int | None = None
    current_tokens: int | None = None
    knob: str = "mem_fraction_static"  # the engine's memory setting (a row label)
    engine: str = "SGLang"  # the engine whose rules and flags these are
    # why the target does not start (the engine's reason, without a "does not fit:" of its
    # own): said once, in place of the flag, which is then empty
    does_not_fit: str | None = None
    # the calculator's own answers the rows were written from, kept for the pane's figures
    # (the concurrency cells, the flag): one key press asks the calculator once per answer
    target: Scenario | None = None
    now: Scenario | None = None
    current: Current | None = None
    changed_tp: int | None = None  # the target's TP, when not the logged one
    changed_mf: float | None = None  # the target's memory knob value, when not the logged one


def _i(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return "—"
    if isinstance(v, int | float):
        return f"{v:,.0f}"
    return str(v)


def fmt_fit(v: Any) -> str:
    """How many requests fit, never rounded up (10.58 is "10.5", not "11": an eleventh
    request does not fit)."""
    if isinstance(v, int | float) and not isinstance(v, bool):
        return f"{floor_fit(v, digits=1):,.1f}" if v < 100 else f"{math.floor(v):,}"
    return "—"


def compute(calc: Calculator | None, inputs: WhatIfInputs,
            unsized: str | None = None) -> WhatIfResult:
    """Rows for the pane from an engine's calculator (None: nothing to size, for the reason
    `unsized` gives, else because no pool is known yet)."""
    res = WhatIfResult()
    if calc is None:
        res.error = unsized or ("no KV pool or capacity line yet: the what-if starts once the "
                                "server has allocated its KV cache")
        return res
    try:
        return _compute(calc, inputs, res)
    except Exception as exc:  # the pane must never take the app down
        res.error = f"what-if failed: {type(exc).__name__}: {exc}"
        return res


def _inverse_rows(calc: Calculator, dtype: str, concurrency: float, ctx: int, tp: int | None,
                  mem: float | None) -> list[tuple[str, str, str]]:
    """Does the target concurrency fit at the target TP and memory setting, and if not, what
    is missing there: the engine's inverse asked at that setting, as `kvtui whatif
    --target-concurrency --target-tp --mem-fraction-static` asks it (one code path)."""
    inv = calc.inverse(dtype, ctx, concurrency, tp=tp, mem_fraction_static=mem)
    rows = [(f"{concurrency} reqs @ {fmt_length(ctx)}", f"needs {_i(inv.tokens_needed)} tok",
             "fits" if inv.fits_now else "does NOT fit")]
    if inv.fits_now:
        if inv.max_running_requests is not None:  # the pool holds them; fewer run at once
            rows.append(("runs at once", "", f"{inv.max_running_requests:,} (the rest queue)"))
        return rows
    if inv.missing_gib_per_gpu is None and inv.note:
        rows.append(("why", "", str(inv.note)))  # what the engine cannot size at this setting
    if inv.missing_gib_per_gpu is not None:
        rows.append(("missing per GPU", "", f"{inv.missing_gib_per_gpu:.2f} GiB"))
    knob = calc.memory_knob()  # the engine's memory setting
    answer = knob_answer(inv, knob.name)
    if answer.needed is not None:
        rows.append((f"{knob.name} needed", "", knob.show(answer.needed)
                     + (" (not feasible)" if answer.feasible is False else "")))
    if inv.tp_needed:
        rows.append(("TP that fits", "", str(inv.tp_needed)))
    return rows


def _compute(calc: Calculator, inputs: WhatIfInputs, res: WhatIfResult) -> WhatIfResult:
    cur = calc.current()
    cur_tp = calc.parallel.tp
    knob = calc.memory_knob()
    cur_mf = knob.value
    res.knob, res.engine = knob.name, calc.engine_label
    tgt_tp = inputs.tp if inputs.tp not in (None, cur_tp) else None
    tgt_mf = inputs.mem_fraction if (inputs.mem_fraction is not None
                                     and inputs.mem_fraction != cur_mf) else None
    ctxs = [c for c in inputs.contexts if c > 0]
    row = calc.scenario(inputs.dtype, tp=tgt_tp, mem_fraction_static=tgt_mf,
                        context_lengths=ctxs, target_concurrency=None)
    res.target, res.current, res.changed_tp, res.changed_mf = row, cur, tgt_tp, tgt_mf
    spec = calc.spec
    # the reason's first clause ("auto-detected", "--model"): its detail (the served path, the
    # preset it matched) is the report's, and took three rows of an 80x24 pane
    reason = str(calc.spec_reason).split(":", 1)[0]
    res.model = (f"{spec.name} ({reason})" if spec is not None
                 else "no model spec: bytes/token measured from the log")
    cur_tokens = calc.tokens
    tgt_tokens = row.tokens
    res.current_tokens = cur_tokens
    res.target_tokens = tgt_tokens
    rows = res.rows
    now_dtype = str(calc.current_dtype)
    if calc.current_dtype_assumed:
        now_dtype += "?"  # the log names none: assumed (the notes say how)
    rows.append(("KV dtype", now_dtype, inputs.dtype))
    rows.append(("TP", str(cur_tp), str(tgt_tp or cur_tp)))
    mf_now = knob.show(cur_mf) if isinstance(cur_mf, float) else "—"
    rows.append((knob.name, mf_now, knob.show(tgt_mf) if tgt_mf is not None else mf_now))
    rows.append(("bytes/token/GPU", _i(cur.bytes_per_token), _i(row.bytes_per_token)))
    tgt_text = _i(tgt_tokens)
    if isinstance(tgt_tokens, int) and cur_tokens:
        tgt_text += f" ({(tgt_tokens - cur_tokens) / cur_tokens * 100:+.0f}%)"
    elif row.does_not_fit:
        tgt_text = "does not fit"
    elif row.cannot_model:
        tgt_text = "cannot model"
    rows.append(("tokens", _i(cur_tokens), tgt_text))
    rows.append(("max_running_requests", _i(cur.max_running_requests),
                 _i(row.max_running_requests)))
    conc = row.concurrency
    # the engine's own arithmetic for now as for the target (a hybrid's tokens are not
    # requests x length)
    res.now = now = calc.scenario(calc.current_dtype, context_lengths=ctxs)
    now_conc = now.concurrency
    for c in ctxs:
        rows.append((f"concurrent @ {fmt_length(c)}", fmt_fit(now_conc.get(str(c))),
                     fmt_fit(conc.get(str(c)))))
    if inputs.concurrency and ctxs:
        rows.extend(_inverse_rows(calc, inputs.dtype, inputs.concurrency, max(ctxs), tgt_tp,
                                  tgt_mf))
    # Never a flag the engine would refuse: without one, the advice says why (flag_advice).
    flags = [str(row.flag)] if row.flag else []
    if tgt_tp is not None:
        flags.append(f"{calc.tp_flag} {tgt_tp}")
    if tgt_mf is not None:
        flags.append(f"{knob.flag} {knob.arg(tgt_mf)}")
    res.flag = " ".join(flags) or "(no flag for this dtype: see the note)"
    if row.does_not_fit:
        why = str(row.does_not_fit)
        res.does_not_fit = why.removeprefix("does not fit: ")
        res.flag = ""  # never a flag for a target that would not start
    notes = []
    if calc.current_dtype_assumed:
        notes.append(f"KV dtype not in the log: now is {calc.current_dtype}, assumed (?): the "
                     "model dtype, or the dtype whose bytes per token give the logged pool (the "
                     "what-if's notes say which)")
    if row.cannot_model:
        notes.append(f"cannot model: {row.cannot_model}")
    if row.flag_advice and not row.does_not_fit:  # next to the flag line it explains
        notes.append(str(row.flag_advice))
    if row.mamba_slots is not None:
        notes.append(f"{row.mamba_slots:,} Mamba state slots at these settings "
                     f"({calc.engine_label} "
                     f"{'.'.join(map(str, calc.rules_version))} rules)")
    if row.estimate and row.basis and row.basis != row.does_not_fit:
        basis = str(row.basis)
        notes.append(basis if "estimate" in basis else "estimate: " + basis)
    if row.approximate:
        notes.append("approximate bytes per token for this dtype")
    res.notes = notes
    return res
