"""A real OpenSSH sshd on 127.0.0.1 for the SSH tests (throwaway host and user keys).

Skips the whole directory with a clear message when /usr/sbin/sshd is missing; `.ci/run` installs
openssh-server. Each server runs `sshd -D -e -f cfg` with UsePAM/StrictModes off and its own
authorized_keys, so it needs no system configuration; as non-root it can still log in as the
current user.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

SSHD = "/usr/sbin/sshd"

if not os.path.exists(SSHD):
    pytest.skip(f"{SSHD} not found: install openssh-server to run the SSH tests",
                allow_module_level=True)


# A stand-in for `nc %h %p` (not installed everywhere): stdin/stdout <-> TCP.
# Both relays: connect, and forward stdin to the server in a thread (its half of `nc`).
_UPLINK = """
s = socket.create_connection((host, port))
def up():
    while True:
        b = os.read(0, 65536)
        if not b:
            s.shutdown(socket.SHUT_WR)
            return
        s.sendall(b)
threading.Thread(target=up, daemon=True).start()
"""
RELAY = """
import os, socket, sys, threading
host, port = sys.argv[1], int(sys.argv[2])
""" + _UPLINK + """
while True:
    b = s.recv(65536)
    if not b:
        break
    os.write(1, b)
"""


# A ProxyCommand that forwards until LIMIT bytes came from the server, then freezes: the host is
# gone mid-read, the TCP connection stays up and nothing more arrives (a cut network, a frozen
# host). Once frozen, every new relay (a reconnect) hangs before the SSH banner.
STALL_RELAY = """
import os, socket, sys, threading, time
host, port, limit, flag = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
if os.path.exists(flag):
    time.sleep(3600)
""" + _UPLINK + """
sent = 0
while True:
    b = s.recv(65536)
    if not b:
        break
    if sent + len(b) >= limit:
        os.write(1, b[:limit - sent])
        open(flag, "w").close()
        time.sleep(3600)
    os.write(1, b)
    sent += len(b)
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _keygen(path: Path, comment: str) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f",
                    str(path)], check=True, timeout=30)


def _children(pid: int) -> list[int]:
    """All descendants of pid (via /proc), deepest last."""
    parents: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", encoding="ascii", errors="replace") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        parents.setdefault(ppid, []).append(int(d))
    out: list[int] = []
    todo = [pid]
    while todo:
        p = todo.pop()
        for c in parents.get(p, []):
            out.append(c)
            todo.append(c)
    return out


def _is_sshd(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/comm", encoding="ascii", errors="replace") as f:
            return f.read().strip().startswith("sshd")
    except OSError:
        return False


class Sshd:
    """One sshd. `extra` adds sshd_config lines; `env` sets variables in every session (sshd
    takes only its first SetEnv line, so they share it); `prefix` runs it under another command
    (`setpriv ...` to drop capabilities, `ip netns exec NS` to put it in a namespace);
    `address` is where it listens (a namespace's own address)."""

    def __init__(self, root: Path, name: str, user_pub: Path, *, extra: str = "",
                 prefix: list[str] | None = None, address: str = "127.0.0.1",
                 netns: str | None = None, env: dict[str, str] | None = None) -> None:
        self.dir = root / name
        self.dir.mkdir(parents=True)
        self.address = address
        self.netns = netns
        self.prefix = [*(["ip", "netns", "exec", netns] if netns else []), *(prefix or [])]
        self.port = _free_port() if netns is None else 2222
        self.host_key = self.dir / "host_ed25519"
        _keygen(self.host_key, f"{name}-host")
        self.authorized = self.dir / "authorized_keys"
        self.authorized.write_text(user_pub.read_text())
        self.cfg = self.dir / "sshd_config"
        self.cfg.write_text(
            f"Port {self.port}\nListenAddress {address}\nHostKey {self.host_key}\n"
            f"PidFile {self.dir / 'sshd.pid'}\nAuthorizedKeysFile {self.authorized}\n"
            "UsePAM no\nStrictModes no\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\nPermitRootLogin yes\n"
            "AllowTcpForwarding yes\nSubsystem sftp internal-sftp\nLogLevel ERROR\n"
            "MaxStartups 100\nMaxSessions 50\n"
            f"SetEnv HF_HUB_CACHE={root / 'hf-hub'}"
            + "".join(f" {k}={v}" for k, v in (env or {}).items()) + f"\n{extra}")
        self.proc: subprocess.Popen[bytes] | None = None

    def known_hosts_line(self) -> str:
        kt, b64 = (self.dir / "host_ed25519.pub").read_text().split()[:2]
        return f"[{self.address}]:{self.port} {kt} {b64}\n"

    def start(self) -> None:
        with contextlib.suppress(OSError):  # privilege-separation dir (root runs only)
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        self.proc = subprocess.Popen([*self.prefix, SSHD, "-D", "-e", "-f", str(self.cfg)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                raise RuntimeError(f"sshd exited: {err}")
            if self._serving():
                return
            time.sleep(0.05)
        raise RuntimeError("sshd did not start listening")

    def _serving(self) -> bool:
        """The banner arrives: the daemon is really serving (asked from its namespace)."""
        result: list[bool] = []

        def probe() -> None:
            if self.netns is not None:
                from _sshutil import enter_netns

                enter_netns(self.netns)
            try:
                with socket.create_connection((self.address, self.port), timeout=0.5) as s:
                    result.append(bool(s.recv(4)))
            except OSError:
                result.append(False)

        if self.netns is None:
            probe()
        else:
            import threading

            t = threading.Thread(target=probe)
            t.start()
            t.join()
        return bool(result and result[0])

    def session_pids(self) -> list[int]:
        return _children(self.proc.pid) if self.proc else []

    def kill_all(self) -> None:
        """The listener and every sshd session process: the connection dies at once, as on a
        host reboot, and what ran in the sessions loses its channel.

        Only sshd processes are killed. A SIGKILLed login shell can leave a lock behind (root's
        .bashrc runs `pyenv init`, whose rehash takes a lock file that only its EXIT trap
        removes), and then every later login on this machine waits 60 s for it.
        """
        if self.proc is None:
            return
        victims = [self.proc.pid, *(p for p in self.session_pids() if _is_sshd(p))]
        for pid in victims:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        if self.proc.stderr:
            self.proc.stderr.close()
        self.proc = None

    def stop(self) -> None:
        self.kill_all()


@pytest.fixture(scope="session")
def ssh_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ssh")


@pytest.fixture(scope="session")
def user_key(ssh_root: Path) -> Path:
    key = ssh_root / "id_user"
    _keygen(key, "kvtui-test-user")
    return key


@pytest.fixture(scope="session")
def sshd(ssh_root: Path, user_key: Path):
    server = Sshd(ssh_root, "main", Path(str(user_key) + ".pub"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def jump_sshd(ssh_root: Path, user_key: Path):
    server = Sshd(ssh_root, "jump", Path(str(user_key) + ".pub"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def own_sshd(tmp_path: Path, user_key: Path):
    """A server of its own, for tests that kill and restart it."""
    server = Sshd(tmp_path, "own", Path(str(user_key) + ".pub"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def make_sshd(tmp_path: Path, user_key: Path, ssh_env):
    """make_sshd(name, **Sshd options) -> a started server of its own, known to ssh_env."""
    servers: list[Sshd] = []

    def make(name: str, **kw) -> Sshd:
        server = Sshd(tmp_path, name, Path(str(user_key) + ".pub"), **kw)
        servers.append(server)
        server.start()
        with open(ssh_env["known"], "a") as f:
            f.write(server.known_hosts_line())
        return server

    yield make
    for server in servers:
        server.stop()


@pytest.fixture
def ssh_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sshd: Sshd, jump_sshd: Sshd,
            user_key: Path) -> dict[str, Path]:
    """HOME, known_hosts and an ssh config with aliases, all inside tmp_path."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("KVTUI_KNOWN_HOSTS", str(tmp_path / "kvtui_known_hosts"))
    monkeypatch.setenv("KVTUI_SSH_NO_SYSTEM_CONFIG", "1")
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    known = home / ".ssh" / "known_hosts"
    known.write_text(sshd.known_hosts_line() + jump_sshd.known_hosts_line())
    user = getpass.getuser()
    inc = tmp_path / "included.conf"
    inc.write_text(f"Host gpu-included\n  HostName 127.0.0.1\n  Port {sshd.port}\n"
                   f"  User {user}\n  IdentityFile {user_key}\n  IdentitiesOnly yes\n")
    relay = tmp_path / "relay.py"
    relay.write_text(RELAY)
    cfg = tmp_path / "ssh_config"
    cfg.write_text(
        f"Include {inc}\n"
        f"Host gpu\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {user}\n"
        f"  IdentityFile {user_key}\n  IdentitiesOnly yes\n  ServerAliveInterval 1\n"
        f"  ConnectTimeout 5\n"
        f"Host jumpbox\n  HostName 127.0.0.1\n  Port {jump_sshd.port}\n  User {user}\n"
        f"  IdentityFile {user_key}\n  IdentitiesOnly yes\n"
        f"Host gpu-via-jump\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {user}\n"
        f"  IdentityFile {user_key}\n  IdentitiesOnly yes\n  ProxyJump jumpbox\n"
        f"Host gpu-via-two-jumps\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {user}\n"
        f"  IdentityFile {user_key}\n  IdentitiesOnly yes\n  ProxyJump jumpbox,jumpbox\n"
        f"Host gpu-via-proxycommand\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {user}\n"
        f"  IdentityFile {user_key}\n  IdentitiesOnly yes\n"
        f"  ProxyCommand {sys.executable} {relay} %h %p\n"
        f"Host *\n  ServerAliveInterval 1\n")
    return {"home": home, "config": cfg, "known": known, "key": user_key,
            "kvtui_known": tmp_path / "kvtui_known_hosts", "tmp": tmp_path}


@pytest.fixture
def make_connector(ssh_env):
    """connector("gpu") -> a Connector for that alias of the test ssh config."""
    from kvtui.sources.ssh.config import resolve_host
    from kvtui.sources.ssh.connect import Connector, load_identities

    def make(alias: str = "gpu", **kw):
        spec = resolve_host(alias, config_path=str(ssh_env["config"]),
                            port=kw.pop("port", None))
        if "hostname" in kw:  # a server in a network namespace, at its own address
            spec.hostname = kw.pop("hostname")
        return Connector(spec, load_identities(spec, None), **kw)

    return make


@pytest.fixture
def make_stall_host(ssh_env, sshd, user_key, tmp_path):
    """make_stall_host(limit) -> {"config", "flag"}: an ssh config with the alias `gpu-stall`,
    whose link freezes once `limit` bytes came from the server (`flag` then exists)."""
    import textwrap

    from _sshutil import pids_matching

    relays: list[Path] = []

    def make(limit: int) -> dict[str, Path]:
        relay = tmp_path / f"stall_relay{len(relays)}.py"
        relay.write_text(STALL_RELAY)
        relays.append(relay)
        flag = tmp_path / f"stalled{len(relays)}"
        cfg = tmp_path / f"ssh_config_stall{len(relays)}"
        cfg.write_text(textwrap.dedent(f"""\
            Host gpu-stall
              HostName 127.0.0.1
              Port {sshd.port}
              IdentityFile {user_key}
              IdentitiesOnly yes
              ServerAliveInterval 1
              ProxyCommand {sys.executable} {relay} %h %p {limit} {flag}
            """) + ssh_env["config"].read_text())
        return {"config": cfg, "flag": flag}

    yield make
    for relay in relays:
        for pid in pids_matching(str(relay)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def netns_pair():
    """Two network namespaces of the test's own, joined by a veth pair: `client` (10.x.y.1)
    and `server` (10.x.y.2). Nothing is added to the host's own namespace."""
    import random
    import shutil

    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("network namespaces need root and iproute2")
    tag = f"{os.getpid() % 100000}-{random.randrange(1 << 16):04x}"
    client, server = f"kvt-c{tag}", f"kvt-s{tag}"
    net = f"10.{random.randrange(200, 250)}.{random.randrange(1, 250)}"

    def ip(*args: str) -> None:
        subprocess.run(["ip", *args], check=True, timeout=30, capture_output=True)

    made: list[str] = []
    try:
        for ns in (client, server):
            ip("netns", "add", ns)
            made.append(ns)
            ip("-n", ns, "link", "set", "lo", "up")
        ip("link", "add", "vc", "netns", client, "type", "veth", "peer", "name", "vs",
           "netns", server)
        ip("-n", client, "addr", "add", f"{net}.1/24", "dev", "vc")
        ip("-n", server, "addr", "add", f"{net}.2/24", "dev", "vs")
        ip("-n", client, "link", "set", "vc", "up")
        ip("-n", server, "link", "set", "vs", "up")
    except (subprocess.CalledProcessError, OSError) as exc:
        for ns in made:
            subprocess.run(["ip", "netns", "del", ns], check=False, timeout=30)
        pytest.skip(f"cannot set up network namespaces here: {exc}")
    yield {"client": client, "server": server, "client_ip": f"{net}.1",
           "server_ip": f"{net}.2", "ip": ip}
    for ns in made:
        subprocess.run(["ip", "netns", "del", ns], check=False, timeout=30)
