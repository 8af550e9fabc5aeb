"""The line catalogue is complete and says the truth about itself.

Every variant's sample line parses to its kind and to that variant, and sets the fields the
variant says its layout prints; ids are unique and name their kind; release ranges are real
releases; the dispatch table reaches every head; the version table dates by exactly the
catalogue's ranges.
"""

from __future__ import annotations

import pytest

from kvtui.engines.sglang import version
from parsers import KIND_FIELDS, KINDS, OPTIONAL_FIELDS
from parsers.catalogue import Format, Variant
from parsers.sglang import hints, parse_line
from parsers.sglang.catalog import CATALOG, DATING, VARIANTS
from parsers.sglang.line import DISPATCH

ALL = [(f, v) for f in CATALOG for v in f.variants]


@pytest.mark.parametrize(("fmt", "variant"), ALL, ids=[v.id for _, v in ALL])
def test_sample_parses_to_its_kind_and_variant(fmt: Format, variant: Variant) -> None:
    ev = parse_line(variant.sample)
    assert ev is not None, variant.sample
    assert (ev.kind, ev.variant) == (fmt.kind, variant.id)
    missing = [name for name in variant.prints if ev.fields.get(name) is None]
    assert not missing, (variant.id, missing, ev.fields)
    known = set(KIND_FIELDS[fmt.kind]) | set(OPTIONAL_FIELDS[fmt.kind])
    assert set(variant.prints) <= known, variant.id
    assert (variant.id in hints(ev, variant.sample)) == (variant.id in DATING)


def test_ids_are_unique_and_name_their_kind() -> None:
    ids = [v.id for _, v in ALL]
    assert len(ids) == len(set(ids))
    for fmt, v in ALL:
        assert v.id.split(":", 1)[0] == fmt.kind
        assert v.cite and v.text and v.sample
    assert len({f.kind for f in CATALOG}) == len(CATALOG), "a kind declared twice"
    assert {f.kind for f in CATALOG} <= set(KINDS)


def test_release_ranges_are_real_releases() -> None:
    for _, v in ALL:
        for lo, hi in v.releases or ():
            assert lo in version.RELEASES, v.id
            assert hi is None or (hi in version.RELEASES and lo <= hi), v.id


def test_every_head_is_dispatched_to_its_format() -> None:
    for fmt in CATALOG:
        for head in fmt.heads:
            entries = DISPATCH[head[:4]]
            assert any(kind == fmt.kind and head in heads for kind, heads, _ in entries), head


def test_version_table_dates_by_the_catalogue() -> None:
    table = version._HINTS
    for _, v in ALL:
        if v.id in DATING:
            assert table[v.id][0] == v.releases, v.id
        else:
            assert v.id not in table, v.id
    assert {k for k in table if not k.startswith("ts:")} <= set(VARIANTS)


@pytest.mark.parametrize(
    ("variant", "inside", "outside"),
    [
        ("decode_batch:v0.5.9", (0, 5, 9), (0, 5, 8)),
        ("decode_batch:v0.4.10", (0, 5, 3), (0, 5, 4)),
        ("kv_pool:tokens", (0, 5, 12), (0, 5, 13)),
        ("kv_accuracy_warning:recipe", (0, 5, 16), (0, 5, 15)),
        ("mem_unbalanced:pre_model_load", (0, 5, 10), (0, 5, 9)),
    ],
)
def test_a_variant_alone_dates_a_run(variant: str, inside: tuple[int, int, int],
                                     outside: tuple[int, int, int]) -> None:
    from types import SimpleNamespace

    vr = version.infer_version(SimpleNamespace(hints={variant}))
    assert vr.contains(inside) and not vr.contains(outside), vr
