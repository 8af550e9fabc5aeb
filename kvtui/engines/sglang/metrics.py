"""SGLang's Prometheus metrics by release, and the alerts only its metric set needs.

Releases read (wheels): 0.4.6.post5, 0.4.9, 0.4.10, 0.5.1, 0.5.2, 0.5.4-0.5.14, 0.5.17,
0.5.20-0.5.23. Citations are sglang-0.5.23 wheel: sglang/srt/observability/metrics_collector.py
(MC) unless a row says otherwise; releases up to 0.5.9 define them in
sglang/srt/metrics/collector.py. Families are named as the parser gives them (counters without
`_total`). Facts, labels and pitfalls: ../shared/reference/metrics-fleet-compare.md section 2.3.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvtui.core.metrics import read
from kvtui.core.metrics.alerts import MetricAlert
from kvtui.core.metrics.catalogue import Name, first, releases
from kvtui.core.metrics.exposition import Scrape
from kvtui.core.metrics.snapshot import Pool, Snapshot

MC = "sglang-0.5.23 wheel: sglang/srt/observability/metrics_collector.py"
NAMES: tuple[Name, ...] = (
    # usage ratios: token_usage = max(full, swa, mamba), "FIXME: misleadingly named" (MC:92-96)
    Name("token_usage", "sglang:token_usage", None, None, f"{MC}:405"),
    Name("full_token_usage", "sglang:full_token_usage", "0.5.9", None, f"{MC}:411"),
    Name("swa_token_usage", "sglang:swa_token_usage", "0.5.1", None, f"{MC}:417"),
    Name("mamba_usage", "sglang:mamba_usage", "0.5.4", None, f"{MC}:423"),
    Name("num_used_tokens", "sglang:num_used_tokens", None, None, f"{MC}:432"),
    # raw pool counts (sglang PR #22726, first in the 0.5.11 wheel); MC:102-111 the invariant
    Name("kv_available", "sglang:kv_available_tokens", "0.5.10", None, f"{MC}:439"),
    Name("kv_evictable", "sglang:kv_evictable_tokens", "0.5.10", None, f"{MC}:445"),
    Name("kv_used", "sglang:kv_used_tokens", "0.5.10", None, f"{MC}:451"),
    Name("swa_available", "sglang:swa_available_tokens", "0.5.11", None, f"{MC}:457"),
    Name("swa_evictable", "sglang:swa_evictable_tokens", "0.5.11", None, f"{MC}:463"),
    Name("swa_used", "sglang:swa_used_tokens", "0.5.11", None, f"{MC}:469"),
    Name("mamba_available", "sglang:mamba_available_tokens", "0.5.11", None, f"{MC}:475"),
    Name("mamba_evictable", "sglang:mamba_evictable_tokens", "0.5.11", None, f"{MC}:481"),
    Name("mamba_used", "sglang:mamba_used_tokens", "0.5.11", None, f"{MC}:487"),
    # start-up constants, emitted by every rank (emit_constants, MC:1289-1311)
    Name("max_total_num_tokens", "sglang:max_total_num_tokens", "0.5.5", None, f"{MC}:1290"),
    Name("max_total_num_tokens_swa", "sglang:max_total_num_tokens_swa", "0.5.14", None,
         f"{MC}:1296"),
    Name("kv_cache_memory_usage_gb", "sglang:kv_cache_memory_usage_gb", "0.5.14", None,
         f"{MC}:1308"),
    Name("running", "sglang:num_running_reqs", None, None, f"{MC}:365"),
    Name("queued", "sglang:num_queue_reqs", None, None, f"{MC}:371"),
    Name("retracted", "sglang:num_retracted_requests", "0.5.6", None, f"{MC}:559"),
    Name("cache_hit_rate", "sglang:cache_hit_rate", None, None, f"{MC}:389"),
    Name("gen_throughput", "sglang:gen_throughput", None, None, f"{MC}:383"),
    Name("prompt_tokens", "sglang:prompt_tokens", None, None, f"{MC}:1856"),
    Name("generation_tokens", "sglang:generation_tokens", None, None, f"{MC}:1861"),
    Name("ttft", "sglang:time_to_first_token_seconds", None, None, f"{MC}:2041"),
    Name("itl", "sglang:inter_token_latency_seconds", None, None, f"{MC}:2051"),
    Name("e2e", "sglang:e2e_request_latency_seconds", None, None, f"{MC}:2068"),
    Name("queue", "sglang:queue_time_seconds", "0.5.2", None, f"{MC}:838"),
)
# Scheduler gauges are per DP group (`dp_rank` when DP is on: MC:1379-1392).
GROUP = "dp_rank"
# kv_cache_memory_usage_gb is `mem_usage` in GiB: `mem_usage_bytes / GB` with
# GB = 1024 * 1024 * 1024 (sglang-0.5.23 wheel: sglang/srt/mem_cache/memory_pool.py:116, 1066)
GIB = 1024**3
# the KV dtypes whose cells a measured bytes-per-token is compared with (FP8 e4m3 and e5m2 are
# one size); the measure is within 2% of the cell for a pool of any useful size (the padding
# page over hundreds of thousands of tokens)
CELL_DTYPES: tuple[str, ...] = ("bf16", "fp8_e4m3")
CELL_MATCH = 0.02
# A pool is "occupied" beyond what token_usage says when evictable radix-cache tokens hold this
# much more of it (the #22726 report: ~2% shown, 72% occupied).
EVICTABLE_GAP = 0.25
# token_usage and max(per-pool ratios) are set in the same pass (MC:92-96): a gap beyond
# rounding means they came from different series.
RATIO_TOLERANCE = 0.02


def _first_of(values: list[float]) -> float:
    return values[0]


class SGLangMetrics:
    engine = "sglang"
    prefix = "sglang"
    names = NAMES
    # /server_info answers {"version": __version__, ...} (sglang-0.5.23 wheel:
    # sglang/srt/entrypoints/http_server.py:863-893); /get_server_info is the older route
    # (sglang-0.4.6.post5 wheel: same file:221-228), deprecated with a server-side warning
    # on every call in 0.5.23 (:853-860), so it is asked second
    version_paths = ("/server_info", "/get_server_info")

    def snapshot(self, scrape: Scrape) -> Snapshot:
        def v(concept: str, combine: Any = sum, suffix: str = "") -> float | None:
            return read.value(scrape, first(NAMES, concept), GROUP, suffix=suffix,
                              combine=combine)

        gauges = {c: x for c in ("token_usage", "full_token_usage", "swa_token_usage",
                                 "mamba_usage", "cache_hit_rate")
                  if (x := v(c, max)) is not None}
        if (gen := v("gen_throughput")) is not None:
            gauges["gen_throughput"] = gen
        counters = {c: x for c in ("retracted", "prompt_tokens", "generation_tokens")
                    if (x := v(c, suffix="_total")) is not None}
        histograms = {c: h for c in ("ttft", "itl", "e2e", "queue")
                      if (h := read.histogram(scrape, first(NAMES, c))) is not None}
        return Snapshot(
            engine=self.engine, model=read.label(scrape, "sglang:num_running_reqs", "model_name"),
            releases=releases(scrape, NAMES), kv_cache_dtype=None,
            bytes_per_token=self._bytes_per_token(v), pools=self._pools(v, gauges),
            running=v("running"), queued=v("queued"), gauges=gauges, counters=counters,
            histograms=histograms,
            tp=read.distinct(scrape, "sglang:max_total_num_tokens", "tp_rank"),
            pp=read.distinct(scrape, "sglang:max_total_num_tokens", "pp_rank"),
            dp=read.distinct(scrape, "sglang:max_total_num_tokens", "dp_rank"), at=scrape.at)

    @staticmethod
    def _bytes_per_token(v: Any) -> float | None:
        """Per GPU, of one rank (SGLang exports no KV dtype: metrics-fleet-compare.md 2.2).
        Approximate: `mem_usage` is every buffer of the pool, whose rows are `size + page_size`
        (sglang-0.5.23 wheel: sglang/srt/mem_cache/memory_pool.py:2260, 2574), over
        `max_total_num_tokens`."""
        gib = v("kv_cache_memory_usage_gb", _first_of)
        tokens = v("max_total_num_tokens", _first_of)
        if not gib or not tokens:
            return None
        return float(gib * GIB / tokens)

    @staticmethod
    def _pools(v: Any, gauges: Mapping[str, float]) -> tuple[Pool, ...] | None:
        def n(concept: str) -> int | None:
            x = v(concept)
            return None if x is None else int(x)

        pools = []
        full_tokens = n("max_total_num_tokens")
        used, evictable, available = n("kv_used"), n("kv_evictable"), n("kv_available")
        approximate: tuple[str, ...] = ()
        if used is None and (used := n("num_used_tokens")) is not None:
            # before 0.5.11 only num_used_tokens = max(full_used, swa_used) (MC:110-111)
            approximate = ("used",)
        usage = gauges.get("full_token_usage")
        if full_tokens is not None or used is not None or usage is not None:
            pools.append(Pool("full", full_tokens, used, evictable, available, usage,
                              approximate=approximate))
        swa = (n("max_total_num_tokens_swa"), n("swa_used"), n("swa_evictable"),
               n("swa_available"))
        if swa[0] or any(swa[1:]):  # the gauges read 0 on a model without an SWA pool
            pools.append(Pool("swa", *swa, gauges.get("swa_token_usage")))
        mamba = (n("mamba_used"), n("mamba_evictable"), n("mamba_available"))
        if any(mamba) or gauges.get("mamba_usage"):
            # state slots, one per request, not tokens; their total is not exported (the
            # invariant is <=, MC:102-105)
            pools.append(Pool("mamba", None, *mamba, gauges.get("mamba_usage"), unit="slots"))
        return tuple(pools) or None

    def kv_cell(self, snap: Snapshot, spec: Any, release: str | None) -> dict[str, Any] | None:
        """Which KV dtype's cell the measured bytes per token match. The cell is SGLang's own
        (`kvtui.engines.sglang.cell.kv_cell`, on the TP/PP the rank labels prove and the release
        /server_info names, else the newest read); the measure is approximate (see
        `_bytes_per_token`), so a match is within CELL_MATCH, and none is claimed beyond."""
        if snap.bytes_per_token is None or spec is None:
            return None
        from kvtui.core.capacity.parallel import Parallel
        from kvtui.core.releases import parse_version
        from kvtui.engines.sglang.cell import kv_cell
        from kvtui.engines.sglang.version import NEWEST

        version = NEWEST
        if release and (parsed := parse_version(release)):
            version = (parsed[0], parsed[1], parsed[2])
        par = Parallel(tp=snap.tp or 1, pp=snap.pp or 1)
        cells: dict[str, int] = {}
        for dtype in CELL_DTYPES:
            try:
                cells[dtype] = kv_cell(spec, dtype, par, version=version).bytes_per_token
            except ValueError:
                continue
        measured = snap.bytes_per_token
        matches = [d for d, b in cells.items() if abs(measured - b) <= CELL_MATCH * b]
        if snap.dp and snap.dp > 1:
            # `dp_rank` is there for attention DP (heads split by TP / DP) and for DP replicas
            # (each with the whole TP) alike (MC:1379-1392): the cell's layout is not proven
            matches = []
        return {"model": spec.name, "tp": par.tp, "pp": par.pp, "dp": snap.dp,
                "release": ".".join(map(str, version)), "measured": round(measured, 1),
                "cells": cells, "matches": matches[0] if len(matches) == 1 else None}

    def version(self, payload: Mapping[str, Any]) -> str | None:
        found = payload.get("version")
        return found if isinstance(found, str) and found else None

    def alerts(self, new: Snapshot, old: Snapshot | None) -> list[MetricAlert]:
        """token_usage against the per-pool gauges (sglang #5979, PR #22726): say which to
        trust."""
        out: list[MetricAlert] = []
        g = new.gauges
        token_usage = g.get("token_usage")
        pools = {p.kind: p for p in new.pools or ()}
        ratios = {k: g[c] for k, c in (("full", "full_token_usage"), ("swa", "swa_token_usage"),
                                        ("mamba", "mamba_usage")) if c in g}
        if token_usage is not None and ratios:
            top = max(ratios.values())
            kv_top = max((r for k, r in ratios.items() if k != "mamba"), default=0.0)
            if abs(token_usage - top) > RATIO_TOLERANCE:
                out.append(MetricAlert(
                    "warning", "token_usage_disagrees",
                    f"sglang:token_usage {token_usage:.0%} disagrees with the largest per-pool "
                    f"ratio {top:.0%} (it is defined as their max, {MC}:92-96): the series "
                    "come from different ranks or processes; trust the per-pool gauges "
                    "(full_token_usage, swa_token_usage, mamba_usage and the kv_*_tokens "
                    "counts)"))
            elif "mamba" in ratios and ratios["mamba"] > kv_top + 0.10 \
                    and token_usage >= ratios["mamba"] - RATIO_TOLERANCE:
                out.append(MetricAlert(
                    "warning" if token_usage >= 0.9 else "info", "token_usage_is_mamba",
                    f"sglang:token_usage {token_usage:.0%} is the Mamba state pool's slot "
                    f"usage, not KV: it is the max over pools ({MC}:92-96; sglang #5979). The "
                    f"KV pools are at {kv_top:.0%}: trust full_token_usage/swa_token_usage for "
                    "KV pressure and mamba_usage for state slots"))
        full = pools.get("full")
        if full and None not in (full.used, full.evictable, full.available):
            assert full.used is not None and full.evictable is not None
            assert full.available is not None
            total = full.used + full.evictable + full.available
            if total > 0:
                occupied = 1 - full.available / total
                locked = full.used / total
                if occupied - locked >= EVICTABLE_GAP:
                    shown = f"{token_usage:.0%}" if token_usage is not None else "token_usage"
                    out.append(MetricAlert(
                        "info", "evictable_hidden",
                        f"sglang:token_usage {shown} counts only tokens locked by running "
                        f"requests; {full.evictable:,} tokens ({full.evictable / total:.0%} "
                        f"of the pool) hold evictable radix cache, so the pool is "
                        f"{occupied:.0%} occupied (sglang PR #22726). For headroom trust "
                        "token_usage / kv_used_tokens (evictable tokens are freed on demand); "
                        "for memory occupancy trust the kv_*_tokens gauges"))
        return out


METRICS = SGLangMetrics()
