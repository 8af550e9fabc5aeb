"""Every bundled sample and corpus log walked, every alert it raises pinned (issue 40).

Why: the accuracy rules (kvtui.core.accuracy) must raise nothing where the setting is right or
where the log cannot tell; pinning every alert of every log shows a new rule's first false
alarm, and any other rule's change, as a diff here. And every checklist item must be decided
(a state other than "unknown") on at least one log, named below.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtui.core.accuracy import ITEMS
from kvtui.core.report_types import Report
from kvtui.sources.readers import iter_lines
from tests.conftest import corpus_dir
from tests.helpers import session_of

SAMPLES = Path(__file__).resolve().parents[1] / "sample_logs"

SAMPLE_ALERTS: dict[str, set[str]] = {
    "deepseek-v3-tp8-mla.log": set(),
    "gpt-oss-120b-tp4-e5m2-restart.log": {'kv-fp8-e5m2', 'mem-unbalanced', 'oom'},
    "llama31-70b-tp8-fp8-scaled.log": set(),
    "llama31-70b-tp8-mem-fraction-restart.log": set(),
    "llama31-70b-tp8.log": set(),
    "llama31-8b-tp1-then-tp2-no-dump.log": {'context-exceeds-pool', 'low-context-concurrency'},
    "llama31-8b-retraction.log": {'context-exceeds-pool', 'kv-retraction', 'pool-saturated'},
    "qwen3-235b-tp8-nvfp4-kv.log": {'kv-fp4'},
    "qwen35-397b-nvfp4-tp8-auto-fp8.log": {'kv-auto-fp8'},
    "qwen35-397b-nvfp4-tp8-bf16.log": {'low-context-concurrency'},
    "qwen35-397b-nvfp4-tp8-fp8-then-bf16.log": {'kv-fp8-unscaled', 'low-context-concurrency'},
    "qwen35-397b-nvfp4-tp8-fp8.log": {'kv-fp8-unscaled'},
    "sglang-0.3-legacy.log": {'kv-retraction', 'pool-saturated'},
    "vllm-llama31-70b-tp8-bf16.log": set(),
    "vllm-gpt-oss-120b-tp2-extensible.log": set(),
    "vllm-llama31-70b-tp8-then-tp4.log": set(),
    "vllm-llama31-8b-tp2-fp8-unscaled.log": {'kv-fp8-unscaled', 'kv-retraction', 'pool-saturated'},
    "vllm-qwen3-next-80b-tp4-hybrid.log": set(),
}
CORPUS_ALERTS: dict[str, set[str]] = {
    "aiperf-issue-449.log": set(),
    "club3090-issue-104.log": set(),
    "club3090-issue-1047.log": {'fp8-attention-scales', 'kv-fp8-unscaled'},
    "club3090-issue-105.log": set(),
    "club3090-issue-613.log": {'fp8-attention-scales', 'kv-fp8-unscaled'},
    "dsv4_head.log": {'kv-fp8'},
    "inferencex-issue-2128.log": {'oom'},
    "intelarc-cookbook-issue-4.log": {'oom'},
    "ktransformers-issue-1804.log": set(),
    "ktransformers-issue-1969.log": set(),
    "kvcached-issue-198.log": {'process-exception'},
    "llamabenchy-issue-15.log": set(),
    "llmcompressor-issue-1294.log": {'fp8-attention-scales'},
    "lmcache-pr-2522.log": set(),
    "repofile-53259568910.log": {'context-exceeds-pool'},
    "repofile-54751690598.log": {'kv-fp8-unscaled', 'process-exception'},
    "repofile-davidshare-deepseek-r1-azure.log": set(),
    "sglang-issue-10408.log": {'oom'},
    "sglang-issue-105.log": {'pool-leak'},
    "sglang-issue-1463.log": set(),
    "sglang-issue-14972.log": set(),
    "sglang-issue-1612.log": set(),
    "sglang-issue-19712.log": set(),
    "sglang-issue-29516.log": set(),
    "sglang-issue-3186.log": set(),
    "sglang-issue-3196.log": set(),
    "sglang-issue-3909.log": set(),
    "sglang-issue-4048.log": {'input-too-long', 'process-exception'},
    "sglang-issue-4407.log": set(),
    "sglang-issue-5285.log": {'oom'},
    "sglang-issue-6291.log": set(),
    "sglang-issue-7006.log": {'oom'},
    "sglang-issue-7353.log": set(),
    "sglang-issue-7691.log": {'profiled-capacity-negative'},
    "sglang-issue-8336.log": set(),
    "sglang-issue-8538.log": set(),
    "sglang-issue-938.log": set(),
    "sglang-pr-10622.log": set(),
    "sglang-pr-11032.log": {'kv-fp8-e5m2'},
    "sglang-pr-11716.log": set(),
    "sglang-pr-11830.log": set(),
    "sglang-pr-12978.log": set(),
    "sglang-pr-13023.log": set(),
    "sglang-pr-13075.log": set(),
    "sglang-pr-15909.log": set(),
    "sglang-pr-17157.log": set(),
    "sglang-pr-18039.log": set(),
    "sglang-pr-22166.log": set(),
    "sglang-pr-22331.log": set(),
    "sglang-pr-25960.log": set(),
    "sglang-pr-29853.log": set(),
    "sglang-pr-30047.log": set(),
    "sglang-pr-30393.log": set(),
    "sglang-pr-4826.log": set(),
    "sglang-pr-5813.log": set(),
    "sglang-pr-5893.log": set(),
    "sglang-pr-6731.log": {'kv-retraction'},
    "sglang-pr-6744.log": {'process-exception'},
    "sglangjax-pr-564.log": set(),
    "sglkernelnpu-pr-608.log": set(),
    "vllm-issue-10537.log": set(),
    "vllm-issue-15871.log": {'oom'},
    "vllm-issue-45562.log": {'fp8-attention-scales'},
    "vllm-issue-49011.log": {'low-context-concurrency'},
    "vllm-issue-49064.log": {'oom'},
    "vllm-issue-51454.log": {'kv-fp8'},
    "vllm-issue-5493.log": {'kv-fp8'},
    "vllm-issue-6746.log": set(),
    "vllm-issue-7593.log": set(),
    "vllm-pr-10909.log": set(),
    "vllm-pr-12569.log": set(),
    "vllm-pr-14447.log": set(),
    "vllm-pr-24162.log": set(),
    "vllm-pr-24577.log": set(),
    "vllm-pr-29796.log": set(),
    "vllm-pr-39559.log": {'low-context-concurrency'},
    "vllm-pr-6234.log": set(),
    "xinference-issue-3481.log": set(),
}
# item -> a log on which it is decided (bundled sample first, else a corpus log)
DECIDED_ON: dict[str, str] = {
    "kv_cache": "qwen35-397b-nvfp4-tp8-fp8.log",
    "weights": "qwen35-397b-nvfp4-tp8-fp8.log",
    "context": "qwen35-397b-nvfp4-tp8-fp8.log",
    "length": "qwen35-397b-nvfp4-tp8-fp8.log",
    "chat_template": "qwen35-397b-nvfp4-tp8-fp8.log",
    "parsers": "dsv4_head.log",
    "generation": "repofile-53259568910.log",
}


def _report(path: Path) -> Report:
    s = session_of(iter_lines(str(path)), path.name)
    return s.report()


def _raised(r: Report) -> set[str]:
    """Every alert the log raises: the last run's and each earlier server start's."""
    return {a.rule for a in r.alerts} | {a.rule for run in r.runs for a in run.alerts}


def _path(name: str) -> Path:
    return SAMPLES / name if (SAMPLES / name).exists() else corpus_dir() / name


@pytest.mark.parametrize("name", sorted(SAMPLE_ALERTS))
def test_every_sample_raises_exactly_its_pinned_alerts(name):
    assert _raised(_report(SAMPLES / name)) == SAMPLE_ALERTS[name]


def test_every_sample_is_pinned():
    assert {p.name for p in SAMPLES.glob("*.log")} == set(SAMPLE_ALERTS)


@pytest.mark.parametrize("name", sorted(CORPUS_ALERTS))
def test_every_corpus_log_raises_exactly_its_pinned_alerts(name):
    path = corpus_dir() / name
    if not path.exists():
        pytest.skip("corpus not present")
    assert _raised(_report(path)) == CORPUS_ALERTS[name]


def test_every_corpus_log_is_pinned():
    if not corpus_dir().is_dir():
        pytest.skip("corpus not present")
    assert {p.name for p in corpus_dir().glob("*.log")} == set(CORPUS_ALERTS)


@pytest.mark.parametrize("key", [k for k, _ in ITEMS])
def test_every_checklist_item_is_decided_on_some_log(key):
    path = _path(DECIDED_ON[key])
    if not path.exists():
        pytest.skip("corpus not present")
    found = next(i for i in _report(path).accuracy if i.item == key)
    assert found.state != "unknown", (key, found)
    assert found.evidence is not None or key == "length"
