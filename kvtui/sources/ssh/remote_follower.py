"""The follower that runs on the remote host: `python3 -S -c BOOT kvtui-follow PATH OPTIONS`.

Why not `tail -F`: tail announces truncation and replacement on stderr while the data goes to
stdout, and sshd forwards the two pipes independently, so the client cannot tell which bytes came
before the event; exact offsets across rotations are then impossible. This follower puts data and
events in one framed stdout stream (type byte + 4-byte length + payload), so ordering is exact.
The stream starts with MAGIC: whatever a login script printed on stdout before it is skipped.

  V  json {version, codec}         first frame
  H  json {ino, dev, offset, size, head_len, head, name, why, mtime, done[, packed]}  the file
       now read (packed: a compressed rotation, read decompressed; offset and head are of its
       content; mtime: its mtime then; done: the files read so far, handed back on resume):
       why "start" (first file of this session), "next" (a new file from its offset: a rotation
       successor, or the same file after a truncation), "copy" (the same byte stream goes on in
       a copy of the file: copytruncate), "head" (the file's identity grew, nothing else)
  D  raw bytes / Z  zlib-compressed bytes (one stream per run, sync-flushed per frame) /
  Y  zstd-compressed bytes (level 1), frames cut anywhere: Python 3.14's compression.zstd, a
     frame per read, or the `zstd` binary, one frame per burst of backlog (up to 64 MiB); the
     client decompresses with `zstandard`, whole blocks at a time (bounded)
  N  json {state, message}         rotated / truncated / missing / stale / info / error /
                                   codec (zstd failed mid-burst: the client reads on with zlib)
  E  caught up with the end of the file (sent once; with stop_at_end the follower then exits)
  K  heartbeat while idle, so the client's watchdog can tell "quiet log" from "dead peer"
  C  json: the state of a chain of rotated files being read (also in H), handed back on resume
  P  read ahead, once, right after the first data frame: offset and line number (2 x 8 bytes)
     + zlib-compressed complete lines of the start-up region of the last server start (the
     line holding the last of the client's markers), when the stream would reach it only
     later (a big file, --lines N)

A file is known by its identity: inode and device plus a hash of its first bytes (inodes are
reused). Rotations are followed by identity, oldest first: the renamed file is read until it has
been quiet for `quiet` s (writers keep appending to it until they reopen), then every rotated
file newer than it (two rotations during one disconnect), then the new file. A truncation in
place is noticed by size, first bytes or the bytes before the read position; after copytruncate
the rest is read from the copy when one is found, and the possible loss is always said.
Where the identity is gone (a rotation compressed and removed, inodes reused) the bytes being
read are found by content: a copy or a compressed rotation whose first KiB and whose bytes
before the read position hash as the client's (`find_continuation`). Rotated files are looked
for beside the log, in the directories inside its directory and in logrotate's `olddir`s.

The client sends a byte on stdin every few seconds; the follower exits on stdin EOF and when
nothing has come for `idle_exit` s (a network drop that never heals gives no EOF for many
minutes), and it never blocks in a write: no process is left on the host. Files are opened
non-blocking after a stat, and anything but a regular file is refused (a FIFO would block
`open` forever). Its stderr is reserved for real failures.

How this file is written: `kvtui.sources.ssh.follow` sends its source as it is (compressed) and
the host's `python3 -S` runs it as `__main__`, so it must run on any python3 a host may have,
3.6 on: the standard library only, no syntax newer than 3.6 (ruff checks it as py37, the oldest
target it knows, and a test parses it as 3.6), types in `# type:` comments (mypy reads them;
they cost nothing at run time and cannot fail on an old interpreter as an evaluated annotation
would), `typing` imported for mypy only. kvtui imports it too (for MAGIC, and its tests), so
nothing runs at import: the host's options are read by `run`, below.
"""

import hashlib
import json
import os
import select
import signal
import stat
import struct
import sys
import time
import zlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing on the host
if TYPE_CHECKING:
    from subprocess import Popen  # noqa: F401  (in type comments)
    from typing import (  # noqa: F401  (in type comments, which ruff does not read)
        Any,
        Callable,
        Dict,
        Iterator,
        List,
        NoReturn,
        Optional,
        Protocol,
        Set,
        Tuple,
        Union,
    )

    Ident = Tuple[int, int]  # (st_ino, st_dev)
    Head = Tuple[int, str]  # the first bytes of a file: (length, sha1 hex)
    # what find_continuation found: (path, fd or Unpacker at the read position, packed?)
    Cont = Tuple[str, Any, bool]

    class Stream(Protocol):
        """What `Unpacker` reads: a decompressing file, or a decompressor's stdout."""

        def read(self, n):
            # type: (int) -> bytes
            ...

        def close(self):
            # type: () -> None
            ...

MAGIC = b"\x00KVTUI-FOLLOW-2\x00"
CHUNK, HEAD, POLL, FIRST = 1 << 20, 1024, 0.1, 256 << 10
PACKED = (".gz", ".bz2", ".xz", ".zst", ".lz4", ".lzma", ".Z", ".zip")
KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
         (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
         (stat.S_ISDIR, "a directory"))
# a backlog of BLOCK bytes or more goes through the zstd binary, in bursts of at most BURST
# (each one zstd process and frame; the file's rotations are looked for between bursts);
# smaller reads (live following) go as zlib
BLOCK, BURST = 4 << 20, 64 << 20

# Set by `configure` from the command line (the client's options as JSON, see follow.py).
path = ""  # the log followed
o = {}  # type: Dict[str, Any]
STOP = False  # stop at the end of the file (a snapshot read)
HB = IDLE_EXIT = QUIET = 0.0
D = BASE = STEM = EXT = ""  # the log's directory, name, and name split at its extension
CODECS = []  # type: List[str]  # what the client can decode, best first
zpy = None  # type: Any  # Python 3.14's compression.zstd, when the client takes zstd
zbin = None  # type: Optional[str]  # else the host's `zstd` binary
zc = None  # type: Optional[zlib._Compress]
CODEC = "none"
last_in = last_out = 0.0  # monotonic time of the client's last byte, of our last frame
sent_any = False
# the read-ahead still to send, after the first chunk: (fd, offset, size)
ahead = None  # type: Optional[Tuple[int, int, int]]


def configure(argv):
    # type: (List[str]) -> None
    """The options from the command line: `argv[2]` the path, `argv[3]` the JSON options."""
    global path, o, STOP, HB, IDLE_EXIT, QUIET, D, BASE, STEM, EXT, CODECS, zpy, zbin, zc, \
        CODEC, last_in, last_out, cur_name, OLDDIRS
    path = argv[2]
    o = json.loads(argv[3])
    STOP, HB, IDLE_EXIT, QUIET = o["stop_at_end"], o["hb"], o["idle_exit"], o["quiet"]
    D = os.path.dirname(path) or "."
    BASE = os.path.basename(path)
    STEM, EXT = os.path.splitext(BASE)
    CODECS = o["codecs"]
    if "zstd" in CODECS:
        try:
            from compression import zstd as zpy  # Python 3.14+
        except ImportError:
            import shutil
            zbin = shutil.which("zstd")
    zc = zlib.compressobj(1) if "zlib" in CODECS else None
    CODEC = "zstd" if zpy else "zstd+zlib" if zbin and zc else "zlib" if zc else "none"
    last_in = last_out = time.monotonic()
    cur_name = path
    OLDDIRS = olddirs()


class NotRegular(Exception):
    pass


def pump(timeout, want_write=False):
    # type: (float, bool) -> bool
    """Wait up to `timeout` s for the client's heartbeat bytes (or stdout room); exit on EOF
    or when the client has been silent for IDLE_EXIT s."""
    global last_in
    r, wr, _ = select.select([0], [1] if want_write else [], [], timeout)
    if r:
        b = os.read(0, 65536)
        if not b:
            sys.exit(0)
        last_in = time.monotonic()
    if IDLE_EXIT and time.monotonic() - last_in > IDLE_EXIT:
        sys.exit(0)
    return bool(wr)


def w(kind, payload=b""):
    # type: (bytes, bytes) -> None
    global last_out
    view = memoryview(kind + struct.pack(">I", len(payload)) + payload)
    while view:
        try:
            view = view[os.write(1, view):]
        except BlockingIOError:
            pump(0.5, True)
        except BrokenPipeError:  # the client is gone (SIGPIPE ignored during a burst)
            sys.exit(0)
    last_out = time.monotonic()


def wj(kind, obj):
    # type: (bytes, Any) -> None
    w(kind, json.dumps(obj).encode())


def note(state, message, about=None):
    # type: (str, str, Optional[str]) -> None
    """`about`: the path the message begins with (the client says which host it is on)."""
    n = {"state": state, "message": message}
    if about is not None:
        n["path"] = about
    wj(b"N", n)


def idle(timeout):
    # type: (float) -> None
    if time.monotonic() - last_out >= HB:
        w(b"K")
    pump(timeout)


def ident(st):
    # type: (os.stat_result) -> Ident
    return (st.st_ino, st.st_dev)


def kind_of(mode):
    # type: (int) -> str
    for test, name in KINDS:
        if test(mode):
            return name
    return "not a regular file"


def open_reg(p):
    # type: (str) -> int
    st = os.stat(p)
    if not stat.S_ISREG(st.st_mode):
        raise NotRegular(kind_of(st.st_mode))
    fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise NotRegular(kind_of(st.st_mode))
    return fd


def refuse(p, e):
    # type: (str, NotRegular) -> NoReturn
    note("error", "%s is %s, not a regular file: kvtui follows regular log files only "
         "(read anything else with --cmd)" % (p, e), p)
    sys.exit(3)


def wait_open():
    # type: () -> int
    """The path opened, waiting while it is missing or unreadable (said once per episode)."""
    said = None
    while True:
        try:
            return open_reg(path)
        except NotRegular as e:
            refuse(path, e)
        except FileNotFoundError:
            why = "missing"
        except PermissionError:
            why = "denied"
        except OSError as e:
            note("error", "%s: %s" % (path, e.strerror or e), path)
            sys.exit(3)
        if STOP:
            note("error", "%s: %s" % (path, "no such file" if why == "missing"
                                      else "permission denied"), path)
            sys.exit(3)
        if why != said:
            said = why
            if why == "missing":
                note("missing", "%s does not exist (yet); waiting for it" % path, path)
            else:
                note("stale", "%s: permission denied; retrying until it is readable" % path,
                     path)
        idle(0.25)


def head_of(fd):
    # type: (int) -> Head
    h = os.pread(fd, HEAD, 0)
    return len(h), hashlib.sha1(h).hexdigest()


def same_head(fd, hl, hh):
    # type: (int, int, str) -> bool
    h = os.pread(fd, hl, 0)
    return len(h) == hl and hashlib.sha1(h).hexdigest() == hh


def bytes_before(fd, off, n):
    # type: (int, int, int) -> bytes
    n = min(n, off)
    return os.pread(fd, n, off - n)


def window_ok(fd, off, wl, wh):
    # type: (int, int, int, str) -> bool
    if wl == 0:
        return True
    b = bytes_before(fd, off, wl)
    return len(b) == wl and hashlib.sha1(b).hexdigest() == wh


fd = -1
pos = 0
cur_name = ""  # the file read now (a rotated one while a chain is read)
cur = (-1, -1)  # type: Ident  # none yet (st_ino is never negative)
cur_head = (0, "")  # type: Head
first64 = tail64 = b""
seen = set()  # type: Set[Ident]


def start_file(nfd, npos, why, name=None):
    # type: (int, int, str, Optional[str]) -> None
    """Read `nfd` from `npos` on, and tell the client (H)."""
    global fd, pos, cur, cur_head, first64, tail64, cur_name
    fd, pos, cur_name = nfd, npos, name or path
    os.lseek(fd, pos, 0)
    st = os.fstat(fd)
    cur = ident(st)
    seen.add(cur)
    cur_head = head_of(fd)
    first64 = os.pread(fd, 64, 0)
    tail64 = bytes_before(fd, pos, 64)
    wj(b"H", {"ino": st.st_ino, "dev": st.st_dev, "offset": pos, "size": st.st_size,
              "head_len": cur_head[0], "head": cur_head[1], "name": cur_name, "why": why,
              "chain": chain_state(), "mtime": st.st_mtime_ns, "done": done_state()})


chaining = {"newest": None, "late": [], "cut": 0}  # type: Dict[str, Any]


def done_state():
    # type: () -> Dict[str, List[List[Union[int, str]]]]
    """The files this follower has read (identities, and first KiB of those read whole),
    handed back on resume: a file with nothing read yet has no content to be found by, and
    these are the rotated files that are not its copies."""
    return {"ids": [list(x) for x in list(seen)[:64]],
            "heads": [list(x) for x in list(read_heads)[:64]]}


def chain_state():
    # type: () -> Optional[Dict[str, Any]]
    """While rotated files are read: what the next session needs to finish the watch on the
    new file (its identity, largest size and first bytes seen, whether it shrank), the files
    that appeared meanwhile, and how many copytruncates were seen."""
    newest = chaining["newest"]
    if newest is None:
        return None
    mine = watch["ident"] == newest
    return {"newest": list(newest), "max": watch["max"] if mine else 0,
            "shrunk": mine and watch["shrunk"], "head": list(watch["head"]) if mine else [0, ""],
            "late": list(chaining["late"]), "cut": chaining["cut"]}


def last64(before, data):
    # type: (bytes, bytes) -> bytes
    """The last 64 bytes sent once `data` followed `before` (the last 64 sent before it)."""
    return data[-64:] if len(data) >= 64 else (before + data)[-64:]


def burst(n):
    # type: (int) -> int
    """`n` bytes of backlog from `pos` through one `zstd` process (level 1), its output sent as
    it comes (Y frames cut anywhere in one zstd frame): one process per burst of up to BURST
    bytes, fed (by sendfile where the kernel can) and drained here (a process per 4 MiB cost
    zstd its start-up and table set-up each time: about as much CPU again as compressing).
    The bytes sent, 0 if zstd would not start or failed before its first output (zlib from
    now on: the burst is read again). A zstd that fails after that ends the follower (N
    codec): what it sent of the frame cannot be completed, and the client reads on from its
    last whole line without zstd. SIGPIPE is ignored meanwhile: a zstd that died must fail a
    write to it, not end this process without a word."""
    global zbin, pos, tail64
    import subprocess
    if zbin is None:  # (read_some calls it only when there is one)
        return 0
    try:
        proc = subprocess.Popen([zbin, "-1", "-q", "-c"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        zbin = None
        return 0
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    assert proc.stdin is not None and proc.stdout is not None  # (both pipes)
    zin, zout = proc.stdin.fileno(), proc.stdout.fileno()
    os.set_blocking(zin, False)
    for p in (zin, zout):
        big_pipe(p)
    left, todo, fed, sent = n, b"", 0, False  # type: int, Union[bytes, memoryview], int, bool
    while True:
        r, wr, _ = select.select([zout, 0], [zin] if zin >= 0 else [], [], 1.0)
        if 0 in r:
            pump(0)
        if wr:
            try:
                if not todo and left:
                    k = copy_to(zin, pos + fed, min(CHUNK, left))
                    if k is None:  # no sendfile here: through this process
                        todo = memoryview(os.pread(fd, min(CHUNK, left), pos + fed))
                        k = len(todo)
                    left = left - k if k else 0  # shorter now: checks() will tell
                    fed += k
                todo = todo[os.write(zin, todo):] if todo else todo
            except BlockingIOError:
                pass
            except BrokenPipeError:  # zstd is gone: its exit status tells
                todo, left = b"", 0
            if not todo and not left:
                proc.stdin.close()
                zin = -1
        if zout in r:
            out = os.read(zout, CHUNK)
            if not out:
                break
            w(b"Y", out)
            sent = True
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    if proc.wait() != 0 and not sent:
        zbin = None
        os.lseek(fd, pos, 0)
        return 0
    if proc.returncode != 0:  # what it sent of its frame cannot be completed: the client
        # goes on from its last whole line in a new session without zstd
        how = "exit %d" % proc.returncode if proc.returncode > 0 else \
            "killed by signal %d" % -proc.returncode
        note("codec", "zstd failed (%s) on the host while compressing %s" % (how, cur_name))
        sys.exit(3)
    pos += fed
    os.lseek(fd, pos, 0)
    tail64 = bytes_before(fd, pos, 64)
    return fed


sendfile_ok = hasattr(os, "sendfile")


def copy_to(out, off, n):
    # type: (int, int, int) -> Optional[int]
    """Up to `n` bytes of the file at `off` into the pipe `out` by the kernel (sendfile: no
    copy through this process; reading and writing 199 MB of backlog itself, with 64 KiB
    pipes, cost it 0.45 s of CPU here, 0.32 s so); None where sendfile cannot write to a
    pipe (not Linux): the caller copies."""
    global sendfile_ok
    if sendfile_ok:
        try:
            return os.sendfile(out, fd, off, n)
        except (BlockingIOError, BrokenPipeError):  # the pipe is full / zstd is gone
            raise
        except OSError:  # EINVAL, ENOSYS: this kernel cannot send a file into a pipe
            sendfile_ok = False
    return None


def big_pipe(p):
    # type: (int) -> None
    """A 1 MiB pipe buffer (Linux F_SETPIPE_SZ; the default 64 KiB woke both ends ~16 times
    per MiB); left as it is where refused."""
    try:
        import fcntl
        fcntl.fcntl(p, 1031, 1 << 20)
    except (OSError, ImportError):
        pass


def send(chunk):
    # type: (bytes) -> None
    """Raw bytes of the file, framed in the best codec at hand."""
    if zpy is not None:
        w(b"Y", zpy.compress(chunk, 1))  # a complete frame per chunk: bounded to decode
    elif zc is not None:
        w(b"Z", zc.compress(chunk) + zc.flush(zlib.Z_SYNC_FLUSH))
    else:
        w(b"D", chunk)


def read_some():
    # type: () -> int
    """One read at `pos`, sent; its length (0 at the end of the file). A big backlog goes as
    a burst through the zstd binary when there is one; live reads stay small and go as zlib."""
    global pos, tail64, first64, cur_head, sent_any, ahead
    if not sent_any:  # the start-up first, small: the client can fold it and show it at once
        chunk = os.read(fd, FIRST)
        sent_any = bool(chunk)
    else:
        backlog = os.fstat(fd).st_size - pos
        if zbin is not None and backlog >= BLOCK:
            done = burst(min(backlog, BURST))
            if done:
                pump(0)
                return done
        chunk = os.read(fd, CHUNK)
    if not chunk:
        return 0
    send(chunk)
    pos += len(chunk)
    if ahead is not None:
        # After the first chunk (the top start-up, which the client folds meanwhile): the scan
        # for the last server start reads the file from its end, and must not delay it.
        prelude(*ahead)
        ahead = None
    tail64 = last64(tail64, chunk)
    if len(first64) < 64 and pos > len(first64):
        first64 = os.pread(fd, 64, 0)
    if cur_head[0] < HEAD and pos > cur_head[0]:
        cur_head = head_of(fd)
        wj(b"H", {"ino": cur[0], "dev": cur[1], "offset": pos, "size": pos,
                  "head_len": cur_head[0], "head": cur_head[1], "name": path, "why": "head"})
    pump(0)
    return len(chunk)


watch = {"ident": None, "max": 0, "shrunk": False, "head": (0, "")}  # type: Dict[str, Any]


def watch_path():
    # type: () -> None
    """While rotated files are read, the current file is watched: did it shrink (copytruncate
    of a file not read yet)? Its size and first bytes before that are kept, to find the copy."""
    try:
        st = os.stat(path)
    except OSError:
        return
    if ident(st) != watch["ident"]:
        watch.update(ident=ident(st), max=0, shrunk=False, head=(0, ""))
    if st.st_size < watch["max"]:
        if not watch["shrunk"]:
            watch["shrunk"] = True
            chaining["cut"] += 1
            if chaining["newest"] is not None:
                wj(b"C", chain_state())  # for a session that has to finish this chain
        return
    if watch["shrunk"] or st.st_size <= watch["max"]:
        return
    watch["max"] = st.st_size
    if watch["head"][0] < HEAD:
        try:
            f = open_reg(path)
        except (OSError, NotRegular):
            return
        watch["head"] = head_of(f)
        os.close(f)


def read_copy_of_newest():
    # type: () -> Optional[str]
    """The new file shrank while older ones were read: read its copy (same first bytes), if
    there is one, before the file itself from 0. The copy's name, or None."""
    hl, hh = watch["head"]
    if not hl:
        return None
    cands = []
    for p, name, st in siblings():
        if rotation_name(name) and ident(st) not in seen and ident(st) != watch["ident"]:
            cands.append((st.st_mtime_ns, p))
    for _, p in sorted(cands):
        try:
            f = open_reg(p)
        except (OSError, NotRegular):
            continue
        if same_head(f, hl, hh):
            start_file(f, 0, "next", p)
            drain_quiet(0)
            os.close(f)
            return os.path.basename(p)
        os.close(f)
    return None


def drain_quiet(q):
    # type: (float) -> None
    """Read to the end, and on until the file has not changed for `q` s (its mtime says so at
    once for a file nobody writes to any more; the monotonic clock bounds the wait anyway)."""
    last = time.monotonic()
    while True:
        watch_path()
        if read_some():
            last = time.monotonic()
        elif time.monotonic() - last >= q or time.time() - os.fstat(fd).st_mtime >= q:
            return
        else:
            idle(POLL)


def rotation_name(name):
    # type: (str) -> bool
    """A sibling named like a rotation of the log (server.log.1, server.log-20260101,
    server-20260101.log), not compressed: only such files can be chain members."""
    if name == BASE or name.endswith(PACKED) or len(name) <= len(BASE):
        return False
    if name.startswith(BASE) and name[len(BASE)] in ".-_":
        rest = name[len(BASE):]
    elif EXT and STEM and name.startswith(STEM) and name.endswith(EXT) and \
            len(name) > len(BASE) and name[len(STEM)] in ".-_":
        rest = name[len(STEM):-len(EXT)]
    else:
        return False
    return any(c.isdigit() for c in rest)


def packed_ext(name):
    # type: (str) -> Optional[str]
    """The compression suffix of a compressed rotation of the log (server.log.1.gz,
    server.log-20260101.zst, ...), else None."""
    for ext in PACKED:
        if name.endswith(ext) and rotation_name(name[:-len(ext)]):
            return ext
    return None


def member(name):
    # type: (str) -> bool
    return rotation_name(name) or packed_ext(name) is not None


def olddirs():
    # type: () -> List[str]
    """logrotate's `olddir` directories named in its configuration (o["rotate_conf"]: files, or
    directories of files, as `include` takes them); relative ones are relative to the log's
    directory, as logrotate(8) says. Any olddir counts: files there are matched by identity
    or content, never by name alone."""
    out, todo = [], list(o.get("rotate_conf") or ())
    for c in todo:
        try:
            if os.path.isdir(c):
                names = sorted(os.listdir(c))
                todo += [os.path.join(c, n) for n in names if not n.startswith(".")][:200]
                continue
            with open(c, "rb") as f:
                text = f.read(1 << 20).decode("utf-8", "surrogateescape")
        except OSError:
            continue
        for line in text.splitlines():
            words = line.split()
            if len(words) >= 2 and words[0] == "olddir":
                out.append(os.path.join(D, os.path.expanduser(words[1].strip("\"'"))))
    return out


OLDDIRS = []  # type: List[str]  # logrotate's olddirs (set by `configure`)


def rot_dirs():
    # type: () -> Iterator[str]
    """Where rotated copies of the log may be: its directory, the directories in it (a
    relative olddir), and the olddirs of logrotate's configuration."""
    out, known = [D], set()
    try:
        out += [e.path for e in os.scandir(D) if e.is_dir(follow_symlinks=False)]
    except OSError:
        pass
    for d in out + OLDDIRS:
        try:
            k = ident(os.stat(d))
        except OSError:
            continue
        if k not in known:
            known.add(k)
            yield d


def siblings():
    # type: () -> Iterator[Tuple[str, str, os.stat_result]]
    """Regular files that may be the log's rotations: every file beside it, and files named
    like its rotations in the other rotation directories."""
    for d in rot_dirs():
        try:
            entries = list(os.scandir(d))
        except OSError:
            continue
        for e in entries:
            if d != D and not member(e.name):
                continue
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                yield e.path, e.name, st


def shown(p):
    # type: (str) -> str
    """A member's name as notices give it: relative to the log's directory."""
    rel = os.path.relpath(p, D)
    return rel if not rel.startswith("..") else p


class Unpacker:
    """The decompressed bytes of a compressed rotation: Python's own modules for gzip, bzip2
    and xz, compression.zstd (3.14+) or the host's `zstd -dc` for zstd; None from `open_packed`
    when the host has no decoder for it."""

    def __init__(self, f, proc=None):
        # type: (Stream, Optional[Popen[bytes]]) -> None
        self.f, self.proc = f, proc
        self.back = b""  # read ahead of the position the caller wants (unread)

    def read(self, n):
        # type: (int) -> bytes
        if self.back:
            b, self.back = self.back[:n], self.back[n:]
            return b
        return self.f.read(n)

    def close(self):
        # type: () -> None
        self.f.close()
        if self.proc is not None:
            try:
                self.proc.kill()
            except OSError:
                pass
            self.proc.wait()


def open_packed(p, ext):
    # type: (str, str) -> Optional[Unpacker]
    try:
        if ext == ".gz":
            import gzip
            return Unpacker(gzip.open(p, "rb"))
        if ext == ".bz2":
            import bz2
            return Unpacker(bz2.open(p, "rb"))
        if ext in (".xz", ".lzma"):
            import lzma
            return Unpacker(lzma.open(p, "rb"))
        if ext == ".zst":
            try:
                from compression import zstd as zd
                return Unpacker(zd.open(p, "rb"))
            except ImportError:
                import shutil
                import subprocess
                exe = shutil.which("zstd")
                if exe is None:
                    return None
                proc = subprocess.Popen([exe, "-d", "-c", "-q", "--", p],
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
                assert proc.stdout is not None  # (a pipe)
                return Unpacker(proc.stdout, proc)
    except (OSError, ImportError):
        return None
    return None


def unpacked_prefix(u, hl, hh, off, wl, wh):
    # type: (Unpacker, int, str, int, int, str) -> bool
    """Read `u` up to `off` (left there): True when its first `hl` bytes hash to `hh`, it is
    at least `off` long, and the `wl` bytes before `off` hash to `wh` (it holds what was being
    read). `off` may be inside the first `hl` bytes."""
    try:
        need, at, head, tail, past = max(hl, off), 0, b"", b"", []
        while at < need:
            b = u.read(min(CHUNK, need - at))
            if not b:
                return False
            if len(head) < hl:
                head += b[:hl - len(head)]
            if at < off and wl:
                tail = (tail + b[:off - at])[-wl:]
            if at + len(b) > off:  # past `off`: given back, the read goes on from `off`
                past.append(b[max(0, off - at):])
            at += len(b)
            pump(0)
        u.back = b"".join(past) + u.back
        if hashlib.sha1(head).hexdigest() != hh:
            return False
        return not wl or (len(tail) == wl and hashlib.sha1(tail).hexdigest() == wh)
    except (OSError, EOFError, ValueError):  # a corrupt or truncated archive
        return False


# (len, hash) of the first bytes of the files read whole: a compressed copy of one of them is
# not read again
read_heads = set()  # type: Set[Head]


def read_packed(p, u, start, why, head=None):
    # type: (str, Unpacker, int, str, Optional[Head]) -> int
    """Send the decompressed bytes of `p` from `start` (`u` already there) as the file now
    read; its length. `head`: the first bytes' (length, hash), when `start` is past them.
    The H frame gives the compressed file's identity with the hash of its content's first
    bytes: a session lost in the middle finds it again by content (find_continuation)."""
    global sent_any
    st = os.stat(p)
    first = b""
    if head is None:
        first = u.read(HEAD)
        head = (len(first), hashlib.sha1(first).hexdigest())
    wj(b"H", {"ino": st.st_ino, "dev": st.st_dev, "offset": start, "size": st.st_size,
              "head_len": head[0], "head": head[1], "name": p, "why": why, "packed": True,
              "chain": chain_state()})
    seen.add(ident(st))
    if head[0] == HEAD:
        read_heads.add(head)
    at = start
    try:
        if first:
            send(first)
            sent_any = True
            at += len(first)
        while True:
            b = u.read(CHUNK)
            if not b:
                break
            send(b)
            sent_any = True
            at += len(b)
            pump(0)
    except (OSError, EOFError, ValueError) as e:
        note("info", "%s: stopped reading the compressed file at byte %d of its content "
             "(%s)" % (shown(p), at, e))
    u.close()
    return at


def rank(name):
    # type: (str) -> Optional[Tuple[str, Any]]
    """Where a rotation's name puts it: ("n", N) for server.log.N (a higher N is older),
    ("d", digits) for a date suffix (a later date is newer), None otherwise."""
    ext = packed_ext(name)
    if ext:
        name = name[:-len(ext)]
    if name.startswith(BASE):
        rest = name[len(BASE) + 1:]
    elif EXT and name.endswith(EXT):
        rest = name[len(STEM) + 1:-len(EXT)]
    else:
        return None
    if rest.isdigit() and len(rest) < 6:
        return ("n", int(rest))
    digits = "".join(c for c in rest if c.isdigit())
    return ("d", digits) if digits else None


def newer_by_name(a, b):
    # type: (str, str) -> Optional[bool]
    """True/False when the names say rotation `a` is newer than `b`; None when they cannot."""
    ra, rb = rank(a), rank(b)
    if ra is None or rb is None or ra[0] != rb[0] or ra[1] == rb[1]:
        return None
    newer = ra[1] < rb[1] if ra[0] == "n" else ra[1] > rb[1]  # type: bool
    return newer


def locate(want, hl, hh):
    # type: (Ident, int, str) -> Optional[Tuple[str, int, bool]]
    """Where the file with identity `want` is now: (path, fd, first bytes still hl/hh), the
    path itself first; None when it is gone. The same inode with other first bytes is the
    same file rewritten (or a new file that reused the inode: read from the start either way).
    """
    try:
        cands = [path] if ident(os.stat(path)) == want else []
    except OSError:
        cands = []
    cands += [p for p, _, st in siblings() if ident(st) == want and p != path]
    found = None
    for p in cands:
        try:
            f = open_reg(p)
        except (OSError, NotRegular):
            continue
        if same_head(f, hl, hh):
            if found is not None:
                os.close(found[1])
            return p, f, True
        if found is None:
            found = (p, f, False)
        else:
            os.close(f)
    return found


def path_ident():
    # type: () -> Optional[Ident]
    try:
        return ident(os.stat(path))
    except OSError:
        return None


def successors(m, after=None):
    # type: (int, Optional[str]) -> List[str]
    """Rotated files (plain or compressed, beside the log or in a rotation directory) newer
    than the one just read, not read yet, oldest first. Newer: its name says so (server.log.1
    is newer than server.log.2, a later date is newer) or, where names cannot tell, it was
    written after mtime `m` (a compressed file's mtime may be that of its compression)."""
    now = path_ident()
    out = []
    # a directory inside the log's is searched by identity and content only (it may hold
    # another service's server.log.1): chain members come from the log's directory, the one
    # the file just read is in (a relative olddir) and logrotate's olddirs
    places = set(os.path.realpath(d) for d in [D] + OLDDIRS + ([os.path.dirname(after)]
                                                                if after else []))
    for p, name, st in siblings():
        if not member(name) or ident(st) in seen or ident(st) == now or st.st_size == 0:
            continue
        where = os.path.realpath(os.path.dirname(p))
        if where not in places:
            continue
        by_name = newer_by_name(name, os.path.basename(after)) if after and \
            where == os.path.realpath(os.path.dirname(after)) else None
        if by_name or (by_name is None and st.st_mtime_ns >= m):
            out.append((st.st_mtime_ns, st.st_ino, p))
    out.sort()
    # oldest first: by name where every name ranks the same way, else by mtime
    ranks = [r for r in (rank(os.path.basename(p)) for _, _, p in out) if r is not None]
    if ranks and len(ranks) == len(out) and len({r[0] for r in ranks}) == 1:
        old_first = ranks[0][0] == "n"
        out = [x for _, x in sorted(zip(ranks, out), key=lambda t: t[0][1],
                                    reverse=old_first)]
    return [p for _, _, p in out]


def find_copy(hl, hh, off, check):
    # type: (int, str, int, Callable[[int], bool]) -> Optional[Tuple[str, int]]
    """A copy of the current file (copytruncate): same first bytes, at least `off` long, and
    the same bytes before `off` (`check`)."""
    for p, name, st in siblings():
        if ident(st) == cur or ident(st) in seen or st.st_size < off:
            continue
        if not rotation_name(name):
            continue
        try:
            f = open_reg(p)
        except (OSError, NotRegular):
            continue
        if same_head(f, hl, hh) and check(f):
            return p, f
        os.close(f)
    return None


def skip_member(p, why):
    # type: (str, Optional[str]) -> None
    try:
        seen.add(ident(os.stat(p)))
    except OSError:
        pass
    if why:
        skipped.append("%s (%s)" % (shown(p), why))


# rotated files of the chain that could not be read, said in the notice
skipped = []  # type: List[str]


def already_read(u):
    # type: (Unpacker) -> bool
    """A compressed file whose first KiB is that of a file read whole: its compressed copy."""
    h = u.read(HEAD)
    return len(h) == HEAD and (HEAD, hashlib.sha1(h).hexdigest()) in read_heads


def read_chain(m, after=None):
    # type: (int, Optional[str]) -> Tuple[List[str], List[str]]
    """Every rotated file newer than the one just read (mtime `m`, name `after`), oldest first:
    (their names, the names of those that appeared meanwhile). Asked again after each file:
    while one is read, the current file may be rotated too, or copied and truncated (its copy
    is then the next member, and the current file holds the rest)."""
    names = []  # type: List[str]
    first = None  # type: Optional[Set[str]]
    late = chaining["late"]  # type: List[str]
    while True:
        todo = successors(m, after)
        if first is None:
            first = set(todo)
        if not todo:
            return names, late
        p = todo[0]
        if p not in first:
            late.append(shown(p))
        ext = packed_ext(os.path.basename(p))
        if ext is not None:
            u = open_packed(p, ext)
            if u is None:
                skip_member(p, "no decoder for %s on the host" % ext)
                continue
            if already_read(u):
                u.close()
                skip_member(p, None)
                continue
            u.close()
            u = open_packed(p, ext)
            if u is None:  # gone since the look just now
                skip_member(p, "removed while it was read")
                continue
            try:
                m, after = os.stat(p).st_mtime_ns, p
                read_packed(p, u, 0, "next")
            except OSError:  # gone meanwhile (rotated out of the count)
                u.close()
                skip_member(p, "removed while it was read")
                continue
            names.append(shown(p))
            continue
        try:
            f = open_reg(p)
        except (OSError, NotRegular):  # unreadable: skip it (once)
            skip_member(p, "unreadable")
            continue
        start_file(f, 0, "next", p)
        drain_quiet(0 if STOP else QUIET)  # the newest may still get late writes
        m, after = os.fstat(f).st_mtime_ns, p
        remember_head(f)
        os.close(f)
        names.append(shown(p))


def remember_head(f):
    # type: (int) -> None
    hl, hh = head_of(f)
    if hl == HEAD:
        read_heads.add((hl, hh))


def find_continuation(hl, hh, off, wl, wh):
    # type: (int, str, int, int, str) -> Optional[Cont]
    """The bytes being read when the session was lost, in another file now: a copy
    (copytruncate) or a compressed rotation, here or in a rotation directory. (path, fd or
    Unpacker at `off`, packed?) or None."""
    if not hl:
        return None
    for p, name, st in siblings():
        if not member(name) or ident(st) in seen:
            continue
        ext = packed_ext(name)
        if ext is None:
            if st.st_size < off:
                continue
            try:
                f = open_reg(p)
            except (OSError, NotRegular):
                continue
            if same_head(f, hl, hh) and window_ok(f, off, wl, wh):
                return p, f, False
            os.close(f)
            continue
        u = open_packed(p, ext)
        if u is None:
            continue
        if unpacked_prefix(u, hl, hh, off, wl, wh):
            return p, u, True
        u.close()
    return None


def follow_rotation(where, disconnected, carried=None):
    # type: (Optional[str], bool, Optional[Dict[str, Any]]) -> None
    """The file being read was renamed (to `where`): finish it, the chain, then the new file.
    `carried`: the chain state of the session that was reading the chain when it was lost."""
    if carried:
        newest = tuple(carried["newest"])  # type: Optional[Ident]
        watch.update(ident=newest, max=carried["max"], shrunk=carried["shrunk"],
                     head=tuple(carried["head"]))
        chaining.update(newest=newest, late=list(carried["late"]), cut=carried["cut"])
    else:
        newest = path_ident()
        chaining.update(newest=newest, late=[], cut=0)
        watch.update(ident=None)
        watch_path()
    drain_quiet(0 if STOP else QUIET)
    m = os.fstat(fd).st_mtime_ns
    now = where
    if now is None:
        found = locate(cur, cur_head[0], cur_head[1])
        if found is not None:
            now = found[0]
            os.close(found[1])
    packed = None if now else packed_copy(cur_head)
    remember_head(fd)
    os.close(fd)
    what = "was rotated while disconnected" if disconnected else "was rotated"
    where_now = "now " + shown(now) if now else "since compressed as " + shown(packed) \
        if packed else "since deleted"
    if packed:
        seen.add(ident(os.stat(packed)))
    chain_tail(m, now or packed, "%s %s (%s); read it to its end" % (path, what, where_now),
               newest)


def packed_copy(head):
    # type: (Head) -> Optional[str]
    """The compressed rotation holding the file read (its first bytes), or None."""
    hl, hh = head
    if hl < HEAD:
        return None
    for p, name, st in siblings():
        ext = packed_ext(name)
        if ext is None or ident(st) in seen:
            continue
        u = open_packed(p, ext)
        if u is None:
            continue
        same = unpacked_prefix(u, hl, hh, 0, 0, "")
        u.close()
        if same:
            return p
    return None


def chain_tail(m, after, msg, newest, cut_before=0):
    # type: (int, Optional[str], str, Optional[Ident], int) -> None
    """After the file that was being read: every newer rotated file, then the new file (from
    its start), with one notice saying what was read. `cut_before`: copytruncates seen on the
    way here (the copies read)."""
    chain, late = read_chain(m, after)
    if chain:
        msg += ", then the newer rotated file%s %s" % ("s" if len(chain) > 1 else "",
                                                     ", ".join(chain))
    if skipped:
        msg += "; could not read %s" % ", ".join(skipped)
        del skipped[:]
    chaining["cut"] += cut_before
    watch_path()
    same = newest is not None and path_ident() == newest
    if same and not watch["shrunk"] and watch["head"][0] and watch["ident"] == newest:
        # grown past its old size again (a long disconnect), but its first bytes changed
        try:
            f = open_reg(path)
            if not same_head(f, watch["head"][0], watch["head"][1]):
                watch["shrunk"] = True
                chaining["cut"] += 1
            os.close(f)
        except (OSError, NotRegular):
            pass
    if same and watch["shrunk"]:
        copy = read_copy_of_newest()
        if copy is not None and copy not in late:
            late.append(copy)
    note("rotated", msg + "; now following the new file")
    cut = chaining["cut"] or (1 if same and late else 0)
    chaining["newest"] = None
    if cut:
        # the log shrank while rotated files were read, or a file appeared meanwhile while the
        # new file stayed the same one: copied and truncated in place (copytruncate)
        note("truncated", "%s was copied and truncated %s while rotated files were read "
             "(copytruncate); the copies were read in order with the rotated files; lines "
             "written between a copy and its truncation, if any, are lost"
             % (path, "once" if cut == 1 else "%d times" % cut))
    if STOP and path_ident() is None:
        w(b"E")  # a snapshot read: nothing newer to read
        sys.exit(0)
    start_file(wait_open(), 0, "next")


def follow_truncation():
    # type: () -> None
    """The file was truncated in place: the rest from a copy if there is one, then from 0."""
    old = pos
    lost = "lines written after byte %d before the truncation are lost" % old
    copy = find_copy(cur_head[0], cur_head[1], old,
                     lambda f: bytes_before(f, old, len(tail64)) == tail64)
    keep_fd = fd
    packed = None
    if copy is None and cur_head[0]:
        # copytruncate + compress: the copy may be compressed (and removed) already
        packed = find_continuation(cur_head[0], cur_head[1], old, len(tail64),
                                   hashlib.sha1(tail64).hexdigest())
        if packed is not None and not packed[2]:
            os.close(packed[1])
            packed = None
    if copy is not None:
        p, f = copy
        start_file(f, old, "copy", p)
        drain_quiet(0)
        os.close(f)
        note("truncated", "%s was truncated in place (copytruncate); read its last lines from "
             "the copy %s; lines written between the copy and the truncation, if any, are "
             "lost" % (path, shown(p)))
    elif packed is not None:
        p, u, _ = packed
        read_packed(p, u, old, "copy", cur_head)
        note("truncated", "%s was truncated in place (copytruncate) and its copy compressed; "
             "read its last lines from %s, decompressed on the host; lines written between "
             "the copy and the truncation, if any, are lost" % (path, shown(p)))
    else:
        note("truncated", "%s was truncated; reading it from the start (%s, if any)"
             % (path, lost))
    start_file(keep_fd, 0, "next")


def changed_in_place():
    # type: () -> bool
    size = os.fstat(fd).st_size
    if size < pos:
        return True
    if first64 and os.pread(fd, len(first64), 0) != first64:
        return True
    return bool(tail64) and bytes_before(fd, pos, len(tail64)) != tail64


def tail_offset(f, size, n):
    # type: (int, int, int) -> int
    if n < 0:
        return 0
    if n == 0:
        return size
    at, count, first = size, 0, True
    while at > 0:
        step = min(65536, at)
        at -= step
        buf = os.pread(f, step, at)
        if first and buf.endswith(b"\n"):
            buf = buf[:-1]
        first = False
        i = len(buf)
        while True:
            i = buf.rfind(b"\n", 0, i)
            if i < 0:
                break
            count += 1
            if count >= n:
                return at + i + 1
    return 0


def resume():
    # type: () -> None
    """Back after a disconnect: find the file we were reading, by identity."""
    global cur
    want = (o["ino"], o["dev"])
    off, hl, hh = o["offset"], o["head_len"], o["head"]
    done = o.get("done") or {}
    read_heads.update(tuple(x) for x in done.get("heads", ()))
    if hl == 0 and off == 0 and o.get("mtime") is not None and resume_unknown(
            want, set(tuple(x) for x in done.get("ids", ())) - set([want])):
        return
    found = locate(want, hl, hh)
    if found is not None and packed_ext(os.path.basename(found[0])):
        os.close(found[1])  # a compressed rotation was being read: found again by content
        found = None
    if found is None:
        cont = find_continuation(hl, hh, off, o["win_len"], o["win"])
        if cont is not None:  # rotated, then compressed (or copied) while disconnected
            resume_rotated(cont, off, False)
            return
        note("rotated", "%s was replaced while disconnected and the old file is gone (not "
             "found beside it, in a rotation directory or compressed); lines written to it "
             "after the disconnect are lost" % path)
        start_file(wait_open(), 0, "start")
        return
    where, f, head_ok = found
    if head_ok and os.fstat(f).st_size >= off and window_ok(f, off, o["win_len"], o["win"]):
        start_file(f, off, "start", where)
        if where != path:
            follow_rotation(where, True, o.get("chain"))
        return
    cur = ident(os.fstat(f))
    seen.add(cur)
    cont = find_continuation(hl, hh, off, o["win_len"], o["win"])
    if cont is not None and cont[2]:
        # compressed: copied and truncated (the same file here), or renamed and compressed
        # (its inode reused by the new file): the notice cannot tell which
        os.close(f)
        resume_rotated(cont, off, True)
    elif cont is not None:
        copies = read_continuation(cont, off)
        note("truncated", "%s was copied and truncated while disconnected (copytruncate%s); "
             "read the rest from the cop%s %s, then the file from its start%s; lines written "
             "between a copy and its truncation, if any, are lost on the host itself"
             % (path, ", %d times" % len(copies) if len(copies) > 1 else "",
                "ies" if len(copies) > 1 else "y", ", then ".join(copies),
                "; could not read %s" % ", ".join(skipped) if skipped else ""))
        del skipped[:]
        start_file(f, 0, "next", where)
    else:
        note("truncated", "%s was truncated or rewritten while disconnected; reading it from "
             "the start (lines written after byte %d before that are lost)" % (path, off))
        start_file(f, 0, "start", where)


def resume_unknown(want, done):
    # type: (Ident, Set[Ident]) -> bool
    """Nothing of the file had been read (it was empty at the last look): no content to find
    it by. The rotated files written since its mtime then, other than those read already
    (`done`: a renamed file before it gets late writes after it was created), hold what was
    written to it after: the file itself renamed, or its copies. Read them oldest first, then
    the file at the path from its start; False when there are none. The identities in `done`
    count only here (an inode freed during the disconnect may be reused by a copy)."""
    old = set(seen)
    seen.update(done)
    if path_ident() == want:
        seen.add(want)  # the file itself is read after them, from its start
    if not successors(o["mtime"]):
        seen.intersection_update(old)
        return False
    chaining.update(newest=path_ident(), late=[], cut=0)
    watch.update(ident=None)
    watch_path()
    names, _ = read_chain(o["mtime"])
    seen.difference_update(done - old)
    note("rotated", "%s was rotated while disconnected, before anything of it had been read; "
         "read the rotated files written since then, %s, then the file from its start (if "
         "it was copied and truncated, lines written between a copy and its truncation are "
         "lost on the host itself)%s" % (path, ", then ".join(names) or "none",
                                         "; could not read %s" % ", ".join(skipped)
                                         if skipped else ""))
    del skipped[:]
    start_file(wait_open(), 0, "next")
    return True


def resume_rotated(cont, off, maybe_copied):
    # type: (Cont, int, bool) -> None
    """The file being read is now `cont` (compressed, or a copy): read it from `off`, then the
    newer rotated files, then the file at the path from its start. `maybe_copied`: the path
    still has the old inode, so this may have been a copytruncate."""
    p, _, packed = cont
    chaining.update(newest=path_ident(), late=[], cut=0)
    watch.update(ident=None)
    watch_path()
    how = "and compressed (now %s, read decompressed on the host)" if packed else \
        "(now the copy %s)"
    try:
        m = os.stat(p).st_mtime_ns
    except OSError:
        m = 0
    read_continuation(cont, off, False)
    msg = "%s was rotated while disconnected %s; read it from where the read stopped" % (
        path, how % shown(p))
    if maybe_copied:
        msg += " (if it was copied and truncated, lines written between the copy and the " \
               "truncation are lost on the host itself)"
    chain_tail(m, p, msg, chaining["newest"])


def read_continuation(cont, off, chain=True):
    # type: (Cont, int, bool) -> List[str]
    """Read what `find_continuation` found from `off` (the stream goes on where it was), then,
    with `chain`, the rotated files newer than it (the copies made by later copytruncates):
    their names, the first one's included."""
    p, r, packed = cont
    try:
        m = os.stat(p).st_mtime_ns
    except OSError:
        m = 0
    if packed:
        read_packed(p, r, off, "start", (o["head_len"], o["head"]))
    else:
        start_file(r, off, "start", p)
        drain_quiet(0)
        remember_head(r)
        os.close(r)
    if not chain:
        return [shown(p)]
    names, _ = read_chain(m, p)
    return [shown(p), *names]


def marker_line(f, marks, lo, end, last):
    # type: (int, List[bytes], int, int, bool) -> Optional[int]
    """The line start of the last (or first) line in [lo, end) holding a marker, or None."""
    longest = max(len(m) for m in marks)
    buf = os.pread(f, end - lo + longest - 1, lo)  # a marker may straddle `end`
    lim = end - lo + longest - 1
    hits = [h for h in ((buf.rfind(m, 0, lim) if last else buf.find(m, 0, lim)) for m in marks)
            if 0 <= h < end - lo]
    if not hits:
        return None
    at = lo + (max(hits) if last else min(hits))
    back = os.pread(f, min(at, 1 << 16), at - min(at, 1 << 16))
    nl = back.rfind(b"\n")
    if nl >= 0:
        return at - len(back) + nl + 1
    return 0 if at == len(back) else None


def last_marker(f, size):
    # type: (int, int) -> Optional[int]
    """The line start of the last server start: the last line holding one of the client's
    anchors (a line every start of an engine prints; the markers when none are given), moved
    back to the first marker line of the same start (an engine prints several, a few lines
    apart: vLLM's version, args and engine-config lines), or None. Only anchors are searched
    for over what may be the whole file: each string is one more pass over it."""
    pre = o["prelude"]
    marks = [m.encode("utf-8", "surrogateescape") for m in pre["markers"]]
    look = [m.encode("utf-8", "surrogateescape") for m in pre.get("anchors") or ()] or marks
    end, found = size, None
    while end > 0 and found is None:
        lo = max(0, end - (4 << 20))
        found = marker_line(f, look, lo, end, True)
        end = lo
    if found is None:
        return None
    first = found
    while first > 0 and found - first < o["prelude"]["bytes"] // 2:
        earlier = marker_line(f, marks, max(0, first - (64 << 10)), first, False)
        if earlier is None or earlier >= first:
            break
        first = earlier
    return first


def prelude(f, at, size):
    # type: (int, int, int) -> None
    """Read ahead: the start-up region of the last server start, sent before the stream gets
    there (right after its first chunk), when the stream from `at` would take a while (P)."""
    pre = o.get("prelude")
    if not pre or not pre["markers"] or size - at < pre["min_gap"]:
        return
    ls = last_marker(f, size)
    if ls is None or at <= ls < at + pre["min_gap"]:
        return
    raw = os.pread(f, pre["bytes"], ls)
    cut = raw.rfind(b"\n")
    if cut < 0:
        return
    raw = raw[:cut + 1]
    line_no, off = 1, 0
    while off < ls:  # its line number: the newlines before it
        step = os.pread(f, min(4 << 20, ls - off), off)
        line_no += step.count(b"\n")
        off += len(step)
        pump(0)
    w(b"P", struct.pack(">QQ", ls, line_no) + zlib.compress(raw, 1))


def begin():
    # type: () -> None
    global ahead
    if o["ino"] is not None:
        resume()
        return
    f = wait_open()
    size = os.fstat(f).st_size
    at = min(o["offset"], size) if o["offset"] >= 0 else tail_offset(f, size, o["lines"])
    start_file(f, at, "start")
    ahead = (f, at, size)


def checks(state):
    # type: (Dict[str, bool]) -> bool
    """Rotation or truncation handled (True), else False; `state` remembers "missing"."""
    pump(0)
    now_ident = path_ident()
    if now_ident is None:
        if not state["missing"] and not STOP:
            note("missing", "%s disappeared; still reading the old file, waiting for a new "
                 "one" % path)
        state["missing"] = True
    else:
        state["missing"] = False
        if now_ident != cur:
            follow_rotation(None, False)
            return True
    if changed_in_place():
        follow_truncation()
        return True
    return False


def main():
    # type: () -> None
    os.write(1, MAGIC)
    os.set_blocking(1, False)
    wj(b"V", {"version": 2, "codec": CODEC})
    begin()
    state = {"missing": False}
    sent_end = False
    last_check = time.monotonic()
    while True:
        if time.monotonic() - last_check >= POLL:
            last_check = time.monotonic()
            if checks(state):
                continue
        if read_some():
            continue
        # at the end: one more look (a rotation or truncation just now?) before idling
        last_check = time.monotonic()
        if checks(state) or read_some():
            continue
        if not sent_end:
            w(b"E")
            sent_end = True
            if STOP:
                return
        idle(POLL)


def run(argv):
    # type: (List[str]) -> None
    """Follow as the command line says (`sys.argv` as `python3 -S -c BOOT kvtui-follow PATH
    OPTIONS` sets it), until the client goes, the end of a snapshot read or a failure (exit
    3, said in an N error frame)."""
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    configure(argv)
    try:
        main()
    except NotRegular as e:
        refuse(path, e)
    except OSError as e:
        note("error", "%s: %s" % (path, e.strerror or e), path)
        sys.exit(3)


if __name__ == "__main__":
    run(sys.argv)
