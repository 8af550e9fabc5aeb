"""The fleet file (kvtui.core.fleet.config): what it accepts, and errors that name the entry."""

from __future__ import annotations

import re

import pytest

from kvtui.core.fleet.config import FleetConfigError, from_hosts, parse


@pytest.mark.parametrize("body,msg", [
    ("", "no [[server]] table"),
    ("[[server]]\nlog = '/x'\n", "host is required"),
    ("[[server]]\nhost = 'a'\nrole = 'leader'\n", "role must be one of"),
    ("[[server]]\nhost = 'a'\nlog = '/x'\ndocker = 'c'\n", "one source per entry"),
    ("[[server]]\nhost = 'a'\n[[server]]\nhost = 'a'\n", "host named twice"),
    ("[[server]]\nhost = 'a'\nmetrics_port = 99999\n", "port number"),
    ("[[server]]\nhost = 'a'\nlgo = '/x'\n", "unknown key(s) lgo"),
    ("[[server]]\nhost = '-oProxyCommand=x'\n", "not starting with '-'"),
])
def test_config_errors_name_the_entry(body, msg):
    with pytest.raises(FleetConfigError, match=re.escape(msg)):
        parse(body)


def test_config_sources_and_roles():
    entries = parse("[[server]]\nhost = 'gpu-a'\nlog = '/var/log/s.log'\nrole = 'prefill'\n"
                    "metrics_port = 30000\n[[server]]\nhost = 'gpu-b'\nkubectl = 'pod-1'\n"
                    "namespace = 'ml'\n[[server]]\nhost = 'gpu-c'\njournal = 'sglang'\n")
    assert [(e.host, e.role, e.source) for e in entries] == [
        ("gpu-a", "prefill", ("file", "/var/log/s.log")), ("gpu-b", None, ("kubectl", "pod-1")),
        ("gpu-c", None, ("journal", "sglang"))]
    assert entries[0].metrics_port == 30000 and entries[1].namespace == "ml"


def test_hosts_of_kvtui_ssh_are_entries_with_discovery():
    entries = from_hosts(["gpu-a", "gpu-b"])
    assert [(e.host, e.source) for e in entries] == [("gpu-a", None), ("gpu-b", None)]
    with pytest.raises(FleetConfigError, match="host named twice"):
        from_hosts(["gpu-a", "gpu-a"])


def test_hosts_are_read_in_parallel_within_the_bound():
    """read_all runs the reads on a pool of --parallel threads, in the file's order."""
    import threading

    from kvtui.sources.fleet import ReadOptions, read_all

    lock = threading.Lock()
    running = [0, 0]  # now, most at once
    release = threading.Event()

    def read(entry, _opts):
        with lock:
            running[0] += 1
            running[1] = max(running[1], running[0])
            if running[0] == 3:
                release.set()
        release.wait(30)
        with lock:
            running[0] -= 1
        return entry.host

    hosts = [f"h{i}" for i in range(7)]
    got = read_all(from_hosts(hosts), ReadOptions(), 3, read=read)
    assert got == hosts
    assert running[1] == 3  # three at once (they waited for each other), never more
