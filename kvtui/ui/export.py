"""Where `e` / `E` write the analysis: a place the user can predict and find again.

The rule (README "Exports"): `--export-dir DIR` when given; otherwise the directory of the log
being read, so the report lands next to the log it describes; and when there is no such local
directory (an SSH log, the bundled demo sample) or it cannot be written, the user's data
directory `$XDG_DATA_HOME/kvtui/exports` (default `~/.local/share/kvtui/exports`). The name is
`kvtui-<log name>.md` / `.json`, so a second export of the same log replaces the first.
"""

from __future__ import annotations

import os
from pathlib import Path

from kvtui.sources.base import LineSource, local_files


def xdg_export_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / "kvtui" / "exports"


def local_log_path(source: LineSource) -> Path | None:
    """The local file a source reads (the first of a replay's files), if it is one."""
    paths = local_files(source)
    if not paths or paths[0] == "-" or not os.path.isfile(paths[0]):
        return None
    return Path(paths[0]).resolve()


def export_dir_for(source: LineSource, export_dir: Path | None) -> Path:
    if export_dir is not None:
        return export_dir.expanduser().resolve()
    log = local_log_path(source)
    if log is not None and os.access(log.parent, os.W_OK):
        return log.parent
    return xdg_export_dir()


def export_path(source: LineSource, export_dir: Path | None, fmt: str) -> Path:
    log = local_log_path(source)
    stem = log.name if log is not None else Path(source.name).name
    stem = stem.split(" ")[0] or "log"
    for suffix in (".gz", ".log", ".txt"):
        stem = stem.removesuffix(suffix)
    return export_dir_for(source, export_dir) / f"kvtui-{stem}.{'md' if fmt == 'md' else 'json'}"
