"""Plain-text and Markdown renderings of the report (kvtui.core.report_types.Report).

Plain text (no Rich) on purpose: `kvtui check` runs in CI logs and pipes, and the same text is
what a tired engineer pastes into a ticket. Every log-derived string goes through `inert`.
"""

from __future__ import annotations

import textwrap
from typing import Any

from kvtui.core import severity
from kvtui.core.accuracy_text import checklist_markdown, checklist_text
from kvtui.core.deployment import parallel_label, rank_span
from kvtui.core.engine import Engine, figure, load
from kvtui.core.evidence import Evidence
from kvtui.core.report_types import Alert, PoolFacts, Report, WhatIf
from kvtui.core.text import inert
from kvtui.core.units import fmt_length

# Fixed, so that the text output (and its golden files) do not depend on the terminal.
WIDTH = 100


def _para(text: str, indent: str, first: str = "") -> list[str]:
    """A paragraph wrapped to WIDTH, the first line led by `first`, the rest by `indent`."""
    return textwrap.wrap(text, width=WIDTH, initial_indent=indent + first,
                         subsequent_indent=indent + " " * len(first),
                         break_long_words=False, break_on_hyphens=False) or [indent + first]



def _fmt_num(v: Any, digits: int = 2) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:,.{digits}f}"
    return inert(str(v), 200)


def _fmt_usage(v: float | None) -> str:
    """A pool's usage fraction as precise as the engine printed it: SGLang prints two decimals
    (0.26), vLLM a percentage with one (0.3% is 0.003, which two decimals would show as 0.00)."""
    if v is None or round(v, 2) == v:
        return _fmt_num(v)
    return f"{v:.3f}"


def sorted_alerts(report: Report) -> list[Alert]:
    """Most severe first, then by evidence line (the order every reader shows them in)."""
    return sorted(report.alerts, key=lambda a: (severity.rank(a.severity),
                                                a.evidence.line if a.evidence else 0))


def _evidence_line(ev: Evidence | None) -> str:
    if ev is None:
        return ""
    where = f"{ev.source}:{ev.line}"
    rank = f" [{inert(str(ev.rank), 40)}]" if ev.rank else ""
    rep = f" (x{ev.count})" if (ev.count or 1) > 1 else ""
    return f"{inert(where, 200)}{rank}{rep}: {inert(ev.text or '', 300)}"


def render_text(report: Report) -> str:
    out: list[str] = []
    w = out.append
    model, par, kv = report.model, report.parallel, report.kv_cache
    sources = ", ".join(f"{inert(s.name, 200)} ({s.lines:,} lines)" for s in report.sources)
    w(f"kvtui {report.kvtui_version} - {sources or 'no input'}")
    if report.unrecognised:
        w(f"Engine     {unrecognised_words()}")
    w(f"Model      {inert(str(model.name or 'unknown'), 200)}"
      + (f"  ({inert(str(model.model_class), 80)})"
         if model.model_class and model.model_class != model.name else ""))
    sizes = "  ".join(parallel_label(par, k) for k in ("tp", "dp", "pp", "ep", "world")
                      if par.degree(k) is not None)
    if par.world is not None and par.tp is None:
        sizes = f"TP=?  {sizes}"  # worker tags that count TP and PP together
    if par.world_size is not None:  # the engine's own rank-assignment lines
        sizes = "  ".join(filter(None, (sizes, f"world={par.world_size}")))
    w(f"Parallel   {sizes or 'unknown'}")
    w(f"KV cache   configured {kv.configured_dtype or '?'} -> effective "
      f"{kv.effective_dtype or '?'}  (from {kv.effective_basis}); scales: {kv.scales_said}")
    w("")
    out.extend(_render_alerts(sorted_alerts(report)))
    w("")
    if report.accuracy:
        out.extend(checklist_text(report.accuracy))
        w("")
    if report.pools:
        w("Pools (per rank)")
        for names, p in group_pools(report.pools):
            span = rank_span(names) if len(names) == 1 else \
                f"{rank_span(names)} ({len(names)} ranks)"
            w(f"  {inert(span, 60):<16} {describe_pool(p)}")
    out.extend(_render_deployment(report))
    if report.whatif is not None:
        out.extend(_render_whatif(report.whatif, report.pools))
    elif report.whatif_unmodelled is not None:
        out.extend(["", f"What-if    {report.whatif_unmodelled}"])
    if report.checkpoint:
        out.extend(_render_checkpoint(report.checkpoint))
    if report.metrics:
        from kvtui.core.metrics.series import facts_text

        out.extend(["", *facts_text(report.metrics)])
    runs = report.runs
    if len(runs) > 1:
        w("")
        w(f"Runs ({len(runs)} server starts; the last one is reported above)")
        for r in runs:
            at = (f"line {r.start.line}" if r.start is not None
                  else f"line {r.opened_line} (no start line)" if r.opened_line is not None
                  else "(no start line)")
            w(f"  #{r.index} {at}: {r.configured_dtype or '?'}"
              f" -> {r.effective_dtype or '?'}, pool {_fmt_num(r.pool_size)}"
              f" tokens, {r.decode_batches:,} decode batches")
            if r is runs[-1]:
                continue  # its alerts are listed above
            for a in r.alerts:
                state = a.resolved_by.describe() if a.resolved_by is not None else "not resolved"
                out.extend(_para(f"{severity.MARK.get(a.severity, a.severity)} {a.rule}: "
                                 f"{inert(state, 1200)}", "      "))
    return "\n".join(out) + "\n"


def _render_alerts(alerts: list[Alert]) -> list[str]:
    if not alerts:
        return ["Alerts     none"]
    out = [f"Alerts ({len(alerts)})"]
    for a in alerts:
        out.append(f"  {severity.MARK.get(a.severity, a.severity)} {a.rule}: "
                   f"{inert(a.title or '')}")
        if a.detail:
            for para in str(a.detail).split("\n"):
                out.extend(_para(inert(para, 1200), "      "))
        if a.evidence is not None:
            out.append(f"      evidence: {_evidence_line(a.evidence)}")
        if a.fix:
            out.extend(_para(inert(str(a.fix), 1200), "      ", "fix: "))
        if a.confidence:
            out.append(f"      confidence: {a.confidence}")
    return out


def _engine(report: Report) -> Engine | None:
    """The report's engine, whose names the texts use for its figures."""
    return load(report.engine) if report.engine else None


def _render_deployment(report: Report) -> list[str]:
    """The capacity, weights and runtime lines."""
    out = []
    cap = report.capacity
    if cap is not None:
        figures = (("max_total_num_tokens", cap.max_total_num_tokens),
                   ("context_len", cap.context_len), ("max_concurrency", cap.max_concurrency),
                   ("max_running_requests", cap.max_running_requests),
                   ("chunked_prefill_size", cap.chunked_prefill_size),
                   ("available_gpu_mem_gib", cap.available_gpu_mem_gib),
                   ("kv_budget_reserved_gib", cap.kv_budget_reserved_gib))
        eng = _engine(report)
        sizes = ", ".join(figure(eng, k, _fmt_num(v)) for k, v in figures if v is not None)
        lim = cap.running_limit
        if lim is not None:  # the engine's own cap, where its capacity line states none
            sizes += (", " if sizes else "") + f"{lim.name}={lim.describe(_fmt_num)}"
        if sizes:
            out.append(f"Capacity   {sizes}")
    wt = report.weights
    if wt is not None:
        parts = []
        if wt.ranks:
            usage = f", {_fmt_num(wt.usage_gib)} GiB per GPU" if wt.usage_gib is not None else ""
            parts.append(f"{inert(str(wt.model_class or '?'), 80)}"
                         + (f" ({inert(str(wt.quant), 80)})" if wt.quant else "")
                         + usage + (f", {_fmt_num(wt.avail_gib)} GiB free after load"
                                    if wt.avail_gib is not None else ""))
        if wt.draft_ranks:
            parts.append(f"draft {inert(str(wt.draft_model_class or '?'), 80)}"
                         + (f" ({inert(str(wt.draft_quant), 80)})" if wt.draft_quant else "")
                         + (f", {_fmt_num(wt.draft_usage_gib)} GiB per GPU"
                            if wt.draft_usage_gib is not None else ""))
        out.append("Weights    " + "; ".join(parts))
    rt = report.runtime
    if rt.decode_batches or rt.prefill_batches:
        out.append(
            f"Runtime    {rt.prefill_batches:,} prefill / {rt.decode_batches:,}"
            f" decode batches; token usage last {_fmt_usage(rt.last_token_usage)}"
            f" peak {_fmt_usage(rt.peak_token_usage)}; running peak"
            f" {_fmt_num(rt.peak_running_req)}, queue peak"
            f" {_fmt_num(rt.peak_queue_req)}; gen throughput last"
            f" {_fmt_num(rt.last_gen_throughput)} mean"
            f" {_fmt_num(rt.mean_gen_throughput)} tok/s; retractions"
            f" {rt.retractions}")
    return out


def unrecognised_words() -> str:
    """What every reader says of input in which no engine's line was recognised (`check`,
    `whatif --from-log`, the TUI): one sentence, so they agree."""
    from kvtui.core.engine import ENGINE_MODULES

    return (f"none recognised: no line of {' or '.join(ENGINE_MODULES)} was found; this does "
            "not look like an LLM-server log")


def render_gate(reports: list[Report], fail_on: str, code: int) -> str:
    """The last lines of a check over several files: each file's verdict and the exit code."""
    out = ["Gate"]
    for report in reports:
        name = ", ".join(inert(s.name, 200) for s in report.sources) or "-"
        alerts = sorted_alerts(report)
        if report.unrecognised:
            verdict = "no LLM-server line recognised"
        elif alerts:
            verdict = ", ".join(f"{a.severity.upper()} {a.rule}" for a in alerts)
        else:
            verdict = "no alerts"
        out.append(f"  {name}: {verdict}")
    out.append(f"exit {code} (--fail-on {fail_on})")
    return "\n".join(out) + "\n"


def group_pools(pools: tuple[PoolFacts, ...]) -> list[tuple[list[str], PoolFacts]]:
    """Pools identical on several ranks as one (the ranks, the pool), so TP=8 reads as one
    line; the check text and the facts pane both group this way."""
    groups: dict[tuple[Any, ...], list[PoolFacts]] = {}
    for p in pools:
        groups.setdefault(p.shape(), []).append(p)
    return [([m.rank or "-" for m in members], members[0]) for members in groups.values()]


def describe_subpools(p: PoolFacts) -> str:
    """A budget split among sub-pools (kind "subpools"): the full-attention tokens it buys, from
    what, and each sub-pool's size in its own unit: SWA in tokens, the compressed pools in
    entries (SGLang 0.5.12 model_executor/pool_configurator.py:409-410),
    the state pools in ring rows."""
    head = f"{_fmt_num(p.tokens)} full-attention tokens"
    if p.kv_gib is not None:
        head += f" from {_fmt_num(p.kv_gib)} GiB"
    if p.bytes_per_full_token is not None:
        head += f" at {_fmt_num(p.bytes_per_full_token)} B per full token"
    subs = p.subpools or {}

    def listed(names: list[str]) -> str:
        return ", ".join(f"{k} {_fmt_num(subs[k])}" for k in names)

    tokens = [k for k in subs if not k.endswith("_state") and k not in _COMPRESSED]
    entries = [k for k in subs if k in _COMPRESSED]
    states = [k for k in subs if k.endswith("_state")]
    return "; ".join(x for x in (head, tokens and f"{listed(tokens)} tokens",
                                 entries and f"{listed(entries)} compressed entries",
                                 states and f"{listed(states)} state rows") if x)


# compressed sub-pools: an entry per 4 tokens (times the model's shrink factor) or per 128
_COMPRESSED = ("c4", "c128")


def describe_pool(p: PoolFacts) -> str:
    label = f" {p.label}" if p.label else ""
    if p.kind == "mamba":
        return (f"mamba{label}: {_fmt_num(p.slots)} slots, conv "
                f"{_fmt_num(p.conv_gib)} GiB, ssm {_fmt_num(p.ssm_gib)} GiB")
    if p.kind == "subpools":
        return f"{p.kind} {p.dtype or '?'}: {describe_subpools(p)}"
    if p.kind == "kv":  # a whole-cache budget (vLLM), not one pool line
        how = ", a size the operator set (not profiled)" if p.configured else ""
        # vLLM's "Available KV cache memory": all KV layers of the GPU together
        return f"kv cache {p.dtype or '?'}: {_fmt_num(p.kv_gib)} GiB for all KV layers{how}"
    size = (f"KV {_fmt_num(p.kv_gib)} GiB" if p.kind == "mla"
            else f"K {_fmt_num(p.k_gib)} GiB + V {_fmt_num(p.v_gib)} GiB")
    return (f"{p.kind}{label} {p.dtype or '?'}: {_fmt_num(p.tokens)} tokens,"
            f" {size}, {_fmt_num(p.bytes_per_token, 0)} B/token measured")


def _render_whatif(wi: WhatIf, pools: tuple[PoolFacts, ...] = ()) -> list[str]:
    cur = wi.current
    if cur.tokens is None and not any(s.tokens is not None for s in wi.scenarios):
        # A table of dashes answers nothing: say what the what-if is waiting for.
        budget = next((p.kv_gib for p in pools if p.kind == "kv" and p.kv_gib is not None),
                      None)
        if budget is not None and budget <= 0:
            return ["", f"What-if    nothing to size: the KV memory the log gives is "
                    f"{_fmt_num(budget)} GiB (no memory left for the KV cache)"]
        if budget is not None:
            return ["", f"What-if    needs a token count: the log gives the KV memory "
                    f"({_fmt_num(budget)} GiB) but not the tokens it holds (pass --model to "
                    f"size it, or kvtui whatif --pool-gib {_fmt_num(budget)})"]
        return ["", "What-if    needs the KV cache size: no pool or capacity line in the log "
                "(kvtui whatif --tokens N or --pool-gib G sizes it by hand)"]
    out = ["", "What-if (same KV byte budget per GPU)"]
    ctx_keys: list[str] = []
    for s in wi.scenarios:
        for k in s.concurrency:
            if k not in ctx_keys:
                ctx_keys.append(k)
    head = f"  {'dtype':<16}{'tokens':>12}{'B/token':>10}" + "".join(
        f"{'@' + _short_ctx(k):>10}" for k in ctx_keys) + f"{'max_run':>9}  flag"
    out.append(head)
    for s in wi.scenarios:
        marker = "*" if s.dtype == cur.dtype else " "
        out.append(
            f" {marker}{s.dtype!s:<16}{_fmt_num(s.tokens):>12}"
            f"{_fmt_num(s.bytes_per_token, 0):>10}"
            + "".join(f"{_fmt_num(s.concurrency.get(k)):>10}" for k in ctx_keys)
            + f"{_fmt_num(s.max_running_requests):>9}  {s.flag or '(not available)'}")
    ratio = cur.calibration_ratio
    # The pools' rows divide by the tokens; an engine whose pool holds more rows than tokens
    # measures per row, to compare with its cell, and the line says so.
    rows = (f" over {_fmt_num(cur.measured_rows)} pool rows (its tokens + padding)"
            if cur.measured_rows is not None and cur.measured_rows != cur.tokens else "")
    # the ratio's own divisor: where the engine prints another layout than it budgets, the
    # printed bytes per row, and the budget cell beside it
    computed, cell = cur.compared_bytes_per_token, cur.theoretical_bytes_per_token
    printed = (f" printed per row (budget cell {_fmt_num(cell, 0)})"
               if computed is not None and cell is not None and computed != cell else "")
    out.append(f"  current: {cur.dtype} {_fmt_num(cur.tokens)} tokens, measured"
               f" {_fmt_num(cur.bytes_per_token, 0)} B/token{rows} vs computed"
               f" {_fmt_num(computed, 0)}{printed}"
               + (f" (ratio {ratio:.3f})" if isinstance(ratio, float) else ""))
    for line in wi.explanation:
        out.append(f"  {inert(str(line), 300)}")
    return out


def _render_checkpoint(ck: dict[str, Any]) -> list[str]:
    """The checkpoint's own word: its KV-scale verdict per engine, reasons, and what it cost.
    Names and values come from files on disk or a remote host: inert, like log text."""
    out = ["", f"Checkpoint {inert(str(ck.get('source') or ck.get('model_path') or '?'), 200)}"]
    out.extend(_para(inert(str(ck.get("summary") or ""), 600), "  "))
    kv = ck.get("kv_scales") or {}
    for engine, v in (kv.get("verdicts") or {}).items():
        out.append(f"  {inert(str(engine), 20)}: {inert(str(v.get('verdict')), 20)}"
                   f" (confidence {inert(str(v.get('confidence')), 10)})")
        for f in (v.get("findings") or [])[:4]:
            out.extend(_para(inert(f"{f.get('code')}: {f.get('message')}", 600), "    "))
    if kv:
        out.append(f"  read {_fmt_num(kv.get('bytes_read'))} bytes from "
                   f"{_fmt_num(kv.get('files_opened'))} files ({_fmt_num(kv.get('files_listed'))}"
                   " safetensors files; weights not read)")
    for note in (ck.get("notes") or [])[:6]:
        out.extend(_para(inert(str(note), 400), "  ", "note: "))
    return out


def _short_ctx(k: str) -> str:
    try:
        return fmt_length(int(k))
    except ValueError:
        return k


def render_markdown(report: Report) -> str:
    """The same analysis as Markdown, for tickets and the TUI export."""
    text = render_text(report)
    alerts = sorted_alerts(report)
    md = ["# kvtui analysis", ""]
    if alerts:
        md.append("## Alerts")
        md.append("")
        for a in alerts:
            md.append(f"### {a.severity.upper()} `{a.rule}`: {_md_escape(inert(a.title or ''))}")
            md.append("")
            if a.detail:
                md.append(_md_escape(inert(str(a.detail), 2000)))
                md.append("")
            ev = a.evidence
            if ev is not None:
                md.append(f"Evidence ({inert(str(ev.source), 200)} line {ev.line}):")
                md.append("")
                md.append("```")
                md.append(inert(ev.text or "", 400).replace("```", "'''"))
                md.append("```")
                md.append("")
            if a.fix:
                md.append(f"**Fix:** {_md_escape(inert(str(a.fix), 1000))}")
                md.append("")
    md.extend(checklist_markdown(report.accuracy))
    md.append("## Report")
    md.append("")
    md.append("```")
    md.append(text.replace("```", "'''").rstrip("\n"))
    md.append("```")
    return "\n".join(md) + "\n"


def _md_escape(s: str) -> str:
    for ch in ("<", ">"):
        s = s.replace(ch, "\\" + ch)
    return s
