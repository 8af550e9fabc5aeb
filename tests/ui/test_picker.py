"""The SSH source picker: arrows and Enter choose, q quits, remote labels stay plain text."""

from __future__ import annotations

from textual.widgets import OptionList

from kvtui.ui.picker import PickerApp

LABELS = [("/var/log/sglang.log", "model /models/a"),
          ("docker sglang-0 [bold]x[/bold] [@click=app.quit]", ""),
          ("process 4242 python -m sglang.launch_server", "stdout -> /tmp/out.log")]


async def test_enter_chooses_the_highlighted_source() -> None:
    app = PickerApp("SGLang logs found on gpu", LABELS)
    async with app.run_test(size=(100, 20)) as pilot:
        await pilot.press("down", "enter")
        await pilot.pause()
    assert app.return_value == 1


async def test_q_quits_without_a_choice() -> None:
    app = PickerApp("SGLang logs found on gpu", LABELS)
    async with app.run_test(size=(100, 20)) as pilot:
        await pilot.press("q")
        await pilot.pause()
    assert app.return_value is None


async def test_remote_labels_are_not_markup() -> None:
    app = PickerApp("SGLang logs found on gpu", LABELS)
    async with app.run_test(size=(100, 20)) as pilot:
        options = app.query_one(OptionList)
        shown = options.get_option_at_index(1).prompt.plain  # type: ignore[union-attr]
        assert "[bold]x[/bold] [@click=app.quit]" in shown
        await pilot.pause()
        assert app.is_running  # the would-be action link did nothing
        await pilot.press("q")
