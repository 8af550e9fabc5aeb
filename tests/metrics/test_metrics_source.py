"""The HTTP scrape's states and backoff, against real sockets on 127.0.0.1."""

from __future__ import annotations

import socket

from kvtui.sources import metrics as source
from tests.metrics.conftest import DATA


def test_ok_then_stale_then_recovers(serve):
    body = (DATA / "vllm-seq-1.prom").read_text()
    server = serve({"/m": [(200, body), (500, "oops"), (500, "oops"), (200, body)]})
    scraper = source.Scraper(server.url("/m"), interval=2)
    assert scraper.scrape().state == "ok"
    failed = scraper.scrape()
    assert failed.state == "stale" and "HTTP 500" in failed.detail
    assert scraper.next_delay() == 4  # doubled after one failure
    assert scraper.scrape().state == "stale"
    assert scraper.next_delay() == 8
    assert scraper.scrape().state == "ok"
    assert scraper.next_delay() == 2


def test_backoff_is_capped(refusing_url):
    scraper = source.Scraper(refusing_url, interval=5)
    for _ in range(6):
        assert scraper.scrape().state == "refused"  # never succeeded: not stale
    assert scraper.next_delay() == source.BACKOFF_MAX


def test_interval_is_clamped_to_1_5_s():
    assert source.Scraper("http://127.0.0.1:1/", interval=0.1).interval == 1.0
    assert source.Scraper("http://127.0.0.1:1/", interval=30).interval == 5.0


def test_timeout_when_the_server_never_answers():
    # a listening socket that never accepts: the kernel completes the connect, nobody replies
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    try:
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/metrics"
        result = source.fetch(url, timeout=0.3)
        assert result.state == "timeout"
    finally:
        sock.close()


def test_version_json_and_origin(serve):
    server = serve({"/version": [(200, '{"version": "0.34.0"}')], "/bad": [(200, "[1]")]})
    assert source.origin(server.url("/a/b/metrics?x=1")) == f"http://127.0.0.1:{server.port}"
    assert source.get_json(server.url("/version")) == {"version": "0.34.0"}
    assert source.get_json(server.url("/bad")) is None
    assert source.get_json(server.url("/missing")) is None
