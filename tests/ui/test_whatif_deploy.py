"""Issue 39: the what-if pane as a deploy engineer uses it, at 80x24 and at 200x50.

The answer and the inputs on screen together while typing, a visible focus, fields that replace
their content, `kvtui whatif`'s own messages under a refused field, labels never cut, and one
"does not fit" with its reason and no flag.
"""

from __future__ import annotations

import argparse
import re

import pytest
from textual.widgets import Input, Select, Static
from ui_helpers import QWEN, replay_app, screen_text, settle

from kvtui.commands import whatif as whatif_cmd
from kvtui.ui.whatif import MSG_OF, WhatIfPane, abbreviate, table_lines

SIZES = [(80, 24), (200, 50)]
IDS = ["80x24", "200x50"]


def cli_error(**given: str) -> str:
    """The one-line message `kvtui whatif` gives for these options."""
    args = argparse.Namespace(**{k: None for k in (
        "tp", "target_tp", "attn_dp", "page_size", "tokens", "context_len", "pool_gib",
        "mem_fraction_static", "target_concurrency", "context", "dtype", "current_dtype",
        "engine", "sglang_version", "vllm_version")})
    for k, v in given.items():
        setattr(args, k, v)
    with pytest.raises(ValueError) as err:
        whatif_cmd.validate(args, "sglang")
    return str(err.value)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_inputs_and_answer_are_on_screen_together_while_typing(size) -> None:
    app = replay_app(QWEN)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("3", "enter")
        assert app.focused is app.query_one("#wi-dtype", Select)  # Enter: the KV dtype
        await pilot.press("tab")
        assert app.focused is app.query_one("#wi-tp", Input)  # Tab: TP
        await pilot.press("1", "6")
        await pilot.pause()
        text = screen_text(app)
        # the field being typed in and the rows it changes, on one screen
        assert re.search(r"TP +16", text), text
        for row in (r"TP +8 +16", r"KV tokens +608,174 +860,644", r"reqs of 256K .* 3\.2 fit",
                    r"flag: --kv-cache-dtype bf16 --tp-size 16"):
            assert re.search(row, text), (row, text)
        pane = app.query_one(WhatIfPane)
        # wide: side by side; narrow: the form above the answer, and the log gives its rows
        assert pane.has_class("-side") == (size[0] >= 200)
        assert app.log_view.display == (size[1] >= 36)
        await pilot.press("escape")
        assert app.focused is pane.focus_target()
        await pilot.press("1")
        assert app.log_view.display  # another pane: the log is back


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_the_focused_field_stands_out(size) -> None:
    app = replay_app(QWEN)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("3", "enter", "tab")
        tp = app.query_one("#wi-tp", Input)
        mf = app.query_one("#wi-mf", Input)
        focused, other = tp.styles.background, mf.styles.background
        # issue 39: 235 against 234 was invisible; the accent is far from the pane's ground
        assert focused != other
        diff = sum(abs(a - b) for a, b in zip(focused.rgb, other.rgb, strict=True))
        assert diff > 100, (focused, other)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
@pytest.mark.parametrize(("field", "typed", "cli"), [
    ("wi-tp", "0", {"target_tp": "0"}),
    ("wi-mf", "1.5", {"mem_fraction_static": "1.5"}),
    ("wi-ctx", "128kq", {"context": ["128kq"]}),
])
async def test_a_refused_value_says_the_clis_message_at_its_field(size, field, typed,
                                                                   cli) -> None:
    app = replay_app(QWEN)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("3", "enter")
        pane = app.query_one(WhatIfPane)
        assert pane.result is not None
        box = app.query_one(f"#{field}", Input)
        box.focus()
        await pilot.press(*typed[:-1])  # "128k" is a length, "1." refused already
        await pilot.pause()
        before = (pane.result.rows, pane.result.flag)
        await pilot.press(typed[-1])
        await pilot.pause()
        msg = str(app.query_one(f"#{MSG_OF[field]}", Static).render())
        want = cli_error(**cli)
        # the CLI's message, the name being the field's (the flag on the command line)
        assert box.has_class("-invalid")
        assert msg.split(" ", 1)[1] == want.split(" ", 1)[1], (msg, want)
        assert (pane.result.rows, pane.result.flag) == before  # the last good value is kept
        text = screen_text(app)
        assert msg.split(" ", 1)[1][:15] in text  # said on screen, under the field
        box.value = ""
        await pilot.press(*{"wi-tp": "4", "wi-mf": "0.5", "wi-ctx": "64K"}[field])
        await pilot.pause()
        assert not box.has_class("-invalid")
        assert str(app.query_one(f"#{MSG_OF[field]}", Static).render()) == ""


def test_the_cli_takes_the_lengths_the_form_takes() -> None:
    """One check for both: `--context 128K` is 131072, as in the form's lengths field."""
    args = argparse.Namespace(**{k: None for k in (
        "tp", "target_tp", "attn_dp", "page_size", "tokens", "context_len", "pool_gib",
        "mem_fraction_static", "target_concurrency", "dtype", "current_dtype", "engine",
        "sglang_version", "vllm_version")}, context=["128K", "32768"])
    assert whatif_cmd.validate(args, "sglang")["contexts"] == [131072, 32768]
    assert cli_error(context=["-5"]) == "--context must be a positive whole number (got -5)"


def test_labels_are_abbreviated_by_rule_never_cut() -> None:
    rows = [("", "now (log)", "target", ""),
            ("100 × 97.7K", "needs 10,000,000 tok", "does NOT fit", ""),
            ("reqs of 100,000", "6.0 fit · 6 run", "6.0 fit · 6 run", "")]
    wide = table_lines(rows, 200)
    assert "".join(wide[1][:3]).startswith("100 × 97.7K      needs 10,000,000 tok")
    narrow = table_lines(rows, 50)
    assert all(len("".join(r[:3])) <= 50 for r in narrow)
    assert "needs 10.0M tok" in narrow[1][1]
    assert narrow[2][0].startswith("reqs of 100,000")  # a label's length is never rewritten
    assert abbreviate("608,174 (-50%)") == "608k (-50%)"
    assert abbreviate("7,698") == "7,698"


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_long_labels_and_numbers_are_whole_on_screen(size) -> None:
    app = replay_app(QWEN)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("3")
        app.query_one("#wi-ctx", Input).value = "100000"
        app.query_one("#wi-conc", Input).value = "100"
        await pilot.pause()
        text = screen_text(app)
        assert "reqs of 100,000" in text or "reqs of 100K" in text, text
        assert re.search(r"needs (10,000,000|10\.0M) tok", text), text
        assert "…" not in text.split("What-if", 1)[1].split("╰", 1)[0]


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_a_target_that_does_not_fit_says_why_once_and_offers_no_flag(size) -> None:
    app = replay_app(QWEN)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("3", "enter", "tab", *"416")
        await pilot.pause()
        shown = app.query_one(WhatIfPane).shown
        assert shown.count("does not fit") == 1, shown
        assert "flag:" not in shown and "--tp-size" not in shown
        assert "no flag is offered" in shown
        # the reason is the engine's, right under the row that does not fit
        lines = shown.splitlines()
        at = next(i for i, ln in enumerate(lines) if ln.startswith("KV tokens"))
        assert "does not fit" in lines[at]
        assert "cannot shard the conv state" in "\n".join(lines[at:at + 4])
        assert "estimate:" not in shown  # no second copy of the reason
