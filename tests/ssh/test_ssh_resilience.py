"""Long sessions over a real sshd (issue 16): backoff that starts over, drops behind a
ProxyCommand, the real reason of a down link, login banners, and a remote side that does not
outlive its channel. Links are cut inside network namespaces the tests make themselves."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest
from _sshutil import Collector, pids_matching

from kvtui.sources.ssh.follow import RemoteFollower, Target


def _append(path, lines) -> None:
    with open(path, "a") as f:
        f.write("".join(f"{x}\n" for x in lines))


def _follower(connector, path, **kw) -> RemoteFollower:
    kw.setdefault("keepalive", 1.0)
    kw.setdefault("backoff", (0.2, 1.0))
    return RemoteFollower(connector, Target("file", str(path)), **kw)


def test_backoff_starts_over_after_a_healthy_stretch(make_connector, own_sshd, ssh_env,
                                                     tmp_path):
    """Regression: `attempt = 0` was unreachable, so after a few drops every later drop left
    the user blind for the longest delay. A session that worked for `healthy_after` s resets it.
    """
    with open(ssh_env["known"], "a") as f:
        f.write(own_sshd.known_hosts_line())
    log = tmp_path / "b.log"
    _append(log, ["b1"])
    src = _follower(make_connector("gpu", port=own_sshd.port), log, backoff=(0.25, 2.0),
                    rng=lambda: 0.5, healthy_after=1.0)
    delays: list[float] = []  # each wait before a reconnect (rng 0.5: no jitter)
    wait = src._wait_reconnect

    def record(deliver, stop, delay, reason):
        delays.append(delay)
        wait(deliver, stop, delay, reason)

    src._wait_reconnect = record
    with Collector(src) as c:
        c.wait(lambda: c.notices("live"), what="live")
        own_sshd.kill_all()
        # down long enough for the delays to grow to the cap (0.25, 0.5, 1, 2)
        c.wait(lambda: 2.0 in delays, timeout=30, what="backoff at its cap")
        own_sshd.start()
        c.wait(lambda: src.healthy, timeout=30, what="a healthy stretch")
        seen = len(delays)
        own_sshd.kill_all()
        c.wait(lambda: len(delays) > seen, timeout=15, what="the next drop")
        assert delays[:4] == [0.25, 0.5, 1.0, 2.0]
        assert delays[seen] == 0.25  # the first delay again, not the cap
        own_sshd.start()
        _append(log, ["b2"])
        c.wait(lambda: c.texts() == ["b1", "b2"], timeout=30, what="resumed")


def _relay_pids(ssh_env) -> list[int]:
    return pids_matching(str(ssh_env["tmp"] / "relay.py"))


def test_drop_behind_a_proxycommand_is_seen_at_once(make_connector, ssh_env, tmp_path):
    """Regression: when the ProxyCommand ended, paramiko's proxy socket spun a core on
    `select` until the keepalive gave up (~3 keepalives). EOF ends the transport at once now,
    and the reason says the proxy ended. The keepalive here is 30 s: only EOF can be quick."""
    log = tmp_path / "p.log"
    _append(log, ["p1"])
    src = _follower(make_connector("gpu-via-proxycommand"), log, keepalive=30.0)
    with Collector(src) as c:
        c.wait(lambda: c.notices("live"), what="live")
        relays = _relay_pids(ssh_env)
        assert relays
        for pid in relays:
            os.kill(pid, signal.SIGKILL)
        c.wait(lambda: c.notices("reconnecting"), timeout=20, what="the drop noticed")
        assert "ProxyCommand ended" in c.notices("reconnecting")[0].message
        _append(log, ["p2"])
        c.wait(lambda: c.texts() == ["p1", "p2"], timeout=30, what="back through a new proxy")


def _config_with(ssh_env, block: str):
    cfg = ssh_env["tmp"] / "ssh_config_extra"
    cfg.write_text(textwrap.dedent(block) + ssh_env["config"].read_text())
    return cfg


def test_failing_proxycommand_shows_its_own_error(ssh_env, tmp_path):
    proxy = tmp_path / "proxy.sh"
    proxy.write_text("#!/bin/sh\necho 'bastion.example: Name or service not known' >&2\n"
                     "exit 255\n")
    proxy.chmod(0o755)
    cfg = _config_with(ssh_env, f"""\
        Host gpu-bad-proxy
          HostName 127.0.0.1
          ProxyCommand {proxy} %h %p
        """)
    log = tmp_path / "x.log"
    _append(log, ["x"])
    proc = subprocess.run(
        [sys.executable, "-m", "kvtui", "ssh", "-F", str(cfg), "gpu-bad-proxy", "--log",
         str(log), "--check", "--no-checkpoint"],
        capture_output=True, text=True, timeout=60, env=dict(os.environ))
    assert proc.returncode == 2
    assert "bastion.example: Name or service not known" in proc.stderr
    assert "exit status 255" in proc.stderr and "Traceback" not in proc.stderr


def _ns_follower(make_sshd, make_connector, netns_pair, path, **kw):
    server = make_sshd("ns", netns=netns_pair["server"], address=netns_pair["server_ip"])
    connector = make_connector("gpu", port=server.port, hostname=netns_pair["server_ip"])
    return server, _follower(connector, path, **kw)


def test_a_down_link_says_no_route_to_host_not_connection_refused(make_sshd, make_connector,
                                                                  netns_pair, tmp_path):
    log = tmp_path / "n.log"
    _append(log, ["n1"])
    server, src = _ns_follower(make_sshd, make_connector, netns_pair, log)
    ip, client = netns_pair["ip"], netns_pair["client"]
    target = netns_pair["server_ip"] + "/32"
    with Collector(src, netns=client) as c:
        c.wait(lambda: c.notices("live"), what="live")
        ip("-n", client, "route", "add", "unreachable", target)
        c.wait(lambda: any("no route to host" in n.message for n in c.notices("reconnecting")),
               timeout=30, what="'no route to host' while the route is gone")
        assert not any("refused" in n.message for n in c.notices("reconnecting"))
        ip("-n", client, "route", "del", "unreachable", target)
        server.kill_all()
        c.wait(lambda: any("connection refused" in n.message
                           for n in c.notices("reconnecting")),
               timeout=30, what="'connection refused' once the host answers but sshd is down")
        server.start()
        _append(log, ["n2"])
        c.wait(lambda: c.texts() == ["n1", "n2"], timeout=30, what="resumed, every line once")


@pytest.mark.parametrize("kind", ["file", "cmd"])
def test_the_remote_side_ends_soon_after_a_link_that_never_heals(make_sshd, make_connector,
                                                                 netns_pair, tmp_path, kind):
    """Regression: after a drop that never heals the remote follower lived ~12 minutes (no EOF
    arrives until TCP gives up). It now exits when the client's heartbeat stops."""
    log = tmp_path / f"gone-{kind}.log"
    _append(log, ["g1"])
    server = make_sshd("ns", netns=netns_pair["server"], address=netns_pair["server_ip"])
    connector = make_connector("gpu", port=server.port, hostname=netns_pair["server_ip"])
    if kind == "file":
        src = _follower(connector, log)
        marker = ("kvtui-follow", str(log))
    else:
        src = RemoteFollower(connector, Target("cmd", f"tail -n +1 -f {log}"), keepalive=1.0,
                             backoff=(0.2, 1.0))
        marker = ("tail", str(log))
    with Collector(src, netns=netns_pair["client"]) as c:
        c.wait(lambda: c.texts() == ["g1"], what="live")
        assert pids_matching(*marker)
        netns_pair["ip"]("-n", netns_pair["client"], "link", "set", "vc", "down")
        c.wait(lambda: c.notices("reconnecting"), timeout=30, what="the client notices")
        c.wait(lambda: not pids_matching(*marker), timeout=60, what="the remote side gone")


BANNER = "Welcome to gpu-7 \x1b[1mmanaged by ops\x1b[0m"


@pytest.fixture
def banner_sshd(make_sshd, tmp_path):
    """Every session prints a banner on stdout first, like `echo` in a .bashrc."""
    script = tmp_path / "banner.sh"
    script.write_text(f"#!/bin/sh\nprintf '%s\\n' '{BANNER}'\necho 'Last login: never'\n"
                      'exec /bin/sh -c "$SSH_ORIGINAL_COMMAND"\n')
    script.chmod(0o755)
    return make_sshd("banner", extra=f"ForceCommand {script}\n")


def test_login_banner_on_stdout_is_skipped_and_said(make_connector, banner_sshd, tmp_path):
    """Regression: the TUI stayed on "connecting" forever and --check said only "remote
    follower ended"."""
    log = tmp_path / "w.log"
    _append(log, ["w1", "w2"])
    with Collector(_follower(make_connector("gpu", port=banner_sshd.port), log)) as c:
        c.wait(lambda: c.notices("live") and c.texts() == ["w1", "w2"], what="live")
        said = " ".join(n.message for n in c.notices("info"))
        assert "Welcome to gpu-7" in said and "\x1b" not in said
        _append(log, ["w3"])
        c.wait(lambda: c.texts() == ["w1", "w2", "w3"], what="following")
    cmd = RemoteFollower(make_connector("gpu", port=banner_sshd.port),
                         Target("cmd", f"cat {log}"), keepalive=1.0)
    with Collector(cmd) as c:
        c.wait(lambda: c.notices("closed"), what="the command's output")
        assert c.texts() == ["w1", "w2", "w3"]


def test_check_through_a_banner(ssh_env, banner_sshd, tmp_path, capsys):
    import argparse
    import json
    import shutil
    from pathlib import Path

    from kvtui.commands import ssh as ssh_cmd
    from kvtui.commands.check import analyse_files

    log = tmp_path / "server.log"
    shutil.copy(Path(__file__).resolve().parents[2] / "sample_logs" / "llama31-70b-tp8.log", log)
    p = argparse.ArgumentParser()
    ssh_cmd.configure(p)
    args = p.parse_args(["-F", str(ssh_env["config"]), "-p", str(banner_sshd.port), "gpu",
                         "--log", str(log), "--check", "--json", "--fail-on", "never",
                         "--no-checkpoint"])
    assert ssh_cmd.run(args) == 0
    report = json.loads(capsys.readouterr().out)
    local = analyse_files([str(log)])[0].report().to_json()
    assert report["kv_cache"] == json.loads(json.dumps(local["kv_cache"]).replace(
        str(log), f"gpu:{log}"))
    assert report["sources"][0]["lines"] == len(log.read_text().splitlines())


def test_a_follower_that_never_starts_says_what_came_instead(make_sshd, ssh_env, tmp_path):
    script = tmp_path / "only-banner.sh"
    script.write_text("#!/bin/sh\necho 'This account is for batch jobs only.'\nexit 0\n")
    script.chmod(0o755)
    server = make_sshd("nostart", extra=f"ForceCommand {script}\n")
    log = tmp_path / "y.log"
    _append(log, ["y"])
    proc = subprocess.run(
        [sys.executable, "-m", "kvtui", "ssh", "-F", str(ssh_env["config"]), "-p",
         str(server.port), "gpu", "--log", str(log), "--check", "--no-checkpoint"],
        capture_output=True, text=True, timeout=60, env=dict(os.environ))
    assert proc.returncode == 2
    assert "did not start" in proc.stderr
    assert "This account is for batch jobs only." in proc.stderr
