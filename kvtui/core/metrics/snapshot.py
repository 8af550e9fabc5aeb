"""The typed snapshot of one scrape: what an engine's metric catalogue read from it.

Every field is None when the engine (or its release) does not export it: a missing gauge is
never shown as 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

POOL_KINDS: tuple[str, ...] = ("full", "swa", "mamba")
# Latency histograms every engine's catalogue maps onto, in report order.
LATENCIES: tuple[str, ...] = ("ttft", "itl", "e2e", "queue")
# Cumulative counters a catalogue may map onto (rates come from two scrapes' deltas).
COUNTERS: tuple[str, ...] = ("retracted", "preempted", "prompt_tokens", "generation_tokens",
                             "cache_queries", "cache_hits")


@dataclass(frozen=True, slots=True)
class Pool:
    """One KV pool. `unit` is "tokens", or "slots" for a Mamba state pool (one slot a request,
    not a token). `approximate` names the fields derived rather than exported (vLLM's used
    tokens are its usage fraction times the pool: blocks, not tokens)."""

    kind: str
    tokens: int | None
    used: int | None
    evictable: int | None
    available: int | None
    usage: float | None
    unit: str = "tokens"
    approximate: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Histogram:
    """Cumulative buckets (upper bound, count at or below it; +Inf last), sum and count."""

    buckets: tuple[tuple[float, float], ...]
    sum: float
    count: float


@dataclass(frozen=True, slots=True)
class Snapshot:
    engine: str
    model: str | None = None
    # the release range the metric set implies (names appear and go by release), e.g. ">=0.5.11"
    releases: str | None = None
    kv_cache_dtype: str | None = None
    # SGLang: kv_cache_memory_usage_gb / max_total_num_tokens, per GPU (approximate: see there)
    bytes_per_token: float | None = None
    pools: tuple[Pool, ...] | None = None
    running: float | None = None
    queued: float | None = None
    # the engine's own gauges kept as exported (token_usage, cache_hit_rate, gen_throughput, ...)
    gauges: Mapping[str, float] = field(default_factory=dict)
    counters: Mapping[str, float] = field(default_factory=dict)
    histograms: Mapping[str, Histogram] = field(default_factory=dict)
    # the parallel layout the series' rank labels prove (SGLang emits its start-up constants
    # from every rank), None when they prove nothing
    tp: int | None = None
    pp: int | None = None
    dp: int | None = None
    at: float = 0.0
