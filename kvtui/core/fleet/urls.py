"""Which fleet entry a router's URL names (`match`): the router's log names the servers it
routes to by URL, mostly by address, where the fleet file names them by ssh_config alias.

Why apart from `router.py`: that module reads the router's log and is what a `Server` holds
(`RouterFacts`); this one reads `Server`s, so keeping them apart keeps the fleet's modules free
of an import circle.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from kvtui.core.fleet.server import Server


def _host_port(url: str) -> tuple[str, int | None] | None:
    try:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    return (host.lower(), port) if host else None


def match(url: str, side: str, servers: Sequence[Server]) -> Server | None:
    """The fleet entry a router's URL names. The entry is known by its `host` (without
    `user@`) and its `addresses` (its ssh_config HostName, what that resolves to); the URL's
    host:port is matched first against an entry written `host:port`, then against an entry
    on that host whose server listens on that port (`Server.http_port`), then the host
    alone; among several, the one of the URL's side. None when none matches or the choice
    is not one."""
    hp = _host_port(url)
    if hp is None:
        return None
    host, port = hp
    named = [(s, {s.name.rsplit("@", 1)[-1].lower(), *(a.lower() for a in s.addresses)})
             for s in servers if not s.is_router]
    on_host = [s for s, names in named if host in names]
    for found in ([s for s, names in named if port is not None and f"{host}:{port}" in names],
                  [s for s in on_host if port is not None and s.http_port == port],
                  on_host):
        if len(found) > 1:
            found = [s for s in found if s.role == side]
        if len(found) == 1:
            return found[0]
        if found:
            return None
    return None
    return None
