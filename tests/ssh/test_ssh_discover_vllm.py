"""vLLM servers over SSH: discovery finds their processes, containers, pods and logs, and the
read-ahead of `--check` starts at the first line of vLLM's last server start (issue 13, point 5).

Against the real sshd of conftest.py; the processes are stand-ins whose command lines (and
process titles) are vLLM's own forms, the containers and pods come from the stand-in Docker and
Kubernetes servers of tests/sources/_standins.py through the real `docker` and `kubectl` CLIs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from kvtui.commands import ssh as ssh_cmd
from kvtui.sources.ssh.discover import discover, model_path_from_argv, parse_discovery
from tests.sources import _standins as si

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
SLEEP = "import time; time.sleep(120)"


def _args(ssh_env, port: int, *argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    ssh_cmd.configure(p)
    return p.parse_args(["-F", str(ssh_env["config"]), "-p", str(port), *argv])


def test_model_path_from_vllm_command_lines():
    assert model_path_from_argv(["/usr/bin/python3", "/usr/local/bin/vllm", "serve",
                                 "Qwen/Qwen3-8B", "--tensor-parallel-size", "2"]) \
        == "Qwen/Qwen3-8B"
    assert model_path_from_argv(["python3", "-m", "vllm.entrypoints.openai.api_server",
                                 "--model", "/models/llama"]) == "/models/llama"
    assert model_path_from_argv(["python3", "-m", "vllm.entrypoints.cli.main", "serve",
                                 "org/m"]) == "org/m"
    assert model_path_from_argv(["vllm", "serve", "--port", "8000"]) is None


@pytest.fixture
def vllm_processes(tmp_path):
    """`vllm serve` (a script called vllm), `python -m vllm.entrypoints.openai.api_server` with
    an EngineCore child titled as vLLM titles it, and a lone titled worker: each with its
    output in a file of its own."""
    logs = tmp_path / "logs"
    logs.mkdir()
    bindir = tmp_path / "venv" / "bin"
    bindir.mkdir(parents=True)
    vllm = bindir / "vllm"
    vllm.write_text(f"#!{sys.executable}\n{SLEEP}\n")
    vllm.chmod(0o755)
    procs: list[subprocess.Popen] = []
    paths = {}

    def spawn(name: str, argv: list[str]) -> int:
        paths[name] = logs / f"{name}.log"
        with open(paths[name], "ab") as f:
            procs.append(subprocess.Popen(argv, stdout=f, stderr=f))
        return procs[-1].pid

    # the child is started by the server itself: its parent is a server already found
    child_pid = tmp_path / "child.pid"
    child = ("import subprocess, time; p = subprocess.Popen(['bash', '-c', "
             "'exec -a VLLM::EngineCore sleep 120']); "
             f"open({str(child_pid)!r}, 'w').write(str(p.pid)); time.sleep(120)")
    pids = {
        "serve": spawn("serve", [str(vllm), "serve", "Qwen/Qwen3-8B", "--port", "0"]),
        "api": spawn("api", [sys.executable, "-c", child, "-m",
                             "vllm.entrypoints.openai.api_server", "--model", "/models/m1"]),
        "titled": spawn("titled", ["bash", "-c", "exec -a VLLM::Worker_TP0 sleep 120"]),
    }
    try:
        yield pids, paths, child_pid
    finally:
        for p in procs:
            p.kill()
            p.wait(5)
        if child_pid.exists():  # the EngineCore stand-in the api server started
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(child_pid.read_text()), signal.SIGKILL)


def test_discovery_finds_vllm_processes_and_logs(make_connector, vllm_processes, tmp_path):
    import time

    pids, paths, child_pid = vllm_processes
    old = tmp_path / "old-runs"
    old.mkdir()
    shutil.copy(SAMPLES / "vllm-llama31-8b-tp2-fp8-unscaled.log", old / "vllm-run.log")
    deadline = time.monotonic() + 20
    while not child_pid.exists() and time.monotonic() < deadline:
        time.sleep(0.05)  # the api server's child has started and taken its title
    assert child_pid.exists()
    conn = make_connector("gpu").connect()
    try:
        found = discover(conn, roots=(str(old),), timeout=30)
    finally:
        conn.close()
    by_pid = {c.pid: c for c in found.candidates if c.pid in pids.values()}
    serve, api, titled = (by_pid.get(pids[k]) for k in ("serve", "api", "titled"))
    assert serve is not None and api is not None and titled is not None, found
    assert serve.kind == "file" and serve.target == str(paths["serve"])
    assert serve.label.startswith("vLLM server pid") and serve.model_path == "Qwen/Qwen3-8B"
    assert api.target == str(paths["api"]) and api.model_path == "/models/m1"
    assert api.python and "python" in api.python  # its interpreter, asked for the release
    assert titled.target == str(paths["titled"]) and titled.label.startswith("vLLM server")
    # the EngineCore child of the api server is not listed again
    assert not [c for c in found.candidates if c.pid == int(child_pid.read_text())]
    files = [c.target for c in found.candidates if c.kind == "file" and c.pid is None]
    assert str(old / "vllm-run.log") in files


def test_parse_discovery_labels_the_engine():
    us = "\037"
    text = "\n".join([
        us.join(["proc", "30", "1", "socket:[9]", "socket:[9]", "/usr/bin/python3",
                 "vllm.service", "/usr/bin/python3", "/usr/local/bin/vllm", "serve", "a/b"]),
        us.join(["proc", "31", "30", "socket:[9]", "socket:[9]", "", "vllm.service",
                 "VLLM::EngineCore"]),
        us.join(["docker", "f00", "rocm/vllm:latest", "vllm-rocm",
                 '"python3 -m vllm.entrypoints.openai.api_server --model org/x"']),
        us.join(["kubectl", "ml", "vllm-0", "proxy=envoy:1 server=vllm/vllm-openai:v0.11.0 "]),
    ])
    found = parse_discovery(text)
    (unit,) = [c for c in found.candidates if c.kind == "journal"]
    assert (unit.target, unit.pid, unit.model_path) == ("vllm.service", 30, "a/b")
    assert unit.label == "vLLM server pid 30 in systemd unit vllm.service"
    (box,) = [c for c in found.candidates if c.kind == "docker"]
    assert (box.target, box.model_path) == ("vllm-rocm", "org/x")
    (pod,) = [c for c in found.candidates if c.kind == "kubectl"]
    assert pod.source_flag() == ["--kubectl", "vllm-0", "-n", "ml", "-c", "server"]


def test_vllm_containers_and_pods_are_found_and_followed(make_sshd, make_connector, ssh_env,
                                                         tmp_path, capsys):
    if shutil.which("docker") is None or shutil.which("kubectl") is None:
        pytest.skip("needs the docker and kubectl clients")
    lines = (SAMPLES / "vllm-llama31-8b-tp2-fp8-unscaled.log").read_text().splitlines()
    for d in ("d", "k"):
        (tmp_path / d).mkdir()
    dockerd = si.serve_docker(tmp_path / "d")
    kube = si.serve_kube(tmp_path / "k")
    try:
        dockerd.store.add("vllm-a", image="vllm/vllm-openai:v0.11.0",
                          command="python3 -m vllm.entrypoints.openai.api_server "
                                  "--model meta-llama/Llama-3.1-8B-Instruct")
        dockerd.store.add("rocm-b", image="rocm/vllm:latest", command="vllm serve org/x")
        dockerd.store.add("redis", image="redis:7", command="redis-server")
        kube.store.add("vllm-0", image="vllm/vllm-openai:v0.11.0")
        kube.store.add("cache", image="redis:7")
        kube.store.cluster_wide_forbidden = True  # only the current namespace may be listed
        for i, text in enumerate(lines):
            dockerd.store.write("vllm-a", si.BASE_NS + i * 1000, text)
            kube.store.write("vllm-0", si.BASE_NS + i * 1000, text)
        env = {k: dockerd.env[k] for k in ("DOCKER_HOST", "DOCKER_CONFIG")}
        env.update({k: kube.env[k] for k in ("KUBECONFIG", "HOME")})
        server = make_sshd("vllm", env={**env, "KUBECACHEDIR": str(tmp_path / "kube-cache")})
        conn = make_connector("gpu", port=server.port).connect()
        try:
            found = discover(conn, roots=(), timeout=30)
        finally:
            conn.close()
        boxes = {c.target: c for c in found.candidates if c.kind == "docker"}
        assert set(boxes) == {"vllm-a", "rocm-b"}
        assert boxes["vllm-a"].model_path == "meta-llama/Llama-3.1-8B-Instruct"
        pods = [c for c in found.candidates if c.kind == "kubectl"]
        assert [(p.target, p.namespace) for p in pods] == [("vllm-0", "default")]
        for cand in (boxes["vllm-a"], pods[0]):
            rc = ssh_cmd.run(_args(ssh_env, server.port, "gpu", *cand.source_flag(), "--check",
                                   "--json", "--fail-on", "never", "--no-checkpoint"))
            report = json.loads(capsys.readouterr().out)
            assert rc == 0
            assert report["engine"] == "vllm"
            assert report["sources"][0]["lines"] == len(lines)
            # the sample's verdict (what `kvtui check` says of the file)
            assert [a["rule"] for a in report["alerts"]] == [
                "kv-fp8-unscaled", "pool-saturated", "kv-retraction"]
    finally:
        dockerd.close()
        kube.close()


def _two_vllm_starts(path: Path) -> tuple[list[str], int]:
    """A BF16 vLLM server, 5 MB of its runtime, then a restart of a hybrid model whose start
    prints three marker lines (the API server's release, its args, the engine's config)."""
    first = (SAMPLES / "vllm-llama31-70b-tp8-bf16.log").read_text().splitlines()
    second = (SAMPLES / "vllm-qwen3-next-80b-tp4-hybrid.log").read_text().splitlines()
    stats = next(x for x in first if "Avg prompt throughput" in x)
    n = (5 << 20) // len(stats) + 1
    lines = first + [stats] * n + second + [stats] * 200
    path.write_text("".join(x + "\n" for x in lines))
    return lines, len(first) + n + 1


def test_the_read_ahead_starts_at_vllms_first_start_line(make_connector, tmp_path):
    from kvtui.commands.ssh import startup_markers
    from kvtui.sources.ssh.blocks import LineBlock
    from kvtui.sources.ssh.follow import RemoteFollower, Target

    log = tmp_path / "vllm restarted.log"
    lines, restart = _two_vllm_starts(log)
    markers = [i for i, x in enumerate(lines, 1) if i >= restart and
               any(m in x for m in startup_markers())]
    assert markers[0] == restart and len(markers) >= 3  # the test's premise
    got: list = []
    src = RemoteFollower(make_connector("gpu"), Target("file", str(log)), stop_at_end=True,
                         keepalive=1.0, prelude_markers=startup_markers())
    src.run_blocks(lambda batch: got.extend(b for b in batch if isinstance(b, LineBlock)),
                   threading.Event())
    (pre,) = [b for b in got if b.prelude]
    assert pre.first_line_no == restart  # not the last marker line of that start
    assert pre.texts == lines[restart - 1:restart - 1 + len(pre.texts)]
    assert [t for b in got if not b.prelude for t in b.texts] == lines
