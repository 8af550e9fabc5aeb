"""Plain-text rendering of a `WhatIf` (kvtui.core.report_types), for `kvtui whatif` and any
headless consumer.

Plain text on purpose: the headless path must not import Rich or Textual, and a fixed-width table
pastes cleanly into an issue or a chat.
"""

from __future__ import annotations

from typing import Any

from kvtui.core.capacity.answers import knob_answers
from kvtui.core.engine import load
from kvtui.core.report_types import Inverse, Json, Scenario, WhatIf
from kvtui.core.units import fmt_bytes_gib, fmt_length


def _n(v: Any, nd: int = 0) -> str:
    if v is None:
        return "-"
    if isinstance(v, float) and nd:
        return f"{v:,.{nd}f}"
    if isinstance(v, (int, float)):
        return f"{v:,.0f}"
    return str(v)


def render_whatif_text(w: WhatIf, *, explain: bool = True) -> str:
    cur = w.current
    par = cur.parallel
    out: list[str] = []
    model = (w.model or {}).get("name") or "no model spec"
    label = load(w.engine or "sglang").label
    # a TP only rank tags imply reads as in the header: `TP>=6 (sized as 8)`
    tp = (par.get("label") or {}).get("tp") or f"TP {par.get('tp', '?')}"
    out.append(f"KV capacity what-if: {model}, {tp} "
               f"(attention TP {par.get('attn_tp', '?')}), {label} "
               f"{w.version.get('label', '?')}"
               + (f" (sizing rules of {cur.sglang_rules})" if cur.sglang_rules else ""))
    line = (f"current: {cur.dtype}, {_n(cur.tokens)} tokens, "
            f"{_n(cur.theoretical_bytes_per_token or cur.bytes_per_token)} B/token "
            "per GPU")
    if cur.calibration_ratio is not None:
        line += (f" (logged {_n(cur.bytes_per_token, 1)} B/token, ratio "
                 f"{cur.calibration_ratio:.3f})")
    if cur.context_len:
        line += f", context_len {_n(cur.context_len)}"
    out.append(line)
    out.append("")
    out.extend(_table(w.scenarios))
    for r in w.scenarios:
        # The BF16 advice is the one people act on; the others only matter when unavailable.
        if not r.flag or (r.dtype == "bf16" and not r.current):
            out.append(f"  {r.dtype}: {r.flag_advice}")
    if w.version.get("label", "").startswith("any"):
        out.append(f"  (no log line dates the {label} version; flags are shown as in the "
                   "newest release)")
    if cur.cannot_model:
        out.append(f"  cannot model: {cur.cannot_model}")
    for r in w.scenarios:
        # a dtype's own reason; one the current setting already gave is said once, above
        if r.does_not_fit or (r.cannot_model and not r.current
                              and r.cannot_model != cur.cannot_model):
            why = r.does_not_fit or "cannot model: " + str(r.cannot_model)
            out.append(f"  {r.dtype}: {why}")
    if w.inverse is not None:
        out.append("")
        out.append("inverse: " + "; ".join(_inverse_parts(w.inverse, w.memory_knob)))
    out.extend(_budget_lines(w))
    if explain:
        out.append("")
        out.append("how:")
        out.extend(f"  {x}" for x in w.explanation)
        mb = w.memory_budget
        if mb and mb.get("predicted_tokens") is not None:
            reserved = f" - {mb['reserved_gib']} reserved" if mb.get("reserved_gib") else ""
            out.append(f"  memory lines: rest = {mb['avail_gib']} - {mb['pre_gib']} x (1 - "
                       f"{mb['mem_fraction_static']}){reserved} = {mb['rest_gib']:.3f} GiB -> "
                       f"{_n(mb['predicted_tokens'])} tokens (logged {_n(mb.get('logged_tokens'))}"
                       "; estimate, pre is a proxy)")
    return "\n".join(out) + "\n"


def _max_run(row: Scenario) -> str:
    """The cap on running requests: given, else the engine's default (`a|b` when it is one of
    several: the notes say the rule)."""
    if row.max_running_requests is None and row.max_running_requests_default:
        return "|".join(_n(v) for v in row.max_running_requests_default)
    return _n(row.max_running_requests)


def _table(rows: tuple[Scenario, ...]) -> list[str]:
    """The dtype rows as a fixed-width table, with its legend."""
    ctxs = list(rows[0].concurrency) if rows else []
    head = (["dtype", "tokens", "B/token"] + [f"@{fmt_length(int(c))}" for c in ctxs]
            + ["max_run", "flag"])
    table = [head]
    for r in rows:
        mark = "*" if r.current else ("~" if r.approximate else "")
        table.append([r.dtype + mark, _n(r.tokens), _n(r.bytes_per_token)]
                     + [_n(r.concurrency.get(c), 2) for c in ctxs]
                     + [_max_run(r), r.flag or "(not available)"])
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    out = ["  ".join(cell.ljust(widths[i]) if i in (0, len(head) - 1)
                     else cell.rjust(widths[i]) for i, cell in enumerate(row)).rstrip()
           for row in table]
    out.append("(* current, ~ approximate: block-scaled dtype; @N = concurrent requests of N "
               "tokens)")
    return out


def _inverse_parts(inv: Inverse, knob: Json | None = None) -> list[str]:
    need = f"{_n(inv.tokens_needed)} tokens"
    if inv.kv_gib_needed is not None:
        need += f" = {inv.kv_gib_needed} GiB per GPU"
    at = [f"TP {inv.tp_target}"] if inv.tp_target is not None else []
    targets = {a.name: a.target for a in knob_answers(inv)}
    for k in _KNOBS:
        value = targets.get(k)
        if value is not None:
            at.append(f"{k} {value}")
    parts = [f"{inv.concurrency:g} x {_n(inv.context_len)} tokens in {inv.dtype}"
             + (f" at {', '.join(at)}" if at else "") + f" needs {need}"]
    if inv.estimate and inv.note and inv.tokens_needed is not None:
        parts.append(f"estimate: {inv.note}")
    elif inv.tokens_needed is None and inv.note:
        parts[0] = (f"{inv.concurrency:g} x {_n(inv.context_len)} tokens in {inv.dtype}: "
                    f"{inv.note}")
        return parts
    if inv.fits_now:
        parts.append("fits at that setting" if at else "fits today")
        if inv.max_running_requests is not None:
            parts.append(f"but max_running_requests is {_n(inv.max_running_requests)}: fewer "
                         "run at once, the rest queue")
        return parts
    if inv.missing_gib_per_gpu is None and inv.note and not inv.estimate:
        parts.append(f"not known at that setting: {inv.note}" if at else inv.note)
    if inv.missing_gib_per_gpu is not None:
        miss = f"{inv.missing_gib_per_gpu:.2f} GiB per GPU missing"
        rest = inv.missing_rest_gib_per_gpu
        if rest is not None and rest > inv.missing_gib_per_gpu + 0.005:
            miss += f" ({rest:.2f} GiB more rest memory: the Mamba state takes its share)"
        parts.append(miss)
    answers = {a.name: a for a in knob_answers(inv)}
    memory = [a for a in answers.values() if a.name != "tp"]
    fits = next((a for a in memory if a.needed is not None), None)
    by_bytes = fits is not None and fits.name == "kv_cache_memory_bytes"
    if fits is not None and by_bytes:
        flag = (knob or {}).get("flag") or fits.name  # the engine's flag
        parts.append(f"{flag} {fits.needed} ({fmt_bytes_gib(fits.needed or 0)} per GPU)")
    elif fits is not None:
        feas = "" if fits.feasible else " (not feasible)"
        parts.append(f"raise {fits.name} to {fits.needed}{feas}")
    else:
        # why no setting fits (a byte-sized knob's note is said by its own row)
        note = next((a.note for a in memory if a.note and a.name != "kv_cache_memory_bytes"),
                    None)
        if note:
            parts.append(note)
    tp = answers["tp"]
    if tp.needed and by_bytes and tp.note:
        parts.append(f"or use TP {tp.needed} ({tp.note})")
    elif tp.needed:
        parts.append(f"or use TP {tp.needed} (estimate)")
    return parts


# The memory settings a budget row may carry (the engines' knobs, `Calculator.memory_knob`).
_KNOBS = ("mem_fraction_static", "gpu_memory_utilization", "kv_cache_memory_bytes")


def _budget_lines(w: WhatIf) -> list[str]:
    """The --mem-fraction-static / --target-tp rows: tokens, max_running_requests, basis."""
    out: list[str] = []
    for row in w.budget_scenarios or ():
        knob = next((k for k in _KNOBS if row.has(k)), None)
        values = {"mem_fraction_static": row.mem_fraction_static,
                  "gpu_memory_utilization": row.gpu_memory_utilization,
                  "kv_cache_memory_bytes": row.kv_cache_memory_bytes}
        if knob == "kv_cache_memory_bytes" and row.kv_cache_memory_bytes is not None:
            setting = (f"kv_cache_memory_bytes {row.kv_cache_memory_bytes} = "
                       f"{fmt_bytes_gib(row.kv_cache_memory_bytes)}")
        elif knob is not None:
            setting = f"{knob} {values.get(knob)}"
        else:
            setting = "memory as logged"
        tp = row.tp or (w.current.parallel or {}).get("tp")  # None: the logged TP
        what = f"budget what-if ({row.dtype}, TP {tp or '-'}, {setting}): "
        if row.does_not_fit:
            out.append(what + row.does_not_fit)
            continue
        if row.cannot_model:
            out.append(what + "cannot model: " + row.cannot_model)
            continue
        text = what + f"{_n(row.tokens)} tokens"
        if row.max_running_requests is not None:
            text += f", max_running_requests {_n(row.max_running_requests)}"
        if row.mamba_slots is not None:
            text += f" ({_n(row.mamba_slots)} state slots)"
        out.append(text + f"; {row.basis}")
    if out:
        out.insert(0, "")
    return out
