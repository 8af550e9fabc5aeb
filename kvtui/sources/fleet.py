"""Reading one server of a fleet over SSH (`kvtui fleet`, `kvtui ssh H1 H2`, the exporter's
`--host`): connect as `kvtui ssh HOST` does, find or follow its log, fold it through the one
pipeline.

Why in the sources: it is IO that the fleet's command, its screen and the exporter all use;
in the command it made the screen import a command (an import circle).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from kvtui.core.fleet.config import Entry


@dataclass
class ReadOptions:
    config: str | None = None
    accept_new_host_key: bool = False
    connect_timeout: float | None = None
    give_up_after: float = 30.0
    python: str = "python3"
    lines: int | None = None  # None: the whole log so far
    # read the served checkpoint's KV scales over the entry's connection after its log, as
    # `kvtui ssh --check` does (`--no-checkpoint`: the log's word alone)
    checkpoint: bool = True


def connector_for(entry: Entry, opts: ReadOptions) -> Any:
    """A Connector for the entry, as `kvtui ssh HOST` builds one (no passphrase prompt: many
    hosts are read at once; an encrypted key needs the agent)."""
    from kvtui.sources.ssh.config import resolve_host, resolve_jump
    from kvtui.sources.ssh.connect import Connector, load_identities

    host, user = entry.host, entry.user
    if "@" in host and not user:
        user, host = host.rsplit("@", 1)
    spec = resolve_host(host, config_path=opts.config, port=entry.port, user=user,
                        identity=entry.identity)
    jumps = [resolve_jump(h, spec) for h in spec.proxy_jump]
    identities = load_identities(spec, None, extra_specs=jumps)
    return Connector(spec, identities, accept_new_host_key=opts.accept_new_host_key,
                     timeout=opts.connect_timeout)


def target_for(entry: Entry, conn: Any, opts: ReadOptions) -> tuple[Any, str | None]:
    """The entry's source, or the one discovery finds (kvtui.sources.ssh.discover); ValueError
    when discovery finds none or several (the entry must then name one)."""
    from kvtui.sources.ssh.discover import discover
    from kvtui.sources.ssh.follow import Target

    if entry.source is not None:
        kind, value = entry.source
        return Target(kind, value, python=opts.python, namespace=entry.namespace,
                      container=entry.container), None
    found = discover(conn)
    usable = [c for c in found.candidates if c.kind != "none"]
    if len(usable) != 1:
        what = "no server log found" if not usable else (
            f"{len(usable)} candidates (" + "; ".join(c.label for c in usable[:4]) + ")")
        raise ValueError(f"discovery: {what}: name log= (or docker / kubectl / journal) "
                         "for this server")
    c = usable[0]
    return Target(c.kind, c.target, python=opts.python, namespace=c.namespace,
                  container=c.container), c.model_path


def addresses_of(connector: Any) -> tuple[str, ...]:
    """What else the entry's host is reached by (`Server.addresses`): its ssh_config
    HostName and the addresses it resolves to here (a router names servers by URL; nothing
    when the name does not resolve)."""
    import socket

    name = connector.spec.hostname
    out = [name]
    try:
        for *_, sockaddr in socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP):
            out.append(str(sockaddr[0]))
    except (OSError, UnicodeError):
        pass
    return tuple(dict.fromkeys(out))


def describe(target: Any) -> str:
    return f"{target.kind} {target.value}"


def read_entry(entry: Entry, opts: ReadOptions) -> Any:
    """One server's log so far, folded by the one pipeline, with its transfer failures: an
    Outcome (kvtui.core.fleet.result), never an exception."""
    from kvtui.core.fleet import TransferWatch, server_of
    from kvtui.core.fleet.result import Outcome
    from kvtui.core.fleet.router import RouterWatch
    from kvtui.core.fleet.server import ROUTER
    from kvtui.core.pipeline import Session
    from kvtui.sources.base import SourceNotice
    from kvtui.sources.ssh.blocks import LineBlock
    from kvtui.sources.ssh.config import SSHConfigError
    from kvtui.sources.ssh.connect import SSHError
    from kvtui.sources.ssh.follow import RemoteFollower

    try:
        connector = connector_for(entry, opts)
        conn = connector.connect()
    except (SSHConfigError, SSHError, OSError) as exc:
        return Outcome(entry.host, entry.role, None, error=f"unreachable: {exc}")
    source = None
    try:
        try:
            target, model_path = target_for(entry, conn, opts)
        except (ValueError, SSHError) as exc:
            return Outcome(entry.host, entry.role, None, error=str(exc))
        source = describe(target)
        session = Session()
        watch = TransferWatch()
        router = RouterWatch() if entry.role == ROUTER else None
        errors: list[str] = []

        def deliver(batch: list[Any]) -> None:
            for item in batch:
                if isinstance(item, LineBlock) and not item.prelude:
                    if router is not None:  # no engine's log: only its failures are read
                        router.feed_lines(item.source, item.texts, item.first_line_no)
                        continue
                    session.feed_lines(item.source, item.texts, item.first_line_no)
                    watch.feed_lines(item.source, item.texts, item.first_line_no)
                elif isinstance(item, SourceNotice) and item.state == "error":
                    errors.append(item.message)

        follower = RemoteFollower(connector, target, lines=opts.lines, stop_at_end=True,
                                  connection=conn, host_label=entry.host,
                                  model_path=model_path, give_up_after=opts.give_up_after)
        follower.run_blocks(deliver, threading.Event())
        session.end()
        if entry.metrics_port is not None and router is None:
            scrape_once(conn, entry, session)
        if opts.checkpoint and router is None and session.engine is not None:
            from kvtui.sources.ssh.checkpoint import inspect_after_read

            path = model_path or session.report().model.path
            if path:
                session.configure(checkpoint=inspect_after_read(connector, conn, path,
                                                                entry.host, opts.python))
        if errors:
            return Outcome(entry.host, entry.role, None, error=errors[-1], source=source)
        server = server_of(entry.host, entry.role, session,
                           transfer_failures=watch.count, transfer_evidence=watch.evidence,
                           router=router.facts() if router is not None else None,
                           addresses=addresses_of(connector))
        return Outcome(entry.host, entry.role, server, source=source)
    except Exception as exc:  # one host's failure is that host's error, not the fleet's
        return Outcome(entry.host, entry.role, None, source=source,
                       error=f"{type(exc).__name__}: {exc}")
    finally:
        conn.close()


def read_all(entries: Sequence[Entry], opts: ReadOptions, parallel: int,
             read: Callable[[Entry, ReadOptions], Any] = read_entry) -> list[Any]:
    """Every entry read, `parallel` at a time, in the file's order."""
    with ThreadPoolExecutor(max_workers=max(1, min(parallel, len(entries)))) as pool:
        return list(pool.map(lambda e: read(e, opts), entries))


def scrape_once(conn: Any, entry: Entry, session: Any) -> None:
    """One scrape of the entry's `metrics_port` on its host's loopback, over the fleet's SSH
    connection (a direct-tcpip channel, as `kvtui ssh`), fed to the session: its facts, its
    load figures (kvtui.core.fleet.load) and its log+metrics alerts join the server's report;
    a failed scrape is said there too (state and detail), never raised."""
    from kvtui.sources.metrics import Scraper, deliver
    from kvtui.sources.ssh.metrics import channel_fetcher

    port = entry.metrics_port
    fetcher = channel_fetcher(lambda: conn.transport, lambda: (port, "metrics_port"))
    result = Scraper(f"ssh://{entry.host}/metrics", fetcher=fetcher).scrape()
    deliver(result, session, f"{entry.host}:{port} /metrics over SSH")
