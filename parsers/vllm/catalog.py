"""vLLM's line catalogue: every kind of line, assembled from the modules that parse them.

Each parser module declares the formats it parses beside its parsing code (`FORMATS`, of the
shapes in `parsers.catalogue`): the phrases a kind's messages start with, the phrases the
fallback finds anywhere in a message (`infixes`), and its `Variant`s with their releases
(`parsers.vllm.releases`), a citation and a sample line.

vLLM's line parser (`parsers.vllm.line`) dispatches by hand: one message start can be any of
several kinds (`Using ...` is a KV dtype, an FP8 scale warning, a KV layout or a resolved
setting) and the parsers are tried in an order a table of heads would not keep, so the formats
carry no parser (`Format.parse` None) and tests/vllm/test_vllm_catalog.py holds the hand
dispatch and the heads together. A variant's id is the dating hint its line shows
(`parsers.vllm.hints`, e.g. `capacity:merged`) where the hints tell it apart, else
"<kind>:<layout>"; `kvtui.engines.vllm.version` dates a log by the releases declared here.
"""

from __future__ import annotations

from parsers.catalogue import Format, Variant, Version
from parsers.vllm import accuracy, args, errors, runtime, startup
from parsers.vllm.releases import VLLM

CATALOG: tuple[Format, ...] = (
    *args.FORMATS, *startup.FORMATS, *accuracy.FORMATS, *runtime.FORMATS, *errors.FORMATS,
)
BY_KIND: dict[str, Format] = {f.kind: f for f in CATALOG}
VARIANTS: dict[str, Variant] = {v.id: v for f in CATALOG for v in f.variants}
# Variants whose layout some releases print and others do not; the rest date nothing.
DATING: frozenset[str] = frozenset(v.id for v in VARIANTS.values() if VLLM.dates(v))


def dating() -> dict[str, tuple[Version | None, Version | None, str]]:
    """variant id -> (lowest release that prints it, highest, why) for every variant that dates
    a log: one span each, its ends None where it reaches the oldest or newest release read."""
    out: dict[str, tuple[Version | None, Version | None, str]] = {}
    for v in VARIANTS.values():
        if v.releases is None or v.id not in DATING:
            continue
        ((lo, hi),) = v.releases
        out[v.id] = (None if lo == VLLM.oldest else lo, hi, v.text)
    return out
