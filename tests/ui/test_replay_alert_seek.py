""""Next alert" (`}`) in the app: a search that runs to the end leaves nothing behind, so a
restart starts paused; a failing report ends the search with a warning, never the app; and
`--log-window` refuses counts below 1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ui_helpers import wait_for

from kvtui.cli import build_parser
from kvtui.sources.replay import ReplaySource
from kvtui.ui.app import KvApp

ROOT = Path(__file__).resolve().parents[2]
LLAMA = ROOT / "sample_logs" / "llama31-70b-tp8.log"


async def drained(pilot: Any, app: KvApp) -> None:
    """Wait until the app has taken every notice the source has emitted so far and what those
    notices started (the off-loop report check and its answer on the event loop) has run."""
    await wait_for(pilot, lambda: not app.ingest._notices, "the notices to be drained")
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_alert_seek_to_the_end_then_restart_starts_paused(tmp_path: Path) -> None:
    src = ReplaySource([str(LLAMA)], start_paused=True)
    app = KvApp(src, "alerts", export_dir=tmp_path)
    checks: list[bool] = []
    real_check = app._check_alert_seek

    def counted(before: Any, final: bool) -> Any:
        checks.append(final)
        return real_check(before, final)

    app._check_alert_seek = counted  # type: ignore[method-assign]
    hits: list[int] = []
    real_hit = src._seek_hit

    def counted_hit(emit: Any, line: Any) -> bool:
        hit = real_hit(emit, line)
        if hit:
            hits.append(line.line_no)
        return hit

    src._seek_hit = counted_hit  # type: ignore[method-assign]
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: app.ingest.last_state == "paused", "the start-up pause")
        await drained(pilot, app)  # the start-up "paused" notice is not part of a search
        for _ in range(20):
            before = src.lines_emitted
            await pilot.press("right_curly_bracket")
            # Done when the search stopped: on a new alert, or at the end.
            await wait_for(pilot, lambda before=before: (
                app._seek_alert_keys is None and src.state in ("paused", "at_end")
                and (src.lines_emitted != before or src.state == "at_end")), "the seek to stop")
            await drained(pilot, app)
            if src.state == "at_end":
                break
        assert src.state == "at_end"
        assert app._seek_alert_keys is None  # nothing stale left for a later "paused"
        # One report check per stop on a trigger line, not two (one "paused" per seek hit).
        assert hits and checks.count(False) == len(hits)
        await pilot.press("0")
        # "paused" after "at_end" is said by the new pass, after it reset its line count.
        await wait_for(pilot, lambda: src.state == "paused", "the restart to pause")
        await pilot.pause(0.5)  # a negative check: a wrong restart would emit lines here
        assert src.state == "paused" and src.paused
        assert src.lines_emitted == 0, "the restart replayed the file instead of pausing"
        # Still usable: a step emits exactly one line.
        await pilot.press("full_stop")
        await wait_for(pilot, lambda: src.lines_emitted == 1, "the step")


async def test_pause_during_alert_seek_ends_it(tmp_path: Path) -> None:
    src = ReplaySource([str(LLAMA)], start_paused=True)
    app = KvApp(src, "alerts", export_dir=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: app.ingest.last_state == "paused", "the start-up pause")
        # Taken by the app first: the start-up "paused" notice, handled during a search, would
        # continue it (`seek` unpauses), and the two presses then ended unpaused.
        await drained(pilot, app)
        app._seek_alert_keys = set()
        await pilot.press("space")  # play
        await pilot.press("space")  # pause
        assert app._seek_alert_keys is None
        # Once the source says "paused" it waits; a line that was waiting for its time when
        # the pause came stays back (it used to come out after the pause).
        await wait_for(pilot, lambda: src.paused and src.state == "paused", "the pause")
        emitted = src.lines_emitted
        await pilot.pause(0.5)  # a negative check: nothing may come out while paused
        assert src.lines_emitted == emitted and src.paused


async def test_a_failing_report_ends_the_alert_seek_not_the_app(tmp_path: Path,
                                                              monkeypatch) -> None:
    src = ReplaySource([str(LLAMA)], start_paused=True)
    app = KvApp(src, "alerts", export_dir=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: app.ingest.last_state == "paused", "the start-up pause")

        def boom() -> dict[str, Any]:
            raise RuntimeError("rule exploded")

        monkeypatch.setattr(type(app.ingest.session), "report", lambda self: boom())
        await pilot.press("right_curly_bracket")
        await wait_for(pilot, lambda: src.lines_emitted > 0 and src.state == "paused"
                       and app._seek_alert_keys is None, "the failed check to end the seek")
        assert app.is_running
        assert any("rule exploded" in str(n.message) for n in app._notifications)
        emitted = src.lines_emitted
        await pilot.pause(0.5)  # a negative check: the search stopped where it was
        assert src.lines_emitted == emitted
        await pilot.press("full_stop")
        await wait_for(pilot, lambda: src.lines_emitted == emitted + 1, "the step")


@pytest.mark.parametrize("command", ["replay", "tail"])
@pytest.mark.parametrize("value", ["0", "-5", "abc", "1.5"])
def test_log_window_below_one_is_refused(command: str, value: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser(command)
    with pytest.raises(SystemExit) as exc:
        parser.parse_args([command, "x.log", "--log-window", value])
    assert exc.value.code == 2
    assert "--log-window" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["replay", "tail"])
def test_log_window_accepts_positive_counts(command: str) -> None:
    args = build_parser(command).parse_args([command, "x.log", "--log-window", "1"])
    assert args.log_window == 1
    assert build_parser(command).parse_args([command, "x.log"]).log_window == 20000
