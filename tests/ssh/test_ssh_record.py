"""Issue 37 point 5: `kvtui ssh --record DIR` keeps the lines the SSH follower delivers in
blocks (the read-ahead start-up left out: its lines come again in their place), through a
real sshd."""

from __future__ import annotations

import threading
from pathlib import Path

from kvtui.sources.record import Recorder, recording

LOG = Path(__file__).resolve().parents[2] / "sample_logs" / "llama31-70b-tp8.log"


def test_a_block_source_is_recorded_without_its_read_ahead(make_connector, tmp_path):
    from kvtui.sources.ssh.follow import RemoteFollower, Target

    log = tmp_path / "remote.log"
    lines = LOG.read_text().splitlines()
    decode = next(x for x in lines if "Decode batch" in x)
    log.write_text("".join(x + "\n" for x in lines + [decode] * 40000 + lines))
    recorder = Recorder(str(tmp_path / "rec"))
    follower = RemoteFollower(make_connector("gpu"), Target("file", str(log)), stop_at_end=True,
                              prelude_markers=("server_args=",))
    source = recording(follower, recorder)
    preludes: list = []
    source.run_blocks(lambda batch: preludes.extend(  # type: ignore[attr-defined]
        b for b in batch if getattr(b, "prelude", False)), threading.Event())
    recorder.close()
    assert preludes, "the host read the last start-up ahead"
    assert (tmp_path / "rec" / "log.txt").read_bytes() == log.read_bytes()
