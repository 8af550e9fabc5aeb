"""A server restart seen over SSH (a real sshd on loopback) looks as it does locally: two runs,
the log pane's inline marker before the restart's first line, the earlier alert resolved
(issue 34)."""

from __future__ import annotations

import time
from pathlib import Path

from kvtui.sources.ssh.follow import RemoteFollower, Target
from kvtui.ui.ingest import Ingest

ROOT = Path(__file__).resolve().parents[2]
PAIR = ROOT / "sample_logs" / "qwen35-397b-nvfp4-tp8-fp8-then-bf16.log"


def _wait(cond, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_restart_appended_to_a_remote_log(make_connector, tmp_path):
    lines = PAIR.read_text().splitlines(keepends=True)
    cut = [i for i, x in enumerate(lines) if "server_args=ServerArgs(" in x][1]
    log = tmp_path / "server.log"
    log.write_text("".join(lines[:cut]))
    src = RemoteFollower(make_connector("gpu"), Target("file", str(log)), keepalive=1.0,
                         backoff=(0.2, 1.0))
    ingest = Ingest(src, ring=5000)
    ingest.start()
    shown = []
    try:
        assert _wait(lambda: ingest.lines == cut), "the FP8 run"
        with log.open("a") as fh:
            fh.write("".join(lines[cut:]))

        def marked() -> bool:
            shown.extend(ingest.drain().entries)
            return len(ingest.session.state.runs) == 2 and any(
                e.notice and "server restarted" in e.text for e in shown)
        assert _wait(marked), "the restart"
        at = next(i for i, e in enumerate(shown) if e.notice and "server restarted" in e.text)
        assert shown[at].text == f"── server restarted: run 2, line {cut + 1:,} ──"
        assert shown[at + 1].line_no == cut + 1
        assert _wait(lambda: ingest.lines == len(lines))
        with ingest.report_lock:
            report = ingest.session.report()
        assert report.kv_cache.effective_dtype == "bf16"
        fp8 = report.runs[0].alerts[0]
        assert fp8.rule == "kv-fp8-unscaled" and fp8.resolved_by is not None
        assert fp8.resolved_by.line == cut + 1
    finally:
        ingest.close()
