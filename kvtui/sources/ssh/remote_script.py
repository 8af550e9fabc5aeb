"""The follower that runs on the remote host (`python3 -c FOLLOWER ARGS...`), as text.

Why not `tail -F`: tail announces truncation and replacement on stderr while the data goes to
stdout, and sshd forwards the two pipes independently, so the client cannot tell which bytes came
before the event; exact offsets across rotations are then impossible. This follower puts data and
events in one framed stdout stream (type byte + 4-byte length + payload), so ordering is exact:

  H  json {ino, dev, offset, size, head_len, head}  the file now being read (after every open)
  D  raw bytes / Z  zlib-compressed bytes (one stream per run, sync-flushed per frame)
  N  json {state, message}     rotated / truncated / missing / error, in stream order
  E  caught up with the end of the file (sent once; with stop_at_end the follower then exits)
  K  heartbeat while idle, so the client's watchdog can tell "quiet log" from "dead peer"

It watches its stdin and exits on EOF, so closing the channel or losing the connection ends it:
no orphaned process is left on the host. Python 3.6+, stdlib only (any host running SGLang has
a python3). Its stderr is reserved for real failures (tracebacks, a missing python3).
"""

FOLLOWER = r'''
import hashlib, json, os, select, signal, struct, sys, time, zlib
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
a = sys.argv[1:]
path, offset, nlines = a[1], int(a[2]), int(a[3])
exp_ino, exp_dev = (int(a[4]), int(a[5])) if a[4] else (None, None)
exp_head_len, exp_head = int(a[6]), a[7]
stop_at_end, hb, compress = a[8] == "1", float(a[9]), a[10] == "1"
CHUNK = 1 << 20
HEAD = 1024
zc = zlib.compressobj(1) if compress else None

def w(kind, payload=b""):
    data = kind + struct.pack(">I", len(payload)) + payload
    view = memoryview(data)
    while view:
        n = os.write(1, view)
        view = view[n:]

def wj(kind, obj):
    w(kind, json.dumps(obj).encode())

def data(chunk):
    if zc is not None:
        w(b"Z", zc.compress(chunk) + zc.flush(zlib.Z_SYNC_FLUSH))
    else:
        w(b"D", chunk)

def note(state, message):
    wj(b"N", {"state": state, "message": message})

def head_of(fd):
    h = os.pread(fd, HEAD, 0)
    return len(h), hashlib.sha1(h).hexdigest()

def stdin_closed(timeout):
    r = select.select([0], [], [], timeout)[0]
    return bool(r) and os.read(0, 65536) == b""

def tail_offset(fd, size, n):
    if n < 0:
        return 0
    if n == 0:
        return size
    pos, count, first = size, 0, True
    while pos > 0:
        step = min(65536, pos)
        pos -= step
        buf = os.pread(fd, step, pos)
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
                return pos + i + 1
    return 0

def open_path(wait_note=True):
    noted = False
    while True:
        try:
            return os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            if stop_at_end:
                note("error", "%s: no such file" % path)
                sys.exit(3)
            if not noted and wait_note:
                note("missing", "%s does not exist (yet); waiting for it" % path)
                noted = True
        except OSError as e:
            note("error", "%s: %s" % (path, e.strerror or e))
            sys.exit(3)
        if stdin_closed(0.25):
            sys.exit(0)

first64 = b""

def hello(fd, pos):
    global first64
    first64 = os.pread(fd, 64, 0)
    st = os.fstat(fd)
    hl, hh = head_of(fd)
    wj(b"H", {"ino": st.st_ino, "dev": st.st_dev, "offset": pos, "size": st.st_size,
             "head_len": hl, "head": hh})
    return st, hl

def find_inode(ino, dev):
    d = os.path.dirname(path) or "."
    try:
        for e in os.scandir(d):
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if st.st_ino == ino and st.st_dev == dev:
                return e.path
    except OSError:
        pass
    return None

def drain(fd):
    while True:
        chunk = os.read(fd, CHUNK)
        if not chunk:
            return
        data(chunk)

fd = open_path()
st = os.fstat(fd)
pos = 0
if exp_ino is not None:
    if st.st_ino == exp_ino and st.st_dev == exp_dev:
        same_head = exp_head_len == 0 or (
            hashlib.sha1(os.pread(fd, exp_head_len, 0)).hexdigest() == exp_head)
        if st.st_size < offset or not same_head:
            note("truncated", "%s was truncated while disconnected; reading it from the start"
                 % path)
        else:
            pos = offset
    else:
        old = find_inode(exp_ino, exp_dev)
        if old is not None:
            ofd = os.open(old, os.O_RDONLY)
            wj(b"H", {"ino": exp_ino, "dev": exp_dev, "offset": offset, "size": -1,
                      "head_len": exp_head_len, "head": exp_head})
            os.lseek(ofd, offset, 0)
            drain(ofd)
            os.close(ofd)
            note("rotated", "%s was rotated to %s while disconnected; read the rest of it, "
                 "now following the new file" % (path, old))
        else:
            note("rotated", "%s was replaced while disconnected and the old file is gone; "
                 "lines written to it after the disconnect are lost" % path)
elif offset >= 0:
    pos = min(offset, st.st_size)
else:
    pos = tail_offset(fd, st.st_size, nlines)
os.lseek(fd, pos, 0)
st, head_len = hello(fd, pos)
ino, dev = st.st_ino, st.st_dev
sent_end = False
missing = False
idle = True  # check for rotation/truncation before reading after every pause
last_out = last_check = time.monotonic()
while True:
    now = time.monotonic()
    if idle or now - last_check >= 0.1:
        last_check = now
        if not idle and stdin_closed(0):
            sys.exit(0)
        try:
            cur = os.stat(path)
        except FileNotFoundError:
            cur = None
            if not missing:
                note("missing", "%s disappeared; still reading the old file, waiting for a "
                     "new one" % path)
                missing = True
        if cur is not None and (cur.st_ino != ino or cur.st_dev != dev):
            drain(fd)
            os.close(fd)
            fd = open_path()
            note("rotated", "%s was replaced (rotated); following the new file" % path)
            missing = False
            pos = 0
            st, head_len = hello(fd, 0)
            ino, dev = st.st_ino, st.st_dev
            continue
        if cur is not None:
            missing = False
        size = os.fstat(fd).st_size
        if len(first64) < 64 and size >= 64 and pos >= 64:
            first64 = os.pread(fd, 64, 0)
        if size < pos or (len(first64) == 64 and os.pread(fd, 64, 0) != first64):
            note("truncated", "%s was truncated; reading it from the start" % path)
            os.lseek(fd, 0, 0)
            pos = 0
            st, head_len = hello(fd, 0)
            continue
    chunk = os.read(fd, CHUNK)
    if chunk:
        idle = False
        data(chunk)
        pos += len(chunk)
        last_out = now
        if head_len < HEAD and pos >= HEAD:
            st, head_len = hello(fd, pos)
        continue
    idle = True
    if not sent_end:
        w(b"E")
        sent_end = True
        if stop_at_end:
            sys.exit(0)
    if now - last_out >= hb:
        w(b"K")
        last_out = now
    if stdin_closed(0.1):
        sys.exit(0)
'''
