"""`kvtui events` gives the same JSON Lines on every core as line by line."""

from __future__ import annotations

import json

from kvtui.core.pipeline import Options, events
from kvtui.sources.readers import log_input
from tests.conftest import SAMPLES


def test_chunked_events_equal_sequential_events(tmp_path):
    path = tmp_path / "mix.log"
    path.write_bytes(b"".join((SAMPLES / n).read_bytes() for n in (
        "qwen35-397b-nvfp4-tp8-fp8.log", "llama31-8b-retraction.log", "sglang-0.3-legacy.log")))
    inp = log_input(str(path))
    one = "".join(events(inp, Options(workers=1)))
    many = "".join(events(inp, Options(workers=2, min_parallel_bytes=0)))
    assert many == one
    rows = [json.loads(x) for x in one.splitlines()]
    text = path.read_text().splitlines()
    assert rows and all(text[r["line"] - 1] for r in rows)
    assert [r["line"] for r in rows] == sorted(r["line"] for r in rows)
