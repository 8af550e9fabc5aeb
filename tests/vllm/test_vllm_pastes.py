"""Line classes a sweep of real vLLM pastes (issue threads, READMEs; 0.6 - 0.23, V0 and V1)
found misread or missed. Each test's lines are written for it in the shape of the paste it names;
the numbers are made up unless the test says otherwise.
"""

from __future__ import annotations

from typing import Any

from kvtui.core.pipeline import Session
from kvtui.core.render import render_text
from kvtui.engines.vllm.version import infer_version
from parsers.vllm import hints, parse_line
from tests.helpers import session_of


def report(lines: list[str]) -> tuple[Session, dict[str, Any]]:
    s = session_of(iter(lines), "log")
    return s, s.report().to_json()


def test_the_v0_engine_config_line_of_0_8_starts_the_run():
    """vllm-project/vllm#8031 (https://github.com/vllm-project/vllm/issues/8031) pastes vLLM
    0.8.3's V0 engine line, "Initializing a V0 LLM engine (v0.8.3) with config: ...", which was
    not read at all: no model, no release, no TP."""
    line = ("INFO 04-11 12:37:49 [llm_engine.py:242] Initializing a V0 LLM engine (v0.8.3) with "
            "config: model='org/Small-24B-awq', speculative_config=None, tokenizer='org/Small-24B-"
            "awq', dtype=torch.float16, max_seq_len=8192, tensor_parallel_size=1, "
            "pipeline_parallel_size=1, quantization=awq, kv_cache_dtype=auto, seed=None, "
            "served_model_name=org/Small-24B-awq, use_async_output_proc=True")
    s, rep = report([line])
    assert rep["engine"] == "vllm"
    assert rep["model"]["path"] == "org/Small-24B-awq"
    assert (rep["parallel"]["tp"], rep["parallel"]["pp"]) == (1, 1)
    assert rep["server_args"]["version"] == "0.8.3"
    assert rep["kv_cache"]["effective_dtype"] == "fp16"  # `auto` resolved to the model dtype
    ev = parse_line(line)
    assert ev is not None
    vr = infer_version(set(hints(ev, line)) - {"version:0.8.3"})
    assert (vr.lo, vr.hi) == ((0, 8, 0), (0, 10, 2))  # `[file.py:N]` and "a V0" together
    assert "Model" in render_text(s.report())


def test_an_untimed_head_behind_a_controllers_stamp():
    """An evidence file of a vLLM 0.17.0+rocm deployment in the code index: a controller
    re-stamps the server's lines (`2026-05-21T02:05:56Z (EngineCore_DP0 pid=659) INFO
    [gpu_model_runner.py:4338] Model loading took 1.77 GiB memory and 7.982829 seconds`); no
    line of it was read."""
    lines = ["2026-05-21T02:05:31Z (APIServer pid=5) INFO [model.py:531] Resolved architecture: "
             "WhisperForConditionalGeneration",
             "2026-05-21T02:05:56Z (EngineCore_DP0 pid=6) INFO [gpu_model_runner.py:4338] Model "
             "loading took 1.77 GiB memory and 7.982829 seconds"]
    _, rep = report(lines)
    assert rep["engine"] == "vllm"
    assert rep["server_args"]["architecture"] == "WhisperForConditionalGeneration"
    assert (rep["weights"]["rank"], rep["weights"]["usage_gib"]) == ("DP0", 1.77)
    ev = parse_line(lines[1])
    assert ev is not None and "head:bracket" in hints(ev, lines[1])  # `[file.py:N]`: 0.8+


# vllm-project/vllm#33155 (https://github.com/vllm-project/vllm/issues/33155, vLLM 0.14.1,
# gpt-oss-120b): a start-up excerpt with no args dump, pasted as `cat -v` shows its colours.
LOADING = ("(EngineCore_DP0 pid=7) INFO 01-27 00:31:44 [gpu_model_runner.py:3808] Starting to "
           "load model org/Some-Model-120b...")
LOADED = ("(EngineCore_DP0 pid=7) INFO 01-27 00:31:59 [gpu_model_runner.py:3905] Model loading "
          "took 60.25 GiB memory and 14.380607 seconds")


def test_the_model_runners_loading_line_names_the_model():
    """"Starting to load model %s..." (self.model_config.model): V0's worker/model_runner.py:1060
    in 0.6.3 and :1080 in 0.10.1; V1's v1/worker/gpu_model_runner.py:1953 in 0.10.1, :2602 in
    0.11.0, :3808-3811 in 0.14.1 (info_once), cpu_model_runner.py:87 / :55. It was not read, so
    an excerpt without the args dump said "Model unknown"."""
    s, rep = report([LOADING, LOADED])
    assert rep["model"]["path"] == "org/Some-Model-120b"
    assert "org/Some-Model-120b" in render_text(s.report())
    ev = parse_line(LOADING)
    assert ev is not None and ev.kind == "server_args" and ev.get("partial")


def test_the_args_dump_names_the_model_before_the_loading_line():
    dump = ("(APIServer pid=1) INFO 01-27 00:31:30 [utils.py:233] non-default args: "
            "{'model': 'org/From-The-Args', 'max_model_len': 8192}")
    _, rep = report([dump, LOADING.replace("org/Some-Model-120b", "/models/local-copy")])
    assert rep["model"]["path"] == "org/From-The-Args"


def test_a_paste_with_caret_colours_reads_as_the_escaped_one():
    """The same paste with its colours as `cat -v` / `less` show them (`^[[0;36m(EngineCore_DP0
    pid=70073)^[[0;0m INFO ...`): the head was not read at all, so the rank and the time were
    lost. It reads as the real-ESC form does."""
    esc = [f"\x1b[0;36m{ln[:22]}\x1b[0;0m{ln[22:]}" for ln in (LOADING, LOADED)]
    caret = [ln.replace("\x1b", "^[") for ln in esc]
    for e, c in zip(esc, caret, strict=True):
        want, got = parse_line(e), parse_line(c)
        assert want is not None and got is not None, c
        assert (got.kind, got.fields, got.ts, got.rank) == (want.kind, want.fields, want.ts,
                                                            want.rank)
        assert got.rank == "DP0"
    _, rep_esc = report(esc)
    _, rep_caret = report(caret)
    assert rep_caret["parallel"] == rep_esc["parallel"]
    assert rep_caret["weights"] == rep_esc["weights"]
