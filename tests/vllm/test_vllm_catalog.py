"""vLLM's line catalogue is complete and says the truth about itself.

Every variant's sample line parses to its kind, sets the fields the variant says its layout
prints and, where the variant dates a log, shows the variant's id among its hints; the hand
dispatch of `parsers.vllm.line` and the declared heads agree key for key; every kind the
grammar can emit is declared; the version table dates by exactly the catalogue's ranges.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import parsers.vllm
from kvtui.engines.vllm import version
from parsers import KIND_FIELDS, KINDS, OPTIONAL_FIELDS
from parsers.catalogue import Format, Variant
from parsers.prefix import vllm_head
from parsers.vllm import hints, line, parse_line
from parsers.vllm.catalog import BY_KIND, CATALOG, DATING, VARIANTS, dating
from tests.vllm.test_vllm_samples import SAMPLES

ALL = [(f, v) for f in CATALOG for v in f.variants]
GRAMMAR = Path(parsers.vllm.__file__).parent


def _message(text: str) -> str:
    head = vllm_head(text)
    return (text[head[0]:] if head is not None else text).lstrip(" ")


@pytest.mark.parametrize(("fmt", "variant"), ALL, ids=[v.id for _, v in ALL])
def test_sample_parses_to_its_kind_and_variant(fmt: Format, variant: Variant) -> None:
    ev = parse_line(variant.sample)
    assert ev is not None, variant.sample
    assert ev.kind == fmt.kind, (variant.id, ev.kind)
    missing = [name for name in variant.prints if ev.fields.get(name) is None]
    assert not missing, (variant.id, missing, ev.fields)
    known = set(KIND_FIELDS[fmt.kind]) | set(OPTIONAL_FIELDS[fmt.kind])
    assert set(variant.prints) <= known, variant.id
    shown = hints(ev, variant.sample)
    if variant.id in DATING:
        assert variant.id in shown, (variant.id, shown)
    # a variant the hints name is told apart by them: no other variant of its format shows
    assert not {h for h in shown if h in VARIANTS and h not in co_shown(variant)} - {
        variant.id}, (variant.id, shown)
    # its message starts with one of the format's heads, or the fallback finds it inside
    msg = _message(variant.sample)
    assert msg.startswith(fmt.heads) or any(n in msg for n in fmt.infixes), variant.id


def co_shown(variant: Variant) -> set[str]:
    """The variants one line shows together with `variant` (the V0 engine line is `engine:v0`
    and one of its namings; a pool line names its device word; the EPLB group list may say
    `EP rank N/A`)."""
    together = [{"engine:v0", "engine:v0_named", "engine:v0_unnamed"},
                {"capacity:cpu_blocks", "capacity:gpu_word", "capacity:device_name"},
                {"assign:eplb", "assign:etp", "assign:pcp", "assign:ep_na"}]
    return set().union(*(g for g in together if variant.id in g))


def test_ids_are_unique_and_every_entry_is_whole() -> None:
    ids = [v.id for _, v in ALL]
    assert len(ids) == len(set(ids))
    for fmt, v in ALL:
        assert v.cite and v.text and v.sample, v.id
        assert fmt.parse is None, "vLLM's kinds are dispatched by hand (parsers/vllm/line.py)"
    assert len(BY_KIND) == len(CATALOG), "a kind declared twice"
    assert set(BY_KIND) <= set(KINDS)
    assert all(f.heads or f.infixes for f in CATALOG)


def test_the_hand_dispatch_reaches_the_declared_heads_and_nothing_else() -> None:
    """Each four-character key of `line._HANDLERS` starts a declared head and each head's key
    is dispatched: a kind added to line.py without its catalogue entry (or the reverse) fails."""
    keys = {head[:4] for f in CATALOG for head in f.heads}
    assert keys == set(line._HANDLERS)
    fallback = inspect.getsource(line._fallback)
    for f in CATALOG:
        for needle in f.infixes:
            assert repr(needle)[1:-1] in fallback or needle == line.NO_TEMPLATE, needle


def test_every_kind_the_grammar_can_emit_is_declared() -> None:
    """The kind names written in the grammar's modules (the handlers' and parsers' results)
    and the kinds of every sample line are catalogue kinds."""
    written: set[str] = set()
    for path in GRAMMAR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in KINDS:
                written.add(node.value)
    emitted = {kind for _, kind, _ in SAMPLES}
    for sample_log in Path("sample_logs").glob("vllm-*.log"):
        for text in sample_log.read_text().splitlines():
            ev = parse_line(text)
            if ev is not None:
                emitted.add(ev.kind)
    assert emitted <= set(BY_KIND), emitted - set(BY_KIND)
    assert written <= set(BY_KIND), written - set(BY_KIND)


def test_version_table_dates_by_the_catalogue() -> None:
    table = {k: v for k, v in version._HINTS.items() if not k.startswith(("head:", "proc:"))}
    assert table == dating()
    assert set(table) == set(DATING) and set(VARIANTS) >= DATING
    for v in VARIANTS.values():
        for lo, hi in v.releases or ():
            assert lo >= version.OLDEST and (hi is None or lo <= hi <= version.NEWEST), v.id
