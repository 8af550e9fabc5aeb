"""The server's /metrics read through the SSH connection kvtui already has: a direct-tcpip
channel to the host's loopback port (nothing installed on the host, no port opened; the
host's sshd must permit TCP forwarding, OpenSSH's default `AllowTcpForwarding yes`), one
HTTP/1.0 GET on it per scrape.

Which port: `--metrics-port`, else the one the engine says its logged arguments imply
(`kvtui.core.engine.Engine.metrics_endpoint`: the server's --port, the engine's default, or
none when the server runs without /metrics).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import paramiko

from kvtui.sources.metrics import MAX_BODY, ScrapeResult


def _http_get(chan: paramiko.Channel, host: str, port: int, path: str) -> tuple[int, str, bytes]:
    request = (f"GET {path} HTTP/1.0\r\nHost: {host}:{port}\r\nAccept: text/plain\r\n"
               "Connection: close\r\n\r\n").encode("ascii")
    chan.sendall(request)
    data = bytearray()
    while len(data) <= MAX_BODY + 65536:
        got = chan.recv(65536)
        if not got:
            break
        data += got
    head, sep, body = bytes(data).partition(b"\r\n\r\n")
    if not sep:
        raise ValueError("no HTTP answer")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise ValueError(f"not an HTTP status line: {lines[0][:80]!r}")
    headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:])}
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = _unchunk(body)
    return int(parts[1]), parts[2] if len(parts) > 2 else "", body


def _unchunk(body: bytes) -> bytes:
    out = bytearray()
    pos = 0
    while True:
        nl = body.find(b"\r\n", pos)
        if nl < 0:
            break
        size = int(body[pos:nl].split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out += body[nl + 2:nl + 2 + size]
        pos = nl + 2 + size + 2
    return bytes(out)


def reconnecting(connector: Any, first: Any = None) -> Callable[[], paramiko.Transport]:
    """The transport scrapes open their channels on: `first`'s (the connection the log is
    followed on) while it lives, else a connection of their own from `connector`, kept for
    the next scrape (the follower closes a lent connection when it drops it). What
    `kvtui ssh`, the exporter and the fleet screen scrape through."""
    live = [first]

    def transport() -> paramiko.Transport:
        if live[0] is None or not live[0].is_active():
            live[0] = connector.connect()
            connector.messages.clear()
        return live[0].transport

    return transport


def channel_fetcher(transport: Callable[[], paramiko.Transport],
                    port: Callable[[], tuple[int | None, str]], path: str = "/metrics",
                    host: str = "127.0.0.1") -> Callable[[str, float, Callable[[], float]],
                                                         ScrapeResult]:
    """A `Scraper` fetcher that opens a direct-tcpip channel to `host:port()` on the SSH host
    for each scrape. `transport()`: the connection's live transport (reconnects give a new
    one); `port()`: (port, why) as the engine's `metrics_endpoint` says, asked at each
    scrape (the log may only now have said it)."""

    def fetch(url: str, timeout: float, clock: Callable[[], float]) -> ScrapeResult:
        number, why = port()
        if number is None:
            return ScrapeResult("not_enabled", None, why, clock())
        where = f"{host}:{number}{path} over SSH"
        try:
            link = transport()
        except Exception as exc:  # a reconnect refused: the scrape says so, the run goes on
            return ScrapeResult("refused", None, f"{where}: no SSH connection: {exc}", clock())
        try:
            chan = link.open_channel("direct-tcpip", (host, number), ("127.0.0.1", 0),
                                            timeout=timeout)
        except paramiko.ChannelException as exc:
            if exc.code == 1:  # OPEN_ADMINISTRATIVELY_PROHIBITED
                return ScrapeResult("refused", None, f"the host's sshd refuses TCP forwarding "
                                    f"to {where} (AllowTcpForwarding)", clock())
            return ScrapeResult("refused", None, f"connection refused at {where} ({why})",
                                clock())
        except (paramiko.SSHException, OSError, EOFError) as exc:
            return ScrapeResult("refused", None, f"{where}: {type(exc).__name__}: {exc}",
                                clock())
        try:
            chan.settimeout(timeout)
            status, reason, body = _http_get(chan, host, number, path)
        except TimeoutError:
            return ScrapeResult("timeout", None, f"no answer from {where} in {timeout:g} s",
                                clock())
        except (ValueError, OSError, paramiko.SSHException) as exc:
            return ScrapeResult("http_error", None, f"{where}: {exc}", clock())
        finally:
            chan.close()
        if status == 404:
            return ScrapeResult("not_enabled", None, f"HTTP 404 at {where}: metrics are not "
                                "served there (SGLang needs --enable-metrics; vLLM serves "
                                "/metrics on its API port)", clock())
        if status != 200:
            return ScrapeResult("http_error", None, f"HTTP {status} {reason} at {where}",
                                clock())
        if len(body) > MAX_BODY:
            return ScrapeResult("http_error", None, f"{where}: answer over {MAX_BODY:,} bytes",
                                clock())
        return ScrapeResult("ok", body.decode("utf-8", errors="replace"), "", clock())

    return fetch
