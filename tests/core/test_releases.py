"""One release range for every engine (kvtui.core.releases): the engines differ only in data.

Both engines date a log with the same `VersionRange`; its bounds (and so its labels) come from the
engine's `ReleaseLine`: SGLang's 0.2.15 .. 0.5.23 (kvtui/engines/sglang/version.py), vLLM's
0.5.0 .. 0.34.0 (kvtui/engines/vllm/version.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtui.core import engine as engines
from kvtui.core.releases import UNDATED, ReleaseLine, VersionRange, parse_version
from kvtui.engines.sglang.version import SGLANG_LINE, infer_version
from kvtui.engines.vllm.version import VLLM_LINE
from tests.helpers import session_of

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
LINES = {"sglang": SGLANG_LINE, "vllm": VLLM_LINE}


def _run(name: str) -> tuple[str, object]:
    s = session_of((SAMPLES / name).read_text().splitlines(), name)
    assert s.engine is not None
    return s.engine.name, s.state.current


@pytest.mark.parametrize(("sample", "engine", "label"), [
    ("sglang-0.3-legacy.log", "sglang", "<= 0.3.2"),
    ("llama31-70b-tp8.log", "sglang", "0.5.4 - 0.5.8"),
    ("vllm-qwen3-next-80b-tp4-hybrid.log", "vllm", "0.11.0"),
    ("vllm-llama31-70b-tp8-bf16.log", "vllm", "0.33.0"),
])
def test_both_engines_date_a_log_with_the_one_class(sample, engine, label):
    name, run = _run(sample)
    assert name == engine
    vr = engines.load(engine).version_range(run)
    assert type(vr) is VersionRange and vr.line is LINES[engine]
    assert vr.label() == label and vr.reasons


@pytest.mark.parametrize("line", [SGLANG_LINE, VLLM_LINE], ids=lambda ln: ln.engine)
def test_labels_follow_each_engines_own_bounds(line: ReleaseLine):
    top = line.any()
    assert top.undated and top.label() == UNDATED and not top.empty
    mid = (0, 5, 5)
    assert top.narrow(mid, None, "a").label() == ">= 0.5.5"
    assert top.narrow(None, mid, "b").label() == "<= 0.5.5"
    assert top.narrow(mid, mid, "c").label() == "0.5.5"
    # a bound met by a clue is the engine's own: 0.5.0 is vLLM's oldest, not SGLang's
    low = top.narrow((0, 5, 0), (0, 5, 9), "d")
    assert low.label() == ("<= 0.5.9" if line is VLLM_LINE else "0.5.0 - 0.5.9")


@pytest.mark.parametrize("line", [SGLANG_LINE, VLLM_LINE], ids=lambda ln: ln.engine)
def test_narrowing_keeps_the_range_against_a_contradicting_clue(line: ReleaseLine):
    vr = line.any().narrow((0, 5, 1), (0, 5, 3), "first")
    same = vr.narrow((0, 5, 2), None, "inside")
    assert (same.lo, same.hi, same.reasons) == ((0, 5, 2), (0, 5, 3), ("first", "inside"))
    assert vr.narrow(None, (0, 5, 9), "wider") is vr  # a clue that narrows nothing is not kept
    kept = vr.narrow((0, 5, 4), None, "later")
    assert (kept.lo, kept.hi) == ((0, 5, 1), (0, 5, 3))
    assert kept.reasons == ("first", "ignored: later") and kept.line is line


def test_only_vllms_json_names_the_engine():
    # SGLang's what-if `version` object is pinned byte for byte by tests/golden without it
    assert list(SGLANG_LINE.any().to_dict()) == ["min", "max", "label", "reasons"]
    assert VLLM_LINE.between((0, 11, 0), (0, 11, 0), ("x",)).to_dict() == {
        "engine": "vllm", "min": "0.11.0", "max": "0.11.0", "label": "0.11.0", "reasons": ["x"]}


@pytest.mark.parametrize(("text", "version"), [
    ("0.10.2.dev378+g4d7fe40fc", (0, 10, 2)), ("v0.5.4.post1", (0, 5, 4)),
    ("0.5.0rc2", (0, 5, 0)), ("0.5", (0, 5, 0)), ("", None), ("unknown", None), ("5", None),
])
def test_a_printed_release_is_read_totally(text, version):
    assert parse_version(text) == version


def test_an_odd_host_release_pins_sglang_without_raising():
    # the checkpoint host reports its installed sglang (kvtui/sources/ssh/checkpoint.py); a
    # pre-release such as 0.5.0rc2 raised ValueError before the engines shared the reader
    _, run = _run("llama31-70b-tp8.log")
    assert infer_version(run, known="0.5.0rc2").label() == "0.5.0"
    assert infer_version(run, known="unknown").label() == "0.5.4 - 0.5.8"
