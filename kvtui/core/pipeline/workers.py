"""Worker processes for the parallel folds that can never hang the process that asks for them.

Why not `multiprocessing.Pool`: its workers share locks with one another and with three helper
threads of the parent (the task queue's read lock, the result queue's write lock). A worker
ended while it holds one leaves it held for ever, and ending busy workers is what
`Pool.terminate()` does: `StreamFold.abort()` (an error, a signal, the TUI closed during a
load), a `kvtui events` whose reader went away. A worker terminated while sending its result
holds the result queue's write lock; the pool's task handler then waits on that lock for ever
to send its end marker, and `terminate()` waits for the task handler: the test suite hung on a
futex with two dead, unreaped workers, and 600 aborts of a busy stream fold in a loop hang the
same way within a few hundred. A worker that dies (the OOM killer) is replaced, but its task is
never answered, so `get()` waits for ever too.

So here each worker has two pipes of its own, each with one writer and one reader: no lock is
shared by two processes, so no process can die holding one. The parent has no helper threads:
it reads results and writes tasks itself, without blocking, in the thread that waits (a worker
gets a task only when it is idle, i.e. reading), and while it waits it watches every busy
worker: one that has exited (its pipe ends, or `waitpid` says so) or that has used no CPU and
moved no byte for `stall` seconds (stuck: fork copies a lock another thread of the parent held
at that moment, locked, into the child) is killed and its task is `Lost`. The callers then do
that task in place, so a lost worker costs time, never the answer: the folds stay exactly the
sequential fold. Ending the workers is a SIGKILL and a `waitpid`, which nothing in a worker can
hold up (they hold nothing that needs a clean exit).

The child is made with `os.fork()` and runs only the loop below: not `multiprocessing.Process`,
whose start-up closes `sys.stdin` and whose exit flushes `sys.stdout`/`sys.stderr`, each of which
takes a lock another thread of the parent (the TUI, a source) may have held at the fork. The
child never prints (a task's exception goes back to the parent), freezes the objects it
inherited (`gc.freeze`: none of them is collected, so no finalizer of the parent's runs in it)
and leaves by `os._exit`.

A `Workers` is used from one thread at a time.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import pickle
import select
import signal
import struct
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

# A busy worker that has used no CPU and moved no byte for this long is taken as stuck.
STALL_SECONDS = 30.0
TICK = 0.2  # seconds between the liveness checks of busy workers while a result is awaited
_HEADER = struct.Struct("<Q")  # a message: its length, then its body (see _message)
_IOV = 256  # buffers per writev (the system's limit, IOV_MAX, is 1024 on Linux)
_PIPE_BYTES = 1 << 20  # asked of the kernel (Linux), so a piece crosses in a few writes
try:
    import fcntl

    _SETPIPE_SZ: int | None = getattr(fcntl, "F_SETPIPE_SZ", None)
except ImportError:  # pragma: no cover - not a POSIX system
    fcntl = None  # type: ignore[assignment]
    _SETPIPE_SZ = None


class Lost(Exception):
    """The task's worker exited, or was stuck and was killed: do the task in place."""


class WorkerTraceback(Exception):
    """The traceback of an exception raised in a worker (the `__cause__` of its re-raise)."""


class Task:
    """One argument handed to the pool's function, and what became of it."""

    __slots__ = ("arg", "done", "error", "lost", "value")

    def __init__(self, arg: Any) -> None:
        self.arg = arg
        self.done = False
        self.lost = False
        self.value: Any = None
        self.error: tuple[BaseException, str] | None = None


class _Worker:
    __slots__ = ("body", "cpu", "got", "head", "moved", "out", "pid", "result_fd", "still", "task",
                 "task_fd")

    def __init__(self, pid: int, task_fd: int, result_fd: int) -> None:
        self.pid = pid
        self.task_fd = task_fd  # the parent writes tasks here (non-blocking)
        self.result_fd = result_fd  # and reads results here (non-blocking)
        self.task: Task | None = None
        self.out: list[memoryview] | None = None  # what is left to write of the task
        self.head = b""  # the result's header as read so far
        self.body: bytearray | None = None  # the result's pickle, once its length is known
        self.got = 0
        self.moved = False  # a byte went either way since the last check
        self.cpu: int | None = None  # CPU ticks at the last check
        self.still = 0.0  # seconds of checks with no CPU and no byte


class Workers:
    """`count` forked worker processes that call `func` (inherited by the fork, so it may be a
    closure) on the arguments submitted, each pickled across a pipe, the results pickled back.

    `submit(arg)` hands an argument to an idle worker (or queues it in this process);
    `result(task)` waits for its value (raising `Lost`, or the worker's exception). Fewer
    workers may start (fork failed, no `os.fork`); with none left every task is `Lost`.
    """

    def __init__(self, count: int, func: Callable[[Any], Any], *,
                 stall: float | None = None) -> None:
        self.func = func
        self.stall = STALL_SECONDS if stall is None else stall
        self._workers: list[_Worker] = []
        self._queue: deque[Task] = deque()
        self._checked = time.monotonic()
        for _ in range(count):
            worker = self._fork()
            if worker is None:
                break
            self._workers.append(worker)

    # -- the caller's side -----------------------------------------------------------------
    @property
    def pids(self) -> list[int]:
        """The workers still running (busy or idle)."""
        return [w.pid for w in self._workers]

    def busy_pids(self) -> list[int]:
        """The workers that hold a task now."""
        return [w.pid for w in self._workers if w.task is not None]

    def submit(self, arg: Any) -> Task:
        task = Task(arg)
        self._queue.append(task)
        self._pump(0.0)
        return task

    def poll(self) -> None:
        """Take whatever results have come, hand queued tasks to idle workers; never waits."""
        self._pump(0.0)

    def wait(self, tasks: Iterable[Task], timeout: float) -> bool:
        """Wait up to about `timeout` seconds for `tasks`; True when all are done or lost."""
        pending = [t for t in tasks if not t.done]
        end = time.monotonic() + timeout
        while pending:
            left = end - time.monotonic()
            if left <= 0:
                return False
            self._pump(min(left, TICK))
            pending = [t for t in pending if not t.done]
        return True

    def result(self, task: Task) -> Any:
        """The value of `func(task.arg)` (raising what it raised there, or `Lost`)."""
        while not task.done:
            self._pump(TICK)
        if task.lost:
            raise Lost(f"the worker of a task ended or was stuck; {len(self._workers)} left")
        if task.error is not None:
            exc, text = task.error
            raise exc from WorkerTraceback(text)
        return task.value

    def value(self, task: Task) -> Any:
        """`result(task)`, or `func(task.arg)` done here when its worker was lost."""
        try:
            return self.result(task)
        except Lost:
            return self.func(task.arg)

    def map(self, args: Iterable[Any]) -> Iterator[Any]:
        """`func` of each argument in their order, on the workers (`value` of each)."""
        tasks = [self.submit(arg) for arg in args]
        for task in tasks:
            yield self.value(task)

    def close(self) -> None:
        """End every worker now (SIGKILL: nothing in a worker needs a clean exit) and reap it;
        tasks not answered yet are lost."""
        for w in self._workers:
            self._end(w)
        self._workers.clear()
        self._lose_queue()

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the parent's side of the pipes ----------------------------------------------------
    def _fork(self) -> _Worker | None:
        if not hasattr(os, "fork"):
            return None
        task_r, task_w = os.pipe()
        result_r, result_w = os.pipe()
        for fd in (task_w, result_w):
            _widen(fd)
        try:
            pid = os.fork()
        except OSError:
            for fd in (task_r, task_w, result_r, result_w):
                os.close(fd)
            return None
        if pid == 0:  # the child: it never returns from here
            try:
                _child(self.func, task_r, result_w,
                       [task_w, result_r, *(fd for w in self._workers
                                            for fd in (w.task_fd, w.result_fd))])
                os._exit(0)
            finally:
                os._exit(1)
        os.close(task_r)
        os.close(result_w)
        os.set_blocking(task_w, False)
        os.set_blocking(result_r, False)
        return _Worker(pid, task_w, result_r)

    def _pump(self, timeout: float) -> None:
        """Hand queued tasks to idle workers and move bytes both ways, waiting up to `timeout`
        for any; a task handed over is written whole before this returns (its worker is
        reading it), so it is folding while the caller does something else."""
        self._round(timeout)
        while any(w.out is not None for w in self._workers):
            self._round(TICK)

    def _round(self, timeout: float) -> None:
        self._dispatch()
        busy = [w for w in self._workers if w.task is not None]
        if not busy:
            return
        poller = select.poll()
        for w in busy:
            poller.register(w.result_fd, select.POLLIN)
            if w.out is not None:
                poller.register(w.task_fd, select.POLLOUT)
        ready = dict(poller.poll(int(timeout * 1000)))
        gone = [w for w in busy
                if (w.out is not None and ready.get(w.task_fd) and not self._send(w))
                or (ready.get(w.result_fd) and not self._receive(w))]
        for w in gone:
            self._lose(w)
        self._watch()
        self._dispatch()

    def _dispatch(self) -> None:
        """Queued tasks to idle workers (written by the rounds that follow)."""
        while self._queue:
            idle = next((w for w in self._workers if w.task is None), None)
            if idle is None:
                if not self._workers:
                    self._lose_queue()
                return
            task = self._queue.popleft()
            idle.task = task
            idle.out = _message(task.arg)
            idle.still, idle.cpu = 0.0, None
            if not self._send(idle):
                self._lose(idle)

    def _send(self, w: _Worker) -> bool:
        """Write what the pipe takes of `w`'s task; False when the worker is gone."""
        assert w.out is not None
        try:
            while w.out:
                _written(w.out, os.writev(w.task_fd, w.out[:_IOV]))
                w.moved = True
        except BlockingIOError:
            return True
        except OSError:  # EPIPE: its end is closed, it has exited
            return False
        w.out = None
        return True

    def _receive(self, w: _Worker) -> bool:
        """Read what has come of `w`'s result; False when the worker is gone (EOF)."""
        try:
            while True:
                if w.body is None:
                    chunk = os.read(w.result_fd, _HEADER.size - len(w.head))
                    if not chunk:
                        return False
                    w.head += chunk
                    w.moved = True
                    if len(w.head) < _HEADER.size:
                        continue
                    w.body = bytearray(_HEADER.unpack(w.head)[0])
                    w.got = 0
                view = memoryview(w.body)[w.got:]
                if view:
                    n = os.readv(w.result_fd, [view])
                    if n == 0:
                        return False
                    w.got += n
                    w.moved = True
                if w.got == len(w.body):
                    self._answer(w)
                    return True
        except BlockingIOError:
            return True
        except OSError:
            return False

    def _answer(self, w: _Worker) -> None:
        assert w.task is not None and w.body is not None
        task, body = w.task, w.body
        w.task, w.body, w.head, w.got = None, None, b"", 0
        ok, value, text = _loads(body)
        if ok:
            task.value = value
        else:
            task.error = (value, text)
        task.done = True

    # -- health ------------------------------------------------------------------------------
    def _watch(self) -> None:
        now = time.monotonic()
        if now - self._checked < TICK:
            return
        # A pause of this process (a stopped terminal job) is not a worker's stall.
        step = min(now - self._checked, 1.0)
        self._checked = now
        for w in [w for w in self._workers if w.task is not None]:
            if _exited(w.pid):
                self._lose(w, reaped=True)
                continue
            cpu = _cpu_ticks(w.pid)
            if cpu is None or cpu != w.cpu or w.moved:
                w.cpu, w.moved, w.still = cpu, False, 0.0
                continue
            w.still += step
            if w.still >= self.stall:
                self._lose(w)

    def _lose(self, w: _Worker, *, reaped: bool = False) -> None:
        """`w` is gone or stuck: end it, and its task is lost."""
        if w.task is not None:
            w.task.lost = w.task.done = True
            w.task = None
        self._end(w, reaped=reaped)
        self._workers.remove(w)
        if not self._workers:
            self._lose_queue()

    def _lose_queue(self) -> None:
        while self._queue:
            task = self._queue.popleft()
            task.lost = task.done = True

    @staticmethod
    def _end(w: _Worker, *, reaped: bool = False) -> None:
        for fd in (w.task_fd, w.result_fd):
            with contextlib.suppress(OSError):
                os.close(fd)
        if w.task is not None:
            w.task.lost = w.task.done = True
            w.task = None
        # Killed only while it is still this process's child (alive or a zombie): a pid that
        # was reaped elsewhere may already name another process.
        if reaped or _exited(w.pid):
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(w.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):  # another reaper was first
            os.waitpid(w.pid, 0)


def _message(obj: Any) -> list[memoryview]:
    """`obj` as buffers to write in order: the length of the body, then the body: how many
    out-of-band buffers and their lengths, the pickle's length, the pickle, those buffers.

    A `pickle.PickleBuffer` in `obj` (a stream piece's received bytes) goes out of band: the
    pipe takes it from where it is, and the reader's body holds it where `_loads` hands it on
    as a view, so neither process copies it (pickling 199 MB of pieces into the message, and
    out of it again in the workers, were two copies of every byte of an SSH load)."""
    out: list[pickle.PickleBuffer] = []
    buf = io.BytesIO()
    pickle.dump(obj, buf, 5, buffer_callback=out.append)
    pk = buf.getbuffer()
    views = [b.raw() for b in out]
    lens = [len(pk), *(v.nbytes for v in views)]
    table = struct.pack(f"<I{len(lens)}Q", len(views), *lens)
    head = _HEADER.pack(len(table) + sum(lens)) + table
    return [memoryview(head), pk, *views]


def _loads(body: bytearray) -> Any:
    """What `_message` pickled, read from its body; out-of-band buffers are views of `body`."""
    (count,) = struct.unpack_from("<I", body, 0)
    lens = struct.unpack_from(f"<{count + 1}Q", body, 4)
    view = memoryview(body)
    at = 4 + 8 * (count + 1)
    parts = []
    for n in lens:
        parts.append(view[at:at + n])
        at += n
    return pickle.loads(parts[0], buffers=parts[1:])


def _written(out: list[memoryview], n: int) -> None:
    """Drop the `n` bytes a write took from the front of `out` (and any empty buffer there)."""
    while out and n >= out[0].nbytes:
        n -= out[0].nbytes
        del out[0]
    if n:
        out[0] = out[0][n:]


def _widen(fd: int) -> None:
    if fcntl is not None and _SETPIPE_SZ is not None:
        with contextlib.suppress(OSError):  # the system's limit is lower: the default stays
            fcntl.fcntl(fd, _SETPIPE_SZ, _PIPE_BYTES)


def _exited(pid: int) -> bool:
    """Has the child `pid` exited? (reaped if so)."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # reaped by someone else: gone all the same
        return True
    return done != 0


def _cpu_ticks(pid: int) -> int | None:
    """User + system CPU time of `pid` in clock ticks (Linux /proc), None when unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()
    try:
        return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    except (IndexError, ValueError):
        return None


# -- the child ---------------------------------------------------------------------------------
def _child(func: Callable[[Any], Any], task_fd: int, result_fd: int, others: list[int]) -> None:
    """Serve tasks until the parent's end of the task pipe closes."""
    for fd in others:  # the parent's ends of this worker's pipes and of the earlier workers'
        with contextlib.suppress(OSError):
            os.close(fd)
    _child_signals()
    gc.freeze()
    while True:
        data = _read_message(task_fd)
        if data is None:
            return
        try:
            reply: tuple[bool, Any, str] = (True, func(_loads(data)), "")
        except BaseException as exc:  # the parent raises it again
            reply = (False, exc, traceback.format_exc())
        try:
            message = _message(reply)
        except Exception as exc:
            message = _message((False, RuntimeError(
                f"a worker's result could not be pickled: {type(exc).__name__}: {exc}"),
                reply[2] or traceback.format_exc()))
        _write_all(result_fd, message)


def _child_signals() -> None:
    """The parent decides how a fold ends: a worker ignores the terminal's SIGINT and has no
    Python handler of the parent's (a wakeup fd would write into the parent's event loop)."""
    with contextlib.suppress(ValueError, OSError):
        signal.set_wakeup_fd(-1)
    for sig in signal.valid_signals():
        with contextlib.suppress(ValueError, OSError, RuntimeError):
            if callable(signal.getsignal(sig)):
                signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _read_message(fd: int) -> bytearray | None:
    head = _read_exact(fd, _HEADER.size)
    if head is None:
        return None
    return _read_exact(fd, _HEADER.unpack(head)[0])


def _read_exact(fd: int, n: int) -> bytearray | None:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = os.readv(fd, [view[got:]])
        if k == 0:
            return None
        got += k
    return buf


def _write_all(fd: int, out: list[memoryview]) -> None:
    while out:
        _written(out, os.writev(fd, out[:_IOV]))
