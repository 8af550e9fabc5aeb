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


def test_the_whatif_pane_says_it_is_not_modelled():
    from kvtui.ui.whatif_calc import WhatIfInputs, compute

    lines = [t.format(r=0) for t in (LOAD, MEMORY, SIZES)]
    res = compute(None, WhatIfInputs(), report_of(lines).whatif_unmodelled)
    assert res.error and res.error.startswith("not modelled: this run's KV budget is split")
    # a log with no pool yet keeps the plain wait
    assert compute(None, WhatIfInputs(), None).error.startswith(
        "no KV pool or capacity line yet")


async def test_a_replayed_dsv4_log_says_so_in_the_pane(tmp_path) -> None:
    from ui_helpers import replay_app, settle, wait_for

    from kvtui.ui.whatif import WhatIfPane

    log = tmp_path / "dsv4.log"
    log.write_text("\n".join(t.format(r=r) for r in range(2) for t in (LOAD, MEMORY, SIZES))
                   + "\n")
    app = replay_app(log)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        pane = app.query_one(WhatIfPane)
        await wait_for(pilot, lambda: "not modelled" in pane.shown, "the not-modelled reason")
        assert "no KV pool or capacity line yet" not in pane.shown
