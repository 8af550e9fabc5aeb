"""Recorded sequences built from the real captures: the capture as scraped, then the same text
with some series moved (a gauge set, observations added to a histogram), as successive scrapes
of one server would show. Only values change; names, labels and the rest of the capture stay
as captured."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from kvtui.core.metrics import catalogue
from kvtui.core.metrics.exposition import parse
from kvtui.core.metrics.snapshot import Snapshot

SGLANG = "sglang-mratsim-sgtop-live-excerpt.txt"
VLLM = "vllm-0.24.0-yongzane00-vllmtop-fixture.txt"


def _series(name: str) -> re.Pattern[str]:
    return re.compile(rf"^({re.escape(name)}(?:\{{[^}}]*\}})?) (\S+)$", re.M)


def setting(text: str, values: Mapping[str, float]) -> str:
    """Every series of each metric (all its label sets) set to the value."""
    for name, value in values.items():
        text, n = _series(name).subn(lambda m, v=value: f"{m.group(1)} {v!r}", text)
        assert n, f"{name} is not in the capture"
    return text


def observing(text: str, name: str, seconds: float, n: int) -> str:
    """`n` more observations of `seconds` in histogram `name` (every bucket whose bound holds
    it, the count and the sum)."""
    def bucket(m: re.Match[str]) -> str:
        le = re.search(r'le="([^"]+)"', m.group(1))
        assert le is not None
        bound = float(le.group(1))
        add = n if seconds <= bound else 0
        return f"{m.group(1)} {float(m.group(2)) + add!r}"

    text, b = _series(name + "_bucket").subn(bucket, text)
    text, c = _series(name + "_count").subn(
        lambda m: f"{m.group(1)} {float(m.group(2)) + n!r}", text)
    text, s = _series(name + "_sum").subn(
        lambda m: f"{m.group(1)} {float(m.group(2)) + n * seconds!r}", text)
    assert b and c and s, f"{name} is not a histogram of the capture"
    return text


def snapshots(texts: Sequence[str], every: float = 1.0) -> list[Snapshot]:
    """The texts as scrapes `every` seconds apart, through the engine's own catalogue."""
    out = []
    for i, text in enumerate(texts):
        scrape = parse(text, at=100.0 + i * every)
        engine = catalogue.detect(scrape)
        assert engine is not None
        out.append(engine.snapshot(scrape))
    return out
