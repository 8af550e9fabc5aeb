"""`ClientFollower`: a LineSource that runs a log client (docker, kubectl, journalctl) locally.

The loop is: start the client (an argument list, no shell) -> hand its lines on, envelope
stripped -> when it exits, tell a refusal (no such container, forbidden: said once, the source
ends) from a lost stream (the client was killed, the daemon restarted, the container stopped:
said at once, retried with backoff and `--since` at the last timestamp seen, repeats dropped).
When the container was started again meanwhile, that is said too: its lines are a new server
start.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Mapping

from kvtui.sources.base import Emit, Item, SourceLine, SourceNotice
from kvtui.sources.clients import Client, EnvelopeReader, Failure, Instance, client_note
from kvtui.sources.lines import LineSplitter

READ_SIZE = 1 << 16
PROBE_TIMEOUT = 10.0
MESSAGES_KEPT = 20


class ClientFollower:
    """Follow `client`'s output; implements `LineSource`."""

    def __init__(self, client: Client, *, backoff: tuple[float, float] = (1.0, 30.0),
                 env: Mapping[str, str] | None = None) -> None:
        self.client = client
        self.name = client.label
        self.backoff = backoff
        self.env = dict(env) if env is not None else None
        self.reader = EnvelopeReader(client.envelope, bare_is_message=client.merge_stderr)
        self.line_no = 0
        self.starts = 0  # how many times the client was started
        self.process: subprocess.Popen[bytes] | None = None
        self._instance: Instance | None = None

    # -- the thread body ---------------------------------------------------------------------
    def run(self, emit: Emit, stop: threading.Event) -> None:
        try:
            self._follow(emit, stop)
        except Exception as exc:  # a source must report, never take the app down
            emit([SourceNotice(self.name, "error", f"{self.client.program} failed: {exc}")])
        finally:
            if stop.is_set():  # else the last word (an error, "at end") stays in the header
                emit([SourceNotice(self.name, "closed", "")])

    def _follow(self, emit: Emit, stop: threading.Event) -> None:
        refused = self._check()
        if refused is not None:
            emit([SourceNotice(self.name, "error", refused.message)])
            return
        if self.client.follow:
            self._instance = self._probe()  # the instance read first, to see a restart by
        attempt = 0
        while not stop.is_set():
            resume = self.reader.resume
            if self.starts:
                self._note_instance(emit)  # before its lines: a container started again
            emit([SourceNotice(self.name, "connecting" if not self.starts else "reconnecting",
                               f"starting {self.client.program}" if not self.starts else
                               f"restarting {self.client.program} from {resume.ts}"
                               if resume else f"restarting {self.client.program}")])
            outcome = self._run_once(emit, stop)
            if outcome is None or stop.is_set():
                return  # could not start (said so), or stopped
            rc, messages, progressed = outcome
            if rc == 0 and not self.client.follow:
                emit([SourceNotice(self.name, "at_end", "end of the log (the client is done)")])
                return
            self._note_instance(emit)  # now, while a stopped container still says how it ended
            if rc == 0:
                reason = self.client.ended()
            else:
                failure = self.client.failure(rc, messages)
                if failure.fatal:
                    emit([SourceNotice(self.name, "error", failure.message)])
                    return
                reason = failure.message
            # a stream that delivered lines is retried at once; one that keeps failing backs off
            attempt = 0 if progressed else attempt + 1
            delay = min(self.backoff[1], self.backoff[0] * (2 ** max(0, attempt - 1)))
            self._wait(emit, stop, delay, reason)

    def _wait(self, emit: Emit, stop: threading.Event, delay: float, reason: str) -> None:
        emit([SourceNotice(self.name, "reconnecting", f"{reason}; retrying in {delay:g} s")])
        stop.wait(delay)

    # -- one run of the client ---------------------------------------------------------------
    def _spawn(self, argv: list[str], *, merge: bool) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if merge else subprocess.PIPE,
            env=self.env, start_new_session=True,  # its own group: stopped as a whole
        )

    def _run_once(self, emit: Emit, stop: threading.Event
                  ) -> tuple[int, list[str], bool] | None:
        """Run the client until it exits or `stop`: (exit code, its own words, lines came)."""
        argv = self.client.argv(self.reader.resume)
        try:
            proc = self._spawn(argv, merge=self.client.merge_stderr)
        except FileNotFoundError:
            emit([SourceNotice(self.name, "error", self.client.missing())])
            return None
        except PermissionError as exc:
            emit([SourceNotice(self.name, "error", f"cannot run {argv[0]}: {exc.strerror}")])
            return None
        self.process = proc
        self.starts += 1
        if self.starts > 1:
            self.reader.restart()
        emit([SourceNotice(self.name, "live", f"following {self.name}")])
        messages: list[str] = []
        progressed = False
        sel = selectors.DefaultSelector()
        pipes = {}
        for pipe, is_err in ((proc.stdout, False), (proc.stderr, True)):
            if pipe is not None:
                os.set_blocking(pipe.fileno(), False)
                sel.register(pipe, selectors.EVENT_READ, is_err)
                pipes[pipe.fileno()] = LineSplitter()
        try:
            while pipes and not stop.is_set():
                for key, _ in sel.select(0.2):
                    fd = key.fd
                    try:
                        chunk = os.read(fd, READ_SIZE)
                    except BlockingIOError:
                        continue
                    splitter = pipes[fd]
                    pairs = splitter.feed(chunk) if chunk else splitter.flush()
                    if not chunk:
                        sel.unregister(key.fileobj)
                        del pipes[fd]
                    texts = [t for _, t in pairs]
                    if key.data:  # the client's stderr: its own words
                        self._messages(emit, texts, messages)
                    elif self._deliver(emit, texts, messages):
                        progressed = True
        finally:
            sel.close()
            if stop.is_set():
                _terminate(proc)
            for pipe in (proc.stdout, proc.stderr):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()
        rc = proc.wait()
        return rc, messages, progressed

    def _deliver(self, emit: Emit, texts: list[str], messages: list[str]) -> bool:
        items: list[Item] = []
        notes: list[str] = []
        read = self.reader.feed
        for text in texts:
            got = read(text)
            if got is None:
                continue
            what, body = got
            if what == "line":
                self.line_no += 1
                items.append(SourceLine(self.name, self.line_no, -1, body))
            elif what == "marker":
                items.append(SourceNotice(self.name, "info", f"{self.client.program}: "
                                          f"{body.strip(' -')}"))
            else:
                notes.append(body)
        if items:
            emit(items)
        if notes:
            self._messages(emit, notes, messages)
        return any(type(i) is SourceLine for i in items)

    def _messages(self, emit: Emit, texts: list[str], messages: list[str]) -> None:
        """The client's own words: kept for the exit's explanation, and shown as they come."""
        texts = [t for t in texts if t.strip()]
        if not texts:
            return
        messages.extend(texts)
        del messages[:-MESSAGES_KEPT]
        notes: list[Item] = [SourceNotice(self.name, "info", client_note(self.client, t))
                             for t in texts[-3:]]
        # the header shows the latest state: the client is still running, so still "live"
        emit([*notes, SourceNotice(self.name, "live", f"following {self.name}")])

    # -- questions asked on the side ---------------------------------------------------------
    def _ask(self, argv: list[str]) -> tuple[int, str] | None:
        try:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                                  env=self.env, timeout=PROBE_TIMEOUT, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.returncode, done.stdout.decode("utf-8", errors="replace")

    def _check(self) -> Failure | None:
        argv = self.client.check_argv()
        answer = self._ask(argv) if argv else None
        return self.client.checked(*answer) if answer is not None else None

    def _probe(self) -> Instance | None:
        argv = self.client.probe_argv()
        answer = self._ask(argv) if argv else None
        if answer is None or answer[0] != 0:
            return None
        return self.client.instance(answer[1])

    def _note_instance(self, emit: Emit) -> None:
        """A container started again is a new server start: say so before its lines."""
        now = self._probe()
        if now is None:
            return
        before, self._instance = self._instance, now
        if before is not None and before.key != now.key:
            end = now.previous_end or before.ended
            how = f"; the previous instance ended: {end}" if end else ""
            count = f" (restart {now.restarts})" if now.restarts is not None else ""
            emit([SourceNotice(self.name, "restarted", f"container started again{count}{how}; "
                               "what follows is a new server start")])


def _terminate(proc: subprocess.Popen[bytes]) -> None:
    """End the client and whatever it started (its own process group)."""
    for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 2.0)):
        if proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        end = time.monotonic() + wait
        while proc.poll() is None and time.monotonic() < end:
            time.sleep(0.02)
