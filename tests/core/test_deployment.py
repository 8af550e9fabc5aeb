"""The parallel layout: the dump's sizes win; rank tags prove lower bounds, never a count."""

from __future__ import annotations

import pytest

from kvtui.core.deployment import degree_label, layout, rank_span
from kvtui.core.state import Run
from tests.helpers import session_of


def run(ranks, **sa):
    return Run(index=0, server_args=sa, ranks=set(ranks))


@pytest.mark.parametrize(("ranks", "tp"), [
    ({"TP7"}, 8),  # one tag seen: TP >= 8, not 1
    ({"TP0", "TP1", "TP2"}, 4),  # TP >= 3, the next power of two
    ({"TP0"}, 1),
    ({"TP0", "TP1", "TP2", "TP3"}, 4),
])
def test_tp_from_rank_tags_is_a_lower_bound(ranks, tp):
    lay = layout(run(ranks))
    assert lay.tp == tp and lay.basis["tp"] == "rank tags"
    assert f"TP >= {max(int(r[2:]) for r in ranks) + 1}" in lay.notes[0]


def test_the_dump_wins_over_tags():
    lay = layout(run({"TP1"}, tp_size=8, dp_size=2))
    assert (lay.tp, lay.dp) == (8, 2) and lay.notes == ()
    assert set(lay.basis.values()) == {"server_args"}


def test_dp_attention_groups_have_disjoint_tp_indices():
    ranks = {"DP0 TP0", "DP0 TP1", "DP1 TP2", "DP1 TP3"}
    lay = layout(run(ranks))
    assert (lay.tp, lay.dp, lay.attn_dp, lay.attn_tp) == (4, 2, 2, 2)
    replicas = layout(run({"DP0 TP0", "DP0 TP1", "DP1 TP0", "DP1 TP1"}))
    assert (replicas.tp, replicas.dp, replicas.attn_dp) == (2, 2, None)


def test_enable_dp_attention_in_the_dump():
    lay = layout(run({"DP0 TP0"}, tp_size=8, dp_size=8, enable_dp_attention=True))
    assert lay.attn_dp == 8 and lay.attn_tp == 1
    assert layout(run(set(), tp_size=8, attn_dp_size=4)).attn_tp == 2


def test_the_header_says_a_lower_bound_where_only_rank_tags_imply_a_degree():
    """A pasted excerpt of a DP8 x TP8 run shows `[... DP0 TP0]` only: the header said
    "TP=1 DP=1" (sglang#11309, found by the corpus hunt); the tags prove TP >= 1, DP >= 1.
    A stated size stays as stated; TP2 seen proves TP >= 3, not the 4 the calculator takes."""
    from kvtui.core.render import render_text

    excerpt = ["[2025-10-07 23:17:19 DP0 TP0] KV Cache is allocated. #tokens: 975424, "
               "KV size: 43.67 GB",
               "[2025-10-07 23:17:19 DP0 TP0] Memory pool end. avail mem=37.71 GB"]
    session = session_of(excerpt, "paste")
    header = render_text(session.report()).splitlines()[2]
    assert header.split() == ["Parallel", "TP>=1", "DP>=1"]
    tags = ("TP0", "TP1", "TP2")
    lay = layout(run(tags, dp_size=2))
    shown = [degree_label(name, value, lay.basis.get(name.lower()), tags)
             for name, value in (("TP", lay.tp), ("DP", lay.dp))]
    assert lay.tp == 4 and shown == ["TP>=3", "DP=2"]
    assert degree_label("PP", None, None, tags) == "PP=?"


def test_a_what_if_says_the_lower_bound_and_the_size_it_took():
    """sized_label: the header's words and the size the arithmetic used, so header and what-if
    print the same lower bound (TP2 seen: TP>=3, sized as the layout's 4)."""
    from kvtui.core.deployment import sized_label

    tags = ("TP0", "TP1", "TP2")
    lay = layout(run(tags, tp_size=None))
    label = sized_label("TP", lay.tp, lay.basis.get("tp"), tags)
    assert label == f"{degree_label('TP', lay.tp, 'rank tags', tags)} (sized as {lay.tp})"
    assert label == "TP>=3 (sized as 4)"
    stated = layout(run(tags, tp_size=8))
    assert sized_label("TP", stated.tp, stated.basis.get("tp"), tags) == "TP=8"
    assert sized_label("TP", None, None, ()) == "TP=? (assumed 1)"


@pytest.mark.parametrize(("ranks", "span"), [
    (["TP0"], "TP0"),
    ([f"TP{i}" for i in range(8)], "TP0..TP7"),
    (["TP0", "TP2"], "TP0,TP2"),  # a range would include TP1
    (["TP0", "TP1", "TP2", "TP4"], "TP0..TP2,TP4"),
    (["DP0", "TP1"], "DP0,TP1"),
    (["TP3", "TP2"], "TP3,TP2"),  # as given, never reordered into a range
    (["-"], "-"),
])
def test_rank_span_never_reads_as_a_range_it_is_not(ranks, span):
    assert rank_span(ranks) == span


def test_attention_dp_is_the_highest_dp_tag_not_the_groups_seen():
    """An excerpt shows only some ranks: tags DP0..DP5 and DP7 of a DP-attention run (the shape
    of sglang#7055's excerpt) prove attention DP >= 8, never the 7 groups seen. Under DP
    attention the tag is `DP{tp_rank // attn_tp_size} TP{tp_rank}` (sglang 0.5.8
    layers/dp_attention.py:231-233, managers/data_parallel_controller.py:427) and
    tp_size % dp_size == 0 (server_args.py:1936)."""
    ranks = {f"DP{i} TP{i} EP{i}" for i in (0, 1, 2, 3, 4, 5, 7)}
    lay = layout(run(ranks))
    assert (lay.tp, lay.attn_dp, lay.attn_tp) == (8, 8, 1)
    assert "attention DP 8" in lay.notes[-1]
    # DP0..DP5 seen at a stated TP 8: attention DP divides TP, so 6 is not a size: 8
    shown = layout(run({f"DP{i} TP{i}" for i in range(6)}, tp_size=8))
    assert (shown.attn_dp, shown.attn_tp) == (8, 1)
    # two groups of two at TP 8: DP1 TP2 means attention TP 2 (2 // 2 == 1), so attention DP 4
    two = layout(run({"DP0 TP0", "DP0 TP1", "DP1 TP2", "DP1 TP3"}, tp_size=8))
    assert (two.attn_dp, two.attn_tp) == (4, 2)


def test_overlapping_or_out_of_order_groups_are_not_dp_attention():
    """Plain DP replicas each restart at TP0 (overlapping sets); a group whose TP indices lie
    below an earlier group's cannot be `tp_rank // attn_tp_size` either."""
    assert layout(run({"DP0 TP0", "DP3 TP0"})).attn_dp is None
    assert layout(run({"DP0 TP2", "DP1 TP0"})).attn_dp is None
    # one group seen proves nothing about attention DP
    assert layout(run({"DP7 TP7"})).attn_dp is None
