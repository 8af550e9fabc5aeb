"""A paste that mixes engines reads each line with the engine it belongs to (issue 36.5).

An issue that compares "vLLM vs SGLang capacity" pastes both servers' lines together. The
stream's engine is the first one a line proves; a later line its grammar does not read is read
by the other engine's grammar when it is that engine's own wording (`Engine.identifies`), so
its fact is kept. Such an event is `foreign`: the stream's dating rules and rank layout do not
read it. Lines are written in each engine's wording (SGLang 0.5.x "KV Cache is allocated",
vLLM 0.1x "GPU KV cache size" / "Available KV cache memory"), figures made up.
"""

from __future__ import annotations

import json

from kvtui.core.engine import all_engines
from kvtui.core.pipeline.fold import Fold
from tests.helpers import session_of
from tests.test_cli_check import kvtui

VLLM = [
    "INFO 05-01 10:00:40 [gpu_worker.py:276] Available KV cache memory: 30.12 GiB",
    "INFO 05-01 10:00:42 [kv_cache_utils.py:864] GPU KV cache size: 246,720 tokens",
]
SGLANG = ("[2025-07-14 05:48:43 TP0] KV Cache is allocated. #tokens: 413540, K size: 25.24 GB, "
          "V size: 25.24 GB")


def _report(lines: list[str]) -> dict:
    s = session_of(lines, "paste.log")
    return s.report().to_json()


def test_an_sglang_pool_line_under_vllm_lines_is_read():
    fold = Fold(all_engines())
    events = [fold.parse(line) for line in [*VLLM, SGLANG]]
    assert [e.kind if e else None for e in events] == ["kv_pool", "capacity", "kv_pool"]
    assert fold.engine is not None and fold.engine.name == "vllm"
    assert events[2] is not None and events[2].foreign and events[2].get("tokens") == 413540
    assert not any(e.foreign for e in events[:2] if e is not None)
    report = _report([*VLLM, SGLANG])
    assert report["engine"] == "vllm"
    assert 413540 in [p["tokens"] for p in report["pools"]]
    assert report["capacity"]["max_total_num_tokens"] == 246720


def test_vllm_lines_under_sglang_lines_are_read():
    report = _report([SGLANG, *VLLM])
    assert report["engine"] == "sglang"
    assert 413540 in [p["tokens"] for p in report["pools"]]
    assert any(p["kv_gib"] == 30.12 for p in report["pools"])


def test_another_engines_line_neither_dates_nor_tags_the_run():
    alone = _report(VLLM)
    mixed = _report([*VLLM, SGLANG])
    # the SGLang line's `TP0` is SGLang's tag: it proves nothing of vLLM's layout
    assert mixed["parallel"]["ranks_seen"] == alone["parallel"]["ranks_seen"] == []
    assert mixed["parallel"]["tp"] == alone["parallel"]["tp"]


def test_a_line_no_engine_claims_stays_unread():
    # the CUDA allocator's text reads the same from any engine: the stream's grammar reads it
    # (vLLM's does), and nothing else is asked for a line another engine cannot claim
    fold = Fold(all_engines())
    assert fold.parse(VLLM[0]) is not None
    assert fold.parse("Some text that no engine prints, 12 tokens") is None


def test_the_gate_reads_the_other_engines_alert(tmp_path):
    # an SGLang profile that left no room, pasted under vLLM lines: never a pass
    path = tmp_path / "mixed.log"
    path.write_text("\n".join([*VLLM, "[2025-07-02 08:10:23 TP0] max_total_tokens=131072 is "
                               "larger than the profiled value -48210. Use the profiled value "
                               "instead."]) + "\n")
    out = kvtui("check", "--json", str(path))
    doc = json.loads(out.stdout)
    assert out.returncode == 1, out.stdout
    assert "profiled-capacity-negative" in [a["rule"] for a in doc["alerts"]]


def test_another_engines_lines_prove_nothing_of_the_streams_layout():
    # an SGLang start-up line of the launcher (untagged at any TP) under which vLLM's pool lines
    # were pasted: vLLM's lines are no SGLang scheduler lines, so no TP = 1 is inferred from
    # their missing SGLang tags (kvtui.engines.sglang.ranks)
    launcher = ("[2025-07-14 05:48:30.100] Setting KV cache dtype to bfloat16 for DeepSeek DSA "
                "on SM9 device.")
    report = _report([launcher, *VLLM])
    assert report["engine"] == "sglang"
    assert report["parallel"]["tp"] is None
