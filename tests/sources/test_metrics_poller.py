"""`kvtui tail|replay --metrics URL`: a poller scrapes a server reachable from here (a real
HTTP server on 127.0.0.1 serving the real captures) and feeds the session typed events, with
the honest states of `kvtui.sources.metrics` and its backoff."""

from __future__ import annotations

import argparse
import threading
from collections.abc import Iterator

import pytest

from kvtui.commands import replay as replay_cmd
from kvtui.commands import tail as tail_cmd
from kvtui.core.pipeline import Session
from kvtui.sources.metrics import BACKOFF_MAX, MetricsPoller, Scraper
from tests.metrics.conftest import MetricsServer, sample


@pytest.fixture
def vllm_server() -> Iterator[MetricsServer]:
    s = MetricsServer({"/metrics": [(200, sample("vllm-0.24.0-yongzane00-vllmtop-fixture.txt"))],
                       "/html": [(200, "<html>hello</html>")]})
    s.thread.start()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


@pytest.fixture
def refusing_url() -> Iterator[str]:
    """A loopback port bound but not listening: a connect is refused, deterministically."""
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/metrics"
    sock.close()


def _args(configure, *argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    configure(p)
    return p.parse_args(list(argv))


def test_tail_and_replay_take_metrics_url_and_feed_the_session(vllm_server, tmp_path):
    log = tmp_path / "x.log"
    log.write_text("")
    for configure, first in ((tail_cmd.configure, str(log)), (replay_cmd.configure, str(log))):
        session = Session()
        args = _args(configure, first, "--metrics", vllm_server.url(), "--metrics-interval", "1")
        poller = replay_cmd.start_metrics(args, session)
        assert poller is not None
        try:
            done = threading.Event()
            for _ in range(500):  # the poller's first scrape, on its thread
                if session.metrics.latest is not None:
                    break
                done.wait(0.01)
        finally:
            poller.close()
        assert session.metrics.latest is not None
        assert session.metrics.latest.engine == "vllm"
        m = session.report().to_json()["metrics"]
        assert m["state"] == "ok" and m["source"] == vllm_server.url()
        off = _args(configure, first, "--metrics", vllm_server.url(), "--no-metrics")
        assert replay_cmd.start_metrics(off, Session()) is None


def test_states_and_backoff(vllm_server, refusing_url):
    session = Session()
    scraper = Scraper(refusing_url, 1.0)
    poller = MetricsPoller(scraper, session)
    assert poller.once().state == "refused"
    assert session.metrics.state.state == "refused"
    assert scraper.next_delay() == 2.0 and poller.once().state == "refused"
    assert scraper.next_delay() == 4.0
    scraper.failures = 99
    assert scraper.next_delay() == BACKOFF_MAX
    html = MetricsPoller(Scraper(vllm_server.url("/html")), session)
    html.once()
    assert session.metrics.state.state == "bad_response"
    good = MetricsPoller(Scraper(vllm_server.url()), session)
    good.once()
    assert session.metrics.state.state == "ok"
    MetricsPoller(Scraper(refusing_url), session).once()
    assert session.metrics.state.state == "stale"
