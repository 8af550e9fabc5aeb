"""A real HTTP server on 127.0.0.1 serving Prometheus exposition bodies: the real captures in
../shared/reference/metrics-samples/ (read in place, never copied into the repo) and the small
recorded sequences in tests/metrics/data/ made from their metric names."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"


def metrics_samples_dir() -> Path:
    return Path(os.environ.get("KVTUI_METRICS_SAMPLES",
                               ROOT.parent / "shared" / "reference" / "metrics-samples"))


def sample(name: str) -> str:
    path = metrics_samples_dir() / name
    if not path.exists():
        pytest.skip(f"metrics sample {path} not available")
    return path.read_text(encoding="utf-8")


# (status, body): each path answers its list in order, then repeats the last answer
Routes = dict[str, list[tuple[int, str]]]


class MetricsServer:
    def __init__(self, routes: Routes) -> None:
        self.routes = routes
        self.hits: dict[str, int] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                answers = server.routes.get(self.path)
                if not answers:
                    self.send_error(404)
                    return
                n = server.hits.get(self.path, 0)
                server.hits[self.path] = n + 1
                status, body = answers[min(n, len(answers) - 1)]
                data = body.encode()
                self.send_response(status)
                kind = "application/json" if body.startswith("{") else "text/plain"
                self.send_header("Content-Type", f"{kind}; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, path: str = "/metrics") -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@pytest.fixture
def serve() -> Iterator:
    servers: list[MetricsServer] = []

    def start(routes: Routes) -> MetricsServer:
        s = MetricsServer(routes)
        s.thread.start()
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.httpd.shutdown()
        s.httpd.server_close()


@pytest.fixture
def refusing_url() -> Iterator[str]:
    """A loopback port bound but not listening: a connect is refused, deterministically (no
    other process can take the port while we hold it)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/metrics"
    sock.close()
