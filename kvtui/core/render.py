"""Plain-text and Markdown renderings of the report dict.

Plain text (no Rich) on purpose: `kvtui check` runs in CI logs and pipes, and the same text is
what a tired engineer pastes into a ticket. Every log-derived string goes through `inert`.
"""

from __future__ import annotations

import textwrap
from typing import Any

from kvtui.core import severity
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


def sorted_alerts(report: dict[str, Any]) -> list[dict[str, Any]]:
    alerts = list(report.get("alerts") or [])
    alerts.sort(key=lambda a: (severity.rank(a.get("severity")),
                               (a.get("evidence") or {}).get("line") or 0))
    return alerts


def _evidence_line(ev: dict[str, Any] | None) -> str:
    if not ev:
        return ""
    where = f"{ev.get('source')}:{ev.get('line')}"
    rank = f" [{inert(str(ev['rank']), 40)}]" if ev.get("rank") else ""
    rep = f" (x{ev['count']})" if (ev.get("count") or 1) > 1 else ""
    return f"{inert(where, 200)}{rank}{rep}: {inert(ev.get('text') or '', 300)}"


def render_text(report: dict[str, Any]) -> str:
    out: list[str] = []
    w = out.append
    model = report.get("model") or {}
    par = report.get("parallel") or {}
    kv = report.get("kv_cache") or {}
    sources = ", ".join(f"{inert(s['name'], 200)} ({s['lines']:,} lines)"
                        for s in report.get("sources") or [])
    w(f"kvtui {report.get('kvtui_version', '')} - {sources or 'no input'}")
    if report.get("engine") is None and report.get("sources"):
        from kvtui.core.engine import ENGINE_MODULES

        w(f"Engine     none recognised: no line of {' or '.join(ENGINE_MODULES)} was found; "
          "this does not look like an LLM-server log")
    name = model.get("served_name") or model.get("path") or model.get("model_class") or "unknown"
    w(f"Model      {inert(str(name), 200)}"
      + (f"  ({inert(str(model['model_class']), 80)})" if model.get("model_class") else ""))
    w("Parallel   " + "  ".join(f"{k.upper()}={_fmt_num(par.get(k))}" for k in
                                ("tp", "dp", "pp", "ep") if par.get(k) is not None)
      or "Parallel   -")
    conf = kv.get("configured_dtype") or "?"
    eff = kv.get("effective_dtype") or "?"
    w(f"KV cache   configured {conf} -> effective {eff}"
      f"  (from {kv.get('effective_basis', 'unknown')}); scales: {kv.get('scales', 'unknown')}")
    alerts = sorted_alerts(report)
    w("")
    if alerts:
        w(f"Alerts ({len(alerts)})")
        for a in alerts:
            sev = a.get("severity", "info")
            w(f"  {severity.MARK.get(sev, sev)} {a.get('rule')}: {inert(a.get('title') or '')}")
            if a.get("detail"):
                for para in str(a["detail"]).split("\n"):
                    out.extend(_para(inert(para, 1200), "      "))
            if a.get("evidence"):
                w(f"      evidence: {_evidence_line(a.get('evidence'))}")
            if a.get("fix"):
                out.extend(_para(inert(str(a["fix"]), 1200), "      ", "fix: "))
            if a.get("confidence"):
                w(f"      confidence: {a['confidence']}")
    else:
        w("Alerts     none")
    w("")
    pools = report.get("pools") or []
    if pools:
        w("Pools (per rank)")
        for ranks, p in group_pools(pools):
            w(f"  {ranks:<16} {describe_pool(p)}")
    cap = report.get("capacity")
    if cap:
        w("Capacity   " + ", ".join(f"{k}={_fmt_num(cap.get(k))}" for k in (
            "max_total_num_tokens", "context_len", "max_concurrency", "max_running_requests",
            "chunked_prefill_size", "available_gpu_mem_gib") if cap.get(k) is not None))
    wt = report.get("weights")
    if wt:
        usage = (f", {_fmt_num(wt.get('usage_gib'))} GiB per GPU"
                 if wt.get("usage_gib") is not None else "")
        w(f"Weights    {inert(str(wt.get('model_class') or '?'), 80)}"
          + (f" ({inert(str(wt['quant']), 80)})" if wt.get("quant") else "")
          + usage + (f", {_fmt_num(wt.get('avail_gib'))} GiB free after load"
                     if wt.get("avail_gib") is not None else ""))
    rt = report.get("runtime") or {}
    if rt.get("decode_batches") or rt.get("prefill_batches"):
        w(f"Runtime    {rt.get('prefill_batches', 0):,} prefill / {rt.get('decode_batches', 0):,}"
          f" decode batches; token usage last {_fmt_num(rt.get('last_token_usage'))}"
          f" peak {_fmt_num(rt.get('peak_token_usage'))}; running peak"
          f" {_fmt_num(rt.get('peak_running_req'))}, queue peak"
          f" {_fmt_num(rt.get('peak_queue_req'))}; gen throughput last"
          f" {_fmt_num(rt.get('last_gen_throughput'))} mean"
          f" {_fmt_num(rt.get('mean_gen_throughput'))} tok/s; retractions"
          f" {rt.get('retractions', 0)}")
    wi = report.get("whatif")
    if wi:
        out.extend(_render_whatif(wi))
    if report.get("checkpoint"):
        out.extend(_render_checkpoint(report["checkpoint"]))
    runs = report.get("runs") or []
    if len(runs) > 1:
        w("")
        w(f"Runs ({len(runs)} server starts; the last one is reported above)")
        for r in runs:
            start = r.get("start") or {}
            w(f"  #{r['index']} line {start.get('line', '-')}: {r.get('configured_dtype') or '?'}"
              f" -> {r.get('effective_dtype') or '?'}, pool {_fmt_num(r.get('pool_tokens'))}"
              f" tokens, {r.get('decode_batches', 0):,} decode batches")
    return "\n".join(out) + "\n"


def render_gate(reports: list[dict[str, Any]], fail_on: str, code: int) -> str:
    """The last lines of a check over several files: each file's verdict and the exit code."""
    out = ["Gate"]
    for report in reports:
        name = ", ".join(inert(s["name"], 200) for s in report.get("sources") or []) or "-"
        alerts = sorted_alerts(report)
        if report.get("engine") is None and report.get("sources"):
            verdict = "no LLM-server line recognised"
        elif alerts:
            verdict = ", ".join(f"{str(a.get('severity')).upper()} {a.get('rule')}"
                                for a in alerts)
        else:
            verdict = "no alerts"
        out.append(f"  {name}: {verdict}")
    out.append(f"exit {code} (--fail-on {fail_on})")
    return "\n".join(out) + "\n"


def group_pools(pools: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """Collapse pools that are identical on every rank ("TP0-TP7") so TP=8 reads as one line."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for p in pools:
        key = tuple((k, p.get(k)) for k in ("label", "kind", "dtype", "tokens", "k_gib", "v_gib",
                                            "kv_gib", "slots", "conv_gib", "ssm_gib"))
        groups.setdefault(key, []).append(p)
    out = []
    for members in groups.values():
        names = [m.get("rank") or "-" for m in members]
        label = names[0] if len(names) == 1 else f"{names[0]}..{names[-1]} ({len(names)} ranks)"
        out.append((inert(label, 60), members[0]))
    return out


def describe_pool(p: dict[str, Any]) -> str:
    label = f" {p['label']}" if p.get("label") else ""
    if p.get("kind") == "mamba":
        return (f"mamba{label}: {_fmt_num(p.get('slots'))} slots, conv "
                f"{_fmt_num(p.get('conv_gib'))} GiB, ssm {_fmt_num(p.get('ssm_gib'))} GiB")
    if p.get("kind") == "kv":  # a whole-cache budget (vLLM), not one pool line
        return (f"kv cache {p.get('dtype') or '?'}: {_fmt_num(p.get('kv_gib'))} GiB for every "
                "KV layer")
    size = (f"KV {_fmt_num(p.get('kv_gib'))} GiB" if p.get("kind") == "mla"
            else f"K {_fmt_num(p.get('k_gib'))} GiB + V {_fmt_num(p.get('v_gib'))} GiB")
    return (f"{p.get('kind')}{label} {p.get('dtype') or '?'}: {_fmt_num(p.get('tokens'))} tokens,"
            f" {size}, {_fmt_num(p.get('bytes_per_token'), 0)} B/token measured")


def _render_whatif(wi: dict[str, Any]) -> list[str]:
    out = ["", "What-if (same KV byte budget per GPU)"]
    cur = wi.get("current") or {}
    scen = wi.get("scenarios") or []
    ctx_keys: list[str] = []
    for s in scen:
        for k in (s.get("concurrency") or {}):
            if k not in ctx_keys:
                ctx_keys.append(k)
    head = f"  {'dtype':<16}{'tokens':>12}{'B/token':>10}" + "".join(
        f"{'@' + _short_ctx(k):>10}" for k in ctx_keys) + f"{'max_run':>9}  flag"
    out.append(head)
    for s in scen:
        marker = "*" if s.get("dtype") == cur.get("dtype") else " "
        conc = s.get("concurrency") or {}
        out.append(
            f" {marker}{s.get('dtype')!s:<16}{_fmt_num(s.get('tokens')):>12}"
            f"{_fmt_num(s.get('bytes_per_token'), 0):>10}"
            + "".join(f"{_fmt_num(conc.get(k)):>10}" for k in ctx_keys)
            + f"{_fmt_num(s.get('max_running_requests')):>9}  {s.get('flag') or '(not available)'}")
    if cur:
        ratio = cur.get("calibration_ratio")
        out.append(f"  current: {cur.get('dtype')} {_fmt_num(cur.get('tokens'))} tokens, measured"
                   f" {_fmt_num(cur.get('bytes_per_token'), 0)} B/token vs computed"
                   f" {_fmt_num(cur.get('theoretical_bytes_per_token'), 0)}"
                   + (f" (ratio {ratio:.3f})" if isinstance(ratio, float) else ""))
    for line in wi.get("explanation") or []:
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


def render_markdown(report: dict[str, Any]) -> str:
    """The same analysis as Markdown, for tickets and the TUI export."""
    text = render_text(report)
    alerts = sorted_alerts(report)
    md = ["# kvtui analysis", ""]
    if alerts:
        md.append("## Alerts")
        md.append("")
        for a in alerts:
            md.append(f"### {a.get('severity', '').upper()} `{a.get('rule')}`: "
                      f"{_md_escape(inert(a.get('title') or ''))}")
            md.append("")
            if a.get("detail"):
                md.append(_md_escape(inert(str(a["detail"]), 2000)))
                md.append("")
            ev = a.get("evidence")
            if ev:
                md.append(f"Evidence ({inert(str(ev.get('source')), 200)} line {ev.get('line')}):")
                md.append("")
                md.append("```")
                md.append(inert(ev.get("text") or "", 400).replace("```", "'''"))
                md.append("```")
                md.append("")
            if a.get("fix"):
                md.append(f"**Fix:** {_md_escape(inert(str(a['fix']), 1000))}")
                md.append("")
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
