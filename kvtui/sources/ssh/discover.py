"""Finding SGLang and vLLM logs on a host: server processes, containers, pods, recent *.log files.

One POSIX sh script runs on the host (a single round trip; no python needed for discovery); the
search roots go in as shlex-quoted positional arguments, never spliced into the script. Processes
are found through /proc/PID/cmdline, and where their output goes through the /proc/PID/fd/1 and
fd/2 links: a regular file is followable; a journald socket under a systemd unit becomes a
--journal candidate; a pipe or terminal is reported as not followable. Containers come from
`docker ps`, pods from `kubectl get pods` (when the login user may run them), by image or command.

What gives an engine away (its server's command lines, its images, its log lines) is each
engine's own declaration (`Engine.discovery`), put into the script by `discover_script`: vLLM's
include the titles its children give themselves with setproctitle ("VLLM::EngineCore"). A
titled child of a server already found is not listed again; one found alone (its parent out of
sight) is, since its fd/1 and fd/2 are the server's output.
"""

from __future__ import annotations

import base64
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field

from kvtui.core.engine import Engine, all_engines
from kvtui.sources.ssh.connect import Connection

DEFAULT_ROOTS = ("~", "/var/log", "/tmp", "/workspace", "/data", "/opt", "/srv", "/mnt",
                 "/root", "/home")

# Fields are separated by \037 (unit separator), argv elements inside cmdline too.
DISCOVER_SCRIPT = r'''
US=$(printf '\037')
SIGNS=@SIGNS@
for d in /proc/[0-9]*; do
  [ -r "$d/cmdline" ] || continue
  cmd=$(tr '\000\n\t' '\037  ' < "$d/cmdline" 2>/dev/null) || continue
  case "$cmd" in
@PROCESSES@
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
        @IMAGES@) printf 'docker\037%s\037%s\037%s\037%s\n' "$id" "$image" "$names" \
                    "$command" ;;
      esac
    done
fi
if command -v kubectl >/dev/null 2>&1; then
  fmt='jsonpath={range .items[*]}{.metadata.namespace}{"|"}{.metadata.name}{"|"}'
  fmt="$fmt"'{range .spec.containers[*]}{.name}{"="}{.image}{" "}{end}{"\n"}{end}'
  { timeout 10 kubectl get pods --all-namespaces --output "$fmt" 2>/dev/null ||
    timeout 10 kubectl get pods --output "$fmt" 2>/dev/null; } |
    while IFS='|' read -r ns pod containers; do
      case "$containers" in
        @IMAGES@) printf 'kubectl\037%s\037%s\037%s\n' "$ns" "$pod" "$containers" ;;
      esac
    done
fi
NL='
'
export SIGNS
for root in "$@"; do
  case "$root" in "~") root=$HOME ;; "~/"*) root=$HOME/${root#"~/"} ;; esac
  [ -d "$root" ] || continue
  timeout 15 find "$root" -xdev -maxdepth 4 -type f -name '*.log' -mtime -7 -size +0 \
    \( -name "*$NL*" -exec sh -c '
      if head -c 4194304 -- "$1" 2>/dev/null | grep -q -E "$SIGNS"; then
        st=$(stat -c "%Y %s" -- "$1" 2>/dev/null)
        printf "filex\037%s\037%s\n" "$st" "$(printf %s "$1" | od -An -tx1 | tr -d " $2")"
      fi' sh {} "$NL" \; -o -print \) 2>/dev/null
done | sort -u | head -n 500 | while IFS= read -r f; do
  case "$f" in filex"$US"*) printf '%s\n' "$f"; continue ;; esac
  if head -c 4194304 -- "$f" 2>/dev/null | \
     grep -q -E "$SIGNS"; then
    st=$(stat -c '%Y %s' -- "$f" 2>/dev/null)
    printf 'file\037%s\037%s\n' "$st" "$f"
  fi
done
'''


@dataclass
class Candidate:
    kind: str  # "file" | "docker" | "kubectl" | "journal" | "none"
    target: str  # path / container / pod / unit ("" when not followable)
    label: str  # one line for the picker
    detail: str = ""
    pid: int | None = None
    model_path: str | None = None
    python: str | None = None  # interpreter of the server process, for version detection
    mtime: float = 0.0
    namespace: str | None = None  # kubectl: the pod's namespace
    container: str | None = None  # kubectl: the server's container, when the pod has several

    def source_flag(self) -> list[str]:
        """The `kvtui ssh` flags that follow this candidate directly."""
        flag = {"file": "--log", "docker": "--docker", "kubectl": "--kubectl",
                "journal": "--journal"}.get(self.kind)
        if not flag:
            return []
        scope = [*(["-n", self.namespace] if self.namespace else []),
                 *(["-c", self.container] if self.container else [])]
        return [flag, self.target, *scope]


def discover_script(engines: Sequence[Engine], template: str | None = None) -> str:
    """The script with each engine's signs in it (`Engine.discovery`): the `case` patterns of
    its server processes and its images, and the log lines that give its files away. The
    signs are the engines' own constants (shell patterns), never text read from a host."""
    template = DISCOVER_SCRIPT if template is None else template
    signs = [e.discovery for e in engines]
    processes = "\n".join(f"    {'|'.join(d.process_patterns)}) ;;" for d in signs)
    images = "|".join(p for d in signs for p in d.image_patterns)
    log_signs = shlex.quote("|".join(s for d in signs for s in d.log_signs))
    return (template.replace("@SIGNS@", log_signs).replace("@PROCESSES@", processes)
            .replace("@IMAGES@", images))


def engine_of(argv: list[str]) -> str:
    """Which engine a server's command line (or process title) runs, as texts name it: the
    first whose name it holds (`Engine.name`, any case: vLLM's children title themselves
    `VLLM::...`)."""
    text = " ".join(argv).lower()
    return next((e.label for e in all_engines() if e.name in text), "LLM")


@dataclass
class Discovery:
    candidates: list[Candidate] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def model_path_from_argv(argv: list[str]) -> str | None:
    """--model-path / --model / `sglang serve MODEL` / `vllm serve MODEL` from a server's argv
    (vLLM's positional model_tag: vllm 0.11.0 entrypoints/cli/serve.py)."""
    for i, a in enumerate(argv):
        for flag in ("--model-path", "--model"):
            if a == flag and i + 1 < len(argv):
                return argv[i + 1]
            if a.startswith(flag + "="):
                return a.split("=", 1)[1]
    for i, a in enumerate(argv[:-1]):
        if argv[i + 1] == "serve" and i + 2 < len(argv) and (
                a.endswith(tuple(e.name for e in all_engines()))
                or a.endswith(".cli.main")):
            nxt = argv[i + 2]
            if not nxt.startswith("-"):
                return nxt
    return None


def _docker_model(command: str) -> str | None:
    """The model a container's command names (`docker ps` joins entrypoint and arguments)."""
    try:
        return model_path_from_argv(shlex.split(command.strip('"')))
    except ValueError:
        return None


def _followable(link: str) -> bool:
    return link.startswith("/") and not link.startswith(("/dev/", "/proc/")) and \
        not link.endswith(" (deleted)")


def parse_discovery(text: str) -> Discovery:
    found = Discovery()
    procs: list[tuple[int, int, str, str, str, str, list[str]]] = []
    files: list[tuple[float, int, str]] = []
    for line in text.split("\n"):  # not splitlines: \x1c-\x1e and \x85 may be in a name
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
                detail=command.strip('"'), model_path=_docker_model(command)))
        elif parts[0] == "kubectl" and len(parts) >= 4:
            found.candidates.append(_pod_candidate(*parts[1:4]))
        elif parts[0] in ("file", "filex") and len(parts) >= 3:
            mtime_size = parts[1].split()
            try:
                mtime, size = float(mtime_size[0]), int(mtime_size[1])
                # a name with a newline comes as hex (records are lines)
                name = parts[2] if parts[0] == "file" else bytes.fromhex(parts[2]).decode(
                    "utf-8", "surrogateescape")
            except (IndexError, ValueError):
                continue
            files.append((mtime, size, name))
    pids = {p[0] for p in procs}
    seen_targets: set[str] = set()
    for pid, ppid, out, err, exe, unit, argv in sorted(procs):
        if ppid in pids:
            continue  # a forked child of a server already listed
        model = model_path_from_argv(argv)
        engine = engine_of(argv)
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
                    "file", path, f"{engine} server pid {pid} writes to {path}", detail=short,
                    pid=pid, model_path=model, python=python))
        elif unit:
            found.candidates.append(Candidate(
                "journal", unit, f"{engine} server pid {pid} in systemd unit {unit}",
                detail=short, pid=pid, model_path=model, python=python))
        else:
            where = err or out or "?"
            found.candidates.append(Candidate(
                "none", "", f"{engine} server pid {pid}: output goes to {where}, not a file",
                detail=short, pid=pid, model_path=model, python=python))
    for mtime, size, path in sorted(files, reverse=True)[:20]:
        if path in seen_targets:
            continue
        seen_targets.add(path)  # found under two roots (~ and /root)
        found.candidates.append(Candidate(
            "file", path, f"{path} ({size / 1e6:.1f} MB)",
            detail=f"recent log with {' or '.join(e.label for e in all_engines())} lines",
            mtime=mtime))
    return found


def _pod_candidate(namespace: str, pod: str, containers: str) -> Candidate:
    """A pod whose containers run an engine image: the matching container named when the pod
    has several (`kubectl logs` would pick the default one)."""
    pairs = [c.partition("=") for c in containers.split()]
    serving = [name for name, _, image in pairs
               if any(e.name in image for e in all_engines())]
    container = serving[0] if serving and len(pairs) > 1 else None
    images = ", ".join(image for _, _, image in pairs)
    return Candidate("kubectl", pod, f"pod {namespace}/{pod} ({images})",
                     namespace=namespace or None, container=container)


def discover(conn: Connection, roots: tuple[str, ...] | None = None,
             timeout: float = 60.0) -> Discovery:
    if roots is None:
        roots = DEFAULT_ROOTS
    # one line for the login shell (csh cannot take newlines inside quotes): the script goes
    # base64-encoded through `base64 -d` into `sh -s`, the roots as quoted positional arguments
    script = discover_script(all_engines())
    encoded = base64.b64encode(script.encode()).decode()
    command = f"echo {encoded} | base64 -d | sh -s " + " ".join(shlex.quote(r) for r in roots)
    rc, out, _err = conn.exec(command, timeout=timeout)
    # a path's bytes that are not UTF-8 are kept (surrogateescape): followed as they are, shown
    # as \xNN escapes, never as U+FFFD
    found = parse_discovery(out.decode("utf-8", "surrogateescape"))
    if rc is None:
        found.notes.append(f"discovery timed out after {timeout:g} s; results may be partial")
    return found
