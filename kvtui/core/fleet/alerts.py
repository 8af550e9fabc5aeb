"""Cross-server alerts: problems that exist only between servers (issue 38).

Pure rules over a list of `Server`s (each with its report from the one pipeline). Each alert is
an `Alert` of kvtui's one vocabulary (`kvtui.core.report_types.Alert`, `kvtui.core.severity`),
its `extra["servers"]` holding every side's value and evidence, its `evidence` the first side's
line, so the text renderer, the JSON and the deploy gate read it like any single-log alert.

Groups: the prefill and decode servers form the pair (they must agree on what crosses the wire);
replicas (role "replica" or none) are grouped by model name, nodes (role "node") form one group.
Sources for what is flagged: ../shared/reference/metrics-fleet-compare.md section 5.2 (the
mismatched-dtype corruption of sglang PR #19398; the TP mismatch of TensorRT-LLM #6507; the
"> 1.5x median for >= 10 s" skew of vllm-htop 0.4.x).
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kvtui.core import severity
from kvtui.core.evidence import Evidence
from kvtui.core.fleet.router import RouterFacts, RouterTarget
from kvtui.core.fleet.server import Sample, Server
from kvtui.core.fleet.urls import match
from kvtui.core.report_types import Alert
from parsers.prefix import ts_seconds

Json = dict[str, Any]


@dataclass(frozen=True)
class FleetOptions:
    skew_ratio: float = 1.5  # a replica above this many times its peers' median ...
    skew_seconds: float = 10.0  # ... for at least this long (vllm-htop's rule)
    skew_usage_floor: float = 0.10  # and by at least this much KV usage (0..1) ...
    skew_queue_floor: int = 5  # ... or this many queued requests, so idle noise is not skew
    stale_after: float = 300.0  # seconds without a line before a server reads as stale


# ------------------------------------------------------------------------------------------
def _side(s: Server, value: Any, ev: Evidence | None) -> Json:
    return {"server": s.name, "role": s.role, "value": value,
            "evidence": ev.to_dict() if ev is not None else None}


def _said(sides: Sequence[Json]) -> str:
    """Each side as a line of the detail: `gpu-a (prefill): fp8_e4m3 — line 12: text`."""
    out = []
    for side in sides:
        who = side["server"] + (f" ({side['role']})" if side["role"] else "")
        ev = side["evidence"]
        where = f" (line {ev['line']}: {ev['text']})" if ev else ""
        out.append(f"  {who}: {side['value'] if side['value'] is not None else 'not logged'}"
                   f"{where}")
    return "\n".join(out)


def _first_ev(sides: Sequence[Json], servers: Sequence[Server]) -> Evidence | None:
    for side in sides:
        ev = side["evidence"]
        if ev is not None:
            return Evidence(source=ev["source"], line=ev["line"], rank=ev["rank"], ts=ev["ts"],
                            text=ev["text"], count=ev["count"])
    return None


def _alert(rule: str, sev: str, title: str, detail: str, fix: str, sides: Sequence[Json],
           servers: Sequence[Server], confidence: str = "high", **extra: Any) -> Alert:
    return Alert(rule=rule, severity=sev, title=title, detail=detail,
                 evidence=_first_ev(sides, servers), fix=fix, confidence=confidence,
                 extra={"servers": list(sides), **extra})


def groups(servers: Sequence[Server]) -> list[tuple[str, list[Server]]]:
    """(kind, servers) for each group of two or more that must agree: "pd" (every prefill and
    decode server), "nodes" (every node: one server over several hosts; a node log opened
    after start-up names no model) and "replicas" (by model name)."""
    out: list[tuple[str, list[Server]]] = []
    pd = [s for s in servers if s.role in ("prefill", "decode")]
    if len(pd) >= 2:
        out.append(("pd", pd))
    nodes = [s for s in servers if s.role == "node"]
    if len(nodes) >= 2:
        out.append(("nodes", nodes))
    by_model: dict[str, list[Server]] = {}
    for s in servers:
        if s.role in (None, "replica") and s.model is not None and s.report.engine is not None:
            by_model.setdefault(s.model, []).append(s)
    out.extend(("replicas", g) for g in by_model.values() if len(g) >= 2)
    return out


_WHO = {"pd": "prefill and decode", "replicas": "replicas of one model",
        "nodes": "nodes of one server"}


# -- one fact that must agree across a group -------------------------------------------------
@dataclass(frozen=True)
class _Agree:
    rule: str
    what: str
    severity: dict[str, str]  # group kind -> severity (absent: not checked for that kind)
    value: Callable[[Server], tuple[Any, Evidence | None]]
    why: dict[str, str]
    fix: str


def _kv(s: Server) -> tuple[Any, Evidence | None]:
    kv = s.report.kv_cache
    return kv.effective_dtype or kv.configured_dtype, kv.effective_evidence


def _page(s: Server) -> tuple[Any, Evidence | None]:
    return s.report.kv_cache.page_size, None


def _tp(s: Server) -> tuple[Any, Evidence | None]:
    return s.report.parallel.tp, None


def _tp_floor(s: Server) -> bool:
    """Is the server's TP only a floor its rank tags prove (no dump said it)? Then it cannot
    differ from another server's: a log opened after start-up shows `TP0` and "TP >= 2"."""
    par = s.report.parallel
    return (par.basis or {}).get("tp") == "rank tags" and "TP" in (par.least or {})


def _version(s: Server) -> tuple[Any, Evidence | None]:
    """The release the log prints; a release only dated from the lines' format is a range and
    is not compared (two SGLang logs of one release can date differently)."""
    runs = s.report.runs
    return (s.version_logged, runs[-1].start if runs else None)


def _model_path(s: Server) -> tuple[Any, Evidence | None]:
    return s.report.model.path, None


_PD_CORRUPT = ("The decode side reads the transferred KV pages with its own layout: with "
               "different KV dtypes the per-page item length differs (32768 vs 16384 bytes "
               "for bf16 vs fp8), which silently corrupts the KV at low concurrency and "
               "crashes the transfer at high concurrency (sglang PR #19398, closed without a "
               "check).")
AGREE: tuple[_Agree, ...] = (
    _Agree("fleet-kv-dtype-mismatch", "KV cache dtype",
           {"pd": "critical", "replicas": "warning", "nodes": "warning"}, _kv,
           {"pd": _PD_CORRUPT,
            "replicas": "Replicas behind one router answer with different KV precision: the "
                        "same prompt gets different accuracy depending on the replica.",
            "nodes": "The nodes of one server hold the KV in different dtypes."},
           "Start every server of the group with the same --kv-cache-dtype."),
    _Agree("fleet-page-size-mismatch", "page size",
           {"pd": "critical", "replicas": "info"}, _page,
           {"pd": "KV is transferred page by page: a different page size on the two sides "
                  "transfers pages the other side does not lay out the same way.",
            "replicas": "Replicas page their pools differently (prefix-cache reuse and "
                        "capacity differ)."},
           "Give both sides the same --page-size."),
    _Agree("fleet-tp-mismatch", "tensor parallel size",
           {"pd": "warning", "replicas": "info"}, _tp,
           {"pd": "A KV transfer between different TP sizes must re-split the heads; a "
                  "transfer backend without that support corrupts the KV (TensorRT-LLM "
                  "#6507; vllm-ascend #11134 added it for Ascend).",
            "replicas": "Replicas of one model run with different TP: their capacity and "
                        "latency differ."},
           "Check that the transfer backend supports the TP pair, or use one TP on both."),
    _Agree("fleet-version-mismatch", "engine version",
           {"pd": "warning", "replicas": "info", "nodes": "warning"}, _version,
           {"pd": "Prefill and decode run different engine releases; the transfer protocol "
                  "and the KV layout may differ between releases.",
            "replicas": "Replicas run different engine releases (defaults and sizing may "
                        "differ).",
            "nodes": "The nodes of one server run different engine releases."},
           "Deploy one engine release on every server of the group."),
    _Agree("fleet-model-mismatch", "model path",
           {"pd": "critical", "nodes": "warning"}, _model_path,
           {"pd": "Prefill and decode load different model paths (a different revision or "
                  "model): decode continues from another model's KV.",
            "nodes": "The nodes of one server load different model paths."},
           "Load the same model revision on every server of the group."),
)


def _rule_agree(rule: _Agree, kind: str, group: list[Server]) -> Alert | None:
    sev = rule.severity.get(kind)
    if sev is None:
        return None
    sides = [_side(s, *rule.value(s)) for s in group]
    if rule.value is _tp:  # a floor is no value to compare
        for side, s in zip(sides, group, strict=True):
            if _tp_floor(s):
                side["value"] = f">= {side['value']} (rank tags only)"
        known = {str(x["value"]) for x, s in zip(sides, group, strict=True)
                 if x["value"] is not None and not _tp_floor(s)}
    else:
        known = {str(x["value"]) for x in sides if x["value"] is not None}
    if len(known) < 2:
        return None
    title = f"{rule.what[0].upper()}{rule.what[1:]} differs between {_WHO[kind]}: " + " vs ".join(
        sorted(known))
    detail = f"{rule.why[kind]}\n{_said(sides)}"
    return _alert(rule.rule, sev, title, detail, rule.fix, sides, group, group=kind)


def _rule_scales_split(kind: str, group: list[Server]) -> Alert | None:
    """One server printed the engine's "no scaling factors" warning and its twin did not (it
    loaded scales, or runs another dtype): the twins differ in accuracy. Said beside a dtype
    mismatch on purpose: the warning line is the evidence an operator greps for."""
    missing = [s for s in group if s.report.kv_cache.scales == "missing"]
    if not missing or len(missing) == len(group):
        return None
    sides = [_side(s, f"{s.kv_dtype or 'dtype not logged'}, scales "
                      f"{s.report.kv_cache.scales_said}", s.report.kv_cache.scales_evidence)
             for s in group]
    names = ", ".join(s.name for s in missing)
    return _alert("fleet-fp8-scales-split", "warning",
                  f"FP8 KV scale warning on {names} only",
                  "Some servers of the group printed the 'no scaling factors' warning and "
                  "others did not: the warned ones run an FP8 KV cache with scales of 1.0, so "
                  f"the same request is less accurate there.\n{_said(sides)}",
                  "Give the warned servers the same checkpoint scales (or "
                  "--quantization-param-path) as their twins.", sides, group, group=kind)


# -- load skew ----------------------------------------------------------------------------
def _value_at(samples: Sequence[Sample], i: int, field: str) -> float | None:
    s = samples[i]
    v = {"usage": s.usage, "running": s.running, "queued": s.queued}[field]
    return float(v) if v is not None else None


def _skew(group: list[Server], field: str, floor: float, opts: FleetOptions
          ) -> tuple[Server, float, float, float, Sample] | None:
    """The server whose `field` stayed above `skew_ratio` x its peers' median (and above it by
    `floor`) for the longest span, if that span reaches `skew_seconds`: (server, seconds,
    its value, the median, the sample the span started at)."""
    series = [(s, sorted(s.samples)) for s in group if s.samples]
    if len(series) < 2:
        return None
    times = sorted({p.t for _, ss in series for p in ss})
    idx = [0] * len(series)
    cur: list[float | None] = [None] * len(series)
    start: list[tuple[float, Sample] | None] = [None] * len(series)
    best: tuple[Server, float, float, float, Sample] | None = None
    for t in times:
        for k, (_, ss) in enumerate(series):
            while idx[k] < len(ss) and ss[idx[k]].t <= t:
                cur[k] = _value_at(ss, idx[k], field)
                idx[k] += 1
        for k, (s, ss) in enumerate(series):
            v = cur[k]
            peers = [c for j, c in enumerate(cur) if j != k and c is not None]
            if v is None or not peers:
                start[k] = None
                continue
            med = statistics.median(peers)
            if v > opts.skew_ratio * med and v - med >= floor:
                if start[k] is None:
                    start[k] = (t, ss[max(idx[k] - 1, 0)])
                began = start[k]
                assert began is not None
                span = t - began[0]
                if span >= opts.skew_seconds and (best is None or span > best[1]):
                    best = (s, span, v, med, began[1])
            else:
                start[k] = None
    return best


def _percent(x: float) -> str:
    return f"{x:.0%}"


def _whole(x: float) -> str:
    return f"{x:.0f}"


def _rule_skew(kind: str, group: list[Server], opts: FleetOptions) -> list[Alert]:
    if kind != "replicas":
        return []
    out = []
    for field, what, floor in (("usage", "KV usage", opts.skew_usage_floor),
                               ("queued", "queue", float(opts.skew_queue_floor))):
        hit = _skew(group, field, floor, opts)
        if hit is None:
            continue
        s, span, v, med, began = hit
        shown: Callable[[float], str] = _percent if field == "usage" else _whole
        sides = [_side(x, shown(_value_at(x.samples, len(x.samples) - 1, field) or 0.0)
                       if x.samples else None, None) for x in group]
        sides[group.index(s)]["evidence"] = {
            "source": s.report.sources[0].name if s.report.sources else s.name,
            "line": began.line, "rank": None, "ts": None,
            "text": f"{what} {shown(v)}", "count": 1}
        out.append(_alert(
            f"fleet-{'usage' if field == 'usage' else 'queue'}-skew", "warning",
            f"{s.name}: {what} {shown(v)} vs the other replicas' median {shown(med)} "
            f"for {span:.0f} s",
            f"{s.name} stayed above {opts.skew_ratio:g}x its peers' median {what} for "
            f"{span:.0f} s (from its log's batch lines): the router sends it more than its "
            f"share, or its pool is smaller.\nLast {what} per replica:\n{_said(sides)}",
            "Check the router's policy and this replica's pool size (kvtui shows both).",
            sides, group, confidence="medium", group=kind, seconds=round(span, 1)))
    return out


# -- one server's state seen against the fleet ---------------------------------------------
def _rule_stale(servers: Sequence[Server], opts: FleetOptions) -> list[Alert]:
    """A server whose last line is old: measured by the reader (`last_line_age`), else by the
    log's own clock against the fleet's newest line."""
    newest = max((t for s in servers if (t := _last_t(s)) is not None), default=None)
    out = []
    for s in servers:
        age, basis = s.last_line_age, "since its last line arrived"
        if age is None and newest is not None and (t := _last_t(s)) is not None:
            age, basis = newest - t, "behind the fleet's newest line (log clocks)"
        if age is None or age < opts.stale_after:
            continue
        sides = [_side(s, f"{age:.0f} s", None)]
        out.append(_alert(
            "fleet-server-stale", "warning", f"{s.name}: no log line for {age:.0f} s",
            f"{s.name}'s log went quiet {age:.0f} s ago ({basis}). A dead worker the API "
            "keeps serving on looks like this (vllm #16259); an idle SGLang server prints no "
            f"batch lines either.\n{_said(sides)}",
            "Check the process and its GPUs on that host.", sides, [s],
            confidence="medium", age_seconds=round(age, 1)))
    return out


def _last_t(s: Server) -> float | None:
    ts = s.report.runtime.last_ts
    return ts_seconds(ts) if ts else None


def _rule_unreachable(servers: Sequence[Server]) -> list[Alert]:
    out = []
    for s in servers:
        if s.connection in ("unreachable", "lost"):
            sides = [_side(s, s.connection, None)]
            out.append(_alert("fleet-server-unreachable", "critical",
                              f"{s.name}: {s.connection}",
                              f"kvtui could not read {s.name}'s log ({s.connection}).",
                              f"Check `ssh {s.name}` by hand.", sides, [s]))
    return out


_TRANSFER_WHY = ("The disaggregation backend reported failed handshakes, bootstraps or "
                 "transfers (each engine's lines: parsers/sglang/disagg.py, "
                 "parsers/vllm/disagg.py, parsers/transport.py): those requests are aborted.")
_ROUTER_ONLY = ("The router's lines say which server failed, not why: that server's log (or "
                "its peer's, for a transfer) holds the cause.")
_TRANSFER_FIX = ("Check the pair's KV dtype, page size and TP (kvtui flags differences), the "
                 "bootstrap port and the RDMA devices.")


def _transfer_side(s: Server) -> Json:
    ev = s.transfer_evidence[-1] if s.transfer_evidence else None
    return _side(s, f"{s.transfer_failures} failure line(s), KV "
                    f"{s.kv_dtype or 'dtype not logged'}", ev)


def _named(name: str, role: str, value: str) -> Json:
    """A side the fleet has no entry for: the router's URL as it printed it."""
    return {"server": name, "role": role, "value": value, "evidence": None}


def _who_failed(p: Server | None, d: Server | None, p_name: str | None,
                d_name: str | None) -> tuple[list[str], str]:
    """Which sides' own logs show failure lines, and the sentence that says so."""
    shown = [role for role, s in (("prefill", p), ("decode", d))
             if s is not None and s.transfer_failures]
    if len(shown) == 2:
        return shown, "Both sides' logs show transfer failures."
    unread = [f"the {role} server ({name}) is not in the fleet: its log was not read"
              for role, s, name in (("prefill", p, p_name), ("decode", d, d_name))
              if s is None and name is not None]
    if shown:
        other = "decode" if shown[0] == "prefill" else "prefill"
        said = f"Only the {shown[0]} side's log shows transfer failures (one-sided"
        said += f"; {unread[0]})." if unread else f": the {other} side's log shows none)."
        return shown, said
    said = "Neither side's log shows a transfer failure line"
    return shown, said + (f" ({'; '.join(unread)})." if unread else ".")


def _partner(side: str, facts: RouterFacts, engines: Sequence[Server]
             ) -> tuple[str | None, Server | None]:
    """The other server of a router line that names one side: the one the router's start
    line names for that side, else the fleet's one server of that role; (None, None) when
    it is not one."""
    urls = facts.urls(side)
    if len(urls) == 1:
        s = match(urls[0], side, engines)
        return (s.name if s is not None else urls[0]), s
    of_role = [s for s in engines if s.role == side]
    if not urls and len(of_role) == 1:
        return of_role[0].name, of_role[0]
    return None, None


def _rule_transfer_router(routers: Sequence[Server], engines: Sequence[Server]
                          ) -> tuple[list[Alert], set[str]]:
    """One alert per prefill -> decode pair a router saw requests fail on: the router's lines,
    and each side's own failure lines where its log shows some. Returns the alerts and the
    servers they cover."""
    pairs: dict[tuple[str | None, str | None],
                list[tuple[Server, RouterTarget, Server | None, Server | None]]] = {}
    for r in routers:
        assert r.router is not None
        for t in r.router.targets:
            mine = match(t.url, t.side, engines)
            name = mine.name if mine is not None else t.url
            other = "decode" if t.side == "prefill" else "prefill"
            o_name, o_server = _partner(other, r.router, engines)
            key: tuple[str | None, str | None] = (
                (name, o_name) if t.side == "prefill" else (o_name, name))
            p, d = (mine, o_server) if t.side == "prefill" else (o_server, mine)
            pairs.setdefault(key, []).append((r, t, p, d))
    out: list[Alert] = []
    covered: set[str] = set()
    for (p_name, d_name), hits in pairs.items():
        p, d = hits[0][2], hits[0][3]
        sides: list[Json] = []
        for role, s, named in (("prefill", p, p_name), ("decode", d, d_name)):
            if s is not None:
                sides.append(_transfer_side(s))
                covered.add(s.name)
            elif named is not None:
                sides.append(_named(named, role, "not in the fleet"))
        n = 0
        for r, t, _, _ in hits:
            n += t.count
            sides.append(_side(r, f"{t.side} {t.url}: {t.said}",
                               t.evidence[-1] if t.evidence else None))
        shown, sentence = _who_failed(p, d, p_name, d_name)
        pair = f"{p_name or 'prefill not named'} -> {d_name or 'decode not named'}"
        hint = "" if p_name and d_name else (
            " The router's lines name one side only, and the fleet holds no single server of "
            "the other.")
        out.append(_alert(
            "fleet-kv-transfer-failing", "critical",
            f"KV transfer between prefill and decode failing: {pair} (router: {n} failed "
            f"request line(s))",
            f"The router saw {n} request line(s) fail on this pair with a 5xx or no answer. "
            f"{sentence}{hint} " + (_TRANSFER_WHY if shown else _ROUTER_ONLY)
            + f"\n{_said(sides)}",
            _TRANSFER_FIX, sides, [s for s in (p, d) if s is not None], group="pd",
            pair={"prefill": p_name, "decode": d_name}, failing_sides=shown,
            router_failures=n))
    return out, covered


def _rule_transfer(servers: Sequence[Server]) -> list[Alert]:
    """KV transfers failing between prefill and decode: per pair a router saw fail, its lines
    and each side's own; then the servers' own failure lines no router alert took, each side's
    evidence, one-sided when only one side shows some (the pair's KV dtypes beside them: the
    first suspect, PR #19398)."""
    engines = [s for s in servers if not s.is_router]
    routers = [s for s in servers if s.is_router and s.router is not None and s.router.targets]
    out, covered = _rule_transfer_router(routers, engines)
    failing = [s for s in engines if s.transfer_failures and s.name not in covered]
    if not failing:
        return out
    pd = [s for s in engines if s.role in ("prefill", "decode") and s.name not in covered]
    pd = pd or failing
    sides = [_transfer_side(s) for s in pd]
    shown = sorted({s.role for s in failing if s.role in ("prefill", "decode")})
    if len(shown) == 2:
        sentence = "Both sides' logs show transfer failures."
    elif shown:
        other = "decode" if shown[0] == "prefill" else "prefill"
        sentence = (f"Only the {shown[0]} side's log shows transfer failures (one-sided: "
                    + (f"the {other} side's log shows none)." if any(s.role == other for s in pd)
                       else f"no {other} server is in the fleet)."))
    else:
        sentence = ""
    names = ", ".join(f"{s.name} ({s.transfer_failures})" for s in failing)
    out.append(_alert("fleet-kv-transfer-failing", "critical",
                      f"KV transfer between prefill and decode failing: {names}",
                      f"{_TRANSFER_WHY} {sentence}".rstrip() + f"\n{_said(sides)}",
                      _TRANSFER_FIX, sides, pd, failing_sides=shown))
    return out


_TP_TAG = re.compile(r"\bTP(\d+)\b")


def _rule_deployment_tp(kind: str, group: list[Server]) -> Alert | None:
    """TP over several nodes: each node's log shows only its own ranks (a node-2 log of a TP16
    run shows TP8..TP15: sglang #4184), so only the union says the TP."""
    if kind != "nodes":
        return None
    ranks: dict[str, set[int]] = {}
    for s in group:
        ranks[s.name] = {int(m.group(1)) for r in s.report.parallel.ranks_seen
                         if (m := _TP_TAG.search(r))}
    union = set().union(*ranks.values())
    if not union:
        return None
    deployed = max(union) + 1
    per_node = [s.report.parallel.tp for s in group]
    if all(tp is not None and tp >= deployed for tp in per_node):
        return None
    sides = [_side(s, f"ranks TP{min(ranks[s.name])}..TP{max(ranks[s.name])}"
                   if ranks[s.name] else "no rank tags", None) for s in group]
    missing = sorted(set(range(deployed)) - union)
    gap = f" (ranks never seen: {', '.join(f'TP{r}' for r in missing[:8])})" if missing else ""
    return _alert("fleet-tp-over-nodes", "info" if not missing else "warning",
                  f"TP {deployed} over {len(group)} nodes",
                  f"Together the nodes' logs show ranks TP0..TP{deployed - 1}{gap}; each "
                  "node's own log shows only its ranks, so each alone reads as a smaller TP. "
                  f"Capacity and the what-if use TP {deployed}.\n{_said(sides)}",
                  "", sides, group, group=kind, tp=deployed)


# ------------------------------------------------------------------------------------------
def evaluate(servers: Sequence[Server], options: FleetOptions | None = None) -> list[Alert]:
    """Every cross-server alert of the fleet, most severe first."""
    opts = options or FleetOptions()
    out: list[Alert] = []
    out += _rule_unreachable(servers)
    out += _rule_transfer(servers)
    for kind, group in groups(servers):
        for rule in AGREE:
            a = _rule_agree(rule, kind, group)
            if a is not None:
                out.append(a)
        for one in (_rule_scales_split(kind, group), _rule_deployment_tp(kind, group)):
            if one is not None:
                out.append(one)
        out += _rule_skew(kind, group, opts)
    out += _rule_stale(servers, opts)
    out.sort(key=lambda a: severity.rank(a.severity))
    return out


RULES: tuple[str, ...] = (
    "fleet-server-unreachable", "fleet-kv-transfer-failing", *(r.rule for r in AGREE),
    "fleet-fp8-scales-split", "fleet-tp-over-nodes", "fleet-usage-skew", "fleet-queue-skew",
    "fleet-server-stale")
