"""Command sources (`--docker`, `--kubectl`, `--journal`, `--cmd`): the remote command line.

The log clients run exactly the recipes the local source runs (`kvtui.sources.clients`: one
argument list per client, resumed with `--since` at the last envelope timestamp seen, repeats
dropped by the same `EnvelopeReader`); a plain `--cmd` is run again on a reconnect (said inline).
Every command runs under `dies_with_channel`, which prints a start marker on stdout and stderr
first: whatever a login script printed before it is not log output.
"""

from __future__ import annotations

import shlex

from kvtui.sources.clients import Client, Failure, Resume

START = "\x1ekvtui-start\x1e"  # the marker line (record separators cannot occur in a path)


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


def client_argv(client: Client, resume: Resume | None) -> list[str]:
    """The recipe's own argument list (`kvtui.sources.clients`, the one the local source runs),
    with the client's stderr joined to its stdout when the recipe says so: docker writes the
    container's stderr to its own, and read as two channels the two would interleave
    arbitrarily."""
    argv = client.argv(resume)
    if client.merge_stderr:
        return ["sh", "-c", 'exec "$@" 2>&1', "sh", *argv]
    return argv


def launch_failure(client: Client, rc: int | None, host: str) -> Failure | None:
    """The shell's own exit codes for a client it could not start (POSIX: 127 not found,
    126 found but not executable; `setsid` and `exec` use the same)."""
    if rc == 127:
        return Failure(f"`{client.program}` is not installed on {host} (not found on the login "
                       f"user's PATH): install the {client.program} client there, or name the "
                       "log file with --log", fatal=True)
    if rc == 126:
        return Failure(f"`{client.program}` on {host} cannot be run by the login user "
                       "(permission denied)", fatal=True)
    return None


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
