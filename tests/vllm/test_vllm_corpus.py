"""The real vLLM logs of the corpus give the facts they contain, and only vLLM logs read as vLLM.

Each expectation below was read off the file by hand (engine, KV dtype as configured and as in
effect, scales, the pool's tokens, the concurrency vLLM printed, the alerts), so a parser or fold
change that loses one of them fails here with the file's name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtui.core.engine import all_engines
from kvtui.core.pipeline import Options, Session
from kvtui.core.pipeline.fold import Fold
from kvtui.sources.readers import iter_lines
from tests.conftest import corpus_dir
from tests.helpers import session_of
from tests.vllm.test_vllm_server_args import SGLANG_OWN
from tests.vllm.test_vllm_sizing import QWEN3_06B

CORPUS = corpus_dir()
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"corpus not found at {CORPUS}")
VLLM_PREFIXES = ("vllm-", "club3090-", "aiperf-", "lmcache-", "llmcompressor-", "intelarc-")

# file -> (configured dtype, effective dtype, scales, tokens, context_len, concurrency, alerts)
FACTS: dict[str, tuple[str | None, str | None, str, int | None, int | None, float | None,
                       set[str]]] = {
    "aiperf-issue-449.log": (None, None, "unknown", 417_136, 131_072, 3.18, set()),
    "club3090-issue-104.log": (None, None, "unknown", None, None, None, set()),
    # the q-scale warnings: q_scale := k_scale (info), uncalibrated q/prob scales (warning)
    "club3090-issue-1047.log": (None, "fp8_e4m3", "missing", None, None, None,
                                {"kv-fp8-unscaled", "fp8-attention-scales"}),
    "club3090-issue-105.log": (None, None, "unknown", None, None, None, set()),
    "club3090-issue-613.log": (None, "fp8_e4m3", "missing", None, None, None,
                               {"kv-fp8-unscaled", "fp8-attention-scales"}),
    "intelarc-cookbook-issue-4.log": (None, None, "unknown", None, None, None, {"oom"}),
    "llmcompressor-issue-1294.log": (None, None, "unknown", None, None, None,
                                     {"fp8-attention-scales"}),
    "lmcache-pr-2522.log": ("auto", None, "unknown", None, None, None, set()),
    # the engine config line is cut before kv_cache_dtype: the setting is unknown, not `auto`
    "vllm-issue-10537.log": (None, None, "unknown", None, None, None, set()),
    # the ValueError was pasted above the start it belongs to (stamped 12:33:23, the start
    # 12:32:03): one run, whose start-up failed with it; its config line is cut (unknown dtype)
    "vllm-issue-15871.log": (None, None, "unknown", None, None, None, {"oom"}),
    "vllm-issue-45562.log": (None, None, "unknown", None, None, None,
                             {"fp8-attention-scales"}),
    "vllm-issue-49011.log": (None, None, "unknown", 1_823_372, 1_048_576, 1.74,
                             {"low-context-concurrency"}),
    "vllm-issue-49064.log": (None, None, "unknown", None, None, None, {"oom"}),
    "vllm-issue-51454.log": ("fp8_e4m3", "fp8_e4m3", "unknown", None, None, None, {"kv-fp8"}),
    "vllm-issue-5493.log": ("fp8_e4m3", "fp8_e4m3", "unknown", None, None, None, {"kv-fp8"}),
    "vllm-issue-6746.log": (None, None, "unknown", None, None, None, set()),
    # V0's pool line with no concurrency line after it: blocks x the default block size 16
    # (EngineArgs.block_size, engine/arg_utils.py:107 in 0.6.3; parsers/vllm/startup.py)
    "vllm-issue-7593.log": (None, None, "unknown", 22_982 * 16, None, None, set()),
    # V0: 189,945 blocks of 16 tokens (the block size the printed concurrency implies)
    "vllm-pr-10909.log": (None, None, "unknown", 189_945 * 16, 1024, 2967.89, set()),
    "vllm-pr-12569.log": (None, None, "unknown", 1381 * 16, 2048, 10.79, set()),
    "vllm-pr-14447.log": (None, None, "unknown", None, None, None, set()),
    "vllm-pr-24162.log": ("auto", None, "unknown", None, None, None, set()),
    "vllm-pr-24577.log": (None, None, "unknown", 652_144, 4096, 159.21, set()),
    "vllm-pr-29796.log": (None, None, "unknown", None, 34_048, 11.12, set()),
    # 0.1x hybrid: the printed size is the pool divided by its layer groups; the printed
    # concurrency (1.36x) is what one request can use, so no context-exceeds-pool
    "vllm-pr-39559.log": (None, None, "unknown", 89_760, 262_144, 1.36,
                          {"low-context-concurrency"}),
    "vllm-pr-6234.log": (None, None, "unknown", 10_039 * 16, None, None, set()),  # as 7593
}


def _session(name: str, **options) -> Session:
    s = Session(Options(**options))
    path = CORPUS / name
    s.feed_lines(str(path), iter_lines(str(path)))
    return s


def _vllm_files() -> list[str]:
    return sorted(p.name for p in CORPUS.glob("*.log") if p.name.startswith(VLLM_PREFIXES))


@needs_corpus
def test_every_vllm_corpus_file_has_facts():
    assert set(_vllm_files()) == set(FACTS)


@needs_corpus
@pytest.mark.parametrize("name", sorted(p.name for p in corpus_dir().glob("*.log"))
                         if corpus_dir().is_dir() else [])
def test_each_file_reads_as_its_own_engine(name):
    fold = Fold(all_engines())
    fold.feed_lines(name, iter_lines(str(CORPUS / name)))
    engine = fold.engine.name if fold.engine else None
    if name.startswith(VLLM_PREFIXES):
        assert engine == "vllm"
    else:  # an SGLang log, or one whose only event is an engine-neutral CUDA OOM
        assert engine in ("sglang", None), engine


@needs_corpus
@pytest.mark.parametrize("name", sorted(FACTS))
def test_facts(name):
    report = _session(name).report().to_json()
    conf, eff, scales, tokens, ctx, conc, alerts = FACTS[name]
    kv = report["kv_cache"]
    cap = report["capacity"] or {}
    assert report["engine"] == "vllm"
    assert (kv["configured_dtype"], kv["effective_dtype"], kv["scales"]) == (conf, eff, scales)
    assert (cap.get("max_total_num_tokens"), cap.get("context_len"),
            cap.get("max_concurrency")) == (tokens, ctx, conc)
    assert {a["rule"] for a in report["alerts"]} == alerts
    # its own arguments only: no SGLang argument name (tests/vllm/test_vllm_server_args.py)
    assert not (report["server_args"] or {}).keys() & SGLANG_OWN


@needs_corpus
def test_qwen3_06b_pool_is_reproduced_from_its_memory_line():
    """vLLM PR 24577 (Qwen/Qwen3-0.6B, BF16): 69.66 GiB -> 652,144 tokens, within the 0.01 GiB
    rounding; the same blocks in FP8 hold exactly twice the tokens."""
    report = _session("vllm-pr-24577.log", model=QWEN3_06B).report().to_json()
    w = report["whatif"]
    cal = w["current"]["calibration"]
    assert cal["within_rounding"] and cal["computed_interval"][0] <= 652_144
    rows = {r["dtype"]: r for r in w["scenarios"]}
    assert rows["bf16"]["tokens"] == 652_144 and rows["bf16"]["current"]
    assert rows["fp8_e4m3"]["tokens"] == 2 * 652_144
    assert rows["bf16"]["concurrency"]["4096"] == 159.21
    assert w["version"]["label"] == "0.10.2 - 0.13.9"
    assert not {a["rule"] for a in report["alerts"]} & {"calibration-mismatch"}


def test_one_worker_memory_only_bounds_the_pool(tmp_path: Path):
    """vLLM issue 21348 (Qwen3-235B-A22B-FP8 on 4 H100s, BF16 KV): "Available KV cache memory:
    8.11 GiB" and "GPU KV cache size: 178,880 tokens" (11,180 blocks of 16 x 48,128 B), less
    than 8.11 GiB allows: vLLM takes the smallest pool of the four workers, and the paste shows
    one worker's line."""
    log = tmp_path / "21348.log"
    log.write_text(
        "(APIServer pid=1) INFO 07-22 10:00:00 [utils.py:328] non-default args: "
        "{'model': '/path/to/Qwen3-235B-A22B-FP8', 'tensor_parallel_size': 4}\n"
        "(VllmWorker rank=0 pid=7) INFO 07-22 10:01:00 [gpu_worker.py:276] Available KV cache "
        "memory: 8.11 GiB\n"
        "(EngineCore_0 pid=5) INFO 07-22 10:01:01 [kv_cache_utils.py:868] GPU KV cache size: "
        "178,880 tokens\n")
    s = session_of(iter_lines(str(log)), str(log))
    w = s.report().to_json()["whatif"]
    cal = w["current"]["calibration"]
    assert w["model"]["name"] == "Qwen/Qwen3-235B-A22B"
    assert cal["bound"] == "upper" and cal["ok"] and not cal["within_rounding"]
    assert cal["computed_tokens"] > 178_880
    assert w["scenarios"][0]["tokens"] == 178_880  # the logged pool is held fixed
