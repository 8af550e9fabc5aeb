"""Plain-text rendering of a `whatif` object, for `kvtui whatif` and any headless consumer.

Plain text on purpose: the headless path must not import Rich or Textual, and a fixed-width table
pastes cleanly into an issue or a chat.
"""

from __future__ import annotations

from typing import Any

from kvtui.core.engine import load
from kvtui.core.units import fmt_length


def _n(v: Any, nd: int = 0) -> str:
    if v is None:
        return "-"
    if isinstance(v, float) and nd:
        return f"{v:,.{nd}f}"
    if isinstance(v, (int, float)):
        return f"{v:,.0f}"
    return str(v)


def render_whatif_text(w: dict[str, Any], *, explain: bool = True) -> str:
    cur = w["current"]
    par = cur.get("parallel") or {}
    out: list[str] = []
    model = (w.get("model") or {}).get("name") or "no model spec"
    label = load(w.get("engine") or "sglang").label
    out.append(f"KV capacity what-if: {model}, TP {par.get('tp', '?')} "
               f"(attention TP {par.get('attn_tp', '?')}), {label} "
               f"{(w.get('version') or {}).get('label', '?')}"
               + (f" (sizing rules of {cur['sglang_rules']})" if cur.get("sglang_rules") else ""))
    line = (f"current: {cur['dtype']}, {_n(cur.get('tokens'))} tokens, "
            f"{_n(cur.get('theoretical_bytes_per_token') or cur.get('bytes_per_token'))} B/token "
            "per GPU")
    if cur.get("calibration_ratio") is not None:
        line += (f" (logged {_n(cur.get('bytes_per_token'), 1)} B/token, ratio "
                 f"{cur['calibration_ratio']:.3f})")
    if cur.get("context_len"):
        line += f", context_len {_n(cur['context_len'])}"
    out.append(line)
    out.append("")
    rows = w.get("scenarios") or []
    ctxs = list((rows[0].get("concurrency") or {}).keys()) if rows else []
    head = (["dtype", "tokens", "B/token"] + [f"@{fmt_length(int(c))}" for c in ctxs]
            + ["max_run", "flag"])
    table = [head]
    for r in rows:
        mark = "*" if r.get("current") else ("~" if r.get("approximate") else "")
        table.append([r["dtype"] + mark, _n(r.get("tokens")), _n(r.get("bytes_per_token"))]
                     + [_n((r.get("concurrency") or {}).get(c), 2) for c in ctxs]
                     + [_n(r.get("max_running_requests")), r.get("flag") or "(not available)"])
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    for row in table:
        out.append("  ".join(cell.ljust(widths[i]) if i in (0, len(head) - 1)
                             else cell.rjust(widths[i]) for i, cell in enumerate(row)).rstrip())
    out.append("(* current, ~ approximate: block-scaled dtype; @N = concurrent requests of N "
               "tokens)")
    for r in rows:
        # The BF16 advice is the one people act on; the others only matter when unavailable.
        if not r.get("flag") or (r["dtype"] == "bf16" and not r.get("current")):
            out.append(f"  {r['dtype']}: {r.get('flag_advice')}")
    if (w.get("version") or {}).get("label", "").startswith("any"):
        out.append(f"  (the log does not date the {label} version; flags are shown as in the "
                   "newest release)")
    if (w.get("current") or {}).get("cannot_model"):
        out.append(f"  cannot model: {w['current']['cannot_model']}")
    for r in rows:
        if r.get("does_not_fit") or (r.get("cannot_model") and not r.get("current")):
            why = r.get("does_not_fit") or "cannot model: " + str(r.get("cannot_model"))
            out.append(f"  {r['dtype']}: {why}")
    inv = w.get("inverse")
    if inv:
        out.append("")
        need = f"{_n(inv.get('tokens_needed'))} tokens"
        if inv.get("kv_gib_needed") is not None:
            need += f" = {inv['kv_gib_needed']} GiB per GPU"
        parts = [f"{inv['concurrency']:g} x {_n(inv['context_len'])} tokens in {inv['dtype']} "
                 f"needs {need}"]
        if inv.get("fits_now"):
            parts.append("fits today")
        else:
            if inv.get("missing_gib_per_gpu") is not None:
                miss = f"{inv['missing_gib_per_gpu']} GiB per GPU missing"
                rest = inv.get("missing_rest_gib_per_gpu")
                if rest is not None and rest > inv["missing_gib_per_gpu"] + 0.005:
                    miss += f" ({rest} GiB more rest memory: the Mamba state takes its share)"
                parts.append(miss)
            if inv.get("mem_fraction_static_needed") is not None:
                feas = "" if inv.get("mem_fraction_static_feasible") else " (not feasible)"
                parts.append(f"raise mem_fraction_static to {inv['mem_fraction_static_needed']}"
                             f"{feas}")
            elif inv.get("gpu_memory_utilization_needed") is not None:
                feas = "" if inv.get("gpu_memory_utilization_feasible") else " (not feasible)"
                parts.append("raise gpu_memory_utilization to "
                             f"{inv['gpu_memory_utilization_needed']}{feas}")
            elif inv.get("gpu_memory_utilization_note"):
                parts.append(inv["gpu_memory_utilization_note"])
            elif inv.get("mem_fraction_static_note"):
                parts.append(inv["mem_fraction_static_note"])
            if inv.get("tp_needed"):
                parts.append(f"or use TP {inv['tp_needed']} (estimate)")
        out.append("inverse: " + "; ".join(parts))
    out.extend(_budget_lines(w))
    if explain:
        out.append("")
        out.append("how:")
        out.extend(f"  {x}" for x in w.get("explanation") or [])
        mb = w.get("memory_budget")
        if mb and mb.get("predicted_tokens") is not None:
            out.append(f"  memory lines: rest = {mb['avail_gib']} - {mb['pre_gib']} x (1 - "
                       f"{mb['mem_fraction_static']}) = {mb['rest_gib']:.3f} GiB -> "
                       f"{_n(mb['predicted_tokens'])} tokens (logged {_n(mb.get('logged_tokens'))}"
                       "; estimate, pre is a proxy)")
    return "\n".join(out) + "\n"


def _budget_lines(w: dict[str, Any]) -> list[str]:
    """The --mem-fraction-static / --target-tp rows: tokens, max_running_requests, basis."""
    out: list[str] = []
    for row in w.get("budget_scenarios") or []:
        what = (f"budget what-if ({row['dtype']}, TP {row.get('tp') or '-'}, "
                f"mem_fraction_static {row.get('mem_fraction_static', '-')}): ")
        if row.get("does_not_fit"):
            out.append(what + row["does_not_fit"])
            continue
        if row.get("cannot_model"):
            out.append(what + "cannot model: " + row["cannot_model"])
            continue
        text = what + f"{_n(row.get('tokens'))} tokens"
        if row.get("max_running_requests") is not None:
            text += f", max_running_requests {_n(row['max_running_requests'])}"
        if row.get("mamba_slots") is not None:
            text += f" ({_n(row['mamba_slots'])} state slots)"
        out.append(text + f"; {row.get('basis')}")
    if out:
        out.insert(0, "")
    return out
