"""A checkpoint on this machine: `kvtui check --checkpoint DIR`.

DIR is a model directory (config.json, *.safetensors), a Hugging Face cache folder of one model
(models--org--name, whose refs/main or newest snapshot is read), a snapshot inside it, or a hub
id (org/name) looked up in the local Hugging Face cache. The format logic is
kvtui.core.checkpoint's; this module only opens files (unbuffered, so a 4-byte scale read reads
4 bytes and not the weights around it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from kvtui.core.checkpoint import (
    CheckpointFacts,
    ReadBudget,
    choose_snapshot,
    hub_repo_dir,
    read_checkpoint,
)


def read_exactly(f: Any, offset: int, size: int) -> bytes:
    """`size` bytes of the open file `f` from `offset` (fewer at its end): unbuffered files,
    local or SFTP, may return less than asked per read."""
    f.seek(offset)
    parts: list[bytes] = []
    while size > 0:
        chunk = f.read(size)
        if not chunk:
            break
        parts.append(chunk)
        size -= len(chunk)
    return b"".join(parts)


class LocalFile:
    def __init__(self, path: Path) -> None:
        self._f = open(path, "rb", buffering=0)  # noqa: SIM115 - closed by close()

    def size(self) -> int:
        return os.fstat(self._f.fileno()).st_size

    def read_at(self, offset: int, size: int) -> bytes:
        return read_exactly(self._f, offset, size)

    def close(self) -> None:
        self._f.close()


class LocalCheckpointFiles:
    """`CheckpointFiles` over a local directory (symlinks into an HF cache's blobs followed)."""

    def __init__(self, directory: Path, label: str | None = None) -> None:
        self.directory = directory
        self.label = label or str(directory)

    def open(self, name: str) -> LocalFile | None:
        path = self.directory / name
        if not path.is_file():
            return None
        return LocalFile(path)

    def exists(self, name: str) -> bool:
        return (self.directory / name).is_file()

    def list(self) -> list[str]:
        return sorted(p.name for p in self.directory.iterdir() if p.is_file())


class CheckpointNotFound(ValueError):
    """DIR is none of the accepted forms; the message says what was looked for."""


def hub_cache_roots() -> list[Path]:
    """The local Hugging Face hub cache: $HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub."""
    roots: list[Path] = []
    if os.environ.get("HF_HUB_CACHE"):
        roots.append(Path(os.environ["HF_HUB_CACHE"]))
    if os.environ.get("HF_HOME"):
        roots.append(Path(os.environ["HF_HOME"]) / "hub")
    roots.append(Path.home() / ".cache" / "huggingface" / "hub")
    return list(dict.fromkeys(roots))


def snapshot_of(repo_dir: Path) -> Path | None:
    """The snapshot of a models--org--name folder that the hub library would load."""
    snaps = repo_dir / "snapshots"
    if not snaps.is_dir():
        return None
    ref_file = repo_dir / "refs" / "main"
    ref = ref_file.read_text(encoding="ascii", errors="replace") if ref_file.is_file() else None
    entries = [(p.name, p.stat().st_mtime) for p in snaps.iterdir() if p.is_dir()]
    chosen = choose_snapshot(ref, entries)
    return snaps / chosen if chosen else None


def resolve_checkpoint_dir(arg: str) -> Path:
    path = Path(arg).expanduser()
    if path.is_dir():
        if (path / "snapshots").is_dir():
            snap = snapshot_of(path)
            if snap is None:
                raise CheckpointNotFound(f"{arg}: a Hugging Face cache folder with no snapshot")
            return snap
        return path
    if path.exists():
        raise CheckpointNotFound(f"{arg}: not a directory (give the model's directory)")
    repo = hub_repo_dir(arg)
    if repo is not None:
        for root in hub_cache_roots():
            snap = snapshot_of(root / repo)
            if snap is not None:
                return snap
        raise CheckpointNotFound(f"{arg}: no such directory, and not in the local Hugging Face "
                                 f"cache ({', '.join(str(r) for r in hub_cache_roots())})")
    raise CheckpointNotFound(f"{arg}: no such directory")


def inspect_local_checkpoint(arg: str, *, budget: ReadBudget | None = None) -> CheckpointFacts:
    """What the checkpoint at `arg` says (CheckpointNotFound when there is none)."""
    directory = resolve_checkpoint_dir(arg)
    return read_checkpoint(LocalCheckpointFiles(directory), model_path=arg, budget=budget)
