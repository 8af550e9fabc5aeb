"""Host key verification: known_hosts with RejectPolicy semantics, plus explicit trust-on-first-use.

Unknown keys are refused unless the user passed --accept-new-host-key (or the ssh config says
`StrictHostKeyChecking accept-new` or `no`), and then they are written to kvtui's own
known_hosts (never to ~/.ssh/known_hosts, which belongs to OpenSSH). A *changed* key is always
refused, whatever StrictHostKeyChecking says (OpenSSH's `no` would go on, with restrictions).

The decision is OpenSSH's (sshconnect.c check_host_key, hostfile.c check_key_in_hostkeys): the
presented key is OK when any line of the known_hosts files lists it for the host, CHANGED when
none does but one lists a key of its type, NEW otherwise (keys of other types do not make it
changed). kvtui's own file counts only for key types that OpenSSH's files do not list for the
host: an older key recorded there never overrides a newer one in ~/.ssh/known_hosts. paramiko's
own check is not used (one key per type and name, the last file read winning, and a key of
another type taken as changed); the known types are offered first, as ssh orders
HostKeyAlgorithms by the keys it knows.

Errors carry the key type and SHA256 fingerprint the way OpenSSH prints them, and the port
(paramiko's BadHostKeyException drops it, paramiko #2229).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import re
from dataclasses import dataclass, field
from typing import Any

import paramiko


class HostKeyError(paramiko.SSHException):
    """Refused host key; str() is the complete user-facing message."""


def kvtui_known_hosts_path() -> str:
    """$KVTUI_KNOWN_HOSTS, else $XDG_CONFIG_HOME/kvtui/known_hosts, else ~/.config/kvtui/."""
    override = os.environ.get("KVTUI_KNOWN_HOSTS")
    if override:
        return os.path.expanduser(override)
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return os.path.join(base, "kvtui", "known_hosts")


def host_key_name(hostname: str, port: int) -> str:
    return hostname if port == 22 else f"[{hostname}]:{port}"


def describe_key(key: paramiko.PKey) -> str:
    return f"{key.get_name()} key {key.fingerprint}"


class TrustOnFirstUsePolicy(paramiko.MissingHostKeyPolicy):
    """RejectPolicy, except that --accept-new-host-key records a never-seen key and goes on.

    A key listed as `@revoked` is refused whatever the flag says."""

    def __init__(self, accept_new: bool, path: str, display_name: str,
                 known: KnownHosts | None = None, files: list[str] | None = None,
                 strict: str = "ask") -> None:
        self.accept_new = accept_new
        self.path = path
        self.display_name = display_name
        self.known = known or KnownHosts()
        self.files = files or [path]  # named in a "changed" refusal
        self.strict = strict  # the ssh config's StrictHostKeyChecking, for the message
        self.accepted: list[str] = []  # messages for the user, e.g. "added ... to ..."

    def missing_host_key(self, client: Any, hostname: str, key: paramiko.PKey) -> None:
        """Every connection comes here (the client is given no keys): OpenSSH's decision."""
        where = self.known.revoked_where(key)
        if where is not None:
            raise HostKeyError(revoked_message(self.display_name, key, where))
        status, expected = self.known.judge(key)
        if status == "ok":
            return
        if status == "changed" and expected is not None:
            raise HostKeyError(changed_key_message(self.display_name, key, expected,
                                                   self.files))
        if not self.accept_new:
            strict = (" (StrictHostKeyChecking yes in the ssh config: only a key already "
                      "known is accepted)") if self.strict == "yes" else ""
            raise HostKeyError(
                f"host key for {self.display_name} is not known: {describe_key(key)}"
                f"{strict}.\n"
                f"Check the fingerprint with the host's owner, then either add it to "
                f"~/.ssh/known_hosts (e.g. connect once with ssh) or rerun with "
                f"--accept-new-host-key to record it in {self.path}.{self._why_unknown()}")
        record_host_key(self.path, hostname, key)
        client.get_host_keys().add(hostname, key.get_name(), key)
        self.accepted.append(f"recorded new host key for {self.display_name} "
                             f"({describe_key(key)}) in {self.path}")

    def _why_unknown(self) -> str:
        notes = []
        if self.known.cert_authorities:
            notes.append(f"{', '.join(self.known.cert_authorities)} trusts a certificate "
                         f"authority for this host, but kvtui (paramiko) cannot check host "
                         f"certificates: add the host's own key")
        if self.known.unusable:
            notes.append(f"known_hosts has a {', '.join(sorted(set(self.known.unusable)))} key "
                         f"for this host, a type kvtui (paramiko) cannot check")
        return "".join(f"\nNote: {n}." for n in notes)


def record_host_key(path: str, hostname: str, key: paramiko.PKey) -> None:
    os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", encoding="ascii") as f:
        f.write(f"{hostname} {key.get_name()} {key.get_base64()}\n")


@dataclass
class KnownHosts:
    """What the known_hosts files say about one host, read line by line as OpenSSH does."""

    keys: list[tuple[paramiko.PKey, str]] = field(default_factory=list)  # (key, "file:line")
    own: list[tuple[paramiko.PKey, str]] = field(default_factory=list)  # kvtui's own file
    revoked: list[tuple[paramiko.PKey, str]] = field(default_factory=list)
    cert_authorities: list[str] = field(default_factory=list)  # "file:line" naming this host
    unusable: list[str] = field(default_factory=list)  # key types paramiko cannot check
    problems: list[str] = field(default_factory=list)  # "file:line: what is wrong"

    def revoked_where(self, key: paramiko.PKey) -> str | None:
        for k, where in self.revoked:
            if k == key:
                return where
        return None

    def judge(self, key: paramiko.PKey) -> tuple[str, paramiko.PKey | None]:
        """("ok", None), ("changed", a known key of its type) or ("new", None), as OpenSSH
        decides it; kvtui's own keys only for a type OpenSSH's files do not list."""
        kind = key.get_name()
        listed = [k for k, _ in self.keys if k.get_name() == kind] or \
            [k for k, _ in self.own if k.get_name() == kind]
        if any(k == key for k in listed):
            return "ok", None
        return ("changed", listed[0]) if listed else ("new", None)

    def key_types(self) -> list[str]:
        """The key types known for the host, OpenSSH's files first: offered first."""
        return list(dict.fromkeys(k.get_name() for k, _ in [*self.keys, *self.own]))


def _pattern_matches(pattern: str, name: str) -> bool:
    """OpenSSH's match_pattern: `*` and `?` wildcards, nothing else special (so `[h]:p` is
    literal, unlike fnmatch), case-insensitive like host names."""
    rx = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(rx, name, re.IGNORECASE | re.DOTALL) is not None


def hosts_field_matches(field_text: str, name: str) -> bool:
    """A known_hosts host field (hashed `|1|salt|hash`, or a pattern list with `!` negation)
    against one host key name."""
    if field_text.startswith("|1|"):
        parts = field_text.split("|")
        if len(parts) != 4:
            raise ValueError("bad hashed host name")
        salt, digest = base64.b64decode(parts[2]), base64.b64decode(parts[3])
        return hmac.compare_digest(hmac.new(salt, name.encode(), hashlib.sha1).digest(), digest)
    matched = False
    for pat in field_text.split(","):
        if pat.startswith("!"):
            if _pattern_matches(pat[1:], name):
                return False  # a negated match wins over any positive one
        elif pat and _pattern_matches(pat, name):
            matched = True
    return matched


def _parse_key(keytype: str, b64: str) -> paramiko.PKey | None:
    """The key of one line; None for a type paramiko does not know; ValueError when broken."""
    try:
        blob = base64.b64decode(b64, validate=True)
    except (ValueError, binascii.Error):
        raise ValueError("the key is not valid base64 (truncated?)") from None
    if len(blob) < 4 or blob[4:4 + int.from_bytes(blob[:4], "big")] != keytype.encode():
        raise ValueError(f"the key data is not a {keytype} key (truncated?)")
    try:
        return paramiko.PKey.from_type_string(keytype, blob)
    except paramiko.UnknownKeyType:
        return None
    except Exception as exc:  # paramiko raises SSHException, ValueError, struct errors ...
        raise ValueError(f"the {keytype} key cannot be read ({exc or type(exc).__name__})"
                         ) from None


def read_known_hosts(files: list[str], name: str, into: KnownHosts | None = None) -> KnownHosts:
    """Every line of `files` that concerns host key name `name` (`host` or `[host]:port`).

    Like OpenSSH, a bad line is skipped and the others still count; here it is also reported
    (file and line number). `@revoked` keys are collected so the caller can refuse them, and
    `@cert-authority` lines are noted: paramiko cannot check host certificates.
    """
    found = into if into is not None else KnownHosts()
    for path in files:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            continue  # a missing or unreadable file is skipped, as by ssh
        for n, raw in enumerate(text.splitlines(), 1):
            _read_line(raw, f"{path}:{n}", name, found)
    return found


def _read_line(raw: str, where: str, name: str, found: KnownHosts) -> None:
    line = raw.strip()
    if not line or line.startswith("#"):
        return
    fields = line.split()
    marker = None
    if fields[0].startswith("@"):
        marker = fields.pop(0)
        if marker not in ("@revoked", "@cert-authority"):
            found.problems.append(f"{where}: unknown marker {marker!r}; line skipped")
            return
    if len(fields) < 3:
        found.problems.append(f"{where}: not a known_hosts line (want: hosts key-type "
                              f"base64-key); skipped")
        return
    hosts, keytype, b64 = fields[0], fields[1], fields[2]
    try:
        if not hosts_field_matches(hosts, name):
            return
    except (ValueError, binascii.Error):
        found.problems.append(f"{where}: bad hashed host name; line skipped")
        return
    if marker == "@cert-authority":
        found.cert_authorities.append(where)
        return
    if keytype.isdigit():
        found.problems.append(f"{where}: an SSH-1 key (not supported); line skipped")
        return
    try:
        key = _parse_key(keytype, b64)
    except ValueError as exc:
        found.problems.append(f"{where}: {exc}; line skipped")
        return
    if key is None:
        found.unusable.append(keytype)
    elif marker == "@revoked":
        found.revoked.append((key, where))
    else:
        found.keys.append((key, where))


def load_known_hosts(files: list[str], own_file: str, name: str) -> KnownHosts:
    """What OpenSSH's files and kvtui's say about host key name `name` (kvtui's keys apart,
    in `own`); revoked keys anywhere are refused."""
    known = read_known_hosts(files, name)
    mine = read_known_hosts([own_file], name)
    known.own = mine.keys
    known.revoked += mine.revoked
    known.cert_authorities += mine.cert_authorities
    known.unusable += mine.unusable
    known.problems += mine.problems
    return known


def revoked_message(display_name: str, key: paramiko.PKey, where: str) -> str:
    return (f"host key for {display_name} is REVOKED ({where}): the server presented "
            f"{describe_key(key)}. kvtui will not connect.")


def changed_key_message(display_name: str, got: paramiko.PKey, expected: paramiko.PKey,
                        files: list[str]) -> str:
    return (
        f"HOST KEY CHANGED for {display_name}: the server presented {describe_key(got)}, but the "
        f"known key is {describe_key(expected)}.\nSomeone could be intercepting the connection, "
        f"or the host was reinstalled. kvtui will not connect; verify the new fingerprint and "
        f"remove the old entry from {', '.join(files)} yourself.")
