"""SGLang's line catalogue: every kind of line, assembled from the modules that parse them.

Each parser module declares the formats it parses beside its parsing code (`FORMATS`, of the
shapes in `parsers.catalogue`): the phrases a kind's messages start with (`heads`; the dispatch
table of `parsers.sglang.line` is built from them), its parser and its `Variant`s, the layouts
SGLang printed it in with the releases that print each (`parsers.sglang.releases`), a citation
and a sample line.

A parser returns `(fields, variant id)`; the id travels on the event (`Event.variant`) and is
the event's dating hint (`parsers.sglang.hints`): `kvtui.engines.sglang.version` reads the
release ranges from here, so a format's dating is written once, next to its text. Lines whose
layout a cut paste makes ambiguous report a coarser variant (`decode_batch:comma` rather than
`decode_batch:v0.5.9`) or none.
"""

from __future__ import annotations

from parsers.catalogue import Format, Span, Variant
from parsers.sglang import accuracy, errors, limits, runtime, server_args, startup
from parsers.sglang.releases import SGLANG

_DECLARED: dict[str, Format] = {
    f.kind: f for module in (server_args, startup, limits, runtime, errors, accuracy)
    for f in module.FORMATS
}

# The dispatch order: where two kinds' heads begin alike (`Capture `, `Use `, `Deco`, `KV C`,
# `Memo`, `Usin`) the earlier kind's parser is tried first, and the infixes are tested in this
# order. A kind declared in a module but missing here (or named twice) fails at import.
ORDER: tuple[str, ...] = (
    "server_args", "load_weight_begin", "load_weight_end", "kv_dtype", "kv_accuracy_warning",
    "fp8_scales_missing", "fp8_scales_loaded", "kv_pool", "mamba_pool", "swa_split", "swa_pool",
    "swa_sizing", "dsv4_memory", "dsv4_pool", "kv_budget_reserved", "memory_pool_end",
    "dist_init_end", "cuda_graph_begin", "cuda_graph_end", "capacity", "max_total_tokens_capped",
    "mamba_cap", "requests_reduced", "mem_unbalanced", "prefill_batch", "decode_batch",
    "retraction", "input_too_long", "context_override", "chat_template", "template_features",
    "generation_defaults", "online_quant", "process_exception", "pool_leak", "oom",
)
if sorted(ORDER) != sorted(_DECLARED) or len(_DECLARED) != sum(
        len(m.FORMATS) for m in (server_args, startup, limits, runtime, errors, accuracy)):
    raise ImportError("parsers.sglang.catalog: ORDER and the modules' FORMATS disagree")

CATALOG: tuple[Format, ...] = tuple(_DECLARED[kind] for kind in ORDER)
BY_KIND: dict[str, Format] = {f.kind: f for f in CATALOG}
VARIANTS: dict[str, Variant] = {v.id: v for f in CATALOG for v in f.variants}
# Variants whose layout some releases print and others do not; the rest date nothing.
DATING: frozenset[str] = frozenset(v.id for v in VARIANTS.values() if SGLANG.dates(v))


def dating() -> dict[str, tuple[tuple[Span, ...], str, bool]]:
    """variant id -> (release spans, why, weak) for every variant that dates a log."""
    return {v.id: (v.releases, v.text, v.weak) for v in VARIANTS.values()
            if v.releases is not None and v.id in DATING}
