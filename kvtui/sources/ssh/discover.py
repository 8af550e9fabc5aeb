"""Finding SGLang logs on a host: server processes, docker containers, recent *.log files.

One POSIX sh script runs on the host (a single round trip; no python needed for discovery); the
search roots go in as shlex-quoted positional arguments, never spliced into the script. Processes
are found through /proc/PID/cmdline, and where their output goes through the /proc/PID/fd/1 and
fd/2 links: a regular file is followable; a journald socket under a systemd unit becomes a
--journal candidate; a pipe or terminal is reported as not followable.
"""

from __future__ import annotations

import base64
import shlex
from dataclasses import dataclass, field

from kvtui.sources.ssh.connect import Connection

DEFAULT_ROOTS = ("~", "/var/log", "/tmp", "/workspace", "/data", "/opt", "/srv", "/mnt",
                 "/root", "/home")

# Fields are separated by \037 (unit separator), argv elements inside cmdline too.
DISCOVER_SCRIPT = r'''
US=$(printf '\037')
for d in /proc/[0-9]*; do
  [ -r "$d/cmdline" ] || continue
  cmd=$(tr '\000\n\t' '\037  ' < "$d/cmdline" 2>/dev/null) || continue
  case "$cmd" in
    *sglang.launch_server*|*sglang/launch_server*|*sglang"$US"serve*|*sglang.cli*serve*) ;;
    *) continue ;;
  esac
  pid=${d#/proc/}
  out=$(readlink "$d/fd/1" 2>/dev/null)
  err=$(readlink "$d/fd/2" 2>/dev/null)
  exe=$(readlink "$d/exe" 2>/dev/null)
  unit=$(sed -n 's#.*/\([^/]*\.service\).*#\1#p' "$d/cgroup" 2>/dev/null | head -n 1)
  ppid=$(sed -n 's/^PPid:[[:space:]]*//p' "$d/status" 2>/dev/null)
  printf 'proc\037%s\037%s\037%s\037%s\037%s\037%s\037%s\n' \
    "$pid" "$ppid" "$out" "$err" "$exe" "$unit" "$cmd"
done
if command -v docker >/dev/null 2>&1; then
  timeout 10 docker ps --no-trunc --format '{{.ID}}|{{.Image}}|{{.Names}}|{{.Command}}' \
    2>/dev/null | while IFS='|' read -r id image names command; do
      case "$image $command" in
        *sglang*) printf 'docker\037%s\037%s\037%s\037%s\n' "$id" "$image" "$names" \
                    "$command" ;;
      esac
    done
fi
for root in "$@"; do
  case "$root" in "~") root=$HOME ;; "~/"*) root=$HOME/${root#"~/"} ;; esac
  [ -d "$root" ] || continue
  timeout 15 find "$root" -xdev -maxdepth 4 -type f -name '*.log' -mtime -7 -size +0 \
    2>/dev/null
done | sort -u | head -n 500 | while IFS= read -r f; do
  if head -c 4194304 -- "$f" 2>/dev/null | \
     grep -q -E 'ServerArgs\(|server_args=|KV Cache is allocated|sglang|Load weight begin'; then
    st=$(stat -c '%Y %s' -- "$f" 2>/dev/null)
    printf 'file\037%s\037%s\n' "$st" "$f"
  fi
done
'''


@dataclass
class Candidate:
    kind: str  # "file" | "docker" | "journal" | "none"
    target: str  # path / container / unit ("" when not followable)
    label: str  # one line for the picker
    detail: str = ""
    pid: int | None = None
    model_path: str | None = None
    python: str | None = None  # interpreter of the server process, for version detection
    mtime: float = 0.0

    def source_flag(self) -> list[str]:
        """The `kvtui ssh` flags that follow this candidate directly."""
        flag = {"file": "--log", "docker": "--docker", "journal": "--journal"}.get(self.kind)
        return [flag, self.target] if flag else []


@dataclass
class Discovery:
    candidates: list[Candidate] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def model_path_from_argv(argv: list[str]) -> str | None:
    """--model-path / --model / `sglang serve MODEL` from a server's argv."""
    for i, a in enumerate(argv):
        for flag in ("--model-path", "--model"):
            if a == flag and i + 1 < len(argv):
                return argv[i + 1]
            if a.startswith(flag + "="):
                return a.split("=", 1)[1]
    for i, a in enumerate(argv[:-1]):
        if a.endswith("sglang") and argv[i + 1] == "serve" and i + 2 < len(argv):
            nxt = argv[i + 2]
            if not nxt.startswith("-"):
                return nxt
    return None


def _followable(link: str) -> bool:
    return link.startswith("/") and not link.startswith(("/dev/", "/proc/")) and \
        not link.endswith(" (deleted)")


def parse_discovery(text: str) -> Discovery:
    found = Discovery()
    procs: list[tuple[int, int, str, str, str, str, list[str]]] = []
    files: list[tuple[float, int, str]] = []
    for line in text.splitlines():
        parts = line.split("\037")
        if parts[0] == "proc" and len(parts) >= 8:
            try:
                pid, ppid = int(parts[1]), int(parts[2] or 0)
            except ValueError:
                continue
            argv = [a for a in parts[7:] if a]
            procs.append((pid, ppid, parts[3], parts[4], parts[5], parts[6], argv))
        elif parts[0] == "docker" and len(parts) >= 5:
            cid, image, names, command = parts[1:5]
            found.candidates.append(Candidate(
                "docker", names or cid[:12], f"docker container {names} ({image})",
                detail=command.strip('"')))
        elif parts[0] == "file" and len(parts) >= 3:
            mtime_size = parts[1].split()
            try:
                mtime, size = float(mtime_size[0]), int(mtime_size[1])
            except (IndexError, ValueError):
                mtime, size = 0.0, 0
            files.append((mtime, size, parts[2]))
    pids = {p[0] for p in procs}
    seen_targets: set[str] = set()
    for pid, ppid, out, err, exe, unit, argv in sorted(procs):
        if ppid in pids:
            continue  # a forked child of a server already listed
        model = model_path_from_argv(argv)
        cmd = " ".join(argv)
        short = cmd if len(cmd) <= 120 else cmd[:117] + "..."
        python = exe if "python" in exe.rsplit("/", 1)[-1] else None
        logs = []
        for link in dict.fromkeys([err, out]):  # stderr first: Python logging writes there
            if _followable(link):
                logs.append(link)
        if logs:
            for path in logs:
                seen_targets.add(path)
                found.candidates.append(Candidate(
                    "file", path, f"SGLang server pid {pid} writes to {path}", detail=short,
                    pid=pid, model_path=model, python=python))
        elif unit:
            found.candidates.append(Candidate(
                "journal", unit, f"SGLang server pid {pid} in systemd unit {unit}",
                detail=short, pid=pid, model_path=model, python=python))
        else:
            where = err or out or "?"
            found.candidates.append(Candidate(
                "none", "", f"SGLang server pid {pid}: output goes to {where}, not a file",
                detail=short, pid=pid, model_path=model, python=python))
    for mtime, size, path in sorted(files, reverse=True)[:20]:
        if path in seen_targets:
            continue
        found.candidates.append(Candidate(
            "file", path, f"{path} ({size / 1e6:.1f} MB)", detail="recent log with SGLang lines",
            mtime=mtime))
    return found


def discover(conn: Connection, roots: tuple[str, ...] | None = None,
             timeout: float = 60.0) -> Discovery:
    if roots is None:
        roots = DEFAULT_ROOTS
    # one line for the login shell (csh cannot take newlines inside quotes): the script goes
    # base64-encoded through `base64 -d` into `sh -s`, the roots as quoted positional arguments
    encoded = base64.b64encode(DISCOVER_SCRIPT.encode()).decode()
    command = f"echo {encoded} | base64 -d | sh -s " + " ".join(shlex.quote(r) for r in roots)
    rc, out, _err = conn.exec(command, timeout=timeout)
    found = parse_discovery(out.decode("utf-8", "replace"))
    if rc is None:
        found.notes.append(f"discovery timed out after {timeout:g} s; results may be partial")
    return found
