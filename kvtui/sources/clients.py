"""What to run to read a server's log through its usual client, and how to read what it says.

A recipe (`DockerLogs`, `KubectlLogs`, `JournalLogs`) builds the client's argument list (never a
shell string) for a first start and for a resume, tells the client's refusals apart from a lost
stream, and names the container instance it reads. `EnvelopeReader` turns the client's output
lines into the server's own lines: it strips the envelope (`parsers.envelope`) and drops what a
client resumed with `--since` repeats, so no line arrives twice.

No IO here: `kvtui.sources.process` runs a recipe locally; a remote runner (SSH) can run the same
argv on a host (`follow=False` and `tail=N` for a one-shot read; `merge_stderr` says to join the
client's stderr to its stdout, as `sh -c 'exec "$@" 2>&1'` does) and feed the same reader.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from parsers import envelope


@dataclass(frozen=True, slots=True)
class Resume:
    """The newest envelope timestamp delivered, and how many lines carried exactly that instant
    (a resumed client repeats those; the reader skips that many)."""

    ts: str
    instant: tuple[int, int]
    count: int


@dataclass(frozen=True, slots=True)
class Failure:
    """A client's exit explained. `fatal`: retrying cannot help (no such pod, forbidden, ...)."""

    message: str
    fatal: bool


@dataclass(frozen=True, slots=True)
class Instance:
    """One run of a container: `key` changes when the container is started again."""

    key: str
    restarts: int | None = None
    previous_end: str | None = None  # how the instance before it ended ("OOMKilled, exit 137")
    ended: str | None = None  # how this one ended, when it has


def _last(messages: list[str]) -> str:
    for text in reversed(messages):
        if text.strip():
            return text.strip()[:300]
    return ""


def _exit_words(rc: int) -> str:
    return f"killed by signal {-rc}" if rc < 0 else f"exit status {rc}"


class Client:
    """The common part of the recipes; subclasses say what differs."""

    program = ""
    kind = ""
    envelope = envelope.TIMESTAMPS
    merge_stderr = False  # the server's stderr arrives on the client's stderr (docker)
    follow = True

    @property
    def label(self) -> str:
        raise NotImplementedError

    def argv(self, resume: Resume | None) -> list[str]:
        raise NotImplementedError

    def check_argv(self) -> list[str] | None:
        """A command asked once before the first start, whose answer `checked` reads."""
        return None

    def checked(self, rc: int, output: str) -> Failure | None:
        return None

    def probe_argv(self) -> list[str] | None:
        """A command that describes the running instance (`instance` reads its output)."""
        return None

    def instance(self, output: str) -> Instance | None:
        return None

    def failure(self, rc: int, messages: list[str]) -> Failure:
        said = _last(messages)
        return Failure(f"{self.program} ended ({_exit_words(rc)})" + (f": {said}" if said else ""),
                       fatal=False)

    def missing(self) -> str:
        return (f"`{self.program}` is not installed here (not found on PATH): install the "
                f"{self.program} client, or follow the host with `kvtui ssh`")

    def ended(self) -> str:
        """Why a following client exited cleanly."""
        return f"{self.program} ended the stream"


@dataclass
class DockerLogs(Client):
    """`docker logs --timestamps [--follow] [--since TS] CONTAINER`."""

    container: str
    follow: bool = True
    tail: int | None = None  # first start only: the last N lines instead of the whole log
    program: str = "docker"

    kind = "docker"
    envelope = envelope.TIMESTAMPS
    # `docker logs` writes the container's stderr (where Python logging goes) to its own stderr;
    # read as one pipe the two keep docker's order.
    merge_stderr = True

    @property
    def label(self) -> str:
        return f"docker:{self.container}"

    def argv(self, resume: Resume | None) -> list[str]:
        argv = [self.program, "logs", "--timestamps"]
        if self.follow:
            argv.append("--follow")
        if resume is not None:
            argv += ["--since", resume.ts]  # inclusive; RFC 3339 with nanoseconds
        elif self.tail is not None:
            argv += ["--tail", str(self.tail)]
        return [*argv, self.container]

    def probe_argv(self) -> list[str] | None:
        return [self.program, "inspect", "--type", "container", self.container]

    def instance(self, output: str) -> Instance | None:
        try:
            info = json.loads(output)[0]
            state = info.get("State") or {}
            key = str(state.get("StartedAt") or "")
        except (ValueError, IndexError, KeyError, TypeError, AttributeError):
            return None
        if not key:
            return None
        restarts = info.get("RestartCount")
        ended = None
        if state.get("Status") == "exited" or state.get("Running") is False:
            # docker forgets this once the container runs again, so it is read while stopped
            ended = ", ".join(p for p in ("OOMKilled" if state.get("OOMKilled") else None,
                                          f"exit code {state.get('ExitCode')}") if p)
        return Instance(key, restarts if isinstance(restarts, int) else None, None, ended)

    def failure(self, rc: int, messages: list[str]) -> Failure:
        said = _last(messages)
        if "No such container" in said:
            return Failure(f"docker: no such container: {self.container}", fatal=True)
        if "permission denied" in said and "docker" in said.lower():
            return Failure("docker: permission denied on the Docker daemon socket (join the "
                           f"`docker` group or ask for access): {said}", fatal=True)
        if "unknown flag" in said or "requires exactly" in said or "invalid" in said.lower():
            return Failure(f"docker refused the arguments: {said}", fatal=True)
        if "Cannot connect to the Docker daemon" in said:
            return Failure(f"docker: {said}", fatal=False)
        return super().failure(rc, messages)

    def ended(self) -> str:
        return f"container {self.container} stopped (docker logs ended)"


@dataclass
class KubectlLogs(Client):
    """`kubectl logs --timestamps [-f | --previous] [-n NS] [-c C] [--since-time TS] POD`."""

    pod: str
    namespace: str | None = None
    container: str | None = None
    previous: bool = False
    follow: bool = True
    tail: int | None = None
    program: str = "kubectl"

    kind = "kubectl"
    envelope = envelope.TIMESTAMPS

    def __post_init__(self) -> None:
        if self.previous:
            self.follow = False  # a crashed instance does not grow

    @property
    def label(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        what = f"/{self.container}" if self.container else ""
        return f"kubectl:{where}{self.pod}{what}" + (" (previous)" if self.previous else "")

    def _scope(self) -> list[str]:
        argv = []
        if self.namespace:
            argv += ["--namespace", self.namespace]
        return argv

    def argv(self, resume: Resume | None) -> list[str]:
        argv = [self.program, "logs", "--timestamps"]
        if self.previous:
            argv.append("--previous")
        elif self.follow:
            argv.append("--follow")
        argv += self._scope()
        if self.container:
            argv += ["--container", self.container]
        if resume is not None:
            # the API server keeps whole seconds of sinceTime; the reader drops the repeats
            argv.append(f"--since-time={resume.ts}")
        elif self.tail is not None:
            argv.append(f"--tail={self.tail}")
        return [*argv, self.pod]

    def probe_argv(self) -> list[str] | None:
        return [self.program, "get", "pod", *self._scope(), "--output", "json", self.pod]

    def instance(self, output: str) -> Instance | None:
        try:
            pod: dict[str, Any] = json.loads(output)
            statuses = pod.get("status", {}).get("containerStatuses") or []
            want = self.container or _default_container(pod)
            status = next(s for s in statuses if s.get("name") == want)
        except (ValueError, StopIteration, AttributeError, TypeError):
            return None
        key = str(status.get("containerID") or "")
        if not key:
            return None
        restarts = status.get("restartCount")
        end = None
        last = (status.get("lastState") or {}).get("terminated") or {}
        if last:
            end = ", ".join(str(p) for p in (last.get("reason"),
                                            f"exit code {last.get('exitCode')}"
                                            if last.get("exitCode") is not None else None) if p)
        return Instance(key, restarts if isinstance(restarts, int) else None, end or None)

    def failure(self, rc: int, messages: list[str]) -> Failure:
        said = _last(messages)
        low = said.lower()
        if "(notfound)" in low or ("not found" in low and "pod" in low):
            return Failure(f"kubectl: {said}", fatal=True)
        if "(forbidden)" in low or "(unauthorized)" in low:
            return Failure(f"kubectl: not allowed: {said}", fatal=True)
        if "is waiting to start" in low or "podinitializing" in low:
            return Failure(f"kubectl: {said}", fatal=False)
        if "(badrequest)" in low or "is not valid for pod" in low or "choose one of" in low \
                or "unknown flag" in low or "unknown shorthand" in low:
            return Failure(f"kubectl: {said}", fatal=True)
        return super().failure(rc, messages)

    def ended(self) -> str:
        return f"the log of pod {self.pod} ended (container stopped or restarting)"


def _default_container(pod: dict[str, Any]) -> str | None:
    """The container `kubectl logs` picks without -c: the annotated default, else the first."""
    meta = pod.get("metadata") or {}
    chosen = (meta.get("annotations") or {}).get("kubectl.kubernetes.io/default-container")
    if chosen:
        return str(chosen)
    containers = (pod.get("spec") or {}).get("containers") or []
    return containers[0].get("name") if containers else None


@dataclass
class JournalLogs(Client):
    """`journalctl --unit UNIT --output short-iso --boot [--follow] --lines all | --since @T`."""

    unit: str
    follow: bool = True
    tail: int | None = None
    program: str = "journalctl"
    systemctl: str = "systemctl"

    kind = "journal"
    envelope = envelope.JOURNAL

    @property
    def label(self) -> str:
        return f"journal:{self.unit}"

    def argv(self, resume: Resume | None) -> list[str]:
        argv = [self.program, "--unit", self.unit, "--output", "short-iso", "--no-pager",
                "--boot"]
        if self.follow:
            argv.append("--follow")
        if resume is not None:
            argv += ["--since", f"@{resume.instant[0]}"]  # whole seconds, as short-iso prints
        else:
            argv += ["--lines", "all" if self.tail is None else str(self.tail)]
        return argv

    def check_argv(self) -> list[str] | None:
        # journalctl follows a unit that does not exist in silence; systemd knows.
        return [self.systemctl, "show", "--property", "LoadState", "--value", self.unit]

    def checked(self, rc: int, output: str) -> Failure | None:
        if rc == 0 and output.strip() == "not-found":
            return Failure(f"systemd has no unit {self.unit} (systemctl show: LoadState="
                           "not-found)", fatal=True)
        return None  # no systemd here (a container, a copied journal): journalctl decides

    def failure(self, rc: int, messages: list[str]) -> Failure:
        said = _last(messages)
        if "Permission denied" in said:
            return Failure(f"journalctl: {said} (join the `systemd-journal` or `adm` group)",
                           fatal=True)
        if "No journal files were found" in " ".join(messages) or "not available" in said \
                or "unrecognized option" in said or "invalid option" in said \
                or "Failed to add match" in said:
            return Failure(f"journalctl: {said}", fatal=True)
        return super().failure(rc, messages)

    def ended(self) -> str:
        return "journalctl ended the stream"


# journalctl's hint when the user may only read their own journal (it still exits 0).
_JOURNAL_HINT = re.compile(r"not seeing messages from other users")


def client_note(client: Client, text: str) -> str:
    """A line the client wrote about itself, in words for the header."""
    if client.kind == "journal" and _JOURNAL_HINT.search(text):
        return ("journalctl: this user cannot read the system journal, so a system unit's lines "
                "are not shown (join the `systemd-journal` or `adm` group)")
    return f"{client.program}: {text.strip()}"


class EnvelopeReader:
    """A client's output lines -> the server's own lines, without what a resume repeats.

    `restart()` is called each time the client is started again with `--since` at `resume`:
    until the first line newer than that point, lines older than it, and the first `count`
    lines at exactly it, are the repeat and are dropped. After that every line passes, whatever
    its time (clocks step; stdout and stderr interleave).
    """

    def __init__(self, client: str, *, bare_is_message: bool) -> None:
        self.client = client
        self.bare_is_message = bare_is_message
        self.resume: Resume | None = None
        self._boundary: Resume | None = None
        self._skipped = 0
        self._indent = 0  # width of the last envelope (journalctl indents continuations)
        self._dropping = False  # the last enveloped line was a repeat (so is its continuation)

    def restart(self) -> None:
        self._boundary = self.resume
        self._skipped = 0
        self._indent = 0
        self._dropping = False

    def feed(self, text: str) -> tuple[str, str] | None:
        """("line", payload) | ("marker", text) | ("message", text), or None for a repeat."""
        env = envelope.split(text, self.client)
        if env is None:
            if self._indent and text[: self._indent].isspace():
                return None if self._dropping else ("line", text[self._indent :])
            if self.bare_is_message:
                return ("message", text)
            return ("line", text)
        if env.marker:
            return ("marker", text)
        self._indent = env.start if self.client == envelope.JOURNAL else 0
        key = envelope.instant(env.ts)
        if key is None or env.ts is None:
            self._dropping = False
            return ("line", text[env.start :])
        b = self._boundary
        if b is not None:
            if key < b.instant or (key == b.instant and self._skipped < b.count):
                if key == b.instant:
                    self._skipped += 1
                self._dropping = True
                return None
            self._boundary = None
        self._dropping = False
        r = self.resume
        if r is not None and key == r.instant:
            self.resume = Resume(r.ts, key, r.count + 1)
        elif r is None or key > r.instant:
            self.resume = Resume(env.ts, key, 1)
        return ("line", text[env.start :])
