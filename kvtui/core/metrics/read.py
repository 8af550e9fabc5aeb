"""Reading one concept out of a scrape when a metric has several series: ranks, DP groups,
label breakdowns. The engines' catalogues call these with their own label names.

The rule: within one group (a DP rank for SGLang, a DP engine for vLLM) keep only the series of
the lowest tp/pp/ep rank and sum across the rest of the labels (a `priority` or `is_streaming`
breakdown); then combine the groups (sum for counts, max for ratios). Why: SGLang emits its
start-up constants from every rank (the sample has `max_total_num_tokens` for tp_rank 0 and 1)
and its per-step gauges only from TP0 of each DP group (sglang-0.5.23 wheel:
sglang/srt/observability/metrics_collector.py:1359-1368), so summing over ranks double counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

from kvtui.core.metrics.exposition import Sample, Scrape
from kvtui.core.metrics.snapshot import Histogram

RANK_LABELS: tuple[str, ...] = ("tp_rank", "pp_rank", "moe_ep_rank", "attn_cp_rank")


def _rank(sample: Sample) -> tuple[int, ...]:
    out = []
    for key in RANK_LABELS:
        try:
            out.append(int(sample.labels.get(key, "0")))
        except ValueError:
            out.append(0)
    return tuple(out)


def grouped(samples: Iterable[Sample], group: str) -> list[float]:
    """One value per group: the lowest rank's series, summed over other labels; NaN skipped."""
    groups: dict[str, list[Sample]] = {}
    for s in samples:
        if math.isnan(s.value):
            continue
        groups.setdefault(s.labels.get(group, ""), []).append(s)
    values = []
    for members in groups.values():
        low = min(_rank(s) for s in members)
        values.append(sum(s.value for s in members if _rank(s) == low))
    return values


def value(scrape: Scrape, names: Sequence[str], group: str, *, suffix: str = "",
          combine: Callable[[list[float]], float] = sum) -> float | None:
    """The first of `names` (a concept's names across releases) present, combined over groups."""
    for name in names:
        values = grouped(scrape.samples(name, suffix), group)
        if values:
            return combine(values)
    return None


def histogram(scrape: Scrape, names: Sequence[str]) -> Histogram | None:
    """The first of `names` present, its series merged (buckets summed by `le`): latency
    histograms carry no rank labels (SGLang's are tokenizer-side, sglang-0.5.23 wheel:
    …/metrics_collector.py:1804-1819), only breakdowns such as `is_streaming`."""
    for name in names:
        family = scrape.get(name)
        if family is None or family.type != "histogram":
            continue
        buckets: dict[float, float] = {}
        total = count = 0.0
        for s in family.samples:
            if s.name == name + "_bucket":
                le = float(s.labels.get("le", "inf"))
                buckets[le] = buckets.get(le, 0.0) + s.value
            elif s.name == name + "_sum":
                total += s.value
            elif s.name == name + "_count":
                count += s.value
        if buckets:
            return Histogram(tuple(sorted(buckets.items())), total, count)
    return None


def label(scrape: Scrape, name: str, key: str) -> str | None:
    """A label of an info-style metric (vLLM's `cache_config_info`): the first series'."""
    family = scrape.get(name)
    if family is None:
        return None
    for s in family.samples:
        if key in s.labels:
            return s.labels[key]
    return None


def labels(scrape: Scrape, name: str, key: str, group: str) -> list[str]:
    """That label from each group's series (one DP engine each)."""
    family = scrape.get(name)
    if family is None:
        return []
    seen: dict[str, str] = {}
    for s in family.samples:
        if key in s.labels:
            seen.setdefault(s.labels.get(group, ""), s.labels[key])
    return list(seen.values())


def distinct(scrape: Scrape, name: str, key: str) -> int | None:
    """How many values the label `key` takes on `name`'s series (ranks 0..N-1 prove N)."""
    family = scrape.get(name)
    if family is None:
        return None
    values = {s.labels[key] for s in family.samples if key in s.labels}
    return len(values) or None
