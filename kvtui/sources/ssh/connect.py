"""Opening (and re-opening) an SSH connection to a resolved host, jump chain included.

Every `Connector.connect()` builds fresh `SSHClient`s (reusing one leaks transports, paramiko
#1152); keys are loaded once, up front, so a passphrase is asked before any TUI owns the terminal
and never again on reconnect. Failures become `SSHError` with a one-line message and a `fatal` flag:
host-key and authentication problems must not be retried in a loop, network problems should be.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import paramiko
from paramiko.auth_strategy import AuthSource, AuthStrategy, InMemoryPrivateKey

from kvtui.sources.ssh.config import HostSpec, resolve_jump
from kvtui.sources.ssh.hostkeys import (
    HostKeyError,
    TrustOnFirstUsePolicy,
    changed_key_message,
    host_key_name,
    kvtui_known_hosts_path,
    load_known_hosts,
    revoked_message,
)
from kvtui.sources.ssh.proxy import ProxySocket

# paramiko logs a dying transport (with a traceback) at ERROR; with no handler configured Python
# prints that on stderr, over the TUI or into a --check log. kvtui reports failures itself.
logging.getLogger("paramiko").addHandler(logging.NullHandler())

DEFAULT_KEY_FILES = ("~/.ssh/id_ed25519", "~/.ssh/id_ecdsa", "~/.ssh/id_rsa")
MAX_JUMP_DEPTH = 8


class SSHError(Exception):
    """A connection failure explained in one line; `fatal` means retrying will not help."""

    def __init__(self, message: str, *, fatal: bool = False) -> None:
        super().__init__(message)
        self.fatal = fatal


PassphrasePrompt = Callable[[str], str | None]


@dataclass
class Identities:
    """Private keys loaded before connecting, and whether the agent may be asked."""

    keys: list[tuple[str, paramiko.PKey]] = field(default_factory=list)
    use_agent: bool = True
    notes: list[str] = field(default_factory=list)  # keys skipped, and why

    def sources(self, username: str) -> Iterator[AuthSource]:
        for _path, key in self.keys:
            yield InMemoryPrivateKey(username, key)
        if self.use_agent:
            try:
                agent_keys = paramiko.Agent().get_keys()
            except (paramiko.SSHException, OSError):
                agent_keys = ()
            for key in agent_keys:
                yield InMemoryPrivateKey(username, key)


def _agent_blobs() -> set[bytes]:
    if not os.environ.get("SSH_AUTH_SOCK"):
        return set()
    try:
        return {k.asbytes() for k in paramiko.Agent().get_keys()}
    except (paramiko.SSHException, OSError):
        return set()


def _pub_blob(path: str) -> bytes | None:
    try:
        with open(path + ".pub", encoding="ascii", errors="replace") as f:
            parts = f.read().split()
        import base64

        return base64.b64decode(parts[1]) if len(parts) >= 2 else None
    except (OSError, ValueError):
        return None


def load_identities(spec: HostSpec, prompt: PassphrasePrompt | None,
                    extra_specs: list[HostSpec] | None = None) -> Identities:
    """Load the key files `ssh` would offer, asking `prompt(path)` for encrypted ones.

    An encrypted key whose public half is already in the agent is not prompted for: the agent
    will sign with it, as OpenSSH would.
    """
    ids = Identities(use_agent=not spec.identities_only)
    paths: list[str] = []
    explicit = False
    for s in [spec, *(extra_specs or [])]:
        for p in s.identity_files:
            explicit = True
            if p not in paths:
                paths.append(p)
    if not explicit and not spec.identities_only:
        paths = [os.path.expanduser(p) for p in DEFAULT_KEY_FILES]
    agent = _agent_blobs() if ids.use_agent else set()
    for path in paths:
        if not os.path.isfile(path):
            if explicit:
                ids.notes.append(f"{path}: no such key file")
            continue
        try:
            key = paramiko.PKey.from_path(path)
        except (paramiko.PasswordRequiredException, TypeError):
            # cryptography raises TypeError("Key is password-protected...") for OpenSSH keys
            blob = _pub_blob(path)
            if blob is not None and blob in agent:
                continue
            key = _load_encrypted(path, prompt, ids)
            if key is None:
                continue
        except (paramiko.SSHException, OSError, ValueError) as exc:
            ids.notes.append(f"{path}: cannot load key ({exc})")
            continue
        ids.keys.append((path, key))
    return ids


def _load_encrypted(path: str, prompt: PassphrasePrompt | None,
                    ids: Identities) -> paramiko.PKey | None:
    for _attempt in range(3):
        secret = prompt(path) if prompt else None
        if secret is None:
            ids.notes.append(f"{path}: encrypted, no passphrase available (skipped)")
            return None
        try:
            return paramiko.PKey.from_path(path, secret.encode())  # type: ignore[arg-type]
        except (paramiko.SSHException, ValueError, TypeError):
            continue
    ids.notes.append(f"{path}: wrong passphrase (skipped)")
    return None


class _Strategy(AuthStrategy):
    def __init__(self, ids: Identities, username: str) -> None:
        super().__init__(ssh_config=None)
        self.ids = ids
        self.username = username

    def get_sources(self) -> Iterator[AuthSource]:
        yield from self.ids.sources(self.username)


class Connection:
    """One live SSH connection (plus the jump connections under it) and its liveness pinger."""

    def __init__(self, client: paramiko.SSHClient, chain: list[paramiko.SSHClient],
                 spec: HostSpec, socks: list[Any]) -> None:
        self.client = client
        self.chain = chain  # jump clients, first hop first; closed in reverse order
        self.spec = spec
        self._socks = socks
        self._sftp: paramiko.SFTPClient | None = None
        self.last_reply = time.monotonic()
        self._ping_started: float | None = None
        self._closed = threading.Event()
        self._pinger: threading.Thread | None = None

    @property
    def transport(self) -> paramiko.Transport:
        t = self.client.get_transport()
        if t is None:
            raise SSHError("connection closed")
        return t

    def start_pinger(self, interval: float) -> None:
        """Send keepalive@openssh.com with want-reply every `interval` s and time the answers.

        paramiko has no ServerAliveCountMax (#918): its keepalives never expect an answer, so a
        dead peer goes unnoticed until TCP gives up. `silent_for()` is what the watchdog checks.
        """
        if interval <= 0 or self._pinger is not None:
            return

        def loop() -> None:
            while not self._closed.wait(interval):
                t = self.client.get_transport()
                if t is None or not t.is_active():
                    return
                self._ping_started = time.monotonic()
                try:
                    t.global_request("keepalive@openssh.com", wait=True)
                except Exception:
                    return
                self._ping_started = None
                self.last_reply = time.monotonic()

        self._pinger = threading.Thread(target=loop, name="kvtui-ssh-ping", daemon=True)
        self._pinger.start()

    def unanswered_for(self) -> float:
        """Seconds the current keepalive has waited for its reply (0 if none outstanding)."""
        started = self._ping_started
        return time.monotonic() - started if started is not None else 0.0

    def is_active(self) -> bool:
        t = self.client.get_transport()
        return bool(t is not None and t.is_active())

    def failure(self) -> str | None:
        """Why the connection died (None while it lives): the ProxyCommand's own words, or the
        socket error paramiko stashed instead of raising (paramiko #2293). The stash is set
        before paramiko closes the channels, so a channel's EOF can be explained at once."""
        t = self.client.get_transport()
        exc = getattr(t, "saved_exception", None) if t is not None else None
        if isinstance(exc, paramiko.AuthenticationException):
            exc = None  # left over from authentication, not a failure of the link
        if t is not None and exc is None and t.is_active():
            return None
        for sock in self._socks:
            if isinstance(sock, ProxySocket) and sock.ended:
                return f"ProxyCommand ended: {sock.describe()}"
        if isinstance(exc, OSError) and exc.errno:
            return _errno_reason(exc.errno)
        if exc is not None and not isinstance(exc, EOFError):
            return str(exc) or type(exc).__name__
        return "connection closed"

    def sftp(self) -> paramiko.SFTPClient:
        """The connection's SFTP session (opened once); SSHError once the transport is gone."""
        if not self.is_active():
            raise SSHError("connection closed")
        chan = self._sftp.get_channel() if self._sftp is not None else None
        if chan is None or chan.closed:
            self._sftp = self.client.open_sftp()
        assert self._sftp is not None
        return self._sftp

    def exec(self, command: str, *, timeout: float = 30.0,
             max_bytes: int = 16 << 20) -> tuple[int | None, bytes, bytes]:
        """Run a short command; returns (exit status or None on timeout, stdout, stderr).

        Output is drained before the exit status is read: `recv_exit_status()` first can deadlock
        on a full window (paramiko #448).
        """
        chan = self.transport.open_session(timeout=timeout)
        try:
            chan.settimeout(0.5)
            chan.exec_command(command)
            chan.shutdown_write()
            out: list[bytes] = []
            err: list[bytes] = []
            size = 0
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                got = False
                while chan.recv_stderr_ready():
                    err.append(chan.recv_stderr(65536))
                    got = True
                try:
                    data = chan.recv(65536)
                except TimeoutError:
                    data = None
                except OSError:
                    break
                if data:
                    out.append(data)
                    size += len(data)
                    got = True
                    if size > max_bytes:
                        break
                elif data == b"":
                    while chan.recv_stderr_ready():
                        err.append(chan.recv_stderr(65536))
                    break
                if not got and chan.exit_status_ready() and not chan.recv_ready():
                    break
            rc = chan.recv_exit_status() if chan.exit_status_ready() else None
            if rc is None and chan.eof_received:
                end = time.monotonic() + 2.0
                while not chan.exit_status_ready() and time.monotonic() < end:
                    time.sleep(0.01)
                rc = chan.recv_exit_status() if chan.exit_status_ready() else None
            return rc, b"".join(out), b"".join(err)
        finally:
            chan.close()

    def close(self) -> None:
        self._closed.set()
        for obj in [self._sftp, self.client, *reversed(self.chain), *self._socks]:
            if obj is None:
                continue
            with contextlib.suppress(Exception):
                obj.close()


class Connector:
    """Knows how to reach one host; `connect()` returns a fresh `Connection` every time."""

    def __init__(self, spec: HostSpec, identities: Identities, *,
                 accept_new_host_key: bool = False, timeout: float | None = None,
                 known_hosts_path: str | None = None) -> None:
        self.spec = spec
        self.identities = identities
        self.accept_new = accept_new_host_key
        self.timeout = timeout or spec.connect_timeout or 10.0
        self.known_hosts_path = known_hosts_path or kvtui_known_hosts_path()
        self.messages: list[str] = []  # e.g. "recorded new host key ..." for the user
        self._reported: set[str] = set()  # known_hosts problems already said once

    def connect(self) -> Connection:
        chain: list[paramiko.SSHClient] = []
        socks: list[Any] = []
        try:
            client = self._connect_spec(self.spec, None, chain, socks, depth=0)
        except BaseException:
            for c in reversed(chain):
                c.close()
            for s in socks:
                with contextlib.suppress(Exception):
                    s.close()
            raise
        return Connection(client, chain, self.spec, socks)

    # -- internals --------------------------------------------------------------------------

    def _connect_spec(self, spec: HostSpec, via: paramiko.SSHClient | None,
                      chain: list[paramiko.SSHClient], socks: list[Any],
                      depth: int) -> paramiko.SSHClient:
        if depth > MAX_JUMP_DEPTH:
            raise SSHError(f"ProxyJump chain deeper than {MAX_JUMP_DEPTH} hops (a loop?)",
                           fatal=True)
        sock: Any = None
        if via is not None:
            sock = self._direct_tcpip(via, spec)
        elif spec.proxy_command:
            try:
                sock = ProxySocket(spec.proxy_command)
            except (OSError, ValueError) as exc:
                raise SSHError(f"ProxyCommand `{spec.proxy_command}` failed to start: "
                               f"{getattr(exc, 'strerror', None) or exc}", fatal=True) from None
            socks.append(sock)
        elif spec.proxy_jump:
            hops = [resolve_jump(h, spec) for h in spec.proxy_jump]
            prev = self._connect_spec(hops[0], None, chain, socks, depth + 1)
            chain.append(prev)
            for hop in hops[1:]:
                hop.proxy_command, hop.proxy_jump = None, []
                prev = self._connect_spec(hop, prev, chain, socks, depth + 1)
                chain.append(prev)
            sock = self._direct_tcpip(prev, spec)
        return self._open_client(spec, sock)

    def _direct_tcpip(self, via: paramiko.SSHClient, spec: HostSpec) -> Any:
        t = via.get_transport()
        if t is None:
            raise SSHError("jump host connection closed")
        try:
            return t.open_channel("direct-tcpip", (spec.hostname, spec.port), ("127.0.0.1", 0),
                                  timeout=self.timeout)
        except paramiko.ChannelException as exc:
            raise SSHError(f"jump host could not reach {spec.hostname}:{spec.port}: "
                           f"{exc.text or exc}") from None
        except (paramiko.SSHException, OSError) as exc:
            raise SSHError(f"jump host could not reach {spec.hostname}:{spec.port}: "
                           f"{exc}") from None

    def _open_client(self, spec: HostSpec, sock: Any) -> paramiko.SSHClient:
        name = host_key_name(spec.hostname, spec.port)
        display = f"{spec.alias} ({name})" if spec.alias != spec.hostname else name
        client = paramiko.SSHClient()
        known = load_known_hosts(spec.known_hosts_files, self.known_hosts_path, name)
        for problem in known.problems:
            if problem not in self._reported:
                self._reported.add(problem)
                self.messages.append(f"known_hosts: {problem}")
        # the flag, else the ssh config: accept-new (and no, off) records a key never seen
        strict = spec.strict_host_key_checking
        accept = self.accept_new or strict in ("accept-new", "no", "off")
        files = [*(f for f in spec.known_hosts_files if os.path.isfile(f)),
                 self.known_hosts_path]
        policy = TrustOnFirstUsePolicy(accept, self.known_hosts_path, display, known,
                                       files=files, strict=strict)
        client.set_missing_host_key_policy(policy)
        prefer = tuple(known.key_types())
        try:
            if sock is None:
                sock = _tcp(spec.hostname, spec.port, self.timeout)
            client.connect(
                spec.hostname, port=spec.port, username=spec.user, sock=sock,
                timeout=self.timeout, banner_timeout=self.timeout, auth_timeout=self.timeout,
                channel_timeout=self.timeout,
                auth_strategy=_Strategy(self.identities, spec.user),
                transport_factory=lambda s, **kw: _transport(s, prefer=prefer, **kw),
            )
        except BaseException as exc:
            client.close()
            raise self._failure(exc, spec, display, sock, known) from None
        self.messages.extend(policy.accepted)
        policy.accepted.clear()
        return client

    def _failure(self, exc: BaseException, spec: HostSpec, display: str, sock: Any,
                 known: Any) -> BaseException:
        """The one-line SSHError for a failed connect (or `exc` itself when it is no error of
        the connection, e.g. KeyboardInterrupt)."""
        if isinstance(exc, HostKeyError):
            return SSHError(str(exc), fatal=True)
        if isinstance(exc, paramiko.BadHostKeyException):
            where = known.revoked_where(exc.key)
            if where is not None:
                return SSHError(revoked_message(display, exc.key, where), fatal=True)
            files = [*(f for f in spec.known_hosts_files if os.path.isfile(f)),
                     self.known_hosts_path]
            return SSHError(changed_key_message(display, exc.key, exc.expected_key, files),
                            fatal=True)
        if isinstance(exc, paramiko.AuthenticationException):
            tried = [p for p, _ in self.identities.keys]
            extra = "; ".join(self.identities.notes)
            msg = (f"authentication failed for {spec.user}@{display} "
                   f"(keys tried: {', '.join(tried) or 'none'}"
                   f"{', ssh-agent' if self.identities.use_agent else ''})")
            return SSHError(msg + (f"; {extra}" if extra else ""), fatal=True)
        if isinstance(exc, socket.gaierror):
            return SSHError(f"cannot resolve {spec.hostname}: {exc.strerror}", fatal=True)
        if isinstance(sock, ProxySocket) and isinstance(
                exc, (paramiko.SSHException, OSError, EOFError)) and (
                sock.ended or sock.stderr_text()):
            # whatever paramiko says, the proxy's own words say what went wrong
            return SSHError(f"{display}: ProxyCommand failed: {sock.describe()}")
        if isinstance(exc, TimeoutError):
            return SSHError(f"{display}: connection timed out after {self.timeout:g} s")
        if isinstance(exc, paramiko.ssh_exception.NoValidConnectionsError):
            reasons = sorted({_errno_reason(e.errno) for e in exc.errors.values()
                              if isinstance(e, OSError) and e.errno})
            return SSHError(f"{display}: {' / '.join(reasons) or 'cannot connect'}")
        if isinstance(exc, OSError) and exc.errno:
            return SSHError(f"{display}: {_errno_reason(exc.errno)}")
        if isinstance(exc, (paramiko.SSHException, OSError, EOFError)):
            return SSHError(f"{display}: {exc or type(exc).__name__}")
        return exc


def _tcp(host: str, port: int, timeout: float) -> socket.socket:
    """The TCP connection to an SSH server, with Nagle's algorithm off, as OpenSSH's own client
    sets it: paramiko leaves it on, and each small request (open a channel, run the follower,
    the steps of authentication) then waits out the server's delayed ACK, about 40 ms."""
    sock = socket.create_connection((host, port), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _transport(sock: Any, prefer: tuple[str, ...] = (), **kw: Any) -> paramiko.Transport:
    """paramiko's transport, AES-GCM first: paramiko ranks it after CTR with a separate
    HMAC-SHA2, which costs its reader about twice the CPU per byte (a MAC computed apart from
    the cipher, in more Python steps per packet); both are what OpenSSH offers. The host key
    types in `prefer` (those known for the host) are asked for first, as ssh does."""
    t = paramiko.Transport(sock, **kw)
    opts = t.get_security_options()
    ciphers = tuple(opts.ciphers)
    gcm = tuple(c for c in ciphers if c.endswith("-gcm@openssh.com"))
    opts.ciphers = gcm + tuple(c for c in ciphers if c not in gcm)
    if prefer:
        # an RSA key is asked for by its SHA-2 signature names (ssh-rsa is SHA-1)
        want = [a for p in prefer for a in (("rsa-sha2-512", "rsa-sha2-256", "ssh-rsa")
                                            if p == "ssh-rsa" else (p,))]
        types = tuple(opts.key_types)
        first = tuple(dict.fromkeys(a for a in want if a in types))
        opts.key_types = first + tuple(a for a in types if a not in first)
    return t


def _errno_reason(code: int) -> str:
    """`connection refused`, `no route to host`, ...: the system's words, as ssh prints them."""
    return {errno.ECONNREFUSED: "connection refused", errno.EHOSTUNREACH: "no route to host",
            errno.ENETUNREACH: "network is unreachable", errno.ETIMEDOUT: "connection timed out",
            errno.ECONNRESET: "connection reset by peer"}.get(code, os.strerror(code).lower())
