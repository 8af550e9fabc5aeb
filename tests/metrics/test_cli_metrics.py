"""`kvtui metrics URL` against a real HTTP server on 127.0.0.1: JSON goldens of the real
captures (--once), two scrapes for rates, and the gate (refused, not enabled, stale)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.metrics.conftest import DATA, ROOT, sample

GOLDEN = ROOT / "tests" / "golden" / "metrics"
UPDATE = os.environ.get("KVTUI_UPDATE_GOLDEN") == "1"


def kvtui(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "kvtui", "metrics", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, env=env)


def golden(name: str, actual: str, port: int) -> None:
    actual = actual.replace(f"127.0.0.1:{port}", "127.0.0.1:PORT")
    path = GOLDEN / name
    if UPDATE:
        path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"missing golden {name}; run with KVTUI_UPDATE_GOLDEN=1"
    assert actual == path.read_text(encoding="utf-8"), f"{name} changed"


@pytest.mark.parametrize(("capture", "stem", "version_route"), [
    ("sglang-mratsim-sgtop-live-excerpt.txt", "sglang-live", "/server_info"),
    ("vllm-0.24.0-yongzane00-vllmtop-fixture.txt", "vllm-0.24.0", "/version"),
])
def test_once_golden(serve, capture, stem, version_route):
    version = "0.5.23" if "sglang" in stem else "0.24.0"
    server = serve({"/prom/metrics": [(200, sample(capture))],
                    version_route: [(200, json.dumps({"version": version}))]})
    out = kvtui(server.url("/prom/metrics"), "--once", "--json", "--fail-on", "never")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["version"] == version
    assert set(report) >= {"engine", "version", "kv_cache_dtype", "pools", "requests",
                           "latency"}
    golden(f"{stem}.json", out.stdout, server.port)
    text = kvtui(server.url("/prom/metrics"), "--once", "--fail-on", "never")
    golden(f"{stem}.txt", text.stdout, server.port)


def test_two_scrapes_give_rates_and_window_percentiles(serve):
    server = serve({"/metrics": [(200, (DATA / "sglang-seq-1.prom").read_text()),
                                 (200, (DATA / "sglang-seq-2.prom").read_text())]})
    out = kvtui(server.url(), "--json", "--interval", "1", "--fail-on", "never")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    seconds = r["latency"]["window_s"]
    assert seconds > 0
    assert r["latency"]["ttft"]["p50"] == pytest.approx(0.3)
    assert r["latency"]["ttft"]["count"] == 40
    # the rate is the counter's delta (3) over the measured window
    assert r["counters"]["retracted"]["per_s"] * seconds == pytest.approx(3, rel=1e-3)
    assert r["version"] is None  # no /server_info here: unknown, not guessed
    assert {a["kind"] for a in r["alerts"]} == {"saturated_queue_growing",
                                                "retracted_in_window"}


def test_fail_on_warning_gates_like_check(serve):
    server = serve({"/metrics": [(200, (DATA / "vllm-seq-1.prom").read_text()),
                                 (200, (DATA / "vllm-seq-2.prom").read_text())]})
    out = kvtui(server.url(), "--interval", "1", "--fail-on", "warning")
    assert out.returncode == 1, out.stderr
    assert "preempted" in out.stdout
    again = serve({"/metrics": [(200, (DATA / "vllm-seq-1.prom").read_text())]})
    assert kvtui(again.url(), "--once", "--fail-on", "warning").returncode == 0


def test_refused_is_an_error(refusing_url):
    out = kvtui(refusing_url, "--once")
    assert out.returncode == 2
    assert "refused" in out.stderr


def test_not_enabled_404(serve):
    server = serve({"/other": [(200, "x")]})
    out = kvtui(server.url(), "--once", "--json")
    assert out.returncode == 2
    assert json.loads(out.stdout)["state"] == "not_enabled"
    assert "--enable-metrics" in out.stderr


def test_stale_when_the_second_scrape_fails(serve):
    server = serve({"/metrics": [(200, (DATA / "vllm-seq-1.prom").read_text()),
                                 (503, "busy")]})
    out = kvtui(server.url(), "--interval", "1", "--json")
    assert out.returncode == 2
    r = json.loads(out.stdout)
    assert r["state"] == "stale"
    assert "last good scrape" in r["error"] and "503" in r["error"]


def test_not_exposition_and_unknown_engine(serve):
    server = serve({"/html": [(200, "<html>login</html>")],
                    "/other": [(200, "# TYPE up gauge\nup 1\n")]})
    assert kvtui(server.url("/html"), "--once").returncode == 2
    assert kvtui(server.url("/other"), "--once").returncode == 3


def test_a_url_without_scheme_is_an_error_not_a_traceback():
    out = kvtui("127.0.0.1:30000/metrics", "--once")
    assert out.returncode == 2
    assert "bad_url" in out.stderr and "Traceback" not in out.stderr


def test_model_cell_names_the_dtype(serve):
    text = (DATA / "sglang-seq-1.prom").read_text().replace(
        "} 1.430511474609375", "} 3.0517578125")
    server = serve({"/metrics": [(200, text)]})
    out = kvtui(server.url(), "--once", "--model", "llama-3.1-8b", "--fail-on", "never")
    assert out.returncode == 0, out.stderr
    assert "KV cell        matches fp8_e4m3: meta-llama/Llama-3.1-8B at TP 2" in out.stdout
    bad = kvtui(server.url(), "--once", "--model", "no-such-model")
    assert bad.returncode == 2 and "no-such-model" in bad.stderr
