"""`kvtui fleet FILE.toml`: the servers of a deployment, one `[[server]]` table each.

```toml
[[server]]
host = "gpu-a"                # an ssh_config alias or a host name (user@host works too)
log = "/var/log/sglang.log"   # optional: discovery when no source is named
role = "prefill"              # optional: prefill | decode | replica | node | router
metrics_port = 30000          # optional: the server's /metrics port (kept for issue 37)
```
A `router` entry is the prefill/decode router's log (no engine's: it is read for the requests
it saw fail, `kvtui.core.fleet.router`); it must name its source, since discovery looks for
engines.
`docker`, `kubectl` (with `namespace`, `container`) and `journal` name the other sources
`kvtui ssh` follows (at most one source per entry); `port`, `user`, `identity` override the
ssh config as `kvtui ssh -p/-l/-i` do. Each entry is one server and one connection, named by its
`host` value: two aliases of one address are two servers.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from typing import Any

from kvtui.core.fleet.server import ROLES, ROUTER

SOURCE_KEYS: tuple[str, ...] = ("log", "docker", "kubectl", "journal")
_KEYS = frozenset({"host", "role", "metrics_port", "namespace", "container", "port", "user",
                   "identity", *SOURCE_KEYS})


class FleetConfigError(ValueError):
    """The file cannot describe a fleet; the message names the entry and the key."""


@dataclass(frozen=True, slots=True)
class Entry:
    host: str
    role: str | None = None
    source: tuple[str, str] | None = None  # (kind, value): kind "file" for `log`
    metrics_port: int | None = None
    namespace: str | None = None
    container: str | None = None
    port: int | None = None
    user: str | None = None
    identity: str | None = None


def _str(where: str, table: dict[str, Any], key: str) -> str | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value or value.startswith("-"):
        raise FleetConfigError(f"{where}: {key} must be a non-empty string not starting "
                               f"with '-'")
    return value


def _port(where: str, table: dict[str, Any], key: str) -> int | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 < value < 65536:
        raise FleetConfigError(f"{where}: {key} must be a port number (1-65535)")
    return value


def entries_of(data: dict[str, Any]) -> list[Entry]:
    tables = data.get("server")
    if not isinstance(tables, list) or not tables:
        raise FleetConfigError("no [[server]] table: the file names no server")
    unknown_top = set(data) - {"server"}
    if unknown_top:
        raise FleetConfigError(f"unknown top-level key(s): {', '.join(sorted(unknown_top))}")
    out: list[Entry] = []
    seen: set[str] = set()
    for i, table in enumerate(tables, 1):
        where = f"server {i}"
        if not isinstance(table, dict):
            raise FleetConfigError(f"{where}: not a table")
        unknown = set(table) - _KEYS
        if unknown:
            raise FleetConfigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        host = _str(where, table, "host")
        if host is None:
            raise FleetConfigError(f"{where}: host is required")
        where = f"server {i} ({host})"
        if host in seen:
            raise FleetConfigError(f"{where}: host named twice (each entry is one server)")
        seen.add(host)
        role = _str(where, table, "role")
        if role is not None and role not in ROLES:
            raise FleetConfigError(f"{where}: role must be one of {', '.join(ROLES)}")
        named = [(k, v) for k in SOURCE_KEYS if (v := _str(where, table, k)) is not None]
        if len(named) > 1:
            keys = ", ".join(k for k, _ in named)
            raise FleetConfigError(f"{where}: one source per entry ({keys})")
        if role == ROUTER and not named:
            raise FleetConfigError(f"{where}: a router must name its log (log, docker, kubectl "
                                   "or journal): discovery finds engine servers, not routers")
        source = None
        if named:
            kind, value = named[0]
            source = ("file" if kind == "log" else kind, value)
        out.append(Entry(host=host, role=role, source=source,
                         metrics_port=_port(where, table, "metrics_port"),
                         namespace=_str(where, table, "namespace"),
                         container=_str(where, table, "container"),
                         port=_port(where, table, "port"), user=_str(where, table, "user"),
                         identity=_str(where, table, "identity")))
    return out


def parse(text: str) -> list[Entry]:
    """The entries of a fleet file (FleetConfigError: what is wrong, and where)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise FleetConfigError(f"not TOML: {exc}") from None
    return entries_of(data)


def from_hosts(hosts: list[str]) -> list[Entry]:
    """`kvtui ssh HOST1 HOST2 ...`: one entry per host, discovery on each."""
    return entries_of({"server": [{"host": h} for h in hosts]})
