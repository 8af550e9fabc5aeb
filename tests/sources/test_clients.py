"""`kvtui tail --docker/--kubectl/--journal`: the real clients, run by ClientFollower.

docker and kubectl talk to stand-in servers (tests/sources/_standins.py); journalctl reads real
journal files written by systemd-journal-remote. Each test checks what the user sees: the
server's lines without the client's envelope, each exactly once across a client's death, and a
clear notice when the client is missing or refuses.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kvtui.sources.base import SourceLine, SourceNotice
from kvtui.sources.clients import DockerLogs, JournalLogs, KubectlLogs
from kvtui.sources.process import ClientFollower
from tests.sources import _standins as si

# the real docker / kubectl / journalctl clients against stand-in servers:
# left to the full run (`dev.py test --fast` skips them)
pytestmark = pytest.mark.full

SEC = 10**9


class Collector:
    def __init__(self) -> None:
        self.items: list[object] = []
        self.lock = threading.Lock()

    def __call__(self, batch: list[object]) -> None:
        with self.lock:
            self.items.extend(batch)

    def lines(self) -> list[SourceLine]:
        with self.lock:
            return [i for i in self.items if isinstance(i, SourceLine)]

    def texts(self) -> list[str]:
        return [ln.text for ln in self.lines()]

    def notices(self, state: str | None = None) -> list[SourceNotice]:
        with self.lock:
            return [i for i in self.items if isinstance(i, SourceNotice)
                    and (state is None or i.state == state)]

    def wait(self, cond: Callable[[Collector], bool], timeout: float = 20.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if cond(self):
                return True
            time.sleep(0.02)
        return False


def start(follower: ClientFollower):
    col = Collector()
    stop = threading.Event()
    t = threading.Thread(target=follower.run, args=(col, stop), daemon=True)
    t.start()
    return col, stop, t


def finish(stop: threading.Event, t: threading.Thread) -> None:
    stop.set()
    t.join(10)
    assert not t.is_alive()


def kill_client(follower: ClientFollower) -> None:
    proc = follower.process
    assert proc is not None
    os.killpg(proc.pid, signal.SIGKILL)


def ends_alone(t: threading.Thread) -> bool:
    t.join(20)
    return not t.is_alive()


needs_docker = pytest.mark.skipif(shutil.which("docker") is None, reason="no docker client")
needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl client")
needs_journal = pytest.mark.skipif(
    shutil.which("journalctl") is None or not os.path.exists(si.JOURNAL_REMOTE),
    reason="journalctl or systemd-journal-remote missing (python3 dev.py test installs them)")

SGLANG = "[2026-11-24 09:14:2{} TP{}] Decode batch, #running-req: {}, #token: 100, token usage: " \
         "0.01, cuda graph: True, gen throughput (token/s): 10.00, #queue-req: 0, "


def sglang(i: int) -> str:
    return SGLANG.format(i % 10, i % 8, i)


# -- docker ------------------------------------------------------------------------------------

@pytest.fixture
def dockerd(tmp_path: Path):
    served = si.serve_docker(tmp_path)
    yield served
    served.close()


@needs_docker
def test_docker_lines_stripped_and_resumed_without_repeats(dockerd) -> None:
    store = dockerd.store
    store.add("sglang")
    # two lines at the same instant: a resume must skip exactly those it already delivered
    for i, ns in enumerate((0, 1, 1, 2)):
        store.write("sglang", si.BASE_NS + ns * SEC, sglang(i), stream=1 + i % 2)
    follower = ClientFollower(DockerLogs("sglang"), env=dockerd.env, backoff=(0.05, 0.2))
    col, stop, t = start(follower)
    assert col.wait(lambda c: len(c.texts()) == 4)
    assert col.texts() == [sglang(i) for i in range(4)]  # envelope gone, stdout and stderr
    kill_client(follower)
    assert col.wait(lambda c: follower.starts >= 2 and len(c.notices("live")) >= 2)
    store.write("sglang", si.BASE_NS + 2 * SEC, sglang(4))  # same second as the last one
    store.write("sglang", si.BASE_NS + 3 * SEC, sglang(5))
    assert col.wait(lambda c: len(c.texts()) >= 6)
    finish(stop, t)
    assert col.texts() == [sglang(i) for i in range(6)]
    assert [ln.line_no for ln in col.lines()] == list(range(1, 7))
    assert any("since=" in r for r in store.requests)  # the real client was resumed
    assert col.notices("reconnecting")
    assert not col.notices("error")


@needs_docker
def test_docker_no_such_container_is_said_and_final(dockerd) -> None:
    follower = ClientFollower(DockerLogs("nope"), env=dockerd.env, backoff=(0.05, 0.2))
    col, _stop, t = start(follower)
    assert ends_alone(t)
    errors = [n.message for n in col.notices("error")]
    assert errors == ["docker: no such container: nope"]
    assert follower.starts == 1


@needs_docker
def test_docker_daemon_down_is_retried(tmp_path: Path) -> None:
    env = dict(os.environ, DOCKER_HOST=f"unix://{tmp_path}/absent.sock")
    follower = ClientFollower(DockerLogs("sglang"), env=env, backoff=(0.05, 0.1))
    col, stop, t = start(follower)
    assert col.wait(lambda c: follower.starts >= 2)
    finish(stop, t)
    said = " ".join(n.message for n in col.notices("reconnecting"))
    assert "Cannot connect to the Docker daemon" in said
    assert not col.notices("error")


@needs_docker
def test_docker_container_restart_is_a_new_start(dockerd) -> None:
    store = dockerd.store
    store.add("sglang")
    store.write("sglang", si.BASE_NS, sglang(0))
    follower = ClientFollower(DockerLogs("sglang"), env=dockerd.env, backoff=(0.05, 0.2))
    col, stop, t = start(follower)
    assert col.wait(lambda c: c.texts() == [sglang(0)])
    store.stop("sglang")  # docker logs -f ends with the container
    assert col.wait(lambda c: len(c.notices("reconnecting")) >= 1)
    store.restart("sglang", "c1", si.BASE_NS + 60 * SEC)
    store.write("sglang", si.BASE_NS + 61 * SEC, sglang(1))
    assert col.wait(lambda c: sglang(1) in c.texts())
    finish(stop, t)
    order = [("line", i.text) if isinstance(i, SourceLine) else ("notice", i.state)
             for i in col.items if isinstance(i, SourceLine | SourceNotice)]
    assert order.index(("notice", "restarted")) < order.index(("line", sglang(1)))
    restarted = col.notices("restarted")[0].message
    assert "restart 1" in restarted and "OOMKilled" in restarted
    assert col.texts() == [sglang(0), sglang(1)]


def test_missing_client_is_said(tmp_path: Path) -> None:
    env = dict(os.environ, PATH=str(tmp_path))  # no docker, kubectl, journalctl here
    for client in (DockerLogs("sglang"), KubectlLogs("sglang-0")):
        follower = ClientFollower(client, env=env)
        col, _stop, t = start(follower)
        assert ends_alone(t)
        (error,) = col.notices("error")
        assert f"`{client.program}` is not installed here" in error.message


# -- kubectl ------------------------------------------------------------------------------------

@pytest.fixture
def kube(tmp_path: Path):
    served = si.serve_kube(tmp_path)
    yield served
    served.close()


@needs_kubectl
def test_kubectl_follow_resume_drops_the_repeated_second(kube) -> None:
    store = kube.store
    store.add("sglang-0")
    for i in range(5):  # all in one second: the resumed client gets that whole second again
        store.write("sglang-0", si.BASE_NS + i * 1000, sglang(i))
    follower = ClientFollower(KubectlLogs("sglang-0", namespace="default"), env=kube.env,
                              backoff=(0.05, 0.2))
    col, stop, t = start(follower)
    assert col.wait(lambda c: len(c.texts()) == 5)
    kill_client(follower)
    assert col.wait(lambda c: follower.starts >= 2 and len(c.notices("live")) >= 2)
    store.write("sglang-0", si.BASE_NS + 5000, sglang(5))
    store.write("sglang-0", si.BASE_NS + 2 * SEC, sglang(6))
    assert col.wait(lambda c: len(c.texts()) >= 7)
    finish(stop, t)
    assert col.texts() == [sglang(i) for i in range(7)]
    assert any("sinceTime=" in r for r in store.requests)


@needs_kubectl
@pytest.mark.parametrize(("kw", "said"), [
    ({"pod": "nope"}, 'pods "nope" not found'),
    ({"pod": "sglang-0", "namespace": "secret"}, 'not allowed: Error from server (Forbidden)'),
    ({"pod": "sglang-0", "container": "bad"}, "container bad is not valid for pod sglang-0"),
    ({"pod": "sglang-0", "previous": True},
     'previous terminated container "server" in pod "sglang-0" not found'),
])
def test_kubectl_refusals_are_said_and_final(kube, kw, said) -> None:
    kube.store.add("sglang-0")
    follower = ClientFollower(KubectlLogs(**kw), env=kube.env, backoff=(0.05, 0.2))
    col, _stop, t = start(follower)
    assert ends_alone(t)
    (error,) = col.notices("error")
    assert error.message.startswith("kubectl: ") and said in error.message
    assert follower.starts == 1


@needs_kubectl
def test_kubectl_pod_restart_and_previous(kube) -> None:
    store = kube.store
    store.add("sglang-0", cid="aaa")
    store.write("sglang-0", si.BASE_NS, sglang(0))
    follower = ClientFollower(KubectlLogs("sglang-0"), env=kube.env, backoff=(0.05, 0.2))
    col, stop, t = start(follower)
    assert col.wait(lambda c: c.texts() == [sglang(0)])
    store.write("sglang-0", si.BASE_NS + SEC, "Killed")
    store.stop("sglang-0", exit_code=137, reason="OOMKilled")
    assert col.wait(lambda c: len(c.notices("reconnecting")) >= 1)
    store.restart("sglang-0", "bbb", si.BASE_NS + 60 * SEC)
    store.write("sglang-0", si.BASE_NS + 61 * SEC, sglang(1))
    assert col.wait(lambda c: sglang(1) in c.texts())
    finish(stop, t)
    assert col.texts() == [sglang(0), "Killed", sglang(1)]
    (restarted,) = col.notices("restarted")
    assert "restart 1" in restarted.message and "OOMKilled, exit code 137" in restarted.message
    # --previous reads the crashed instance, to its end
    prev = ClientFollower(KubectlLogs("sglang-0", previous=True), env=kube.env)
    col2, _, t2 = start(prev)
    assert ends_alone(t2)
    assert col2.texts() == [sglang(0), "Killed"]
    assert col2.notices("at_end") and not col2.notices("error")
    assert prev.name == "kubectl:sglang-0 (previous)"


# -- journalctl -----------------------------------------------------------------------------------

US = 10**6
BASE_US = si.BASE_NS // 1000


@needs_journal
def test_journal_follow_live_and_resume(tmp_path: Path) -> None:
    journal = tmp_path / "sglang.journal"
    # three entries in one second (short-iso prints whole seconds), and another unit's entry
    si.write_journal(journal, [si.journal_entry(sglang(i), BASE_US + i * 1000) for i in range(3)]
                     + [si.journal_entry("sshd noise", BASE_US + 5, unit="ssh.service")])
    bindir = si.journal_bin(tmp_path, journal)
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}")
    follower = ClientFollower(JournalLogs("sglang.service"), env=env, backoff=(0.05, 0.2))
    col, stop, t = start(follower)
    assert col.wait(lambda c: len(c.texts()) == 3)
    si.write_journal(journal, [si.journal_entry(sglang(3), BASE_US + 3000)])  # live
    assert col.wait(lambda c: len(c.texts()) == 4)
    kill_client(follower)
    assert col.wait(lambda c: follower.starts >= 2 and len(c.notices("live")) >= 2)
    si.write_journal(journal, [si.journal_entry(sglang(4), BASE_US + 4000),
                               si.journal_entry(sglang(5), BASE_US + 2 * US)])
    assert col.wait(lambda c: len(c.texts()) >= 6)
    finish(stop, t)
    assert col.texts() == [sglang(i) for i in range(6)]
    assert not col.notices("error")


@needs_journal
def test_journal_unknown_unit_and_unreadable_journal(tmp_path: Path) -> None:
    journal = tmp_path / "sglang.journal"
    si.write_journal(journal, [si.journal_entry(sglang(0), BASE_US)])
    bindir = si.journal_bin(tmp_path, journal)
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}")
    col, _, t = start(ClientFollower(JournalLogs("sglnag.service"), env=env))
    assert ends_alone(t)
    (error,) = col.notices("error")
    assert "systemd has no unit sglnag.service" in error.message
    # the real journalctl, as a user who may not read the journal file
    setpriv = shutil.which("setpriv")
    if setpriv is None or os.geteuid() != 0:
        pytest.skip("needs root and setpriv to run journalctl as another user")
    journal.chmod(0o600)
    real = shutil.which("journalctl")
    (bindir / "journalctl").write_text(
        f'#!/bin/sh\nexec {setpriv} --reuid=65534 --regid=65534 --clear-groups '
        f'{real} --file={journal} "$@"\n')
    col, _, t = start(ClientFollower(JournalLogs("sglang.service"), env=env))
    assert ends_alone(t)
    (error,) = col.notices("error")
    assert "Permission denied" in error.message and "systemd-journal" in error.message


# -- the command line ---------------------------------------------------------------------------

@pytest.mark.parametrize(("argv", "said"), [
    (["tail"], "tail needs a FILE, - for standard input, or --docker/--kubectl/--journal"),
    (["tail", "x.log", "--docker", "sglang"], "not both"),
    (["tail", "--docker", "sglang", "-n", "prod"], "--namespace only go with --kubectl"),
    (["tail", "--kubectl=-x"], "--kubectl: not a name: '-x'"),
    (["tail", "--kubectl", "-x"], "expected one argument"),
])
def test_tail_refuses_misuse(capsys, argv: list[str], said: str) -> None:
    from kvtui.cli import main

    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse's own refusals
        rc = int(exc.code or 0)
    assert rc == 2
    assert said in capsys.readouterr().err


def test_argv_is_a_list_with_the_resume_point() -> None:
    from kvtui.sources.clients import Resume

    at = Resume("2026-11-24T09:14:21.5Z", (1795511661, 500_000_000), 2)
    assert DockerLogs("my container").argv(at) == [
        "docker", "logs", "--timestamps", "--follow", "--since", "2026-11-24T09:14:21.5Z",
        "my container"]
    assert KubectlLogs("p", namespace="ns", container="c").argv(None) == [
        "kubectl", "logs", "--timestamps", "--follow", "--namespace", "ns", "--container", "c",
        "p"]
    assert JournalLogs("sglang.service").argv(at)[-2:] == ["--since", "@1795511661"]


def test_one_shot_argv_for_a_remote_runner() -> None:
    assert DockerLogs("c", follow=False, tail=50).argv(None) == [
        "docker", "logs", "--timestamps", "--tail", "50", "c"]
    assert KubectlLogs("p", follow=False, tail=50).argv(None) == [
        "kubectl", "logs", "--timestamps", "--tail=50", "p"]
    assert JournalLogs("u", follow=False, tail=50).argv(None)[-2:] == ["--lines", "50"]
    assert KubectlLogs("p", previous=True).follow is False


@needs_docker
def test_a_refusal_stays_the_last_word(dockerd) -> None:
    col, _, t = start(ClientFollower(DockerLogs("nope"), env=dockerd.env))
    assert ends_alone(t)
    assert col.notices()[-1].state == "error"  # not "closed": the header keeps saying why
