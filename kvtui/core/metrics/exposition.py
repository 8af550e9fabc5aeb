"""The Prometheus text exposition format, read with `prometheus_client`'s own parser.

The format's escaping, `+Inf`/`NaN`, HELP/TYPE rules and label sets of 37 keys (vLLM's
`cache_config_info`) are what that parser already handles; kvtui never parses it by hand.
Behaviours of the parser this module relies on (prometheus_client 0.26.0, parser.py): a
counter's family name drops `_total` (family `vllm:prompt_tokens`, sample
`vllm:prompt_tokens_total`), so V0's `vllm:prompt_tokens_total` counter and V1's
`vllm:prompt_tokens` counter are one family here; `_created` series come out as gauge families
of their own.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Sample:
    name: str
    labels: Mapping[str, str]
    value: float


@dataclass(frozen=True, slots=True)
class Family:
    name: str
    type: str
    samples: tuple[Sample, ...]


@dataclass(frozen=True, slots=True)
class Scrape:
    """One parsed scrape: families by name, and when it was taken (seconds, monotonic clock of
    whoever took it; only differences between two scrapes mean anything)."""

    families: Mapping[str, Family]
    at: float = 0.0

    def get(self, name: str) -> Family | None:
        return self.families.get(name)

    def samples(self, name: str, suffix: str = "") -> Iterator[Sample]:
        """The samples of family `name` whose sample name is `name + suffix`."""
        family = self.families.get(name)
        if family is None:
            return
        want = name + suffix
        for s in family.samples:
            if s.name == want:
                yield s

    def prefixes(self) -> set[str]:
        """The `engine:` namespaces present (`sglang`, `vllm`, ...)."""
        return {n.split(":", 1)[0] for n in self.families if ":" in n}


def parse(text: str, at: float = 0.0) -> Scrape:
    """Parse an exposition body; ValueError when it is not one (an HTML page, JSON, ...)."""
    from prometheus_client.parser import text_string_to_metric_families

    families: dict[str, Family] = {}
    try:
        for fam in text_string_to_metric_families(text):
            samples = tuple(Sample(s.name, dict(s.labels), float(s.value)) for s in fam.samples)
            old = families.get(fam.name)
            if old is not None:  # the same family split in two blocks: keep both halves
                samples = old.samples + samples
            families[fam.name] = Family(fam.name, fam.type, samples)
    except (ValueError, TypeError, IndexError) as exc:
        raise ValueError(f"not the Prometheus text format: {exc}") from exc
    return Scrape(families, at)


def finite(value: float | None) -> float | None:
    """NaN (SGLang's `fwd_occupancy` default) and infinities are 'no value'."""
    if value is None or math.isnan(value) or math.isinf(value):
        return None
    return value
