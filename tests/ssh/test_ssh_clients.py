"""`kvtui ssh HOST --docker/--kubectl/--journal`: the real clients, run on the host over sshd.

The host is this machine behind its own sshd, whose sessions get the stand-ins' environment
(DOCKER_HOST, KUBECONFIG, a PATH with the journal's `journalctl`/`systemctl`): the real `docker`
and `kubectl` CLIs talk to the stand-in servers of tests/sources/_standins.py, and the real
journalctl reads journal files written by systemd-journal-remote, exactly as the local tests do.
Each test checks what the user sees: the server's lines without the client's envelope, each
exactly once across the client's death and the link's, and a clear word when the client is
missing or refuses.
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from _sshutil import Collector, pids_matching

from kvtui.commands import ssh as ssh_cmd
from kvtui.sources.ssh.follow import RemoteFollower, Target
from tests.sources import _standins as si

SEC = 10**9
US = 10**6
BASE_US = si.BASE_NS // 1000
SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"

needs_docker = pytest.mark.skipif(shutil.which("docker") is None, reason="no docker client")
needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl client")
needs_journal = pytest.mark.skipif(
    shutil.which("journalctl") is None or not os.path.exists(si.JOURNAL_REMOTE),
    reason="journalctl or systemd-journal-remote missing (python3 dev.py test installs them)")

SGLANG = "[2026-11-24 09:14:2{} TP{}] Decode batch, #running-req: {}, #token: 100, token usage: " \
         "0.01, cuda graph: True, gen throughput (token/s): 10.00, #queue-req: 0, "


def sglang(i: int) -> str:
    return SGLANG.format(i % 10, i % 8, i)


def wait(cond: Callable[[], bool], timeout: float = 30.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return False


def _session_env(served: si.Served, *names: str) -> dict[str, str]:
    return {k: served.env[k] for k in names}


@pytest.fixture
def dockerd(tmp_path: Path):
    served = si.serve_docker(tmp_path)
    yield served
    served.close()


@pytest.fixture
def kube(tmp_path: Path):
    served = si.serve_kube(tmp_path)
    yield served
    served.close()


def _follower(make_connector, server, target: Target, **kw) -> RemoteFollower:
    kw.setdefault("keepalive", 1.0)
    kw.setdefault("backoff", (0.1, 0.5))
    return RemoteFollower(make_connector("gpu", port=server.port), target, **kw)


def _kill_remote(*markers: str) -> int:
    pids = pids_matching(*markers)
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    return len(pids)


def _args(ssh_env, server, *argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    ssh_cmd.configure(p)
    return p.parse_args(["-F", str(ssh_env["config"]), "-p", str(server.port), *argv])


# -- docker ------------------------------------------------------------------------------------

@needs_docker
def test_docker_over_ssh_strips_and_resumes_after_the_client_and_the_link_die(
        make_sshd, make_connector, dockerd):
    store = dockerd.store
    store.add("sgl")
    for i, ns in enumerate((0, 1, 1, 2)):  # two at one instant: a resume skips just those
        store.write("sgl", si.BASE_NS + ns * SEC, sglang(i), stream=1 + i % 2)
    server = make_sshd("docker", env=_session_env(dockerd, "DOCKER_HOST", "DOCKER_CONFIG"))
    src = _follower(make_connector, server, Target("docker", "sgl"))
    c = Collector(src)
    c.thread.start()
    try:
        assert wait(lambda: len(c.texts()) == 4)
        assert c.texts() == [sglang(i) for i in range(4)]  # envelope gone, both streams
        # the client dies on the host: started again with --since, nothing twice
        assert _kill_remote("docker", "logs", "--follow", "sgl") >= 1
        assert wait(lambda: any("since=" in r for r in store.requests))
        store.write("sgl", si.BASE_NS + 2 * SEC, sglang(4))  # the same instant as the last
        store.write("sgl", si.BASE_NS + 3 * SEC, sglang(5))
        assert wait(lambda: len(c.texts()) >= 6)
        # the link dies (every sshd session killed, the daemon restarted)
        server.kill_all()
        store.write("sgl", si.BASE_NS + 4 * SEC, sglang(6))
        server.start()
        assert wait(lambda: len(c.texts()) >= 7)
        store.write("sgl", si.BASE_NS + 4 * SEC, sglang(7))  # after the resume, same instant
        assert wait(lambda: len(c.texts()) >= 8)
    finally:
        c.stop.set()
        c.thread.join(20)
    assert c.texts() == [sglang(i) for i in range(8)]
    assert [ln.line_no for ln in c.lines()] == list(range(1, 9))
    assert c.notices("reconnecting") and not c.notices("error")
    assert src.name.endswith(":docker:sgl")
    assert wait(lambda: not pids_matching("docker", "logs", "sgl"))  # nothing left behind


@needs_docker
def test_docker_container_restart_over_ssh_is_a_new_start(make_sshd, make_connector,
                                                          dockerd):
    store = dockerd.store
    store.add("sgl")
    store.write("sgl", si.BASE_NS, sglang(0))
    server = make_sshd("docker", env=_session_env(dockerd, "DOCKER_HOST", "DOCKER_CONFIG"))
    c = Collector(_follower(make_connector, server, Target("docker", "sgl")))
    c.thread.start()
    try:
        assert wait(lambda: c.texts() == [sglang(0)])
        store.stop("sgl")  # docker logs -f ends with the container
        assert wait(lambda: bool(c.notices("reconnecting")))
        store.restart("sgl", "c1", si.BASE_NS + 60 * SEC)
        store.write("sgl", si.BASE_NS + 61 * SEC, sglang(1))
        assert wait(lambda: sglang(1) in c.texts())
    finally:
        c.stop.set()
        c.thread.join(20)
    (restarted,) = c.notices("restarted")
    assert "restart 1" in restarted.message and "OOMKilled" in restarted.message
    assert c.texts() == [sglang(0), sglang(1)]


@needs_docker
def test_docker_refusals_over_ssh_are_said_and_final(make_sshd, ssh_env, dockerd, capsys):
    server = make_sshd("docker", env=_session_env(dockerd, "DOCKER_HOST", "DOCKER_CONFIG"))
    rc = ssh_cmd.run(_args(ssh_env, server, "gpu", "--docker", "nope", "--check"))
    assert rc == 2
    assert "docker: no such container: nope" in capsys.readouterr().err
    # no docker on the login user's PATH (/usr/local/bin left out)
    bare = make_sshd("bare", env={"PATH": "/usr/bin:/bin"})
    if shutil.which("docker", path="/usr/bin:/bin"):
        pytest.skip("docker is installed in /usr/bin here")
    rc = ssh_cmd.run(_args(ssh_env, bare, "gpu", "--docker", "sgl", "--check"))
    err = capsys.readouterr().err
    assert rc == 2
    assert "`docker` is not installed on" in err and "not found on the login user's PATH" in err


@needs_docker
def test_ssh_check_on_a_container_equals_the_local_check(make_sshd, ssh_env, dockerd, tmp_path,
                                                         capsys):
    """`--check` reads the container's log to its end (no --follow) and folds it like
    `kvtui check` folds the same lines from a file."""
    from kvtui.commands.check import analyse_files

    lines = (SAMPLES / "qwen35-397b-nvfp4-tp8-auto-fp8.log").read_text().splitlines()
    store = dockerd.store
    store.add("sgl")
    for i, text in enumerate(lines):
        store.write("sgl", si.BASE_NS + i * 1000, text)
    server = make_sshd("docker", env=_session_env(dockerd, "DOCKER_HOST", "DOCKER_CONFIG"))
    rc = ssh_cmd.run(_args(ssh_env, server, "gpu", "--docker", "sgl", "--check", "--json",
                           "--no-checkpoint"))
    remote = json.loads(capsys.readouterr().out)
    assert rc == 1  # the critical alert: the gate fails as `kvtui check` would
    assert not any("follow" in r for r in store.requests if "/logs" in r)
    plain = tmp_path / "plain.log"
    plain.write_text("\n".join(lines) + "\n")
    local = analyse_files([str(plain)])[0].report().to_json()
    assert remote["sources"] == [{"name": "gpu:docker:sgl", "lines": len(lines)}]
    # the evidence names its source: the same lines, named as the remote read names them
    local = json.loads(json.dumps(local).replace(json.dumps(str(plain))[1:-1],
                                                 "gpu:docker:sgl"))
    assert remote == local
    assert [a["rule"] for a in remote["alerts"]] == ["kv-auto-fp8"]


@needs_docker
def test_discovered_container_is_followed(make_sshd, make_connector, ssh_env, dockerd, capsys):
    """Discovery's docker candidate, and the command line it prints, start the client."""
    from kvtui.sources.ssh.discover import discover

    store = dockerd.store
    store.add("sgl-main", command="python3 -m sglang.launch_server --model-path m")
    store.add("redis", image="redis:7", command="redis-server")
    store.write("sgl-main", si.BASE_NS, sglang(0))
    server = make_sshd("docker", env=_session_env(dockerd, "DOCKER_HOST", "DOCKER_CONFIG"))
    conn = make_connector("gpu", port=server.port).connect()
    try:
        found = discover(conn, roots=())
    finally:
        conn.close()
    (cand,) = [c for c in found.candidates if c.kind == "docker"]
    assert cand.target == "sgl-main"
    src = _follower(make_connector, server, Target(cand.kind, cand.target), stop_at_end=True)
    c = Collector(src)
    c.thread.start()
    c.thread.join(30)
    assert c.texts() == [sglang(0)]
    rc = ssh_cmd.run(_args(ssh_env, server, "gpu", *cand.source_flag(), "--check", "--json",
                           "--fail-on", "never", "--no-checkpoint"))
    assert rc == 0
    assert json.loads(capsys.readouterr().out)["sources"][0]["name"] == "gpu:docker:sgl-main"


# -- kubectl -----------------------------------------------------------------------------------

def _kube_sshd(make_sshd, kube: si.Served, tmp_path: Path):
    cache = tmp_path / "kube-cache"
    return make_sshd("kube", env={**_session_env(kube, "KUBECONFIG"),
                                  "KUBECACHEDIR": str(cache), "HOME": kube.env["HOME"]})


@needs_kubectl
def test_kubectl_over_ssh_follows_and_resumes_after_the_client_dies(make_sshd, make_connector,
                                                                    kube, tmp_path):
    store = kube.store
    store.add("sglang-0")
    for i in range(5):  # one second: the resumed client gets that whole second again
        store.write("sglang-0", si.BASE_NS + i * 1000, sglang(i))
    server = _kube_sshd(make_sshd, kube, tmp_path)
    target = Target("kubectl", "sglang-0", namespace="default", container="server")
    src = _follower(make_connector, server, target)
    c = Collector(src)
    c.thread.start()
    try:
        assert wait(lambda: len(c.texts()) == 5)
        assert _kill_remote("kubectl", "logs", "sglang-0") >= 1
        assert wait(lambda: any("sinceTime=" in r for r in store.requests))
        store.write("sglang-0", si.BASE_NS + 5000, sglang(5))
        store.write("sglang-0", si.BASE_NS + 2 * SEC, sglang(6))
        assert wait(lambda: len(c.texts()) >= 7)
    finally:
        c.stop.set()
        c.thread.join(20)
    assert c.texts() == [sglang(i) for i in range(7)]
    assert src.name.endswith(":kubectl:default/sglang-0/server")
    assert not c.notices("error")


@needs_kubectl
@pytest.mark.parametrize(("flags", "said"), [
    (["--kubectl", "nope"], 'pods "nope" not found'),
    (["--kubectl", "sglang-0", "-n", "secret"], "not allowed: Error from server (Forbidden)"),
    (["--kubectl", "sglang-0", "-c", "bad"], "container bad is not valid for pod sglang-0"),
    (["--kubectl", "sglang-0", "--previous"],
     'previous terminated container "server" in pod "sglang-0" not found'),
])
def test_kubectl_refusals_over_ssh(make_sshd, ssh_env, kube, tmp_path, capsys, flags, said):
    kube.store.add("sglang-0")
    server = _kube_sshd(make_sshd, kube, tmp_path)
    rc = ssh_cmd.run(_args(ssh_env, server, "gpu", *flags, "--check"))
    err = capsys.readouterr().err
    assert rc == 2
    assert "kubectl: " in err and said in err


@needs_kubectl
def test_kubectl_previous_over_ssh_reads_the_crashed_instance(make_sshd, ssh_env, kube,
                                                              tmp_path, capsys):
    store = kube.store
    store.add("sglang-0", cid="aaa")
    lines = (SAMPLES / "llama31-70b-tp8-fp8-scaled.log").read_text().splitlines()
    for i, text in enumerate(lines):
        store.write("sglang-0", si.BASE_NS + i * 1000, text)
    store.stop("sglang-0", exit_code=137, reason="OOMKilled")
    store.restart("sglang-0", "bbb", si.BASE_NS + 600 * SEC)
    store.write("sglang-0", si.BASE_NS + 601 * SEC, sglang(0))
    server = _kube_sshd(make_sshd, kube, tmp_path)
    rc = ssh_cmd.run(_args(ssh_env, server, "gpu", "--kubectl", "sglang-0", "--previous",
                           "--check", "--json", "--fail-on", "never", "--no-checkpoint"))
    report = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert report["sources"] == [{"name": "gpu:kubectl:sglang-0 (previous)",
                                  "lines": len(lines)}]
    assert any("previous=true" in r for r in store.requests)


def test_client_flags_misuse_is_refused(ssh_env, sshd, capsys):
    rc = ssh_cmd.run(_args(ssh_env, sshd, "gpu", "--docker", "sgl", "-n", "prod", "--check"))
    assert rc == 2 and "--namespace only go with --kubectl" in capsys.readouterr().err
    rc = ssh_cmd.run(_args(ssh_env, sshd, "gpu", "--kubectl=--all-namespaces", "--check"))
    assert rc == 2 and "not a name" in capsys.readouterr().err


# -- journalctl ---------------------------------------------------------------------------------

@needs_journal
def test_journal_over_ssh_follows_and_resumes(make_sshd, make_connector, tmp_path):
    journal = tmp_path / "sglang.journal"
    si.write_journal(journal, [si.journal_entry(sglang(i), BASE_US + i * 1000) for i in range(3)]
                     + [si.journal_entry("sshd noise", BASE_US + 5, unit="ssh.service")])
    bindir = si.journal_bin(tmp_path, journal)
    server = make_sshd("journal", env={"PATH": f"{bindir}:/usr/bin:/bin"})
    src = _follower(make_connector, server, Target("journal", "sglang.service"))
    c = Collector(src)
    c.thread.start()
    try:
        assert wait(lambda: len(c.texts()) == 3)
        si.write_journal(journal, [si.journal_entry(sglang(3), BASE_US + 3000)])  # live
        assert wait(lambda: len(c.texts()) == 4)
        assert _kill_remote("journalctl", "--unit", "sglang.service", "--follow") >= 1
        assert wait(lambda: sum(1 for n in c.notices("live")
                                if n.message.startswith("following")) >= 2)
        si.write_journal(journal, [si.journal_entry(sglang(4), BASE_US + 4000),
                                   si.journal_entry(sglang(5), BASE_US + 2 * US)])
        assert wait(lambda: len(c.texts()) >= 6)
    finally:
        c.stop.set()
        c.thread.join(20)
    assert c.texts() == [sglang(i) for i in range(6)]
    assert not c.notices("error")


@needs_journal
def test_journal_unknown_unit_over_ssh(make_sshd, ssh_env, tmp_path, capsys):
    journal = tmp_path / "sglang.journal"
    si.write_journal(journal, [si.journal_entry(sglang(0), BASE_US)])
    bindir = si.journal_bin(tmp_path, journal)
    server = make_sshd("journal", env={"PATH": f"{bindir}:/usr/bin:/bin"})
    rc = ssh_cmd.run(_args(ssh_env, server, "gpu", "--journal", "sglnag.service", "--check"))
    assert rc == 2
    assert "systemd has no unit sglnag.service" in capsys.readouterr().err
    rc = ssh_cmd.run(_args(ssh_env, server, "gpu", "--journal", "sglang.service", "--check",
                           "--json", "--fail-on", "never", "--no-checkpoint"))
    assert rc == 0
    assert json.loads(capsys.readouterr().out)["sources"][0]["lines"] == 1


def test_remote_client_command_is_quoted(make_sshd, make_connector, tmp_path):
    """A hostile container name reaches docker as one argument (never run by the shell)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    seen = tmp_path / "argv.json"
    (bindir / "docker").write_text(
        "#!/usr/bin/env python3\nimport json, sys\n"
        f"json.dump(sys.argv[1:], open({str(seen)!r}, 'w'))\n"
        "print('2026-11-24T09:14:20.000000000Z hello')\n")
    (bindir / "docker").chmod(0o755)
    server = make_sshd("quoted", env={"PATH": f"{bindir}:/usr/bin:/bin"})
    name = "a b'; touch pwned; $(touch pwned2)"
    src = _follower(make_connector, server, Target("docker", name), stop_at_end=True)
    c = Collector(src)
    c.thread.start()
    c.thread.join(30)
    assert c.texts() == ["hello"]
    assert json.loads(seen.read_text()) == ["logs", "--timestamps", name]
    login_home = Path(pwd.getpwuid(os.getuid()).pw_dir)  # where the remote shell starts
    assert not list(login_home.glob("pwned*")) and not list(tmp_path.glob("pwned*"))

