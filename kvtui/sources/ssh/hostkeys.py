"""Host key verification: known_hosts with RejectPolicy semantics, plus explicit trust-on-first-use.

Unknown keys are refused unless the user passed --accept-new-host-key, and then they are written
to kvtui's own known_hosts (never to ~/.ssh/known_hosts, which belongs to OpenSSH). A *changed*
key is always refused. Errors carry the key type and SHA256 fingerprint the way OpenSSH prints
them, and the port (paramiko's BadHostKeyException drops it, paramiko #2229).
"""

from __future__ import annotations

import contextlib
import os
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
    """RejectPolicy, except that --accept-new-host-key records a never-seen key and goes on."""

    def __init__(self, accept_new: bool, path: str, display_name: str) -> None:
        self.accept_new = accept_new
        self.path = path
        self.display_name = display_name
        self.accepted: list[str] = []  # messages for the user, e.g. "added ... to ..."

    def missing_host_key(self, client: Any, hostname: str, key: paramiko.PKey) -> None:
        if not self.accept_new:
            raise HostKeyError(
                f"host key for {self.display_name} is not known: {describe_key(key)}.\n"
                f"Check the fingerprint with the host's owner, then either add it to "
                f"~/.ssh/known_hosts (e.g. connect once with ssh) or rerun with "
                f"--accept-new-host-key to record it in {self.path}.")
        record_host_key(self.path, hostname, key)
        client.get_host_keys().add(hostname, key.get_name(), key)
        self.accepted.append(f"recorded new host key for {self.display_name} "
                             f"({describe_key(key)}) in {self.path}")


def record_host_key(path: str, hostname: str, key: paramiko.PKey) -> None:
    os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", encoding="ascii") as f:
        f.write(f"{hostname} {key.get_name()} {key.get_base64()}\n")


def load_known_hosts(client: paramiko.SSHClient, files: list[str], own_file: str) -> None:
    """OpenSSH's files as system keys, kvtui's file as client keys; unreadable files skipped."""
    for path in files:
        if os.path.isfile(path):
            try:
                client.load_system_host_keys(path)
            except (OSError, paramiko.SSHException):
                continue
    if os.path.isfile(own_file):
        with contextlib.suppress(OSError, paramiko.SSHException):
            client.get_host_keys().load(own_file)


def changed_key_message(display_name: str, got: paramiko.PKey, expected: paramiko.PKey,
                        files: list[str]) -> str:
    return (
        f"HOST KEY CHANGED for {display_name}: the server presented {describe_key(got)}, but the "
        f"known key is {describe_key(expected)}.\nSomeone could be intercepting the connection, "
        f"or the host was reinstalled. kvtui will not connect; verify the new fingerprint and "
        f"remove the old entry from {', '.join(files)} yourself.")
