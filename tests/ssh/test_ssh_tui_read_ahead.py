"""`kvtui ssh HOST` (the TUI) shows the running server's start-up verdict before the rest of the
remote log has arrived (issue 14 point 5), against a real sshd: the host reads ahead the
start-up region of the last server start, the TUI's ingest folds it on the side and its report
fills the alerts, facts and what-if panes; the full read then refines it, and the final report
is the sequential fold's."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from pathlib import Path

from kvtui.core.pipeline import Options, Session
from kvtui.core.pipeline import stream as stream_mod

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs"


def _restart_far_down(path: Path, filler: str) -> int:
    """A BF16 server (the first start), 8 MB of filler, then the server restarted with an FP8
    KV cache without scales, and its runtime: the verdict that matters is 8 MB down the file.
    `filler`: "random" (lines that do not compress, so the transfer takes a while) or
    "decode" (the first server's batch lines). Returns the restart's line number."""
    first = (SAMPLES / "llama31-70b-tp8.log").read_text().splitlines()
    second = (SAMPLES / "qwen35-397b-nvfp4-tp8-fp8.log").read_text().splitlines()
    decode = [x for x in first if "Decode batch" in x or "Prefill batch" in x]
    with open(path, "w") as f:
        f.write("".join(x + "\n" for x in first))
        n = len(first)
        if filler == "random":
            for _ in range(8):
                blob = os.urandom(1 << 19).hex()
                chunk = [f"[TP0] {blob[i:i + 58]}" for i in range(0, len(blob), 58)]
                f.write("".join(x + "\n" for x in chunk))
                n += len(chunk)
        else:
            chunk = decode * (40000 // len(decode))
            f.write("".join(x + "\n" for x in chunk))
            n += len(chunk)
        restart = n + next(i for i, x in enumerate(second, 1) if "server_args=" in x)
        f.write("".join(x + "\n" for x in second + decode * (5000 // len(decode))))
    return restart


def _local(path: Path) -> Session:
    from kvtui.commands.check import analyse_files

    return analyse_files([str(path)])[0]


def _renamed(obj: object, old: str, new: str) -> object:
    return json.loads(json.dumps(obj).replace(old, new))


async def _until(pilot, cond, what: str, timeout: float = 60.0) -> None:
    """Poll `cond` between event-loop turns; the timeout only turns a hang into a failure."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.02)


def _rules(app) -> list[str]:
    return [a.rule for a in app.alerts_pane.alerts]


def test_the_tui_shows_the_read_ahead_verdict_while_the_transfer_is_held(
        make_stall_host, tmp_path, monkeypatch):
    """The link freezes after 512 KiB: the read-ahead start-up (sent before the stream) has
    arrived, the FP8 restart 8 MB down the stream has not. The panes already show the
    restart's verdict: kv-fp8-unscaled, the FP8 KV dtype in the facts and the what-if.
    Before the TUI took the read-ahead, it showed the first (BF16) server's start-up."""
    import kvtui.ui.app as app_mod
    from kvtui.commands import ssh as ssh_cmd

    stall = make_stall_host(512 << 10)
    log = tmp_path / "restarted.log"
    restart = _restart_far_down(log, "random")
    local = _local(log)
    want_dtype = local.calculator().current_dtype
    assert want_dtype.startswith("fp8")
    seen: dict = {}

    async def drive(source, title, opts) -> None:
        app = app_mod.KvApp(source, title, **opts)
        async with app.run_test(size=(160, 50)) as pilot:
            await _until(pilot, stall["flag"].exists, "the link to freeze mid-read")
            await _until(pilot, lambda: "kv-fp8-unscaled" in _rules(app),
                         "the read-ahead verdict in the alerts pane")
            seen["report"] = app.report
            seen["evidence"] = [a.evidence.line for a in app.alerts_pane.alerts
                                if a.rule == "kv-fp8-unscaled"]
            seen["facts"] = app.facts_pane._last
            seen["calc"] = app.whatif_pane.calc
            seen["folded"] = app.ingest.session.lines
            await pilot.press("q")

    def run_app(source, title, **opts):
        asyncio.run(drive(source, title, opts))
        return 0

    monkeypatch.setattr(app_mod, "run_app", run_app)
    monkeypatch.setenv("KVTUI_DEBUG", "1")  # a failed wait in the TUI fails the test as is
    p = __import__("argparse").ArgumentParser()
    ssh_cmd.configure(p)
    args = p.parse_args(["-F", str(stall["config"]), "gpu-stall", "--log", str(log),
                         "--no-checkpoint", "--connect-timeout", "2"])
    assert ssh_cmd.run(args) == 0
    assert seen["folded"] < restart  # the stream itself never got there
    assert seen["report"].partial is True
    assert seen["evidence"] and all(n >= restart for n in seen["evidence"])
    assert seen["calc"] is not None and seen["calc"].current_dtype == want_dtype
    assert "Qwen" in str(seen["facts"]) and "fp8" in str(seen["facts"]).lower()


def test_the_read_ahead_verdict_first_then_the_sequential_report(make_connector, tmp_path,
                                                                 monkeypatch):
    """The same through a free link, folded on both cores: the read-ahead report is applied
    first (the load is held until it is on screen, so the order is certain), and the report the
    panes end on is exactly the local check's."""
    from kvtui.sources.ssh.follow import RemoteFollower, Target
    from kvtui.ui.app import KvApp
    from kvtui.ui.ingest import Ingest

    log = tmp_path / "restarted.log"
    restart = _restart_far_down(log, "decode")
    total = sum(1 for _ in log.open())
    applied: list = []
    shown = threading.Event()
    real_apply, real_load = KvApp._apply_report, Ingest._load_block
    joins: list[int] = []
    held: list[bool] = []
    real_join = stream_mod.join_result

    def spy(self, report, timeline):
        applied.append(report)
        if report is not None and report.partial and any(
                a.rule == "kv-fp8-unscaled" for a in report.alerts):
            shown.set()
        return real_apply(self, report, timeline)

    def held_load(self, block):
        if self._load is not None and not held:  # the first block is folded: the rest waits
            held.append(shown.wait(60))  # for the verdict (the guard: a hang fails below)
        return real_load(self, block)

    def join(fold, result, line_offset):
        joins.append(line_offset)
        return real_join(fold, result, line_offset)

    monkeypatch.setattr(KvApp, "_apply_report", spy)
    monkeypatch.setattr(Ingest, "_load_block", held_load)
    monkeypatch.setattr(stream_mod, "join_result", join)
    from kvtui.commands.ssh import startup_markers

    session = Session(Options(workers=2, piece_bytes=256 << 10, min_parallel_bytes=1 << 20))
    follower = RemoteFollower(make_connector("gpu"), Target("file", str(log)), keepalive=1.0,
                              prelude_markers=startup_markers())
    app = KvApp(follower, "gpu", session=session)

    async def drive() -> None:
        async with app.run_test(size=(160, 50)) as pilot:
            await _until(pilot, lambda: app.ingest.last_state == "live" and app.report
                         is not None and sum(s.lines for s in app.report.sources) == total,
                         "the report of every line on screen", timeout=180)
            await pilot.press("q")

    asyncio.run(drive())
    assert held == [True], "the read-ahead verdict never reached the screen"
    first = next(i for i, r in enumerate(applied) if r is not None and r.partial)
    early = applied[first]
    assert "kv-fp8-unscaled" in [a.rule for a in early.alerts]
    assert all(a.evidence.line >= restart for a in early.alerts if a.evidence)
    # the workers folded the stream; how many pieces they got depends on how the bytes arrive
    # while the load is held (a loaded machine hands over fewer, bigger blocks, which are
    # folded in place), so only that they took part is certain
    assert len(joins) >= 1
    final = applied[-1].to_json()
    local = _renamed(_local(log).report().to_json(), str(log), f"gpu:{log}")
    for key in ("kv_cache", "alerts", "runs", "runtime"):
        assert final[key] == local[key], key
    assert session.lines == total


def test_with_lines_n_the_read_ahead_stands_for_the_load_only(make_connector, tmp_path,
                                                              monkeypatch):
    """`--lines N` leaves the start-up out: the host still reads it ahead, and the TUI shows
    its verdict while the tail loads (also once the tail has more lines than the read-ahead:
    their numbers count from the tail's first line, not the file's); the stream never folds
    that start-up, so once loaded the panes show the tail's own report, a local check's."""
    from kvtui.commands.ssh import startup_markers
    from kvtui.sources.ssh.follow import RemoteFollower, Target
    from kvtui.ui.ingest import Ingest

    lines = (SAMPLES / "qwen35-397b-nvfp4-tp8-fp8.log").read_text().splitlines()
    decode = [x for x in lines if "Decode batch" in x or "Prefill batch" in x]
    lines += decode * (40000 // len(decode))
    log = tmp_path / "long.log"
    log.write_text("".join(x + "\n" for x in lines))
    keep = 30000
    tail = tmp_path / "tail.log"
    tail.write_text("".join(x + "\n" for x in lines[-keep:]))
    assert tail.stat().st_size > 4 << 20  # far enough from the start-up to read it ahead
    ahead: list = []
    mid, go = threading.Event(), threading.Event()
    real_ahead, real_load = Ingest._read_ahead, Ingest._load_block

    def read_ahead(self, block):
        ahead.append(block)
        return real_ahead(self, block)

    def held_load(self, block):
        if ahead and self.session.lines > len(ahead[0].texts) and not mid.is_set():
            mid.set()  # the tail is past the read-ahead's line count: look at the panes now
            go.wait(60)
        return real_load(self, block)

    monkeypatch.setattr(Ingest, "_read_ahead", read_ahead)
    monkeypatch.setattr(Ingest, "_load_block", held_load)
    follower = RemoteFollower(make_connector("gpu"), Target("file", str(log)), lines=keep,
                              keepalive=1.0, prelude_markers=startup_markers())
    ingest = Ingest(follower, session=Session())
    ingest.start()
    try:
        assert mid.wait(60), "the load never got past the read-ahead's line count"
        ingest.refresh_report()
        during = ingest.drain().report
        go.set()
        deadline = time.monotonic() + 120
        final = None
        while time.monotonic() < deadline:
            report = ingest.drain().report
            final = report or final
            if ingest.last_state == "live" and final is not None and \
                    sum(s.lines for s in final.sources) == keep:
                break
            time.sleep(0.02)
    finally:
        go.set()
        ingest.close(10)
    assert len(ahead) == 1 and ahead[0].first_line_no == 1
    assert during.partial and "kv-fp8-unscaled" in [a.rule for a in during.alerts]
    assert final is not None
    got = final.to_json()
    assert got.get("partial") is None
    local = _renamed(_local(tail).report().to_json(), str(tail), f"gpu:{log}")
    for key in ("kv_cache", "alerts", "runs", "runtime"):
        assert got[key] == local[key], key
