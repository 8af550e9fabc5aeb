"""The fleet screen (kvtui.ui.fleet): rows filled from live followers of generated logs (local
files, the same LineSource a host's follower is), Enter names the server whose full view opens,
q leaves; SVG snapshots at 80x24 and 200x50 (a fixed clock: the ages are deterministic)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtui.core.fleet.config import Entry
from kvtui.sources.local import LocalFollower
from kvtui.ui.fleet import COLUMNS, FleetApp, LiveFleet
from tests.fleet.fleetlogs import text

LOGS = (("gpu-a", "replica", "replica-a-bf16.log"), ("gpu-b", "replica", "replica-b-bf16.log"),
        ("gpu-c", "replica", "replica-c-fp8-unscaled.log"),
        ("gpu-p", "prefill", "pd-prefill-fp8.log"), ("gpu-d", "decode", "pd-decode-bf16.log"))


@pytest.fixture
def fleet(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # evidence names the logs by relative path: stable snapshots
    paths = {}
    for host, _, name in LOGS:
        Path(name).write_text(text(name))
        paths[host] = name
    entries = [Entry(host=h, role=r) for h, r, _ in LOGS]

    def follow(entry: Entry):
        return LocalFollower(paths[entry.host], from_start=True, poll_ms=50), paths[entry.host]

    live = LiveFleet(entries, follow, clock=lambda: 1000.0)
    live.start()
    want = {h: text(n).count("\n") for h, _, n in LOGS}
    yield live, want
    live.close()


async def read_all(pilot, live, want) -> None:
    """Until every follower has folded its whole log (they read on their own threads)."""
    for _ in range(600):
        if all(s.session.lines >= want[s.entry.host] for s in live.servers):
            break
        await pilot.pause(0.05)
    pilot.app.refresh_rows()
    await pilot.pause()


async def test_rows_alerts_and_enter(fleet):
    live, want = fleet
    app = FleetApp(live, tick=0)
    async with app.run_test(size=(200, 50)) as pilot:
        await read_all(pilot, live, want)
        table = app.query_one("#fleet")
        assert table.row_count == 5
        row_c = [str(c) for c in table.get_row("gpu-c")]
        cells = dict(zip(COLUMNS, row_c, strict=True))
        assert cells["engine"] == "sglang" and cells["model"] == "llama-3.1-70b"
        assert cells["KV conf -> eff"] == "fp8_e4m3 -> fp8_e4m3"
        assert cells["scales"] == "missing"
        assert cells["pool"] == "2,580,000" and cells["usage"].endswith("%")
        assert int(cells["alerts"]) >= 3  # its own FP8 alert and the fleet's that name it
        assert cells["age"] == "0s"
        bar = str(app.query_one("#fleet-alerts").render())
        assert "KV cache dtype differs between prefill and decode" in bar
        await pilot.press("down", "down", "enter")
    assert app.return_value == "gpu-c"


async def test_q_leaves_the_fleet(fleet):
    live, want = fleet
    app = FleetApp(live, tick=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await read_all(pilot, live, want)
        await pilot.press("q")
    assert app.return_value == ""


def test_an_unreachable_server_is_its_rows_state(tmp_path):
    def follow(entry: Entry):
        raise OSError("connection refused")

    live = LiveFleet([Entry(host="gpu-down")], follow, clock=lambda: 0.0)
    live.start()
    live.close()
    (s,), alerts = live.snapshot()
    assert s.connection == "unreachable" and live.servers[0].message.endswith("refused")
    assert [a.rule for a in alerts] == ["fleet-server-unreachable"]


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_fleet_screen_snapshot(snap_compare, fleet, size):
    live, want = fleet

    async def ready(pilot) -> None:
        await read_all(pilot, live, want)

    assert snap_compare(FleetApp(live, tick=0), terminal_size=size, run_before=ready)


ROUTED = (("gpu-p", "prefill", "pd-prefill-fp8.log"), ("gpu-d", "decode", "pd-decode-bf16.log"),
          ("router-1", "router", "pd-router.log"))


@pytest.fixture
def routed(tmp_path, monkeypatch):
    """A prefill/decode pair and its router, each followed from a local file."""
    monkeypatch.chdir(tmp_path)
    for _, _, name in ROUTED:
        Path(name).write_text(text(name))
    names = {h: n for h, _, n in ROUTED}

    def follow(entry: Entry):
        return LocalFollower(names[entry.host], from_start=True, poll_ms=50), names[entry.host]

    live = LiveFleet([Entry(host=h, role=r) for h, r, _ in ROUTED], follow,
                     clock=lambda: 1000.0)
    live.start()
    yield live, {h: text(n).count("\n") for h, _, n in ROUTED}
    live.close()


async def test_a_router_row_is_a_router_not_an_unknown_engine(routed):
    live, want = routed
    app = FleetApp(live, tick=0)
    async with app.run_test(size=(200, 40)) as pilot:
        await read_all(pilot, live, want)
        table = app.query_one("#fleet")
        cells = dict(zip(COLUMNS, [str(c) for c in table.get_row("router-1")], strict=True))
        assert cells["role"] == "router" and cells["engine"] == "router"
        assert {cells[c] for c in COLUMNS[3:10]} == {"-"}
        assert int(cells["alerts"]) == 1  # the transfer alert that names it
        bar = str(app.query_one("#fleet-alerts").render())
        assert "KV transfer between prefill and decode failing: gpu-p -> gpu-d" in bar


def test_fleet_screen_with_a_router_snapshot(snap_compare, routed):
    live, want = routed

    async def ready(pilot) -> None:
        await read_all(pilot, live, want)

    assert snap_compare(FleetApp(live, tick=0), terminal_size=(160, 24), run_before=ready)
