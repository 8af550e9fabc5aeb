"""Command sources (`--docker`, `--journal`, `--cmd`): the remote command line and its output.

These have no byte offsets to resume from, so each kind resumes its own way: docker by `--since`
the newest timestamp seen (dropping the overlap), journald by `--after-cursor`, a plain command by
running it again (said inline). Every command runs under `dies_with_channel`, which prints a start
marker on stdout and stderr first: whatever a login script printed before it is not log output.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass

START = "\x1ekvtui-start\x1e"  # the marker line (record separators cannot occur in a path)

_DOCKER_TS = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d) ")


def dies_with_channel(argv: list[str], idle_exit: float = 0) -> str:
    """A remote command line running argv that ends when the SSH channel closes or goes quiet.

    Without a PTY, closing the channel does not signal the remote process (paramiko #785, #203).
    The wrapper starts argv in the background, in its own process group when `setsid` exists
    (so a `sh -c 'a | b'` dies whole), and watches the channel's stdin (saved as fd 3: a
    background job's own stdin is /dev/null). EOF, or no heartbeat byte from the client for
    `idle_exit` s (a network drop that never heals gives no EOF for many minutes), kills the
    group (`kill -TERM -PGID`, without `--`: dash's kill rejects it and then kills nothing).
    Every argument is shlex-quoted.
    """
    if idle_exit > 0:
        watch = (f'if command -v timeout >/dev/null 2>&1; then '
                 f'while [ -n "$(timeout {idle_exit:g} head -c 1 <&3 2>/dev/null)" ]; do :; '
                 f'done; else cat <&3 >/dev/null; fi')
    else:
        watch = "cat <&3 >/dev/null"
    mark = 'printf "\\036kvtui-start\\036\\n"'
    script = (f'exec 3<&0; {mark}; {mark} >&2; '
              'if command -v setsid >/dev/null 2>&1; then setsid "$@" </dev/null & '
              'else "$@" </dev/null & fi; pid=$!; '
              f'( {watch}; kill -TERM "-$pid" "$pid" ) >/dev/null 2>&1 & '
              'watcher=$!; exec 3<&-; '
              'wait "$pid"; rc=$?; kill "$watcher" 2>/dev/null; exit "$rc"')
    return "sh -c " + shlex.quote(script) + " sh " + " ".join(shlex.quote(a) for a in argv)


@dataclass
class CommandResume:
    """Where a command stream resumes: docker's newest timestamp, journald's cursor."""

    last_ts: tuple[str, int] | None = None  # docker: newest timestamp seen
    since: str | None = None  # docker: that timestamp as docker prints it
    ts_boundary: tuple[str, int] | None = None  # docker: last_ts when the previous stream ended
    cursor: str | None = None  # journal: last cursor seen

    def begin(self) -> None:
        """A (re)started stream: docker's `--since` repeats what was already seen."""
        self.ts_boundary = self.last_ts


def command_argv(kind: str, value: str, resume: CommandResume, *, follow: bool,
                 lines: int | None) -> list[str]:
    if kind == "docker":
        argv = ["docker", "logs", "--timestamps"]
        if follow:
            argv.append("--follow")
        if resume.since is not None:
            argv += ["--since", resume.since]
        elif lines is not None:
            argv += ["--tail", str(lines)]
        # the container's stdout and stderr as one stream, in docker's order: read as two
        # channels they interleave arbitrarily
        return ["sh", "-c", 'exec "$@" 2>&1', "sh", *argv, value]
    if kind == "journal":
        argv = ["journalctl", "--no-pager", "-o", "json", "-u", value]
        if follow:
            argv.append("--follow")
        if resume.cursor is not None:
            argv += ["--after-cursor", resume.cursor]
        elif lines is not None:
            argv += ["--lines", str(lines)]
        elif follow:
            argv += ["--lines", "all"]
        return argv
    return ["sh", "-c", value]


def docker_lines(resume: CommandResume, texts: list[str]) -> list[str]:
    """Strip docker's --timestamps prefix, dropping lines already seen before a reconnect.

    Only the overlap at a resume is dropped: lines at or before the newest timestamp of the
    previous stream, until the first newer line. After that every line is kept, whatever its
    timestamp (stdout and stderr, or a clock step, need not be monotonic).
    """
    out = []
    for text in texts:
        m = _DOCKER_TS.match(text)
        if not m:
            out.append(text)
            continue
        key = (m.group(1) + m.group(3), int((m.group(2) or "0").ljust(9, "0")))
        if resume.ts_boundary is not None:
            if key <= resume.ts_boundary:
                continue
            resume.ts_boundary = None
        if resume.last_ts is None or key > resume.last_ts:
            resume.last_ts = key
            resume.since = text[:m.end() - 1]
        out.append(text[m.end():])
    return out


def journal_lines(resume: CommandResume, texts: list[str]) -> list[str]:
    out = []
    for text in texts:
        try:
            rec = json.loads(text)
        except ValueError:
            out.append(text)
            continue
        if not isinstance(rec, dict):
            out.append(text)
            continue
        cursor = rec.get("__CURSOR")
        if isinstance(cursor, str):
            resume.cursor = cursor
        msg = rec.get("MESSAGE")
        if isinstance(msg, list):
            msg = bytes(b & 0xFF for b in msg if isinstance(b, int)).decode("utf-8", "replace")
        if isinstance(msg, str):
            out.extend(msg.splitlines() or [""])
    return out


class MarkerGate:
    """Drops a command stream's lines up to the start marker; keeps what it dropped."""

    def __init__(self) -> None:
        self.open = False
        self.dropped: list[str] = []

    def pass_lines(self, texts: list[str]) -> list[str]:
        if self.open:
            return texts
        for i, text in enumerate(texts):
            if text == START:
                self.open = True
                return texts[i + 1:]
        if len(self.dropped) < 20:
            self.dropped.extend(texts[:20 - len(self.dropped)])
        return []
