"""`kvtui exporter` scraped on 127.0.0.1 with prometheus_client's parser, and `kvtui check
--format prometheus` (the textfile collector's file, written atomically)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.fleet.fleetlogs import text

ROOT = Path(__file__).resolve().parents[2]


def samples(body: str) -> dict[str, list]:
    out: dict[str, list] = {}
    for fam in text_string_to_metric_families(body):
        for s in fam.samples:
            out.setdefault(s.name, []).append(s)
    return out


def _kvtui(*argv: str, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "kvtui", *argv], capture_output=True,
                          env=env, cwd=ROOT, **kw)


def test_check_format_prometheus_to_stdout(tmp_path):
    log = tmp_path / "gpu-c.log"
    log.write_text(text("replica-c-fp8-unscaled.log"))
    res = _kvtui("check", str(log), "--format", "prometheus")
    assert res.returncode == 1, res.stderr  # the FP8-unscaled alert is critical
    got = samples(res.stdout.decode())
    (dtype,) = got["kvtui_kv_cache_dtype_info"]
    assert dtype.labels == {"server": str(log), "configured": "fp8_e4m3",
                            "effective": "fp8_e4m3"}
    assert [s.labels["state"] for s in got["kvtui_kv_scales"]] == ["missing"]
    rules = {(s.labels["rule"], s.labels["severity"]) for s in got["kvtui_alert"]}
    assert ("kv-fp8-unscaled", "critical") in rules
    (pool,) = got["kvtui_pool_tokens"]
    assert pool.value == 2_580_000
    crit = [s for s in got["kvtui_alerts"] if s.labels["severity"] == "critical"]
    assert crit[0].value >= 1


def test_check_format_prometheus_output_is_atomic(tmp_path):
    log = tmp_path / "a.log"
    log.write_text(text("replica-a-bf16.log"))
    out = tmp_path / "textfile" / "kvtui.prom"
    out.parent.mkdir()
    out.write_text("old\n")
    res = _kvtui("check", str(log), "--format", "prometheus", "--output", str(out))
    assert res.returncode == 0, res.stderr
    assert res.stdout == b""
    body = out.read_text()
    assert 'kvtui_kv_cache_dtype_info{configured="auto",effective="bf16"' in body
    # a 16-bit cache has no scales to load: a word an alert rule can match, not a sentence
    assert 'kvtui_kv_scales{server="' + str(log) + '",state="n/a"} 1.0' in body
    assert [p.name for p in out.parent.iterdir()] == ["kvtui.prom"]  # no temporary left
    assert oct(out.stat().st_mode & 0o777) == "0o644"
    # a directory that does not exist: an error, nothing written
    res = _kvtui("check", str(log), "--format", "prometheus", "--output",
                 str(tmp_path / "nope" / "x.prom"))
    assert res.returncode == 2 and b"nope" in res.stderr


@pytest.fixture
def exporter(tmp_path):
    log = tmp_path / "server.log"
    head = text("replica-c-fp8-unscaled.log").splitlines(keepends=True)
    log.write_text("".join(head[:60]))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "kvtui", "exporter", str(log), "--port", "0",
                             "--server", "gpu-c"], stderr=subprocess.PIPE, text=True,
                            env=env, cwd=ROOT)
    try:
        line = proc.stderr.readline() if proc.stderr else ""
        assert "serving http://127.0.0.1:" in line, line
        url = line.strip().rsplit(" ", 1)[-1]
        yield {"url": url, "log": log, "rest": head[60:], "proc": proc}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def scrape(url: str) -> dict[str, list]:
    with urllib.request.urlopen(url, timeout=30) as r:
        return samples(r.read().decode())


def until(fetch, ok, tries: int = 300):
    """Scrape until `ok` holds (the follower reads on its own clock): the last scrape."""
    got = fetch()
    for _ in range(tries):
        if ok(got):
            return got
        time.sleep(0.1)
        got = fetch()
    return got


def test_exporter_serves_the_verdicts_and_follows_the_log(exporter):
    url = exporter["url"]
    got = until(lambda: scrape(url), lambda g: "kvtui_kv_cache_dtype_info" in g
                and g["kvtui_kv_cache_dtype_info"][0].labels["effective"])
    (dtype,) = got["kvtui_kv_cache_dtype_info"]
    assert dtype.labels["server"] == "gpu-c" and dtype.labels["effective"] == "fp8_e4m3"
    assert [s.labels["state"] for s in got["kvtui_kv_scales"]] == ["missing"]
    assert any(s.labels["rule"] == "kv-fp8-unscaled" for s in got["kvtui_alert"])
    assert got["kvtui_last_line_age_seconds"][0].value >= 0
    assert "kvtui_concurrency_at_context_len" in got
    # the batch lines arrive: the usage series appears with the last line's figure
    with open(exporter["log"], "a") as f:
        f.writelines(exporter["rest"])
    last = [ln for ln in exporter["rest"] if "token usage:" in ln][-1]
    want = float(last.split("token usage: ")[1].split(",")[0])
    got = until(lambda: scrape(url), lambda g: g.get("kvtui_token_usage", [None])[0] is not None
                and g["kvtui_token_usage"][0].value == want)
    assert got["kvtui_token_usage"][0].value == want
    assert got["kvtui_queued_requests"][0].value >= 0


def _exposition_value(body: str, name: str) -> float:
    (value,) = [s.value for fam in text_string_to_metric_families(body) for s in fam.samples
                if s.name == name]
    return value


def test_exporter_reads_the_servers_own_metrics_beside_the_log(tmp_path):
    """Issue 38 point 4: the exporter follows the log *and* the server's /metrics where
    enabled: the load gauges come from the scrape (a real HTTP server on 127.0.0.1 serving a
    recorded SGLang sequence), and the scrape's state is exported."""
    from tests.metrics.conftest import DATA, MetricsServer

    body = (DATA / "sglang-seq-1.prom").read_text()
    server = MetricsServer({"/m": [(200, body)]})
    server.thread.start()
    log = tmp_path / "server.log"
    log.write_text(text("replica-c-fp8-unscaled.log"))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "kvtui", "exporter", str(log), "--port", "0",
                             "--server", "gpu-c", "--metrics",
                             f"http://127.0.0.1:{server.port}/m", "--metrics-interval", "1"],
                            stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        line = proc.stderr.readline() if proc.stderr else ""
        assert "serving http://127.0.0.1:" in line, line
        url = line.strip().rsplit(" ", 1)[-1]
        got = until(lambda: scrape(url), lambda g: any(
            s.labels["state"] == "ok" for s in g.get("kvtui_metrics_scrape", ())))
        assert [s.labels["state"] for s in got["kvtui_metrics_scrape"]] == ["ok"]
        assert got["kvtui_running_requests"][0].value == _exposition_value(
            body, "sglang:num_running_reqs")
        assert got["kvtui_queued_requests"][0].value == _exposition_value(
            body, "sglang:num_queue_reqs")
        assert server.hits.get("/m", 0) >= 1
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        server.httpd.shutdown()
        server.httpd.server_close()


def test_exporter_says_when_the_server_serves_no_metrics(tmp_path):
    """No --metrics: the exporter asks the engine where the logged arguments put /metrics;
    an SGLang dump with enable_metrics=False is `not_enabled`, with no connection tried."""
    log = tmp_path / "server.log"
    src = text("replica-c-fp8-unscaled.log")
    assert "enable_metrics=False" in src or "'enable_metrics': False" in src
    log.write_text(src)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "kvtui", "exporter", str(log), "--port", "0",
                             "--metrics-interval", "1"], stderr=subprocess.PIPE, text=True,
                            env=env, cwd=ROOT)
    try:
        line = proc.stderr.readline() if proc.stderr else ""
        url = line.strip().rsplit(" ", 1)[-1]
        got = until(lambda: scrape(url), lambda g: any(
            s.labels["state"] == "not_enabled" for s in g.get("kvtui_metrics_scrape", ())))
        assert [s.labels["state"] for s in got["kvtui_metrics_scrape"]] == ["not_enabled"]
        assert got["kvtui_running_requests"][0].value >= 0  # the log's, as before
    finally:
        proc.terminate()
        proc.wait(timeout=30)
