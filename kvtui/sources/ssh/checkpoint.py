"""Reading the served checkpoint over SFTP on the already-open connection, and the SGLang version.

Only small files are read (config.json, hf_quant_config.json, the safetensors index, or the JSON
header of a single-file checkpoint), never weights. Interpretation is `kvtui.core.checkpoint`'s job;
this module only finds the directory (a path, or a hub id in the host's Hugging Face cache) and
fetches bytes. Everything is best effort: what could not be read becomes a note, not an error.
"""

from __future__ import annotations

import posixpath
import shlex
import stat

import paramiko

from kvtui.core.checkpoint import (
    CheckpointFacts,
    parse_config_json,
    parse_hf_quant_config,
    parse_safetensors_header,
    parse_safetensors_index,
    safetensors_header_length,
)
from kvtui.sources.ssh.connect import Connection, SSHError

MAX_JSON = 64 << 20


def _read(sftp: paramiko.SFTPClient, path: str, limit: int = MAX_JSON) -> bytes | None:
    try:
        with sftp.open(path, "rb") as f:
            f.prefetch()
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
            return path
        facts.notes.append(f"{model_path}: not a directory on the host")
        return None
    if _is_dir(sftp, model_path):  # relative dir in the login directory
        return model_path
    if model_path.count("/") != 1:
        facts.notes.append(f"{model_path}: neither a directory nor an ORG/NAME hub id")
        return None
    repo = "models--" + model_path.replace("/", "--")
    for root in hub_cache_roots(conn):
        base = posixpath.join(root, repo)
        snaps = posixpath.join(base, "snapshots")
        if not _is_dir(sftp, snaps):
            continue
        ref = _read(sftp, posixpath.join(base, "refs", "main"), 256)
        if ref:
            snap = posixpath.join(snaps, ref.decode("ascii", "replace").strip())
            if _is_dir(sftp, snap):
                return snap
        try:
            entries = sorted(sftp.listdir_attr(snaps), key=lambda a: a.st_mtime or 0,
                             reverse=True)
        except OSError:
            continue
        for entry in entries:
            if entry.st_mode is not None and stat.S_ISDIR(entry.st_mode):
                return posixpath.join(snaps, entry.filename)
    facts.notes.append(f"{model_path}: not found in the host's Hugging Face cache")
    return None


# what a lost or refused connection raises (EOFError: paramiko on a half-closed transport)
_CONN_ERRORS = (OSError, EOFError, paramiko.SSHException, SSHError)


def inspect_checkpoint(conn: Connection, model_path: str, *, host: str,
                       python: str | None = None) -> CheckpointFacts:
    """What the checkpoint says; a connection that is gone (or goes) becomes a note."""
    facts = CheckpointFacts(model_path=model_path)
    try:
        directory = resolve_model_dir(conn, model_path, facts)
        if directory is not None:
            facts.source = f"{host}:{directory}"
            _read_checkpoint(conn.sftp(), directory, facts)
    except _CONN_ERRORS as exc:
        facts.notes.append(f"SFTP unavailable: {str(exc) or type(exc).__name__}")
    if conn.is_active():
        facts.sglang_version = sglang_version(conn, python)
    return facts


def _read_checkpoint(sftp: paramiko.SFTPClient, directory: str, facts: CheckpointFacts) -> None:
    cfg = _read(sftp, posixpath.join(directory, "config.json"))
    if cfg is not None:
        parse_config_json(cfg.decode("utf-8", "replace"), facts)
    else:
        facts.notes.append("config.json: missing")
    hq = _read(sftp, posixpath.join(directory, "hf_quant_config.json"))
    if hq is not None:
        parse_hf_quant_config(hq.decode("utf-8", "replace"), facts)
    index = _read(sftp, posixpath.join(directory, "model.safetensors.index.json"))
    if index is not None:
        parse_safetensors_index(index.decode("utf-8", "replace"), facts)
    else:
        single = posixpath.join(directory, "model.safetensors")
        prefix = _read(sftp, single, 8)
        n = safetensors_header_length(prefix or b"")
        if n is not None:
            try:
                with sftp.open(single, "rb") as f:
                    f.seek(8)
                    parse_safetensors_header(f.read(n), facts)
            except OSError as exc:
                facts.notes.append(f"model.safetensors: {exc}")
        else:
            facts.notes.append("no model.safetensors.index.json or model.safetensors: "
                               "tensor names unknown")


def sglang_version(conn: Connection, python: str | None = None) -> str | None:
    """The installed sglang version: package metadata (fast, no torch import), then pip.

    One round trip; the server's own interpreter (from discovery) is asked first, since the
    host's python3 may not be the environment SGLang runs in.
    """
    probe = shlex.quote("from importlib.metadata import version; print(version('sglang'))")
    pythons = list(dict.fromkeys(p for p in (python, "python3") if p))
    tries = [f"{shlex.quote(py)} -c {probe} 2>/dev/null" for py in pythons]
    tries.append("(pip3 show sglang || pip show sglang) 2>/dev/null | sed -n 's/^Version: *//p'"
                 " | grep .")
    try:
        rc, out, _ = conn.exec(" || ".join(tries), timeout=30)
    except Exception:
        return None
    text = out.decode("utf-8", "replace").strip()
    return text.splitlines()[-1].strip() if rc == 0 and text else None
