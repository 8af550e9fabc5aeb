"""Connecting: ssh_config aliases (Include, ProxyCommand, ProxyJump chains), host keys."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

from kvtui.sources.ssh.config import parse_jump, resolve_host, resolve_includes
from kvtui.sources.ssh.connect import Connector, SSHError, load_identities


def _whoami(connector: Connector) -> str:
    conn = connector.connect()
    try:
        rc, out, _ = conn.exec("echo ok:$(id -un)", timeout=10)
        assert rc == 0
        return out.decode().strip()
    finally:
        conn.close()


def test_the_tcp_connection_sends_small_requests_at_once(make_connector):
    """Nagle's algorithm off on a direct connection (as OpenSSH's client sets it): each small
    request (a channel, the follower's command) otherwise waits out a delayed ACK."""
    import socket

    conn = make_connector("gpu").connect()
    try:
        sock = conn.transport.sock
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        rc, out, _ = conn.exec("echo ok", timeout=10)
        assert (rc, out) == (0, b"ok\n")
    finally:
        conn.close()


def test_the_cipher_is_aes_gcm_where_the_server_offers_it(make_connector, sshd):
    """paramiko ranks AES-GCM after CTR with a separate HMAC, which costs its reader about
    twice the CPU per byte received (issue 14's SSH load): kvtui asks for GCM first."""
    offered = subprocess.run(["/usr/sbin/sshd", "-T", "-f", str(sshd.cfg)], capture_output=True,
                             text=True, timeout=30).stdout
    if "aes128-gcm@openssh.com" not in offered:
        pytest.skip("this sshd offers no AES-GCM (built without OpenSSL?)")
    conn = make_connector("gpu").connect()
    try:
        t = conn.transport
        assert (t.remote_cipher, t.local_cipher) == ("aes128-gcm@openssh.com",) * 2
        rc, out, _ = conn.exec("echo ok", timeout=10)
        assert (rc, out) == (0, b"ok\n")
    finally:
        conn.close()


def test_alias_from_config(ssh_env, sshd, make_connector):
    spec = resolve_host("gpu", config_path=str(ssh_env["config"]))
    assert (spec.hostname, spec.port) == ("127.0.0.1", sshd.port)
    assert spec.identities_only and spec.identity_files == [str(ssh_env["key"])]
    assert spec.server_alive_interval == 1 and spec.connect_timeout == 5.0
    assert _whoami(make_connector("gpu")).startswith("ok:")


def test_include_is_resolved(ssh_env, sshd, make_connector):
    text = resolve_includes(str(ssh_env["config"]))
    assert "Host gpu-included" in text
    spec = resolve_host("gpu-included", config_path=str(ssh_env["config"]))
    assert spec.port == sshd.port
    assert _whoami(make_connector("gpu-included")).startswith("ok:")


def test_include_relative_to_dot_ssh_and_inside_host_block(ssh_env, tmp_path):
    ssh_dir = ssh_env["home"] / ".ssh"
    (ssh_dir / "conf.d").mkdir()
    (ssh_dir / "conf.d" / "a.conf").write_text("Host fromglob\n  Port 2201\n")
    cfg = ssh_dir / "config"
    cfg.write_text("Host box\n  Include conf.d/*.conf\n  User alice\n")
    spec = resolve_host("box")  # default ~/.ssh/config
    assert spec.user == "alice"  # still applies to Host box after the Include
    assert resolve_host("fromglob").port == 2201


def test_command_line_overrides_config(ssh_env, tmp_path):
    spec = resolve_host("gpu", config_path=str(ssh_env["config"]), port=2222, user="bob",
                        identity=str(tmp_path / "other key"))
    assert (spec.port, spec.user) == (2222, "bob")
    assert spec.identity_files[0] == str(tmp_path / "other key")


def test_overrides_expand_into_proxycommand(ssh_env):
    spec = resolve_host("gpu-via-proxycommand", config_path=str(ssh_env["config"]), port=2299)
    assert spec.proxy_command is not None and spec.proxy_command.endswith("127.0.0.1 2299")


@pytest.mark.parametrize("hop,expected", [
    ("jump", ("jump", None, None)),
    ("alice@jump:2200", ("jump", "alice", 2200)),
    ("ssh://bob@jump:22/", ("jump", "bob", 22)),
    ("[::1]:2222", ("::1", None, 2222)),
])
def test_parse_jump(hop, expected):
    assert parse_jump(hop) == expected


def test_proxycommand(ssh_env, make_connector):
    assert _whoami(make_connector("gpu-via-proxycommand")).startswith("ok:")


def test_proxyjump_single_and_chain(ssh_env, make_connector, jump_sshd):
    c = make_connector("gpu-via-jump")
    conn = c.connect()
    try:
        assert len(conn.chain) == 1
        assert conn.exec("echo via-jump", timeout=10)[1] == b"via-jump\n"
    finally:
        conn.close()
    c2 = make_connector("gpu-via-two-jumps")
    conn = c2.connect()
    try:
        assert len(conn.chain) == 2  # jumpbox, then jumpbox again through the first
        assert conn.exec("echo two", timeout=10)[1] == b"two\n"
    finally:
        conn.close()


def test_connection_refused_is_one_line_and_not_fatal(ssh_env, make_connector):
    with socket_closed_port() as port:
        c = make_connector("gpu", port=port)
    with pytest.raises(SSHError) as info:
        c.connect()
    assert not info.value.fatal
    assert "\n" not in str(info.value)


class socket_closed_port:
    def __enter__(self) -> int:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return int(s.getsockname()[1])

    def __exit__(self, *a: object) -> None:
        pass


# -- host keys ---------------------------------------------------------------------------------

def _fingerprint(pub_path) -> str:
    out = subprocess.run(["ssh-keygen", "-l", "-E", "sha256", "-f", str(pub_path)],
                         capture_output=True, text=True, check=True, timeout=10).stdout
    return out.split()[1]


def test_unknown_host_key_refused_with_fingerprint(ssh_env, sshd, make_connector):
    ssh_env["known"].write_text("")
    with pytest.raises(SSHError) as info:
        make_connector("gpu").connect()
    msg = str(info.value)
    assert info.value.fatal
    assert "not known" in msg and "ssh-ed25519" in msg
    assert _fingerprint(sshd.host_key.with_suffix(".pub")) in msg
    assert f"[127.0.0.1]:{sshd.port}" in msg
    assert not ssh_env["kvtui_known"].exists()


def test_trust_on_first_use_records_and_reuses(ssh_env, sshd, make_connector):
    ssh_env["known"].write_text("")
    c = make_connector("gpu", accept_new_host_key=True)
    assert _whoami(c).startswith("ok:")
    assert any("recorded new host key" in m for m in c.messages)
    recorded = ssh_env["kvtui_known"].read_text()
    assert recorded.startswith(f"[127.0.0.1]:{sshd.port} ssh-ed25519 ")
    assert oct(os.stat(ssh_env["kvtui_known"]).st_mode & 0o777) == "0o600"
    # the next connection needs no flag: the key is known now
    assert _whoami(make_connector("gpu")).startswith("ok:")
    assert ssh_env["known"].read_text() == ""  # ~/.ssh/known_hosts untouched


def test_changed_host_key_refused_even_with_accept_new(ssh_env, sshd, make_connector):
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                    str(ssh_env["tmp"] / "fake")], check=True, timeout=30)
    kt, b64 = (ssh_env["tmp"] / "fake.pub").read_text().split()[:2]
    ssh_env["known"].write_text(f"[127.0.0.1]:{sshd.port} {kt} {b64}\n")
    for accept in (False, True):
        with pytest.raises(SSHError) as info:
            make_connector("gpu", accept_new_host_key=accept).connect()
        msg = str(info.value)
        assert info.value.fatal and "HOST KEY CHANGED" in msg
        assert _fingerprint(sshd.host_key.with_suffix(".pub")) in msg  # what the server sent
        assert _fingerprint(ssh_env["tmp"] / "fake.pub") in msg  # what we expected
        assert f"[127.0.0.1]:{sshd.port}" in msg
    assert not ssh_env["kvtui_known"].exists()


def test_changed_key_in_kvtui_file_refused(ssh_env, sshd, make_connector):
    ssh_env["known"].write_text("")
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                    str(ssh_env["tmp"] / "fake2")], check=True, timeout=30)
    kt, b64 = (ssh_env["tmp"] / "fake2.pub").read_text().split()[:2]
    ssh_env["kvtui_known"].write_text(f"[127.0.0.1]:{sshd.port} {kt} {b64}\n")
    with pytest.raises(SSHError) as info:
        make_connector("gpu", accept_new_host_key=True).connect()
    assert "HOST KEY CHANGED" in str(info.value)


def test_encrypted_key_prompts_once(ssh_env, sshd, tmp_path):
    key = tmp_path / "enc_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "s3cret", "-f", str(key)],
                   check=True, timeout=30)
    with open(sshd.authorized, "a") as f:
        f.write((tmp_path / "enc_key.pub").read_text())
    spec = resolve_host("gpu", config_path=str(ssh_env["config"]), identity=str(key))
    asked: list[str] = []

    def prompt(path: str) -> str:
        asked.append(path)
        return "wrong" if len(asked) == 1 else "s3cret"

    ids = load_identities(spec, prompt)
    assert asked == [str(key), str(key)]
    assert ids.keys[0][0] == str(key)
    conn = Connector(spec, ids).connect()
    conn.close()
    conn = Connector(spec, ids).connect()  # reconnect: no new prompt
    conn.close()
    assert len(asked) == 2


def test_auth_failure_is_fatal_and_clear(ssh_env, tmp_path):
    key = tmp_path / "stranger"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)],
                   check=True, timeout=30)
    spec = resolve_host("gpu", config_path=str(ssh_env["config"]))
    spec.identity_files = [str(key)]
    with pytest.raises(SSHError) as info:
        Connector(spec, load_identities(spec, None)).connect()
    assert info.value.fatal and "authentication failed" in str(info.value)


@pytest.fixture
def agent(tmp_path, monkeypatch):
    if not shutil.which("ssh-agent"):
        pytest.skip("ssh-agent not installed")
    sock = tmp_path / "agent.sock"
    proc = subprocess.Popen(["ssh-agent", "-D", "-a", str(sock)], stdout=subprocess.DEVNULL)
    for _ in range(100):
        if sock.exists():
            break
        time.sleep(0.02)
    monkeypatch.setenv("SSH_AUTH_SOCK", str(sock))
    yield sock
    proc.kill()
    proc.wait(5)


def test_agent_key_is_used_and_encrypted_file_not_prompted(ssh_env, sshd, agent, tmp_path):
    key = tmp_path / "agent_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "pw", "-f", str(key)],
                   check=True, timeout=30)
    with open(sshd.authorized, "a") as f:
        f.write((tmp_path / "agent_key.pub").read_text())
    subprocess.run(["ssh-add", "-q", str(key)], input=b"", check=True, timeout=30,
                   env={**os.environ, "SSH_ASKPASS_REQUIRE": "force",
                        "SSH_ASKPASS": str(_askpass(tmp_path, "pw")), "DISPLAY": ":0"})
    spec = resolve_host("gpu", config_path=str(ssh_env["config"]))
    spec.identities_only = False
    spec.identity_files = [str(key)]  # encrypted on disk, but the agent holds it
    asked: list[str] = []
    ids = load_identities(spec, lambda p: asked.append(p) or None)
    assert asked == [] and ids.keys == [] and ids.use_agent
    conn = Connector(spec, ids).connect()
    try:
        assert conn.exec("echo agent", timeout=10)[1] == b"agent\n"
    finally:
        conn.close()


def _askpass(tmp_path, secret: str):
    script = tmp_path / "askpass.sh"
    script.write_text(f"#!/bin/sh\necho {secret}\n")
    script.chmod(0o700)
    return script


# -- known_hosts read line by line, as OpenSSH does (issue 16) ---------------------------------

def _host_pub(sshd) -> tuple[str, str]:
    kt, b64 = (sshd.dir / "host_ed25519.pub").read_text().split()[:2]
    return kt, b64


def test_bad_known_hosts_lines_are_reported_and_skipped(ssh_env, sshd, make_connector):
    """Regression: one @cert-authority, @revoked or truncated line anywhere made every host
    fail with a paramiko traceback. Bad lines are skipped and named (file:line) now."""
    kt, b64 = _host_pub(sshd)
    known = ssh_env["known"]
    known.write_text(
        "# a comment, then a blank line\n\n"
        "@cert-authority *.example.org ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB6wbfM8tpZ4ZH\n"
        f"[10.9.9.9]:22 ssh-ed25519 {b64[:20]}\n"  # truncated key of another host
        "garbage-without-fields\n"
        f"[127.0.0.1]:{sshd.port} {kt} {b64}\n")
    c = make_connector("gpu")
    conn = c.connect()
    conn.close()
    said = " ".join(c.messages)
    assert f"{known}:5: not a known_hosts line" in said
    assert f"{known}:6" not in said  # the good line is fine
    # the @cert-authority and truncated lines name other hosts: their keys are never used
    assert f"{known}:3" not in said and f"{known}:4" not in said


def test_truncated_line_for_this_host_is_named(ssh_env, sshd, make_connector):
    kt, b64 = _host_pub(sshd)
    ssh_env["known"].write_text(f"[127.0.0.1]:{sshd.port} {kt} {b64[:30]}\n"
                                f"[127.0.0.1]:{sshd.port} {kt} {b64}\n")
    c = make_connector("gpu")
    c.connect().close()
    assert any(f"{ssh_env['known']}:1: the key" in m and "truncated" in m for m in c.messages)


def test_check_with_bad_known_hosts_lines_runs_and_never_exits_1(ssh_env, sshd, tmp_path):
    kt, b64 = _host_pub(sshd)
    ssh_env["known"].write_text(
        f"@revoked [10.1.1.1]:22 {kt} {b64[:10]}\n"
        "@cert-authority * ssh-ed25519 AAAA\n"
        f"[127.0.0.1]:{sshd.port} {kt} {b64}\n")
    log = tmp_path / "ok.log"
    log.write_text("hello\n")
    proc = subprocess.run(
        [sys.executable, "-m", "kvtui", "ssh", "-F", str(ssh_env["config"]), "gpu", "--log",
         str(log), "--check", "--json", "--fail-on", "never", "--no-checkpoint"],
        capture_output=True, text=True, timeout=60, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr


def test_revoked_host_key_is_refused_even_when_also_listed(ssh_env, sshd, make_connector,
                                                          tmp_path):
    kt, b64 = _host_pub(sshd)
    ssh_env["known"].write_text(f"[127.0.0.1]:{sshd.port} {kt} {b64}\n"
                                f"@revoked * {kt} {b64}\n")
    for accept in (False, True):
        with pytest.raises(SSHError) as info:
            make_connector("gpu", accept_new_host_key=accept).connect()
        assert info.value.fatal and "REVOKED" in str(info.value)
        assert f"{ssh_env['known']}:2" in str(info.value)
    assert not ssh_env["kvtui_known"].exists()  # never recorded
    log = tmp_path / "r.log"
    log.write_text("x\n")
    proc = subprocess.run(
        [sys.executable, "-m", "kvtui", "ssh", "-F", str(ssh_env["config"]), "gpu", "--log",
         str(log), "--check", "--accept-new-host-key"],
        capture_output=True, text=True, timeout=60, env=dict(os.environ))
    assert proc.returncode == 2 and "REVOKED" in proc.stderr and "Traceback" not in proc.stderr


def test_revoked_key_with_another_key_known_is_refused_as_revoked(ssh_env, sshd,
                                                                  make_connector):
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                    str(ssh_env["tmp"] / "other")], check=True, timeout=30)
    kt, b64 = _host_pub(sshd)
    okt, ob64 = (ssh_env["tmp"] / "other.pub").read_text().split()[:2]
    ssh_env["known"].write_text(f"[127.0.0.1]:{sshd.port} {okt} {ob64}\n"
                                f"@revoked [127.0.0.1]:* {kt} {b64}\n")
    with pytest.raises(SSHError) as info:
        make_connector("gpu").connect()
    assert "REVOKED" in str(info.value) and "CHANGED" not in str(info.value)


def test_hashed_wildcard_and_negated_entries(ssh_env, sshd, make_connector):
    kt, b64 = _host_pub(sshd)
    line = f"[127.0.0.1]:{sshd.port} {kt} {b64}\n"
    ssh_env["known"].write_text(line)
    subprocess.run(["ssh-keygen", "-H", "-f", str(ssh_env["known"])], check=True, timeout=30,
                   capture_output=True)
    assert ssh_env["known"].read_text().startswith("|1|")
    assert _whoami(make_connector("gpu")).startswith("ok:")
    ssh_env["known"].write_text(f"[127.0.0.?]:{sshd.port},[otherhost]:* {kt} {b64}\n")
    assert _whoami(make_connector("gpu")).startswith("ok:")
    ssh_env["known"].write_text(f"[127.0.0.*]:*,![127.0.0.1]:{sshd.port} {kt} {b64}\n")
    with pytest.raises(SSHError, match="not known"):
        make_connector("gpu").connect()


def test_cert_authority_only_says_why_the_key_is_unknown(ssh_env, sshd, make_connector):
    ssh_env["known"].write_text(f"@cert-authority [127.0.0.1]:* ssh-ed25519 "
                                f"{_host_pub(sshd)[1]}\n")
    with pytest.raises(SSHError) as info:
        make_connector("gpu").connect()
    msg = str(info.value)
    assert "not known" in msg and "certificate authority" in msg
    assert f"{ssh_env['known']}:1" in msg


# -- which known_hosts line decides: OpenSSH's rule (issue 36 point 8) ------------------------

def _fake_key(ssh_env, name: str, kind: str = "ed25519") -> tuple[str, str]:
    subprocess.run(["ssh-keygen", "-q", "-t", kind, "-N", "", "-f", str(ssh_env["tmp"] / name)],
                   check=True, timeout=30)
    kt, b64 = (ssh_env["tmp"] / f"{name}.pub").read_text().split()[:2]
    return kt, b64


def test_an_old_key_in_kvtuis_file_does_not_override_a_newer_one_in_ssh_known_hosts(
        ssh_env, sshd, make_connector):
    """Regression: kvtui's own file was read last and its (older) key replaced the one from
    ~/.ssh/known_hosts, so the host's real key was refused as CHANGED."""
    kt, b64 = _fake_key(ssh_env, "old_host_key")
    ssh_env["kvtui_known"].write_text(f"[127.0.0.1]:{sshd.port} {kt} {b64}\n")
    assert _whoami(make_connector("gpu")).startswith("ok:")  # ~/.ssh has the real key


def test_kvtuis_file_never_vouches_for_a_key_ssh_known_hosts_contradicts(ssh_env, sshd,
                                                                          make_connector):
    kt, b64 = _fake_key(ssh_env, "newer_key")
    ssh_env["known"].write_text(f"[127.0.0.1]:{sshd.port} {kt} {b64}\n")
    ssh_env["kvtui_known"].write_text(sshd.known_hosts_line())
    with pytest.raises(SSHError) as info:
        make_connector("gpu").connect()
    assert "HOST KEY CHANGED" in str(info.value)


def test_any_line_listing_the_key_makes_it_known(ssh_env, sshd, make_connector):
    """As in ssh: two lines of one type for the host (a stale one first) and one matches."""
    kt, b64 = _fake_key(ssh_env, "stale")
    ssh_env["known"].write_text(f"[127.0.0.1]:{sshd.port} {kt} {b64}\n"
                                + sshd.known_hosts_line())
    assert _whoami(make_connector("gpu")).startswith("ok:")


def test_a_key_of_another_type_known_makes_the_key_new_not_changed(ssh_env, sshd,
                                                                    make_connector):
    """ssh calls the key new (HOST_NEW) when only keys of other types are known; paramiko's
    own check called it changed."""
    kt, b64 = _fake_key(ssh_env, "ecdsa_only", "ecdsa")
    ssh_env["known"].write_text(f"[127.0.0.1]:{sshd.port} {kt} {b64}\n")
    with pytest.raises(SSHError) as info:
        make_connector("gpu").connect()
    assert "not known" in str(info.value) and "CHANGED" not in str(info.value)


def _strict_config(ssh_env, value: str):
    cfg = ssh_env["tmp"] / f"ssh_config_strict_{value}"
    cfg.write_text(f"Host gpu\n  StrictHostKeyChecking {value}\n"
                   + ssh_env["config"].read_text())
    return cfg


@pytest.mark.parametrize("value", ["accept-new", "no"])
def test_strict_host_key_checking_accept_new_in_ssh_config_records_a_new_key(
        ssh_env, sshd, value):
    ssh_env["known"].write_text("")
    spec = resolve_host("gpu", config_path=str(_strict_config(ssh_env, value)))
    assert spec.strict_host_key_checking == value
    c = Connector(spec, load_identities(spec, None))
    assert _whoami(c).startswith("ok:")
    assert any("recorded new host key" in m for m in c.messages)
    assert ssh_env["kvtui_known"].read_text().startswith(f"[127.0.0.1]:{sshd.port} ssh-ed25519")
    assert ssh_env["known"].read_text() == ""  # OpenSSH's file is never written


def test_strict_host_key_checking_yes_refuses_and_says_so(ssh_env, sshd):
    ssh_env["known"].write_text("")
    spec = resolve_host("gpu", config_path=str(_strict_config(ssh_env, "yes")))
    with pytest.raises(SSHError) as info:
        Connector(spec, load_identities(spec, None)).connect()
    assert "not known" in str(info.value) and "StrictHostKeyChecking yes" in str(info.value)
    assert not ssh_env["kvtui_known"].exists()


def test_strict_host_key_checking_no_still_refuses_a_changed_key(ssh_env, sshd):
    kt, b64 = _fake_key(ssh_env, "changed_strict_no")
    ssh_env["known"].write_text(f"[127.0.0.1]:{sshd.port} {kt} {b64}\n")
    spec = resolve_host("gpu", config_path=str(_strict_config(ssh_env, "no")))
    with pytest.raises(SSHError) as info:
        Connector(spec, load_identities(spec, None)).connect()
    assert "HOST KEY CHANGED" in str(info.value)
