"""The TUI's facts pane shows DeepSeek-V4's pools as the check text does
(tests/core/test_dsv4_pools.py)."""

from __future__ import annotations

from kvtui.ui.panes import facts_text
from tests.core.test_dsv4_pools import LOAD, MEMORY, SIZES, report_of


def test_the_tui_facts_pane_shows_them():
    lines = [t.format(r=r) for r in range(2) for t in (LOAD, MEMORY, SIZES)]
    plain = facts_text(report_of(lines)).plain
    assert "Pools (2 on 2 ranks)" in plain
    assert "subpools ?  529,408 full-attention tokens from 87.26 GiB" in plain
    assert "c128_state 846,848 state rows" in plain
