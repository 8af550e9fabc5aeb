"""Reading the served checkpoint over SFTP on the already-open connection, and the engine releases.

Only the small JSON files, the safetensors headers and the bytes of the KV-scale tensors are read,
never weights. Interpretation is `kvtui.core.checkpoint`'s job (the same reader as for a local
directory); this module finds the directory (a path, or a hub id in the host's Hugging Face cache)
and provides `CheckpointFiles` over SFTP. Everything is best effort: what could not be read
becomes a note, not an error.
"""

from __future__ import annotations

import posixpath
import shlex
import stat
from typing import Any

import paramiko

from kvtui.core.checkpoint import (
    CheckpointFacts,
    ReadBudget,
    choose_snapshot,
    hub_repo_dir,
    read_checkpoint,
)
from kvtui.core.engine import packages
from kvtui.sources.checkpoint_files import read_exactly
from kvtui.sources.ssh.connect import Connection, SSHError

# One SFTP request that gets no answer for this long fails (and the reading stops with a note);
# the budget's time limit bounds the whole inspection.
READ_TIMEOUT = 15.0


class SFTPFile:
    """One remote file, opened unbuffered (bufsize=0, said explicitly) and never prefetched: a
    read of n bytes asks the server for n bytes. `prefetch()` would queue reads of the whole
    file, weights included (what the previous `_read` did on model.safetensors)."""

    def __init__(self, f: paramiko.SFTPFile) -> None:
        self._f = f

    def size(self) -> int:
        return int(self._f.stat().st_size or 0)

    def read_at(self, offset: int, size: int) -> bytes:
        return read_exactly(self._f, offset, size)

    def close(self) -> None:
        self._f.close()


class SFTPCheckpointFiles:
    """`CheckpointFiles` over SFTP: a directory on the host."""

    def __init__(self, sftp: paramiko.SFTPClient, directory: str, label: str) -> None:
        self.sftp = sftp
        self.directory = directory
        self.label = label

    def _path(self, name: str) -> str:
        return posixpath.join(self.directory, name)

    def open(self, name: str) -> SFTPFile | None:
        if not self.exists(name):
            return None
        return SFTPFile(self.sftp.open(self._path(name), "rb", bufsize=0))

    def exists(self, name: str) -> bool:
        try:
            mode = self.sftp.stat(self._path(name)).st_mode  # follows symlinks (HF cache blobs)
        except FileNotFoundError:
            return False
        return mode is not None and stat.S_ISREG(mode)

    def list(self) -> list[str]:
        return sorted(a.filename for a in self.sftp.listdir_attr(self.directory)
                      if a.st_mode is None or not stat.S_ISDIR(a.st_mode))


def _read(sftp: paramiko.SFTPClient, path: str, limit: int) -> bytes | None:
    try:
        with sftp.open(path, "rb", bufsize=0) as f:
            return f.read(limit)
    except OSError:
        return None


def _is_dir(sftp: paramiko.SFTPClient, path: str) -> bool:
    try:
        mode = sftp.stat(path).st_mode
    except OSError:
        return False
    return mode is not None and stat.S_ISDIR(mode)


def hub_cache_roots(conn: Connection) -> list[str]:
    """Where the host keeps its Hugging Face hub cache ($HF_HUB_CACHE, $HF_HOME/hub, ~/.cache)."""
    roots: list[str] = []
    rc, out, _ = conn.exec('printf "%s\\n%s\\n%s\\n" "$HF_HUB_CACHE" "$HF_HOME" "$HOME"',
                           timeout=15)
    if rc == 0:
        hub, hf_home, home = ([*out.decode("utf-8", "replace").split("\n"), "", "", ""])[:3]
        if hub:
            roots.append(hub)
        if hf_home:
            roots.append(posixpath.join(hf_home, "hub"))
        if home:
            roots.append(posixpath.join(home, ".cache/huggingface/hub"))
    roots.append("/root/.cache/huggingface/hub")
    return list(dict.fromkeys(roots))


def resolve_model_dir(conn: Connection, model_path: str, facts: CheckpointFacts) -> str | None:
    """A directory on the host, or the newest snapshot of a hub id in the host's HF cache."""
    sftp = conn.sftp()
    if model_path.startswith(("/", "~", ".")):
        path = model_path
        if path.startswith("~"):
            path = sftp.normalize(".") + path[1:]
        if _is_dir(sftp, path):
            # a cache folder of one model (models--org--name) stands for its snapshot
            return _snapshot_of(sftp, path) or path
        facts.notes.append(f"{model_path}: not a directory on the host")
        return None
    if _is_dir(sftp, model_path):  # relative dir in the login directory
        return model_path
    repo = hub_repo_dir(model_path)
    if repo is None:
        facts.notes.append(f"{model_path}: neither a directory nor an ORG/NAME hub id")
        return None
    for root in hub_cache_roots(conn):
        snap = _snapshot_of(sftp, posixpath.join(root, repo))
        if snap is not None:
            return snap
    facts.notes.append(f"{model_path}: not found in the host's Hugging Face cache")
    return None


def _snapshot_of(sftp: paramiko.SFTPClient, base: str) -> str | None:
    """The snapshot of a models--org--name folder the hub library would load (refs/main)."""
    snaps = posixpath.join(base, "snapshots")
    if not _is_dir(sftp, snaps):
        return None
    ref = _read(sftp, posixpath.join(base, "refs", "main"), 256)
    try:
        entries = [(a.filename, float(a.st_mtime or 0)) for a in sftp.listdir_attr(snaps)
                   if a.st_mode is not None and stat.S_ISDIR(a.st_mode)]
    except OSError:
        return None
    chosen = choose_snapshot(ref.decode("ascii", "replace") if ref else None, entries)
    return posixpath.join(snaps, chosen) if chosen else None


# what a lost or refused connection raises (EOFError: paramiko on a half-closed transport)
_CONN_ERRORS = (OSError, EOFError, paramiko.SSHException, SSHError)


def inspect_checkpoint(conn: Connection, model_path: str, *, host: str,
                       python: str | None = None,
                       budget: ReadBudget | None = None) -> CheckpointFacts:
    """What the checkpoint says; a connection that is gone (or goes) becomes a note."""
    facts = CheckpointFacts(model_path=model_path)
    try:
        probe = CheckpointFacts()
        directory = resolve_model_dir(conn, model_path, probe)
        facts.notes.extend(probe.notes)
        if directory is not None:
            facts = _read_remote(conn.sftp(), directory, model_path, host, budget)
    except _CONN_ERRORS as exc:
        facts.notes.append(f"SFTP unavailable: {str(exc) or type(exc).__name__}")
    if conn.is_active():
        facts.engine_versions = engine_versions(conn, python)
    return facts


def _read_remote(sftp: paramiko.SFTPClient, directory: str, model_path: str, host: str,
                 budget: ReadBudget | None) -> CheckpointFacts:
    chan = sftp.get_channel()
    before = chan.gettimeout() if chan is not None else None
    if chan is not None:
        chan.settimeout(READ_TIMEOUT)
    try:
        return read_checkpoint(SFTPCheckpointFiles(sftp, directory, f"{host}:{directory}"),
                               model_path=model_path, budget=budget)
    finally:
        if chan is not None and not chan.closed:
            chan.settimeout(before)


def engine_versions(conn: Connection, python: str | None = None) -> dict[str, str]:
    """The installed engine releases by engine name ({"sglang": "0.5.9", "vllm": "0.11.0"}),
    asked by each engine's package name (`Engine.package`): package metadata
    (fast, no torch import), then pip.

    One round trip; the server's own interpreter (from discovery) is asked first, since the
    host's python3 may not be the environment the engine runs in.
    """
    by_package = packages()  # each engine's distribution (`Engine.package`)
    names = tuple(by_package)
    code = ("from importlib.metadata import version\n"
            f"for n in {names!r}:\n"
            "    try: print(n, version(n))\n"
            "    except Exception: pass\n")
    probe = shlex.quote(code)
    pythons = list(dict.fromkeys(p for p in (python, "python3") if p))
    # a python that finds neither engine fails, so the next is tried
    tries = [f"{shlex.quote(py)} -c {probe} 2>/dev/null | grep ." for py in pythons]
    pip = " ".join(shlex.quote(n) for n in names)
    tries.append(f"(pip3 show {pip} || pip show {pip}) 2>/dev/null | "
                 "sed -n 's/^Name: *//p; s/^Version: *//p' | paste -d ' ' - - | grep .")
    try:
        rc, out, _ = conn.exec(" || ".join(tries), timeout=30)
    except Exception:
        return {}
    found: dict[str, str] = {}
    if rc != 0:
        return found
    for line in out.decode("utf-8", "replace").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].lower() in by_package:
            found[by_package[parts[0].lower()]] = parts[1]
    return found


def inspect_after_read(connector: Any, conn: Connection, path: str, host: str,
                       python: str | None) -> CheckpointFacts:
    """The checkpoint, read on `conn` or, if the read lost it (the follower closes a lent
    connection on a drop), on a fresh one; whatever fails becomes a note, never a traceback."""
    fresh = None
    try:
        if not conn.is_active():
            fresh = conn = connector.connect()
            connector.messages.clear()
        return inspect_checkpoint(conn, path, host=host, python=python)
    except SSHError as exc:
        facts = CheckpointFacts(model_path=path)
        facts.notes.append(f"checkpoint not inspected: reconnecting failed: {exc}")
        return facts
    except Exception as exc:  # best effort, as in the TUI: the log report still stands
        facts = CheckpointFacts(model_path=path)
        facts.notes.append(f"checkpoint inspection failed: {type(exc).__name__}: {exc}")
        return facts
    finally:
        if fresh is not None:
            fresh.close()
