"""The report of `kvtui metrics`: the JSON (its keys are a contract pinned by
tests/golden/metrics/*.json) and the text rendering of the same dict, so the two never
disagree."""

from __future__ import annotations

from typing import Any

from kvtui.core import severity
from kvtui.core.metrics.alerts import MetricAlert
from kvtui.core.metrics.snapshot import LATENCIES, Snapshot
from kvtui.core.metrics.window import Window, hit_rate


def _num(x: float | None) -> float | int | None:
    if x is None:
        return None
    return int(x) if float(x).is_integer() else round(x, 6)


def build(url: str, new: Snapshot, old: Snapshot | None, window: Window,
          alerts: list[MetricAlert], version: str | None,
          kv_cell: dict[str, Any] | None = None) -> dict[str, Any]:
    pools = None if new.pools is None else [
        {"kind": p.kind, "unit": p.unit, "tokens": p.tokens, "used": p.used,
         "evictable": p.evictable, "available": p.available, "usage": _num(p.usage),
         "approximate": list(p.approximate)} for p in new.pools]
    counters = {name: {"total": _num(new.counters.get(name)),
                       "per_s": _num(window.rates.get(name))}
                for name in ("retracted", "preempted") if name in new.counters}
    throughput = {f"{name}_per_s": _num(window.rates.get(name))
                  for name in ("prompt_tokens", "generation_tokens") if name in new.counters}
    latency: dict[str, Any] = {"window_s": _num(window.seconds)}
    for name in LATENCIES:
        pct = window.percentiles.get(name)
        latency[name] = None if pct is None else {
            **{k: _num(v) for k, v in pct.items()}, "count": _num(window.counts.get(name))}
    ordered = sorted(alerts, key=lambda a: severity.rank(a.severity))
    return {
        "url": url,
        "engine": new.engine,
        "version": version,
        "releases": new.releases,
        "model": new.model,
        "kv_cache_dtype": new.kv_cache_dtype,
        "kv_bytes_per_token": _num(new.bytes_per_token),
        "kv_cell": kv_cell,
        "pools": pools,
        "requests": {"running": _num(new.running), "queued": _num(new.queued)},
        "counters": counters,
        "throughput": throughput,
        "engine_gauges": {k: _num(v) for k, v in sorted(new.gauges.items())},
        "cache_hit_rate": _num(hit_rate(new, old)),
        "latency": latency,
        "alerts": [{"severity": a.severity, "kind": a.kind, "message": a.message}
                   for a in ordered],
    }


def _pct(x: Any) -> str:
    return "-" if x is None else f"{x:.1%}"


def _tok(x: Any, approx: bool = False) -> str:
    return "-" if x is None else ("≈" if approx else "") + f"{x:,}"


def _secs(x: Any) -> str:
    if x is None:
        return "-"
    return f"{x * 1000:.0f} ms" if x < 10 else f"{x:.1f} s"


def text(report: dict[str, Any]) -> str:
    r = report
    lines = [f"{r['engine']} /metrics at {r['url']}"]
    version = r["version"] or "unknown"
    if r["releases"]:
        version += f" (metric set: {r['releases']})"
    lines.append(f"  version        {version}")
    if r["model"]:
        lines.append(f"  model          {r['model']}")
    dtype = r["kv_cache_dtype"]
    if dtype is None:
        dtype = "not exported"
    elif dtype == "auto":
        dtype = "auto (the model's dtype unless the checkpoint declares a KV quantization)"
    lines.append(f"  KV dtype       {dtype}")
    if r["kv_bytes_per_token"] is not None:
        lines.append(f"  KV bytes/token ≈{r['kv_bytes_per_token']:,.0f} per GPU (pool memory / "
                     "pool tokens; compare with the model's cell: `kvtui whatif --model`)")
    cell = r["kv_cell"]
    if cell:
        cells = ", ".join(f"{d} {b:,}" for d, b in cell["cells"].items())
        verdict = (f"matches {cell['matches']}" if cell["matches"] else
                   "matches no dtype's cell (within 2%)")
        lines.append(f"  KV cell        {verdict}: {cell['model']} at TP {cell['tp']} PP "
                     f"{cell['pp']} (SGLang {cell['release']} rules): {cells} B/token")
    lines.append("  pools")
    if not r["pools"]:
        lines.append("    not exported")
    for p in r["pools"] or ():
        approx = set(p["approximate"])
        unit = "slots" if p["unit"] == "slots" else "tokens"
        size = "size not exported" if p["tokens"] is None else f"{p['tokens']:,} {unit}"
        lines.append(
            f"    {p['kind']:<6} {size:<22} used {_tok(p['used'], 'used' in approx)}  "
            f"evictable {_tok(p['evictable'])}  available "
            f"{_tok(p['available'], 'available' in approx)}  usage {_pct(p['usage'])}")
    req = r["requests"]
    lines.append(f"  requests       running {_tok(req['running'])}  queued {_tok(req['queued'])}")
    for name, c in r["counters"].items():
        rate = "" if c["per_s"] is None else f"  ({c['per_s']:.2f}/s)"
        lines.append(f"  {name:<14} {_tok(c['total'])} since start{rate}")
    tp = r["throughput"]
    if tp and r["latency"]["window_s"] is None:
        lines.append("  throughput     - (one scrape: rates need two)")
    elif tp:
        shown = "  ".join(f"{k.removesuffix('_per_s').replace('_', ' ')} "
                          f"{'-' if v is None else f'{v:,.1f}'}/s" for k, v in tp.items())
        lines.append(f"  throughput     {shown}")
    gen = r["engine_gauges"].get("gen_throughput")
    if gen is not None:
        lines.append(f"  gen_throughput {gen:,.1f} tok/s (the engine's last stats line)")
    lines.append(f"  cache hit rate {_pct(r['cache_hit_rate'])}")
    lat = r["latency"]
    span = ("since the server started (one scrape)" if lat["window_s"] is None
            else f"over {lat['window_s']:.1f} s")
    lines.append(f"  latency        p50 / p95 / p99 {span} (bucket-interpolated)")
    for name in LATENCIES:
        p = lat[name]
        if p is None:
            shown = "not exported" if lat["window_s"] is None or name not in lat else "-"
        elif not p["count"]:
            shown = "no requests"
        else:
            shown = (f"{_secs(p['p50'])} / {_secs(p['p95'])} / {_secs(p['p99'])}  "
                     f"({p['count']:,.0f} observed)")
        lines.append(f"    {name:<6} {shown}")
    if r["alerts"]:
        lines.append("alerts")
        for a in r["alerts"]:
            lines.append(f"  {severity.MARK.get(a['severity'], a['severity'])} {a['message']}")
    else:
        lines.append("no alerts")
    return "\n".join(lines) + "\n"
