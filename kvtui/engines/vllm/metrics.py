"""vLLM's Prometheus metrics by release (V0 and V1), and what only they say.

Releases read (wheels): 0.6.3 (V0), 0.10.2, 0.11.0 (V0 and V1), 0.12.0-0.14.0, 0.18.0-0.20.0,
0.22.0, 0.25.0-0.28.0, 0.33.0, 0.34.0. Citations are vllm-0.34.0 wheel:
vllm/v1/metrics/loggers.py (L) unless a row says otherwise. Counter families are named as the
parser gives them (without `_total`), so V0's `vllm:num_preemptions_total` counter
(vllm-0.6.3 wheel: vllm/engine/metrics.py:88) and V1's `vllm:num_preemptions` are one family.
Facts and traps: ../shared/reference/metrics-fleet-compare.md section 2.4.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvtui.core.metrics import read
from kvtui.core.metrics.alerts import MetricAlert
from kvtui.core.metrics.catalogue import Name, first, releases
from kvtui.core.metrics.exposition import Scrape
from kvtui.core.metrics.snapshot import Pool, Snapshot

L = "vllm-0.34.0 wheel: vllm/v1/metrics/loggers.py"
V0 = "vllm-0.11.0 wheel: vllm/engine/metrics.py"
NAMES: tuple[Name, ...] = (
    # "KV-cache usage. 1 means 100 percent usage." (a 0-1 fraction of blocks)
    Name("usage", "vllm:kv_cache_usage_perc", "0.6.3", None, f"{L}:620"),
    Name("usage", "vllm:gpu_cache_usage_perc", None, "0.11.0", f"{V0}:82"),
    Name("running", "vllm:num_requests_running", None, None, f"{L}:528"),
    Name("queued", "vllm:num_requests_waiting", None, None, f"{L}:538"),
    Name("preempted", "vllm:num_preemptions", None, None, f"{L}:739"),
    # renamed from vllm:gpu_prefix_cache_* (counters in tokens)
    Name("cache_queries", "vllm:prefix_cache_queries", "0.6.3", None, f"{L}:662"),
    Name("cache_hits", "vllm:prefix_cache_hits", "0.6.3", None, f"{L}:673"),
    Name("cache_queries", "vllm:gpu_prefix_cache_queries", "0.6.3", "0.11.0",
         "vllm-0.11.0 wheel: vllm/v1/metrics/loggers.py:229"),
    Name("cache_hits", "vllm:gpu_prefix_cache_hits", "0.6.3", "0.11.0",
         "vllm-0.11.0 wheel: vllm/v1/metrics/loggers.py:243"),
    Name("prompt_tokens", "vllm:prompt_tokens", None, None, f"{L}:748"),
    Name("generation_tokens", "vllm:generation_tokens", None, None, f"{L}:799"),
    Name("ttft", "vllm:time_to_first_token_seconds", None, None, f"{L}:931"),
    Name("itl", "vllm:inter_token_latency_seconds", "0.6.3", None, f"{L}:941"),
    # the older name of the per-token latency, last read in 0.14.0
    Name("itl", "vllm:time_per_output_token_seconds", None, "0.14.0",
         "vllm-0.14.0 wheel: vllm/v1/metrics/loggers.py:723"),
    Name("e2e", "vllm:e2e_request_latency_seconds", None, None, f"{L}:961"),
    Name("queue", "vllm:request_queue_time_seconds", "0.6.3", None, f"{L}:971"),
    Name("cache_config", "vllm:cache_config_info", None, None, f"{L}:1120"),
)
# every vllm:* series has `engine`, the DP engine index (L:498-504)
GROUP = "engine"
# kv_cache_size_tokens: "Per-DP-engine KV cache capacity in tokens (group-aware)"
# (vllm-0.34.0 wheel: vllm/config/cache.py:354-357); first read in 0.25.0 (absent in 0.22.0)
SIZE_LABEL = "kv_cache_size_tokens"
SIZE_LABEL_AFTER = "0.22.0"


class VLLMMetrics:
    engine = "vllm"
    prefix = "vllm"
    names = NAMES
    # GET /version -> {"version": VLLM_VERSION}
    # (vllm-0.34.0 wheel: vllm/entrypoints/serve/instrumentator/basic.py:53-56;
    # vllm-0.6.3 wheel: vllm/entrypoints/openai/api_server.py:305-307)
    version_paths = ("/version",)

    def snapshot(self, scrape: Scrape) -> Snapshot:
        def v(concept: str, combine: Any = sum, suffix: str = "") -> float | None:
            return read.value(scrape, first(NAMES, concept), GROUP, suffix=suffix,
                              combine=combine)

        counters = {c: x for c in ("preempted", "prompt_tokens", "generation_tokens",
                                   "cache_queries", "cache_hits")
                    if (x := v(c, suffix="_total")) is not None}
        histograms = {c: h for c in ("ttft", "itl", "e2e", "queue")
                      if (h := read.histogram(scrape, first(NAMES, c))) is not None}
        usage = v("usage", max)
        dtype = read.label(scrape, "vllm:cache_config_info", "cache_dtype")
        has_size = read.label(scrape, "vllm:cache_config_info", SIZE_LABEL) is not None
        span = releases(scrape, NAMES, floors=(SIZE_LABEL_AFTER,) if has_size else ())
        return Snapshot(
            engine=self.engine,
            model=read.label(scrape, "vllm:num_requests_running", "model_name"),
            releases=span, kv_cache_dtype=dtype,
            pools=self._pools(scrape), running=v("running"), queued=v("queued"),
            gauges={} if usage is None else {"kv_cache_usage_perc": usage},
            counters=counters, histograms=histograms, at=scrape.at)

    @staticmethod
    def _pools(scrape: Scrape) -> tuple[Pool, ...] | None:
        """One pool per DP engine, summed: vLLM has one block pool shared by its KV cache
        groups and exports no per-kind (full/SWA/Mamba) usage and no evictable or available
        token gauges (metrics-fleet-compare.md 2.4). Used and available tokens are the usage
        fraction times the pool, marked approximate: the fraction counts blocks
        (`1 - free blocks / total blocks`), and cached-but-free blocks count as free."""
        usages = {s.labels.get(GROUP, ""): s.value
                  for name in first(NAMES, "usage")
                  for s in scrape.samples(name)}
        sizes = read.labels(scrape, "vllm:cache_config_info", SIZE_LABEL, GROUP)
        tokens: int | None = None
        if sizes and all(x.isdigit() for x in sizes):
            tokens = sum(int(x) for x in sizes)
        if tokens is None and not usages:
            return None
        usage = max(usages.values()) if usages else None
        used = available = None
        if tokens is not None and usages:
            family = scrape.get("vllm:cache_config_info")
            per_engine = {s.labels.get(GROUP, ""): int(s.labels[SIZE_LABEL])
                          for s in (family.samples if family else ())
                          if s.labels.get(SIZE_LABEL, "").isdigit()}
            used = round(sum(usages.get(e, 0.0) * t for e, t in per_engine.items()))
            available = tokens - used
        return (Pool("full", tokens, used, None, available, usage,
                     approximate=("used", "available") if used is not None else ()),)

    def version(self, payload: Mapping[str, Any]) -> str | None:
        found = payload.get("version")
        return found if isinstance(found, str) and found else None

    def alerts(self, new: Snapshot, old: Snapshot | None) -> list[MetricAlert]:
        return []

    def kv_cell(self, snap: Snapshot, spec: Any, release: str | None) -> dict[str, Any] | None:
        return None  # vLLM exports its dtype (cache_config_info{cache_dtype})


METRICS = VLLMMetrics()
