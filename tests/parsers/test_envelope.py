"""parsers/envelope.py: the client prefixes, and `check`/`events`/`replay` reading saved client
output (docker/kubectl logs --timestamps, journalctl short-iso and short) as the bare log.

The saved files are written by the real clients: docker and kubectl against the stand-in servers
of tests/sources/_standins.py, journalctl on a journal file written by systemd-journal-remote.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kvtui.commands.check import analyse_files
from kvtui.sources.replay import _FileReader
from parsers import envelope
from parsers.sglang import parse_line
from tests.sources import _standins as si

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "sample_logs").glob("*.log"))
SGLANG = ("[2026-11-24 09:14:20 TP3] Using FP8 KV cache but no scaling factors provided. "
          "Defaulting to scaling factors of 1.0. This may lead to less accurate results!")

# Lines as the clients print them (docker 28, kubectl 1.32, journalctl 252).
CASES = [
    (f"2026-11-24T09:14:20.123456789Z {SGLANG}", "timestamps", "2026-11-24T09:14:20.123456789Z",
     None),
    (f"2026-11-24T09:14:20.1Z {SGLANG}", "timestamps", "2026-11-24T09:14:20.1Z", None),
    (f"2026-11-24T10:14:20+01:00 {SGLANG}", "timestamps", "2026-11-24T10:14:20+01:00", None),
    (f"[pod/sglang-0/server] 2026-11-24T09:14:20Z {SGLANG}", "timestamps",
     "2026-11-24T09:14:20Z", "pod/sglang-0/server"),
    (f"[pod/sglang-0/server] {SGLANG}", "timestamps", None, "pod/sglang-0/server"),
    (f"2026-11-24T09:14:20+0000 gpu-node-1 python3[4242]: {SGLANG}", "journal",
     "2026-11-24T09:14:20+0000", "gpu-node-1 python3[4242]"),
    (f"2026-11-24T09:14:20.123456+00:00 gpu-node-1 sglang: {SGLANG}", "journal",
     "2026-11-24T09:14:20.123456+00:00", "gpu-node-1 sglang"),
    (f"Nov 24 09:14:20 gpu-node-1 python3[4242]: {SGLANG}", "journal", "Nov 24 09:14:20",
     "gpu-node-1 python3[4242]"),
    (f"Nov  4 09:14:20.123456 gpu-node-1 python3[4242]: {SGLANG}", "journal",
     "Nov  4 09:14:20.123456", "gpu-node-1 python3[4242]"),
    (f"Tue 2026-11-24 09:14:20 UTC gpu-node-1 python3[4242]: {SGLANG}", "journal",
     "Tue 2026-11-24 09:14:20 UTC", "gpu-node-1 python3[4242]"),
]


@pytest.mark.parametrize(("line", "client", "ts", "origin"), CASES)
def test_envelope_grammar(line: str, client: str, ts: str | None, origin: str | None) -> None:
    env = envelope.split(line)
    assert env is not None
    assert (env.client, env.ts, env.origin, env.marker) == (client, ts, origin, False)
    assert line[env.start :] == SGLANG
    assert envelope.strip(line) == SGLANG
    assert envelope.split(line, client) == env  # the live sources name their client
    bare, wrapped = parse_line(SGLANG), parse_line(line)
    assert bare is not None and wrapped is not None
    assert (wrapped.kind, wrapped.rank, wrapped.ts, wrapped.fields) == (
        bare.kind, bare.rank, bare.ts, bare.fields)


@pytest.mark.parametrize("line", [
    SGLANG, "2026-11-24 09:14:20 INFO 4242 [TP0 scheduler.py:12] Load weight end.",
    "INFO:     127.0.0.1:4242 - \"POST /generate HTTP/1.1\" 200 OK", "The server is fired up",
    "2026-11-24T09:14:20 TP0] pasted without its bracket", "", "-- not a marker",
    "[pod/] nothing", "Nov 24 09:14:20 no-identifier-colon here",
])
def test_no_envelope(line: str) -> None:
    assert envelope.split(line) is None
    assert envelope.payload_start(line) == 0
    assert envelope.strip(line) == line


def test_journal_markers_and_instants() -> None:
    for marker in ("-- Boot 0123456789abcdef0123456789abcdef --", "-- No entries --",
                   "-- Reboot --"):
        env = envelope.split(marker)
        assert env is not None and env.marker and envelope.strip(marker) == ""
    # one instant whatever the offset or precision; none without a year
    utc = envelope.instant("2026-11-24T09:14:20.5Z")
    assert utc == (1795511660, 500_000_000)
    assert envelope.instant("2026-11-24T10:14:20.500+01:00") == utc
    assert envelope.instant("2026-11-24T09:14:20.500000+0000") == utc
    assert envelope.instant("Tue 2026-11-24 09:14:20.5 UTC") == utc
    assert envelope.instant("Nov 24 09:14:20") is None
    assert envelope.instant("2026-13-45T09:14:20Z") is None


# -- saved client output through check / replay ---------------------------------------------------

def _facts(report: dict[str, Any]) -> Any:
    """The report without what names the file or quotes its lines."""
    def walk(obj: Any) -> Any:
        if isinstance(obj, dict):
            return {k: walk(v) for k, v in obj.items()
                    if k not in ("source", "sources", "text", "kvtui_version")}
        if isinstance(obj, list):
            return [walk(v) for v in obj]
        return obj
    return walk(report)


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _docker_saved(tmp: Path, lines: list[str]) -> Path:
    served = si.serve_docker(tmp)
    try:
        served.store.add("sglang")
        for i, text in enumerate(lines):
            served.store.write("sglang", si.BASE_NS + i * 1000, text, stream=2)
        out = tmp / "docker.log"
        with open(out, "wb") as fh:
            subprocess.run(["docker", "logs", "--timestamps", "sglang"], env=served.env,
                           stdout=fh, stderr=subprocess.STDOUT, check=True, timeout=60)
    finally:
        served.close()
    return out


def _kubectl_saved(tmp: Path, lines: list[str], *, prefix: bool) -> Path:
    served = si.serve_kube(tmp)
    try:
        served.store.add("sglang-0")
        for i, text in enumerate(lines):
            served.store.write("sglang-0", si.BASE_NS + i * 1000, text)
        out = tmp / f"kubectl{'-prefix' if prefix else ''}.log"
        argv = ["kubectl", "logs", "--timestamps", *(["--prefix"] if prefix else []), "sglang-0"]
        with open(out, "wb") as fh:
            subprocess.run(argv, env=served.env, stdout=fh, check=True, timeout=60)
    finally:
        served.close()
    return out


def _journal_saved(tmp: Path, lines: list[str], fmt: str) -> Path:
    journal = tmp / "j.journal"
    if not journal.exists():
        si.write_journal(journal, [si.journal_entry(text, si.BASE_NS // 1000 + i)
                                   for i, text in enumerate(lines)])
    out = tmp / f"journal-{fmt}.log"
    with open(out, "wb") as fh:
        subprocess.run(["journalctl", f"--file={journal}", "-u", "sglang.service", "-o", fmt,
                        "--no-pager"], stdout=fh, check=True, timeout=60, env={"TZ": "UTC"})
    return out


CLIENTS = {
    "docker": (lambda tmp, lines: _docker_saved(tmp, lines), "docker"),
    "kubectl": (lambda tmp, lines: _kubectl_saved(tmp, lines, prefix=False), "kubectl"),
    "kubectl-prefix": (lambda tmp, lines: _kubectl_saved(tmp, lines, prefix=True), "kubectl"),
    "journal-short-iso": (lambda tmp, lines: _journal_saved(tmp, lines, "short-iso"),
                          "journalctl"),
    "journal-short": (lambda tmp, lines: _journal_saved(tmp, lines, "short"), "journalctl"),
}


@pytest.mark.slow  # the real docker/kubectl clients start and time out: ~11 s each
@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_saved_client_output_checks_like_the_bare_log(tmp_path: Path, client: str) -> None:
    make, program = CLIENTS[client]
    if shutil.which(program) is None or (program == "journalctl"
                                         and not Path(si.JOURNAL_REMOTE).exists()):
        pytest.skip(f"no {program} here (python3 dev.py test installs what it can)")
    alerts = 0
    for i, sample in enumerate(SAMPLES):
        lines = _lines(sample)
        # a short directory: the docker stand-in's socket lives in it, and an AF_UNIX path
        # holds at most 107 bytes (a sample's name made it too long)
        work = tmp_path / f"s{i}"
        work.mkdir()
        saved = make(work, lines)
        got = _lines(saved)
        assert len(got) == len(lines)
        assert got != lines and [envelope.strip(g) for g in got] == lines
        bare = analyse_files([str(sample)])[0].report().to_json()
        wrapped = analyse_files([str(saved)])[0].report().to_json()
        assert _facts(wrapped) == _facts(bare), sample.name
        alerts += len(wrapped["alerts"])
    assert alerts >= len(SAMPLES) // 2  # the comparison is not between two empty reports


def test_replay_times_a_saved_docker_log_by_the_server_clock(tmp_path: Path) -> None:
    saved = tmp_path / "docker.log"
    saved.write_text("".join(
        f"2026-11-24T09:15:0{i}.000000000Z [2026-11-24 09:14:2{i} TP0] line {i}\n"
        for i in range(3)))
    reader = _FileReader(str(saved), 0, True)
    try:
        pending = list(reader.lines())
    finally:
        reader.close()
    assert [p.ts for p in pending] == [f"2026-11-24 09:14:2{i}" for i in range(3)]
    assert [p.key for p in pending] == sorted({p.key for p in pending})  # three distinct times


PAYLOADS = [
    SGLANG,
    "[2026-11-24 09:14:20 TP1] Full KV Cache is allocated. #tokens: 100, K size: 1.00 GB, "
    "V size: 1.00 GB",  # recognised anywhere in a line: the envelope must still come off
    "[2026-11-24 09:14:20 DP1 TP5] Decode batch, #running-req: 3, #token: 100, token usage: "
    "0.01, cuda graph: True, gen throughput (token/s): 10.00, #queue-req: 0, ",
    "2026-11-24 09:14:20 INFO 4242 [TP0 model_runner.py:12] Load weight end. type=Qwen3, "
    "dtype=torch.bfloat16, avail mem=50.00 GB, mem usage=20.00 GB.",
]


@pytest.mark.parametrize("payload", PAYLOADS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0][:12])
def test_every_envelope_keeps_the_event(case: tuple[str, str, str, str], payload: str) -> None:
    wrapped_line = case[0][: -len(SGLANG)] + payload
    bare, wrapped = parse_line(payload), parse_line(wrapped_line)
    assert bare is not None and bare.rank and bare.ts
    assert wrapped is not None
    assert (wrapped.kind, wrapped.rank, wrapped.ts, wrapped.fields) == (
        bare.kind, bare.rank, bare.ts, bare.fields)
