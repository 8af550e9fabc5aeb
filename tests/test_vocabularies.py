"""The vocabularies agree: every kind, severity and tone is known to every layer that uses it."""

from __future__ import annotations

from kvtui.core import severity
from kvtui.core.alerts import RULES
from kvtui.core.state import HANDLERS
from kvtui.sources.base import INLINE, MESSAGES, STATES
from kvtui.ui.panes import STATE_LABELS
from kvtui.ui.text import KIND_STYLE, SEVERITY_STYLE, TONE_STYLE
from parsers import KIND_FIELDS, KIND_TRAITS, KINDS, OPTIONAL_FIELDS
from parsers.kinds import TONES
from parsers.sglang.catalog import CATALOG
from parsers.vllm.catalog import CATALOG as VLLM_CATALOG
from tests.parsers.test_samples import SAMPLES as SGLANG_SAMPLES
from tests.vllm.test_vllm_samples import SAMPLES as VLLM_SAMPLES

SAMPLES = SGLANG_SAMPLES + VLLM_SAMPLES  # every engine's grammar ships sample lines


def test_every_kind_has_fields_traits_a_fold_handler_a_style_and_samples():
    kinds = set(KINDS)
    assert set(KIND_FIELDS) == kinds
    assert set(OPTIONAL_FIELDS) == kinds, "every kind lists its optional fields (maybe none)"
    assert set(KIND_TRAITS) == kinds, "a kind without traits"
    assert set(HANDLERS) == kinds, "a kind the fold does not handle"
    assert set(KIND_STYLE) == kinds, "a kind the log pane cannot colour"
    assert {kind for _, kind, _ in SAMPLES} == kinds, "a kind without sample lines"


def test_every_catalogue_entry_has_samples_a_fold_handler_and_traits():
    """SGLang's line catalogue (parsers/sglang/catalog.py) declares each kind once: each entry
    names a kind of the vocabulary, the fold handles it, it has traits, and every one of its
    layouts (variants) brings a sample line (tests/parsers/test_catalog.py parses them)."""
    for fmt in CATALOG:
        assert fmt.kind in KINDS, fmt.kind
        assert fmt.kind in HANDLERS, f"{fmt.kind}: no fold handler"
        assert fmt.kind in KIND_TRAITS, f"{fmt.kind}: no traits"
        assert fmt.heads or fmt.infixes, f"{fmt.kind}: nothing dispatches to it"
        assert fmt.variants, f"{fmt.kind}: no variants"
        assert all(v.sample for v in fmt.variants), f"{fmt.kind}: a variant without a sample"
    sampled = {kind for _, kind, _ in SGLANG_SAMPLES}
    assert {fmt.kind for fmt in CATALOG} <= sampled, "a catalogue kind without detailed samples"


def test_every_vllm_catalogue_entry_has_samples_a_fold_handler_and_traits():
    """vLLM's line catalogue (parsers/vllm/catalog.py, the entries beside their parsers) the
    same way (tests/vllm/test_vllm_catalog.py parses the samples)."""
    for fmt in VLLM_CATALOG:
        assert fmt.kind in KINDS, fmt.kind
        assert fmt.kind in HANDLERS, f"{fmt.kind}: no fold handler"
        assert fmt.kind in KIND_TRAITS, f"{fmt.kind}: no traits"
        assert fmt.heads or fmt.infixes, f"{fmt.kind}: nothing dispatches to it"
        assert fmt.variants, f"{fmt.kind}: no variants"
        assert all(v.sample for v in fmt.variants), f"{fmt.kind}: a variant without a sample"
    sampled = {kind for _, kind, _ in VLLM_SAMPLES}
    assert {fmt.kind for fmt in VLLM_CATALOG} <= sampled, "a catalogue kind without samples"


def test_traits_use_known_tones_and_phases():
    assert {t.tone for t in KIND_TRAITS.values()} <= set(TONES)
    assert set(TONE_STYLE) == set(TONES)
    assert {t.phase for t in KIND_TRAITS.values()} <= {"startup", "runtime", "error"}
    for kind, t in KIND_TRAITS.items():
        assert not t.batch or t.joinable, f"{kind}: a batch kind must join across chunks"


def test_every_severity_has_a_label_a_style_and_an_order():
    assert set(severity.MARK) == set(SEVERITIES := severity.SEVERITIES)
    assert set(SEVERITY_STYLE) >= set(SEVERITIES)
    assert [severity.rank(s) for s in SEVERITIES] == sorted(severity.rank(s) for s in SEVERITIES)
    assert severity.rank("nonsense") > severity.rank("info")
    assert severity.at_least("critical", "warning") and not severity.at_least("info", "warning")


def test_alert_rules_are_named_once():
    names = [name for name, _ in RULES]
    assert len(names) == len(set(names))


def test_every_notice_state_has_a_header_label():
    assert set(STATE_LABELS) >= STATES, "a notice state the header cannot name"
    assert STATES >= INLINE and not STATES & MESSAGES


def test_sglangs_server_args_are_listed_once_in_the_same_order():
    """parsers/kinds.py (engine-neutral, so it cannot import SGLang's module) names SGLang's
    server args again: the shared ones in KIND_FIELDS, SGLang's own at the head of
    OPTIONAL_FIELDS. Both must stay SERVER_ARG_FIELDS, in its order (the goldens' key order)."""
    from parsers.sglang.server_args import SERVER_ARG_FIELDS

    shared = set(KIND_FIELDS["server_args"])
    own = tuple(f for f in SERVER_ARG_FIELDS if f not in shared)
    assert OPTIONAL_FIELDS["server_args"][:len(own)] == own
    assert [f for f in SERVER_ARG_FIELDS if f in shared] == \
        [f for f in KIND_FIELDS["server_args"] if f != "form"]
