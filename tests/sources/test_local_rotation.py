"""Issue 15: after a rotation, evidence names the file that now holds the line, line numbers are
those of that file, and a routine rename rotation is a notice, not "error: file vanished"."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from kvtui.sources.base import SourceLine, SourceNotice
from kvtui.sources.local import LocalFollower
from kvtui.ui import report_view as rv
from kvtui.ui.ingest import Ingest
from tests.sources.test_local_follow import append, finish, start

FP8 = ("[2026-11-24 09:14:20 TP0] Using FP8 KV cache but no scaling factors provided. "
       "Defaulting to scaling factors of 1.0. This may lead to less accurate results!\n")
DECODE = ("[2026-11-24 09:15:0{} TP0] Decode batch, #running-req: 2, #token: 100, token usage: "
          "0.01, cuda graph: True, gen throughput (token/s): 10.00, #queue-req: 0, \n")


def _lines(col) -> list[SourceLine]:
    with col.lock:
        return [i for i in col.items if isinstance(i, SourceLine)]


def _notices(col, state: str) -> list[SourceNotice]:
    with col.lock:
        return [i for i in col.items if isinstance(i, SourceNotice) and i.state == state]


def test_rename_rotation_is_a_notice_and_numbers_restart(tmp_path: Path) -> None:
    p = tmp_path / "server.log"
    p.write_text("a\nb\nc\n")
    _, col, stop, t = start(p, from_start=True)
    assert col.wait(lambda c: len(c.texts()) == 3)
    os.rename(p, tmp_path / "server.log.1")  # logrotate's `create` comes a moment later
    assert col.wait(lambda c: "rotated" in c.states())
    time.sleep(0.5)  # several wake-ups while server.log does not exist
    p.write_text("new 1\nnew 2\n")
    assert col.wait(lambda c: c.texts()[-1:] == ["new 2"])
    finish(stop, t)
    assert "error" not in col.states()
    lines = _lines(col)
    assert [(ln.line_no, ln.text) for ln in lines] == [
        (1, "a"), (2, "b"), (3, "c"), (1, "new 1"), (2, "new 2")]
    moved = [n.moved_to for n in _notices(col, "rotated") if n.moved_to]
    assert moved == [str(tmp_path / "server.log.1")]
    # the notice that moves the old lines comes after the last of them, before the first new one
    items = col.items
    at = next(i for i, x in enumerate(items) if isinstance(x, SourceNotice) and x.moved_to)
    assert [x.text for x in items[:at] if isinstance(x, SourceLine)] == ["a", "b", "c"]


def test_rotation_moves_the_evidence_to_the_rotated_file(tmp_path: Path) -> None:
    p = tmp_path / "server.log"
    p.write_text("start\n" + FP8 + "".join(DECODE.format(i) for i in range(3)))
    ingest = Ingest(LocalFollower(str(p), from_start=True, poll_ms=100))
    ingest.start()
    try:
        _wait(lambda: ingest.lines == 5)
        os.rename(p, tmp_path / "server.log.1")
        p.write_text("".join(DECODE.format(i) for i in range(3, 6)))
        _wait(lambda: ingest.lines == 8)
        ingest.refresh_report()
        report = rv.report_of(ingest.drain().report)
    finally:
        ingest.close()
    assert report is not None
    (alert,) = [a for a in report.alerts if a.rule == "kv-fp8-unscaled"]
    ev = alert.evidence
    assert ev is not None and (ev.source, ev.line) == (str(tmp_path / "server.log.1"), 2)
    assert {s.name: s.lines for s in report.sources} == {
        str(tmp_path / "server.log.1"): 5, str(p): 3}


def test_copy_truncate_moves_the_evidence_to_the_copy(tmp_path: Path) -> None:
    p = tmp_path / "server.log"
    p.write_text("start\n" + FP8 + "x" * 50 + "\n")
    _, col, stop, t = start(p, from_start=True)
    assert col.wait(lambda c: len(c.texts()) == 3)
    shutil.copyfile(p, tmp_path / "server.log.1")  # logrotate copytruncate
    with open(p, "r+") as fh:
        fh.truncate(0)
    append(p, "after\n")
    assert col.wait(lambda c: c.texts()[-1:] == ["after"])
    finish(stop, t)
    (note,) = _notices(col, "truncated")
    assert note.moved_to == str(tmp_path / "server.log.1")
    assert _lines(col)[-1].line_no == 1
    assert "error" not in col.states()


def test_deleted_file_is_still_an_error(tmp_path: Path) -> None:
    p = tmp_path / "server.log"
    p.write_text("x\n")
    _, col, stop, t = start(p, from_start=True)
    assert col.wait(lambda c: c.texts() == ["x"])
    p.unlink()
    assert col.wait(lambda c: "error" in c.states())
    p.write_text("y\n")
    assert col.wait(lambda c: c.texts()[-1:] == ["y"])
    finish(stop, t)
    assert [(ln.line_no, ln.text) for ln in _lines(col)] == [(1, "x"), (1, "y")]
    moved = [n.moved_to for n in col.items if isinstance(n, SourceNotice) and n.moved_to]
    assert moved == [f"{p} (deleted)"]


def _wait(cond, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.02)
    raise AssertionError("timed out")


async def test_tui_goes_to_the_evidence_in_the_rotated_file(tmp_path: Path) -> None:
    from kvtui.ui.app import KvApp

    p = tmp_path / "server.log"
    p.write_text("start\n" + FP8 + "".join(DECODE.format(i) for i in range(3)))
    app = KvApp(LocalFollower(str(p), from_start=True, poll_ms=100), "server.log")
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(200):
            await pilot.pause(0.05)
            if app.ingest.lines == 5 and app.report:
                break
        os.rename(p, tmp_path / "server.log.1")
        p.write_text("".join(DECODE.format(i) for i in range(3, 6)))
        for _ in range(200):
            await pilot.pause(0.05)
            ev = next((a.evidence for a in rv.alerts(app.report)
                       if a.rule == "kv-fp8-unscaled"), None)
            if app.ingest.lines == 8 and ev is not None and ev.source.endswith(".1"):
                break
        assert ev is not None
        assert ev.source == str(tmp_path / "server.log.1") and ev.line == 2
        assert app.log_view.jump_to(ev.source, ev.line)
        selected = app.log_view.selected
        assert selected is not None and selected.text == FP8.rstrip("\n")
