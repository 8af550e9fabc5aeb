"""The verdict first: a big file's start-up regions, folded alone, give the start-up facts of the
full fold (line numbers included), and the final report is unchanged by the preview."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kvtui.core.engine import all_engines
from kvtui.core.pipeline import Options, Session
from kvtui.core.pipeline.startup import start_offsets
from kvtui.sources.readers import ranged_file
from tests.conftest import ROOT, SAMPLES
from tests.helpers import session_of

STARTUP_KEYS = ("engine", "model", "parallel", "kv_cache", "pools", "capacity", "weights")


def big_log(tmp_path: Path, *names: str, runtime_copies: int = 40) -> Path:
    """Samples one after another (each a server start), each followed by many runtime lines."""
    out = []
    for name in names:
        lines = (SAMPLES / name).read_text().splitlines()
        runtime = [ln for ln in lines if "Decode batch" in ln or "Prefill batch" in ln]
        out += lines + runtime * runtime_copies
    path = tmp_path / "big.log"
    path.write_text("\n".join(out) + "\n")
    return path


def previews_and_full(path: Path) -> tuple[list[dict], dict]:
    seen: list[dict] = []
    full = Session(Options(preview_bytes=0, min_parallel_bytes=0, workers=2))
    full.fold_file(ranged_file(str(path)),
                   preview=lambda s: seen.append(s.report().to_json()))
    return seen, full.report().to_json()


def preview_and_full(path: Path) -> tuple[dict, dict]:
    """The last preview (every start's start-up) and the full report."""
    seen, full = previews_and_full(path)
    assert 1 <= len(seen) <= 2
    return seen[-1], full


@pytest.mark.parametrize("names", [
    ("qwen35-397b-nvfp4-tp8-fp8.log",),
    ("qwen35-397b-nvfp4-tp8-fp8.log", "qwen35-397b-nvfp4-tp8-bf16.log"),
    ("llama31-8b-retraction.log", "gpt-oss-120b-tp4-e5m2-restart.log",
     "deepseek-v3-tp8-mla.log"),
])
def test_the_preview_has_the_startup_facts_of_the_full_fold(tmp_path, names):
    path = big_log(tmp_path, *names)
    early, full = preview_and_full(path)
    assert early.get("partial") is True and "partial" not in full
    for key in STARTUP_KEYS:
        assert early[key] == full[key], key
    assert [a["rule"] for a in early["alerts"] if a["rule"].startswith("kv-")] == \
        [a["rule"] for a in full["alerts"] if a["rule"].startswith("kv-")]
    assert [r["start"] for r in early["runs"]] == [r["start"] for r in full["runs"]]
    assert early["runtime"]["decode_batches"] < full["runtime"]["decode_batches"]


def test_the_final_report_is_the_same_with_or_without_a_preview(tmp_path):
    path = big_log(tmp_path, "qwen35-397b-nvfp4-tp8-fp8.log", "llama31-70b-tp8.log")
    plain = Session(Options(min_parallel_bytes=0, workers=2))
    plain.fold_file(ranged_file(str(path)))
    assert preview_and_full(path)[1] == plain.report().to_json()


def test_starts_are_found_by_their_markers(tmp_path):
    path = big_log(tmp_path, "llama31-8b-retraction.log", "llama31-70b-tp8.log",
                   runtime_copies=2)
    data = path.read_bytes()
    offsets = start_offsets(ranged_file(str(path)), all_engines())
    assert offsets[0] == 0
    for off in offsets[1:]:
        line = data[off:data.index(b"\n", off)]
        assert b"server_args=" in line or b"KV cache dtype to" in line
    assert sum(1 for off in offsets if b"server_args=" in data[off:off + 400]) == 2


def test_every_sample_start_prints_its_engines_anchor():
    """The host searches a big remote file only for each engine's anchors (`kvtui ssh`'s read
    ahead): an anchor is one of the engine's markers, and every sample log that holds a marker
    of an engine holds that engine's anchor too (each start prints it: the citations at
    `start_anchors`)."""
    checked = 0
    for engine in all_engines():
        assert engine.start_anchors and set(engine.start_anchors) <= set(engine.start_markers)
        for path in sorted(SAMPLES.glob("*.log")):
            data = path.read_bytes()
            starts = sum(data.count(m) for m in engine.start_markers)
            if starts:
                checked += 1
                assert any(a in data for a in engine.start_anchors), (path.name, engine.name)
    assert checked >= 10


def test_check_stream_prints_the_verdict_first(tmp_path):
    path = big_log(tmp_path, "qwen35-397b-nvfp4-tp8-fp8.log", runtime_copies=1500)
    assert path.stat().st_size > 8 << 20  # past the preview threshold
    out = subprocess.run([sys.executable, "-m", "kvtui", "check", "--stream", str(path)],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    lines = [json.loads(x) for x in out.stdout.splitlines()]
    assert out.returncode == 1 and len(lines) == 2
    assert lines[0]["partial"] is True
    assert lines[0]["alerts"][0]["rule"] == "kv-fp8-unscaled"
    assert lines[0]["alerts"][0]["evidence"]["line"] == 27
    full = subprocess.run([sys.executable, "-m", "kvtui", "check", "--json", str(path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert lines[1] == json.loads(full.stdout)
    assert out.stderr == ""  # no progress line without a terminal



@pytest.mark.parametrize("names", [
    ("qwen35-397b-nvfp4-tp8-fp8.log",),
    ("qwen35-397b-nvfp4-tp8-fp8.log", "qwen35-397b-nvfp4-tp8-bf16.log"),
])
def test_the_top_start_up_is_published_before_the_scan_for_later_starts(tmp_path, names):
    """The first preview needs no scan of the file (its time does not grow with the size): the
    top start-up alone, the first server's verdict. A file with later starts then gets a
    second preview with every start's start-up."""
    seen, full = previews_and_full(big_log(tmp_path, *names))
    assert len(seen) == len(names)
    first = seen[0]
    assert first["partial"] is True and [r["start"]["line"] for r in first["runs"]] == [1]
    alone = session_of((SAMPLES / names[0]).read_text().splitlines(), "x")
    assert first["kv_cache"]["effective_dtype"] == \
        alone.report().to_json()["kv_cache"]["effective_dtype"]
    assert [r["start"] for r in seen[-1]["runs"]] == [r["start"] for r in full["runs"]]
