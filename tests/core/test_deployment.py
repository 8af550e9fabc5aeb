"""The parallel layout: the dump's sizes win; rank tags prove lower bounds, never a count."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kvtui.core.deployment import layout


def run(ranks, **sa):
    return SimpleNamespace(server_args=sa, ranks=set(ranks))


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
