"""Peak memory of a command, measured so that the measuring process does not count.

Why not `wait4(...).ru_maxrss` of a child: Linux keeps a process's peak RSS across `execve`,
and `subprocess` starts children with vfork (the child runs in the parent's memory until it
execs), so a child's ru_maxrss starts at the parent's own peak: a pytest or bench process
that has grown to 290 MB made every child it started "peak" at 290 MB. Two clean measures:

- `peak_rss_kib()` in the measured process itself: /proc/self/status VmHWM belongs to the
  memory map made by the exec, so nothing of the parent is in it.
- `run(cmd)` for any command (lnav, grep): a small launcher (python -S, about 10 MB) forks,
  the grandchild execs the command, and the launcher reports the grandchild's ru_maxrss; the
  floor of that figure is the launcher's size, not the bench's.
"""

from __future__ import annotations

import subprocess
import sys
import time

LAUNCHER = r"""
import os, sys
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[1], sys.argv[1:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
os.write(2, b"\nPEAK-KIB %d\n" % usage.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def peak_rss_kib() -> int:
    """This process's peak resident memory in KiB (VmHWM; see the module docstring)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc/self/status")


def run(cmd: list[str]) -> tuple[float, int, bytes, int]:
    """(wall seconds, peak RSS in KiB, stdout, exit code) of `cmd`; its stderr is dropped."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-S", "-c", LAUNCHER, *cmd], capture_output=True,
                          check=False)
    wall = time.perf_counter() - t0
    peak = int(proc.stderr.rsplit(b"PEAK-KIB ", 1)[1].split()[0])
    return wall, peak, proc.stdout, proc.returncode
