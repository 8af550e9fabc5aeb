"""`kvtui fleet FILE.toml --check` and `kvtui ssh H1 H2 ... --check` against three real sshd
instances on 127.0.0.1 (tests/ssh/conftest.py): one replica FP8 without scales and two BF16,
a prefill/decode pair with different KV dtypes, an unreachable host, discovery."""

from __future__ import annotations

import argparse
import getpass
import json
from pathlib import Path

import pytest

from kvtui.commands import fleet as fleet_cmd
from tests.fleet.fleetlogs import text
from tests.metrics.conftest import MetricsServer


@pytest.fixture
def hosts(ssh_env, make_sshd, tmp_path):
    """Three sshd instances, aliases gpu-a/-b/-c (one each) and gpu-p/gpu-d (the PD pair, on
    the first two: two aliases of one address are two servers), gpu-down (nothing listens),
    and the logs they serve."""
    user = getpass.getuser()
    servers = {n: make_sshd(n) for n in ("a", "b", "c")}
    key = ssh_env["key"]
    cfg = ssh_env["config"]
    body = cfg.read_text()
    extra = ""
    for alias, name in (("gpu-a", "a"), ("gpu-b", "b"), ("gpu-c", "c"), ("gpu-p", "a"),
                        ("gpu-d", "b"), ("router-1", "c")):
        extra += (f"Host {alias}\n  HostName 127.0.0.1\n  Port {servers[name].port}\n"
                  f"  User {user}\n  IdentityFile {key}\n  IdentitiesOnly yes\n"
                  "  ConnectTimeout 5\n")
    extra += (f"Host gpu-down\n  HostName 127.0.0.1\n  Port 1\n  User {user}\n"
              f"  IdentityFile {key}\n  IdentitiesOnly yes\n  ConnectTimeout 2\n")
    cfg.write_text(extra + body)
    logs = tmp_path / "logs"
    logs.mkdir()
    paths = {}
    for name in ("replica-a-bf16.log", "replica-b-bf16.log", "replica-c-fp8-unscaled.log",
                 "pd-prefill-fp8.log", "pd-decode-bf16.log", "pd-router.log"):
        paths[name] = logs / name
        paths[name].write_text(text(name))
    return {"config": cfg, "logs": paths}


def _toml(tmp_path: Path, rows: list[dict]) -> Path:
    out = []
    for row in rows:
        out.append("[[server]]")
        out.extend(f"{k} = {json.dumps(v)}" for k, v in row.items())
    path = tmp_path / "fleet.toml"
    path.write_text("\n".join(out) + "\n")
    return path


def _run(argv: list[str]) -> int:
    p = argparse.ArgumentParser()
    fleet_cmd.configure(p)
    return fleet_cmd.run(p.parse_args(argv))


def _replicas(hosts) -> list[dict]:
    logs = hosts["logs"]
    return [{"host": "gpu-a", "log": str(logs["replica-a-bf16.log"]), "role": "replica"},
            {"host": "gpu-b", "log": str(logs["replica-b-bf16.log"]), "role": "replica"},
            {"host": "gpu-c", "log": str(logs["replica-c-fp8-unscaled.log"]),
             "role": "replica"}]


def test_three_replicas_one_fp8_unscaled(hosts, tmp_path, capsys):
    toml = _toml(tmp_path, _replicas(hosts))
    code = _run([str(toml), "--check", "--json", "-F", str(hosts["config"])])
    doc = json.loads(capsys.readouterr().out)
    assert [s["server"] for s in doc["servers"]] == ["gpu-a", "gpu-b", "gpu-c"]
    assert all(s["connection"] == "ok" and s["error"] is None for s in doc["servers"])
    by = {s["server"]: s for s in doc["servers"]}
    assert by["gpu-c"]["report"]["kv_cache"]["effective_dtype"] == "fp8_e4m3"
    assert by["gpu-a"]["report"]["kv_cache"]["effective_dtype"] == "bf16"
    assert by["gpu-a"]["source"].startswith("file ")
    # gpu-c's own alert (FP8 without scales) and the fleet's
    assert any(a["rule"] == "kv-fp8-unscaled" for a in by["gpu-c"]["report"]["alerts"])
    rules = {a["rule"] for a in doc["alerts"]}
    assert {"fleet-kv-dtype-mismatch", "fleet-fp8-scales-split", "fleet-usage-skew"} <= rules
    assert code == doc["exit_code"] == 1


def test_pd_pair_with_different_kv_dtypes_is_a_critical_alert(hosts, tmp_path, capsys):
    logs = hosts["logs"]
    toml = _toml(tmp_path, [
        {"host": "gpu-p", "log": str(logs["pd-prefill-fp8.log"]), "role": "prefill"},
        {"host": "gpu-d", "log": str(logs["pd-decode-bf16.log"]), "role": "decode"}])
    code = _run([str(toml), "--check", "-F", str(hosts["config"])])
    out = capsys.readouterr().out
    assert "CRITICAL fleet-kv-dtype-mismatch" in out
    assert "gpu-p (prefill): fp8_e4m3" in out and "gpu-d (decode): bf16" in out
    assert "fleet-kv-transfer-failing" in out
    assert out.rstrip().endswith("exit 1 (--fail-on critical)")
    assert code == 1


def test_a_router_entry_names_the_failing_pair(hosts, tmp_path, capsys):
    """role = "router": its log is read for the requests it saw fail, never as an engine's
    (no "unrecognised" exit 3), and the transfer alert names the pair with both sides'
    evidence (the router's line, the decode's own failure line)."""
    logs = hosts["logs"]
    toml = _toml(tmp_path, [
        {"host": "gpu-p", "log": str(logs["pd-prefill-fp8.log"]), "role": "prefill"},
        {"host": "gpu-d", "log": str(logs["pd-decode-bf16.log"]), "role": "decode"},
        {"host": "router-1", "log": str(logs["pd-router.log"]), "role": "router"}])
    code = _run([str(toml), "--check", "--json", "--fail-on", "never",
                 "-F", str(hosts["config"])])
    doc = json.loads(capsys.readouterr().out)
    assert code == doc["exit_code"] == 0  # never 3: a router is no unrecognised log
    router = doc["servers"][2]
    assert router["role"] == "router" and router["error"] is None
    assert router["report"] is None and router["router"]["failures"] == 2
    (a,) = [x for x in doc["alerts"] if x["rule"] == "fleet-kv-transfer-failing"]
    assert a["extra"]["pair"] == {"prefill": "gpu-p", "decode": "gpu-d"}
    by = {s["server"]: s for s in a["extra"]["servers"]}
    assert "Decode server returned error status" in by["router-1"]["evidence"]["text"]
    assert "Decode transfer failed" in by["gpu-d"]["evidence"]["text"]
    assert a["extra"]["failing_sides"] == ["decode"]
    code = _run([str(toml), "--check", "-F", str(hosts["config"])])
    out = capsys.readouterr().out
    assert "gpu-p -> gpu-d (router: 2 failed request line(s))" in out
    assert code == 1


def test_an_unreachable_host_is_an_error_not_a_pass(hosts, tmp_path, capsys):
    rows = [_replicas(hosts)[0], {"host": "gpu-down", "log": "/var/log/x.log"}]
    code = _run([str(_toml(tmp_path, rows)), "--check", "--json", "--fail-on", "never",
                 "-F", str(hosts["config"])])
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    down = doc["servers"][1]
    assert down["server"] == "gpu-down" and down["connection"] == "unreachable"
    assert down["report"] is None and "unreachable" in down["error"]
    assert code == doc["exit_code"] == 2
    assert "gpu-down" in captured.err


def test_discovery_when_no_log_is_named(hosts, tmp_path, capsys, monkeypatch):
    d = tmp_path / "found"
    d.mkdir()
    (d / "sglang.log").write_text(text("replica-a-bf16.log"))
    monkeypatch.setattr("kvtui.sources.ssh.discover.DEFAULT_ROOTS", (str(d),))
    rows = [{"host": "gpu-a"}, {"host": "gpu-b"}]  # two hosts, searched in parallel
    code = _run([str(_toml(tmp_path, rows)), "--check", "--json", "--parallel", "2",
                 "-F", str(hosts["config"])])
    doc = json.loads(capsys.readouterr().out)
    for s in doc["servers"]:
        assert s["error"] is None, s["error"]
        assert s["source"] == f"file {d / 'sglang.log'}"
        assert s["report"]["engine"] == "sglang"
    assert code == 0


def test_discovery_that_cannot_choose_is_an_error(hosts, tmp_path, capsys, monkeypatch):
    d = tmp_path / "two"
    d.mkdir()
    for n in ("x.log", "y.log"):
        (d / n).write_text(text("replica-a-bf16.log"))
    monkeypatch.setattr("kvtui.sources.ssh.discover.DEFAULT_ROOTS", (str(d),))
    code = _run([str(_toml(tmp_path, [{"host": "gpu-a"}])), "--check", "--json",
                 "-F", str(hosts["config"])])
    doc = json.loads(capsys.readouterr().out)
    assert "2 candidates" in doc["servers"][0]["error"] and "name log=" in \
        doc["servers"][0]["error"]
    assert code == 2


def test_ssh_with_several_hosts_is_the_fleet(hosts, capsys):
    from kvtui.commands import ssh as ssh_cmd

    p = argparse.ArgumentParser()
    ssh_cmd.configure(p)
    args = p.parse_args(["-F", str(hosts["config"]), "gpu-a", "gpu-down", "--check",
                         "--json"])
    code = ssh_cmd.run(args)
    doc = json.loads(capsys.readouterr().out)
    assert [s["server"] for s in doc["servers"]] == ["gpu-a", "gpu-down"]
    assert code == 2


@pytest.fixture
def metrics_http():
    """A /metrics server on 127.0.0.1 (tests/metrics' own), shut at the test's end."""
    made: list[MetricsServer] = []

    def start(routes):
        s = MetricsServer(routes)
        s.thread.start()
        made.append(s)
        return s

    yield start
    for s in made:
        s.httpd.shutdown()
        s.httpd.server_close()


def test_metrics_port_is_scraped_over_the_fleets_ssh_connection(hosts, tmp_path, capsys,
                                                                  metrics_http):
    """A server's `metrics_port`: one scrape of its /metrics through a direct-tcpip channel of
    the fleet's own SSH connection, fed to its session: the report carries the facts, and the
    row's load (usage, running/queued) is the scrape's, not the log's last batch line."""
    from kvtui.core.fleet.load import current_load
    from kvtui.core.report_types import Report
    from tests.metrics.conftest import sample
    from tests.metrics.recorded import SGLANG, setting

    body = setting(sample(SGLANG), {"sglang:num_running_reqs": 7.0,
                                    "sglang:num_queue_reqs": 3.0})
    server = metrics_http({"/metrics": [(200, body)]})
    rows = _replicas(hosts)[:2]
    rows[0]["metrics_port"] = server.port
    code = _run([str(_toml(tmp_path, rows)), "--check", "--json", "-F", str(hosts["config"])])
    doc = json.loads(capsys.readouterr().out)
    by = {s["server"]: s for s in doc["servers"]}
    m = by["gpu-a"]["report"]["metrics"]
    assert m["state"] == "ok" and m["scrapes"] == 1 and server.hits["/metrics"] == 1
    assert m["facts"]["requests"] == {"running": 7, "queued": 3}
    assert "metrics" not in by["gpu-b"]["report"]  # no port given: nothing scraped
    # the load the row and the exporter show comes from the scrape
    a = _run_report(tmp_path, hosts, rows, capsys)
    load = current_load(a)
    assert (load.source, load.running, load.queued) == ("metrics", 7, 3)
    assert isinstance(a, Report) and code == doc["exit_code"]


def _run_report(tmp_path, hosts, rows, capsys):
    from kvtui.core.fleet.config import parse
    from kvtui.sources.fleet import ReadOptions, read_entry

    entries = parse(_toml(tmp_path, rows).read_text())
    out = read_entry(entries[0], ReadOptions(config=str(hosts["config"])))
    assert out.server is not None, out.error
    return out.server.report


def test_fleet_check_reads_each_servers_checkpoint_as_ssh_check_does(hosts, tmp_path, capsys):
    """A replica logs "no scaling factors" (FP8 KV); the checkpoint its log names, on its host,
    carries calibrated k/v scales: `fleet --check` reads it over the entry's connection, as
    `kvtui ssh --check` does, and the alert follows the values (a warning, not critical);
    `--no-checkpoint` leaves the log's word alone."""
    from tests.checkpoint_builder import config, llama_tensors, write_checkpoint

    fp8 = {"quant_method": "fp8", "kv_cache_scheme": {"num_bits": 8, "type": "float"}}
    model = write_checkpoint(tmp_path / "served", llama_tensors(
        6, k=[0.02 * (i + 1) for i in range(6)], v=[0.03 * (i + 1) for i in range(6)]),
        config(6, fp8))
    log = tmp_path / "gpu-c.log"
    log.write_text(text("replica-c-fp8-unscaled.log").replace(
        "meta-llama/Llama-3.1-70B-Instruct", str(model)))
    toml = _toml(tmp_path, [{"host": "gpu-c", "log": str(log), "role": "replica"}])

    def fp8_alert(*extra: str) -> dict:
        _run([str(toml), "--check", "--json", "-F", str(hosts["config"]), *extra])
        (srv,) = json.loads(capsys.readouterr().out)["servers"]
        return next(a for a in srv["report"]["alerts"] if a["rule"] == "kv-fp8-unscaled"), \
            srv["report"].get("checkpoint")

    alert, checkpoint = fp8_alert()
    assert checkpoint is not None and checkpoint["source"] == f"gpu-c:{model}"
    assert checkpoint["kv_scale_verdict"] == "calibrated"
    assert alert["severity"] == "warning" and "KV scales calibrated" in alert["detail"]
    alone, checkpoint = fp8_alert("--no-checkpoint")
    assert checkpoint is None and alone["severity"] == "critical"
