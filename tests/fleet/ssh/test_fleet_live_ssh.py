"""The fleet screen and the exporter over real sshd instances on 127.0.0.1: the same followers
`kvtui fleet FILE.toml` and `kvtui exporter LOG --host H` run."""

from __future__ import annotations

import argparse
import threading
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from kvtui.commands import exporter
from kvtui.core.fleet.config import Entry
from kvtui.sources.fleet import ReadOptions
from kvtui.ui.fleet import COLUMNS, FleetApp, LiveFleet, _Ssh
from tests.fleet.ssh.test_fleet_check import hosts  # noqa: F401  (the fixture)


async def test_fleet_screen_over_ssh(hosts):  # noqa: F811
    logs = hosts["logs"]
    entries = [Entry(host="gpu-a", role="replica",
                     source=("file", str(logs["replica-a-bf16.log"]))),
               Entry(host="gpu-c", role="replica",
                     source=("file", str(logs["replica-c-fp8-unscaled.log"]))),
               Entry(host="gpu-down", source=("file", "/nope.log"))]
    want = {"gpu-a": 165, "gpu-c": 173}
    live = LiveFleet(entries, _Ssh(ReadOptions(config=str(hosts["config"]))).follow)
    live.start()
    try:
        app = FleetApp(live, tick=0)
        async with app.run_test(size=(200, 50)) as pilot:
            for _ in range(600):
                if all(s.session.lines >= want[s.entry.host] for s in live.servers[:2]) and \
                        live.servers[2].state == "unreachable":
                    break
                await pilot.pause(0.05)
            app.refresh_rows()
            await pilot.pause()
            table = app.query_one("#fleet")
            c = dict(zip(COLUMNS, (str(x) for x in table.get_row("gpu-c")), strict=True))
            assert c["KV conf -> eff"] == "fp8_e4m3 -> fp8_e4m3" and c["conn"] == "live"
            down = dict(zip(COLUMNS, (str(x) for x in table.get_row("gpu-down")), strict=True))
            assert down["conn"] == "unreachable"
            bar = str(app.query_one("#fleet-alerts").render())
            assert "gpu-down: unreachable" in bar and "KV cache dtype differs" in bar
            await pilot.press("q")
    finally:
        live.close()


async def test_fleet_screen_reads_an_entrys_metrics_port(hosts):  # noqa: F811
    """Issue 38: usage and queue columns from the server's /metrics where the entry gives
    `metrics_port`, scraped through the entry's SSH connection, marked `m`; the entry without
    one keeps the log's figures."""
    from kvtui.core.fleet.load import current_load
    from tests.metrics.conftest import DATA, MetricsServer

    body = (DATA / "sglang-seq-2.prom").read_text()
    server = MetricsServer({"/metrics": [(200, body)]})
    server.thread.start()
    logs = hosts["logs"]
    entries = [Entry(host="gpu-a", source=("file", str(logs["replica-a-bf16.log"])),
                     metrics_port=server.port),
               Entry(host="gpu-b", source=("file", str(logs["replica-b-bf16.log"])))]
    ssh = _Ssh(ReadOptions(config=str(hosts["config"])))
    live = LiveFleet(entries, ssh.follow, metrics=ssh.metrics)
    live.start()
    try:
        app = FleetApp(live, tick=0)
        async with app.run_test(size=(200, 50)) as pilot:
            for _ in range(600):
                a, b = (s.server() for s in live.servers)
                if current_load(a.report).source == "metrics" and \
                        b.report.runtime.last_running_req is not None:
                    break
                await pilot.pause(0.05)
            app.refresh_rows()
            await pilot.pause()
            table = app.query_one("#fleet")
            want = {s.name: s.value for f in text_string_to_metric_families(body)
                    for s in f.samples}
            a = dict(zip(COLUMNS, (str(x) for x in table.get_row("gpu-a")), strict=True))
            assert a["run/queue"] == (f"{want['sglang:num_running_reqs']:.0f}/"
                                      f"{want['sglang:num_queue_reqs']:.0f} m")
            b = dict(zip(COLUMNS, (str(x) for x in table.get_row("gpu-b")), strict=True))
            assert not b["run/queue"].endswith(" m")
            assert server.hits["/metrics"] >= 1
            await pilot.press("q")
    finally:
        live.close()
        server.httpd.shutdown()
        server.httpd.server_close()


def test_exporter_follows_a_log_on_a_host(hosts):  # noqa: F811
    log = hosts["logs"]["replica-c-fp8-unscaled.log"]
    args = argparse.Namespace(log=str(log), host="gpu-c", config=str(hosts["config"]),
                              server=None, port=0, bind="127.0.0.1", from_end=False,
                              metrics=None, metrics_port=None, metrics_interval=1.0,
                              no_metrics=False)
    stop = threading.Event()
    port: list[int] = []
    ready = threading.Event()

    def on_ready(p: int) -> None:
        port.append(p)
        ready.set()

    t = threading.Thread(target=exporter.serve, args=(args, stop, on_ready), daemon=True)
    t.start()
    try:
        assert ready.wait(60)
        got: dict = {}
        for _ in range(600):
            with urllib.request.urlopen(f"http://127.0.0.1:{port[0]}/metrics", timeout=30) as r:
                fams = {f.name: f for f in text_string_to_metric_families(r.read().decode())}
            got = fams
            if "kvtui_token_usage" in fams:
                break
            stop.wait(0.05)
        (info,) = got["kvtui_kv_cache_dtype_info"].samples
        assert info.labels["server"] == "gpu-c" and info.labels["effective"] == "fp8_e4m3"
        assert got["kvtui_token_usage"].samples[0].value > 0.8
        # the log's dump says enable_metrics=False: the engine says no /metrics, none read
        for _ in range(600):
            if "kvtui_metrics_scrape" in got:
                break
            stop.wait(0.05)
            with urllib.request.urlopen(f"http://127.0.0.1:{port[0]}/metrics", timeout=30) as r:
                got = {f.name: f for f in text_string_to_metric_families(r.read().decode())}
        assert [s.labels["state"] for s in got["kvtui_metrics_scrape"].samples] == \
            ["not_enabled"]
    finally:
        stop.set()
        t.join(timeout=30)


def test_exporter_reads_the_hosts_metrics_through_its_ssh_connection(hosts):  # noqa: F811
    """--host with --metrics-port: the server's /metrics on the host's loopback, read through
    a direct-tcpip channel of the exporter's own SSH connection (the test's HTTP server on
    127.0.0.1 stands for the host's: the sshd runs here); the load gauges come from it."""
    from tests.metrics.conftest import DATA, MetricsServer

    body = (DATA / "sglang-seq-2.prom").read_text()
    server = MetricsServer({"/metrics": [(200, body)]})
    server.thread.start()
    log = hosts["logs"]["replica-a-bf16.log"]
    args = argparse.Namespace(log=str(log), host="gpu-a", config=str(hosts["config"]),
                              server=None, port=0, bind="127.0.0.1", from_end=False,
                              metrics=None, metrics_port=server.port, metrics_interval=1.0,
                              no_metrics=False)
    stop = threading.Event()
    port: list[int] = []
    ready = threading.Event()
    t = threading.Thread(target=exporter.serve,
                         args=(args, stop, lambda p: (port.append(p), ready.set())), daemon=True)
    t.start()
    try:
        assert ready.wait(60)
        got: dict = {}
        for _ in range(600):
            with urllib.request.urlopen(f"http://127.0.0.1:{port[0]}/metrics", timeout=30) as r:
                got = {f.name: f for f in text_string_to_metric_families(r.read().decode())}
            if "kvtui_metrics_scrape" in got and \
                    got["kvtui_metrics_scrape"].samples[0].labels["state"] == "ok":
                break
            stop.wait(0.05)
        assert [s.labels["state"] for s in got["kvtui_metrics_scrape"].samples] == ["ok"]
        want = {s.name: s.value for f in text_string_to_metric_families(body) for s in f.samples}
        assert got["kvtui_running_requests"].samples[0].value == want["sglang:num_running_reqs"]
        assert server.hits["/metrics"] >= 1
    finally:
        stop.set()
        t.join(timeout=30)
        server.httpd.shutdown()
        server.httpd.server_close()


def test_the_full_view_opens_a_channel_on_the_fleets_connection(hosts):  # noqa: F811
    """Enter on a row: the server's full view follows its log on another channel of the
    connection the fleet already has to that host (one SSH connection per host), reads the
    whole log there, and leaves that connection open for the fleet when it ends."""
    from kvtui.sources.base import SourceLine

    log = hosts["logs"]["replica-a-bf16.log"]
    entry = Entry(host="gpu-a", source=("file", str(log)))
    ssh = _Ssh(ReadOptions(config=str(hosts["config"])))
    live = LiveFleet([entry], ssh.follow)
    live.start()
    try:
        want = len(log.read_text().splitlines())
        for _ in range(600):
            if live.servers[0].session.lines >= want:
                break
            live.stop.wait(0.05)
        _, conn = ssh.connections["gpu-a"]
        view, _ = ssh.follow(entry, again=True)
        assert view._given is conn  # the connection it starts on
        got: list[str] = []
        stop = threading.Event()

        def emit(items: list) -> None:
            got.extend(i.text for i in items if isinstance(i, SourceLine))
            if len(got) >= want:
                stop.set()

        t = threading.Thread(target=view.run, args=(emit, stop), daemon=True)
        t.start()
        t.join(timeout=60)
        assert got == log.read_text().splitlines()
        assert conn.is_active()  # the fleet's connection outlives the view
    finally:
        live.close()
