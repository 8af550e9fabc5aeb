"""A target TP SGLang would not shard the model over (`tp_refused`: the query heads split
evenly, the KV heads split or replicated a whole number of times; SGLang 0.5.23
models/qwen3_next.py:624, layers/linear.py:1140-1144) is said to be refused, in the budget
what-if row and in the inverse at that TP, never sized (it said the weights do not fit) (review
of issue 35 point 7)."""

from __future__ import annotations

from tests.capacity._logged import calculator_of
from tests.conftest import SAMPLES

LOG = SAMPLES / "qwen35-397b-nvfp4-tp8-bf16.log"


def test_an_unshardable_target_tp_is_refused_not_sized() -> None:
    calc = calculator_of(LOG.read_text().splitlines())
    assert calc.spec is not None and calc.spec.num_attention_heads % 3
    row = calc.scenario("bf16", tp=3)
    assert row.tokens is None and row.tp == 3
    assert row.does_not_fit is not None and "SGLang refuses TP 3" in row.does_not_fit
    inv = calc.inverse("bf16", 262_144, 2, tp=3)
    assert not inv.fits_now and inv.note is not None and "SGLang refuses TP 3" in inv.note
    # a TP it shards to is still sized
    assert calc.scenario("bf16", tp=16).tokens


def test_the_inverse_never_proposes_a_refused_tp() -> None:
    calc = calculator_of(LOG.read_text().splitlines())
    inv = calc.inverse("bf16", 262_144, 40)
    if inv.tp_needed is not None:
        assert calc.tp_refusal(inv.tp_needed) is None
