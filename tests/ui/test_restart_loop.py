"""The deploy loop in the TUI (issue 34): a tailed file that gets a BF16 restart appended after
an FP8 run shows the restart marker in the log, the run and restart time in the header, the
resolved alert with its cause, the runs list (a run's own facts, alerts and what-if) and the
compare view, at 80x24 and 200x50 (snapshots)."""

from __future__ import annotations

from pathlib import Path

import pytest
from ui_helpers import ROOT, wait_for

from kvtui.sources.local import LocalFollower
from kvtui.ui.app import KvApp
from kvtui.ui.runs import RunsScreen, TextScreen

PAIR = ROOT / "sample_logs" / "qwen35-397b-nvfp4-tp8-fp8-then-bf16.log"


def halves() -> tuple[str, str]:
    """The FP8 run and the BF16 restart of the bundled pair (cut at the second dump)."""
    lines = PAIR.read_text().splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if "server_args=ServerArgs(" in line]
    assert len(starts) == 2
    return "".join(lines[:starts[1]]), "".join(lines[starts[1]:])


def restart_line() -> int:
    return halves()[0].count("\n") + 1


def tail_app(path: Path) -> KvApp:
    return KvApp(LocalFollower(str(path), from_start=True, poll_ms=50), "gpu-node-1:server.log")


async def run_restart(pilot, path: Path) -> None:
    """The FP8 run is in; append the BF16 restart and wait until the app shows it."""
    app = pilot.app
    fp8, bf16 = halves()
    total = (fp8 + bf16).count("\n")
    await wait_for(pilot, lambda: app.header_bar.lines == fp8.count("\n")
                   and app.report is not None and len(app.report.runs) == 1,
                   "the FP8 run on screen")
    assert "kv-fp8-unscaled" in {a.rule for a in app.report.alerts}
    with path.open("a") as fh:
        fh.write(bf16)
    await wait_for(pilot, lambda: app.header_bar.lines == total and app.report is not None
                   and len(app.report.runs) == 2
                   and app.report.runtime.decode_batches == 180
                   and app.alerts_pane.border_title.endswith("1 resolved)"),
                   "the BF16 restart on screen")
    await pilot.pause()


@pytest.fixture
def tailed(tmp_path: Path) -> Path:
    path = tmp_path / "server.log"
    path.write_text(halves()[0])
    return path


async def test_restart_is_marked_resolved_listed_and_compared(tailed: Path) -> None:
    app = tail_app(tailed)
    async with app.run_test(size=(200, 50)) as pilot:
        await run_restart(pilot, tailed)
        # the inline marker, right before the restart's first line
        entries = app.log_view._entries
        at = next(i for i, e in enumerate(entries) if e.notice and "server restarted" in e.text)
        assert entries[at].text == f"── server restarted: run 2, line {restart_line():,} ──"
        assert entries[at + 1].line_no == restart_line()
        # the header names the run and when the server restarted
        header = app.header_bar._last_text.plain
        assert "run 2 · restarted 09:45:00" in header and "gpu-node-1:server.log" in header
        # the Alerts pane keeps the FP8 alert, resolved by the restart, with its cause
        assert "kv-fp8-unscaled" not in {a.rule for a in app.report.alerts}
        prompts = [str(app.alerts_pane.get_option_at_index(i).prompt)
                   for i in range(app.alerts_pane.option_count)]
        resolved = [p for p in prompts if p.startswith("RESOLVED")]
        assert len(resolved) == 1
        assert (f"resolved by the restart at line {restart_line():,} (run 2): "
                "--kv-cache-dtype fp8_e4m3 -> bf16") in resolved[0]
        # the runs list; selecting run 1 shows its own facts, alerts and what-if
        await pilot.press("R")
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)
        await pilot.press("up", "enter")
        await pilot.pause()
        assert isinstance(app.screen, TextScreen)
        body = app.screen.body.plain
        assert "configured fp8_e4m3 -> effective fp8_e4m3" in body or "fp8_e4m3" in body
        assert "kv-fp8-unscaled" in body and "What-if" in body
        await pilot.press("escape")
        # the compare view of the selected run against the one before it
        await pilot.press("down", "c")
        await pilot.pause()
        body = app.screen.body.plain
        assert "--kv-cache-dtype fp8_e4m3 -> bf16" in body
        assert "304,087 tokens" in body and "ratio 1.000 (holds)" in body
        assert "resolved CRITICAL kv-fp8-unscaled" in body


async def test_a_log_clients_restart_notice_marks_a_run(tmp_path: Path) -> None:
    """docker / kubectl report a container restart as a notice: what follows is a new run,
    even when the server's dump was missed (resumed with --since)."""
    from kvtui.sources.base import SourceNotice

    fp8, bf16 = halves()
    # the client resumed after the restart's start-up: only its runtime lines, nothing of a
    # start (no dump, no weight load, no pool line) shows the restart but the notice
    lines = bf16.splitlines(keepends=True)
    ready = next(i for i, line in enumerate(lines) if "fired up" in line)
    no_dump = "".join(lines[ready + 1:])
    path = tmp_path / "server.log"
    path.write_text(fp8)
    app = tail_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.report is not None and app.header_bar.lines
                       == fp8.count("\n"), "the FP8 run on screen")
        app.ingest._emit([SourceNotice(str(path), "restarted", "container started again")])
        with path.open("a") as fh:
            fh.write(no_dump)
        total = fp8.count("\n") + no_dump.count("\n")
        await wait_for(pilot, lambda: app.report is not None and app.header_bar.lines == total
                       and len(app.report.runs) == 2, "the second run")
        await wait_for(pilot, lambda: app.report.runtime.decode_batches == 180,
                       "the second run's batches")
        assert app.report.runs[0].decode_batches == 180  # the first run's stay its own
        assert app.report.runs[1].opened_by != "start"


def _snap_restart(path: Path):
    async def before(pilot) -> None:
        await run_restart(pilot, path)
        app = pilot.app
        app.log_view.jump_to(None, restart_line())  # the marker on screen
        await pilot.pause()
    return before


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_restart_main_screen(snap_compare, tailed: Path, size) -> None:
    assert snap_compare(tail_app(tailed), terminal_size=size,
                        run_before=_snap_restart(tailed))


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_restart_runs_list(snap_compare, tailed: Path, size) -> None:
    async def before(pilot) -> None:
        await run_restart(pilot, tailed)
        await pilot.press("R")
        await pilot.pause()
    assert snap_compare(tail_app(tailed), terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_restart_compare_view(snap_compare, tailed: Path, size) -> None:
    async def before(pilot) -> None:
        await run_restart(pilot, tailed)
        await pilot.press("C")
        await pilot.pause()
    assert snap_compare(tail_app(tailed), terminal_size=size, run_before=before)


async def test_compare_on_the_first_run_says_so_without_a_run_0(tmp_path: Path) -> None:
    """`c` on run 1 of the runs list opened a view titled 'Run 1 against run 0'."""
    path = tmp_path / "server.log"
    path.write_text(PAIR.read_text())
    app = tail_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.report is not None and len(app.report.runs) == 2,
                       "both runs")
        await pilot.press("R")
        await pilot.pause()
        await pilot.press("up", "c")
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)
        said = [n.message for n in app._notifications]
        assert any("run 1 is the first server start" in m for m in said), said
