"""Issue 37 point 1: `kvtui ssh` reads the server's /metrics through the SSH connection it
already has (a direct-tcpip channel to the host's loopback port), against a real sshd and a
real HTTP server on 127.0.0.1 serving the real captures; the scrapes enter the session as
typed events and the report says what they say."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvtui.core.pipeline import Session
from kvtui.sources.metrics import MetricsPoller, Scraper
from kvtui.sources.ssh.metrics import channel_fetcher
from tests.metrics.conftest import DATA, MetricsServer, sample

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


@pytest.fixture
def metrics_server() -> Iterator[MetricsServer]:
    s = MetricsServer({"/metrics": [(200, (DATA / "sglang-seq-1.prom").read_text()),
                                    (200, (DATA / "sglang-seq-2.prom").read_text())],
                       "/real": [(200, sample("sglang-mratsim-sgtop-live-excerpt.txt"))]})
    s.thread.start()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


def test_scrapes_through_a_direct_tcpip_channel_feed_the_session(make_connector,
                                                                  metrics_server):
    conn = make_connector("gpu").connect()
    try:
        session = Session()
        fetch = channel_fetcher(lambda: conn.transport, lambda: (metrics_server.port, "test"))
        poller = MetricsPoller(Scraper("ssh://gpu/metrics", fetcher=fetch), session, "gpu")
        assert poller.once().state == "ok"
        assert poller.once().state == "ok"
        assert metrics_server.hits["/metrics"] == 2  # the host's sshd carried both
        m = session.report().to_json()["metrics"]
        assert (m["source"], m["state"], m["scrapes"]) == ("gpu", "ok", 2)
        assert m["facts"]["engine"] == "sglang" and m["facts"]["latency"]["window_s"]
        real = channel_fetcher(lambda: conn.transport, lambda: (metrics_server.port, "test"),
                               path="/real")("u", 5.0, lambda: 1.0)
        assert real.state == "ok" and "sglang:" in (real.body or "")
    finally:
        conn.close()


def test_a_port_nothing_listens_on_is_refused_and_a_404_is_not_enabled(
        make_connector, metrics_server, refusing_port):
    conn = make_connector("gpu").connect()
    try:
        refused = channel_fetcher(lambda: conn.transport, lambda: (refusing_port, "test"))
        got = refused("u", 5.0, lambda: 1.0)
        assert got.state == "refused" and f"127.0.0.1:{refusing_port}" in got.detail
        missing = channel_fetcher(lambda: conn.transport, lambda: (metrics_server.port, "test"),
                                  path="/nothing")("u", 5.0, lambda: 2.0)
        assert missing.state == "not_enabled" and "--enable-metrics" in missing.detail
        unknown = channel_fetcher(lambda: conn.transport, lambda: (None, "no engine yet"))
        assert unknown("u", 5.0, lambda: 3.0).state == "not_enabled"
    finally:
        conn.close()


@pytest.fixture
def refusing_port() -> Iterator[int]:
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    yield sock.getsockname()[1]
    sock.close()


def test_ssh_check_with_metrics_port_reports_the_metrics(ssh_env, tmp_path, capsys,
                                                         metrics_server):
    from kvtui.commands import ssh as ssh_cmd

    log = tmp_path / "server.log"
    log.write_text((SAMPLES / "llama31-70b-tp8.log").read_text())
    p = argparse.ArgumentParser()
    ssh_cmd.configure(p)
    base = ["-F", str(ssh_env["config"]), "gpu", "--log", str(log), "--check", "--json",
            "--fail-on", "never", "--no-checkpoint"]
    assert ssh_cmd.run(p.parse_args([*base, "--metrics-port", str(metrics_server.port)])) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["metrics"]["state"] == "ok"
    assert out["metrics"]["facts"]["engine"] == "sglang"
    assert out["kv_cache"]["effective_dtype"]  # the log's facts are still there
    # --no-metrics: the report is the log's alone
    assert ssh_cmd.run(p.parse_args([*base, "--no-metrics"])) == 0
    assert "metrics" not in json.loads(capsys.readouterr().out)


def test_the_tui_scrapes_through_the_connection_it_follows_the_log_on(ssh_env, tmp_path,
                                                                      monkeypatch,
                                                                      metrics_server):
    """`kvtui ssh HOST` (the TUI): the scrapes go through the SSH connection the command
    already has (issue 37 point 1), a channel of the one the follower starts on; no second
    connection is opened while that one lives."""
    import time

    import kvtui.ui.app as app_mod
    from kvtui.commands import ssh as ssh_cmd
    from kvtui.sources.ssh.connect import Connector
    from kvtui.ui.ingest import Ingest

    opened: list[object] = []
    real_connect = Connector.connect

    def counting(self):
        conn = real_connect(self)
        opened.append(conn)
        return conn

    monkeypatch.setattr(Connector, "connect", counting)
    log = tmp_path / "server.log"
    log.write_text((SAMPLES / "llama31-70b-tp8.log").read_text())
    seen: dict = {}

    def fake_run_app(source, title, **opts):
        """The TUI minus Textual: the real ingest, until the session has two scrapes."""
        session = opts["session"]
        ingest = Ingest(source, session=session)
        ingest.start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and session.metrics.fed < 2:
            ingest.drain()
            time.sleep(0.05)
        ingest.close(10)
        seen["fed"] = session.metrics.fed
        seen["state"] = session.metrics.state.state
        return 0

    monkeypatch.setattr(app_mod, "run_app", fake_run_app)
    p = argparse.ArgumentParser()
    ssh_cmd.configure(p)
    args = p.parse_args(["-F", str(ssh_env["config"]), "gpu", "--log", str(log),
                         "--no-checkpoint", "--metrics-port", str(metrics_server.port),
                         "--metrics-interval", "1"])
    assert ssh_cmd.run(args) == 0
    assert seen["fed"] >= 2 and seen["state"] == "ok"
    assert metrics_server.hits["/metrics"] >= 2
    assert len(opened) == 1  # the command's own: the follower and the scrapes share it
