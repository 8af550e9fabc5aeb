"""A `Comparison` as text (`kvtui compare`, the TUI's compare view): what changed, then what
it did. Every value that came from a log goes through `inert`."""

from __future__ import annotations

import textwrap
from typing import Any

from kvtui.core.compare import Comparison, Row
from kvtui.core.text import inert
from kvtui.core.units import fmt_length


def _v(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.2f}".rstrip("0").rstrip(".") if value % 1 else f"{value:,.0f}"
    return inert(str(value), 120)


def _row(r: Row, width: int = 22) -> str:
    mark = "*" if r.changed else " "
    a, b = (_v(r.said[0]), _v(r.said[1])) if r.said is not None else (_v(r.a), _v(r.b))
    return f" {mark} {r.name:<{width}} {a:>18}  ->  {b}"


def render_comparison(c: Comparison) -> str:
    """The comparison as the terminal shows it (a `*` marks a figure that changed)."""
    out = [f"Compare    A = {inert(c.a.label, 200)}"
           f" ({_v(c.a.engine)} {_v(c.a.engine_version)}, start line {_v(c.a.start_line)})",
           f"           B = {inert(c.b.label, 200)}"
           f" ({_v(c.b.engine)} {_v(c.b.engine_version)}, start line {_v(c.b.start_line)})",
           ""]
    if c.args:
        out.append(f"Server args that differ ({len(c.args)})")
        out.extend(f"   {inert(ch.describe(), 300)}" for ch in c.args)
        if c.args_note:
            out.append(f"   ({inert(c.args_note, 300)})")
    elif c.args_note:
        out.append(f"Server args: {inert(c.args_note, 300)}")
    else:
        out.append("Server args: none differ")
    out += ["", "Deployment                          A  ->  B"]
    out.extend(_row(r) for r in c.facts)
    if c.fits:
        out += ["", "Requests that fit, by context length"]
        out.extend(_row(Row(fmt_length(int(r.name)) if r.name.isdigit() else r.name, r.a, r.b))
                   for r in c.fits)
    out += [""]
    if c.alerts:
        out.append("Alerts")
        for a in c.alerts:
            out.append(f"   {a.status:<9}{a.severity.upper():<9}{a.rule}: {inert(a.title, 120)}")
    else:
        out.append("Alerts     none in either run")
    rt = c.runtime
    out += ["", "Runtime, like for like (median generation tok/s at the same running count)"]
    if rt.shared:
        for label, t in (("1 request", rt.single), ("aggregate", rt.aggregate)):
            if t is None:
                continue
            change = f"{t.change:+.1%}" if t.change is not None else "-"
            out.append(f"   {label:<10} at {t.running:>4} running: {_v(t.a):>10}  ->  "
                       f"{_v(t.b)} tok/s ({change})")
        out.append(f"   running counts both runs served: {len(rt.shared)}")
    else:
        out.append("   no running-request count served by both runs: throughput not compared")
    out.extend(_row(r) for r in rt.rows)
    pt = rt.prefill_throughput
    if isinstance(pt, str):
        out.append(f"   prefill throughput: {inert(pt, 300)}")
    else:
        change = f"{pt.change:+.1%}" if pt.change is not None else "-"
        out.append(f"   prefill throughput (median tok/s): {_v(pt.a):>8}  ->  {_v(pt.b)} tok/s "
                   f"({change}; of {pt.a_lines} and {pt.b_lines} lines)")
        out.extend(textwrap.wrap(f"({pt.note})", 96, initial_indent=" " * 6,
                                 subsequent_indent=" " * 7))
    out += [""]
    if c.prediction is not None:
        out.append("Prediction " + inert(c.prediction.describe(), 400))
    else:
        out.append("Prediction none: " + inert(c.prediction_note or "-", 300))
    return "\n".join(out) + "\n"
