"""The Facts pane says where each fact came from: the log, /metrics, the checkpoint."""

from __future__ import annotations

import dataclasses

from kvtui.core.checkpoint.facts import CheckpointFacts
from kvtui.ui.metrics import metrics_facts
from kvtui.ui.panes import facts_text
from kvtui.ui.provenance import checkpoint_read, item_sources
from tests.metrics.conftest import sample
from tests.metrics.recorded import SGLANG, VLLM, snapshots
from tests.metrics.test_cross import report


def _line(text: str, start: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(start))


def test_log_facts_are_tagged_log():
    text = facts_text(report("llama31-8b-retraction.log")).plain
    for start in ("Capacity", "Weights", "Pools", "Runtime"):
        assert _line(text, start).endswith("· log"), start
    assert "· checkpoint" not in text and "· metrics" not in text


def test_checklist_items_read_with_a_checkpoint_say_so():
    log = report("llama31-8b-retraction.log")
    assert not checkpoint_read(log)
    read = CheckpointFacts(source="/models/llama", has_config=True,
                           model_config={"architectures": ["LlamaForCausalLM"]})
    with_ck = dataclasses.replace(log, checkpoint=read.to_dict())
    assert checkpoint_read(with_ck)
    sources = {it.item: item_sources(it, with_ck) for it in with_ck.accuracy}
    assert sources["weights"] == ("log", "checkpoint")
    assert sources["context"] == ("log", "checkpoint")
    assert sources["chat_template"] == ("log",)
    # looked for and not found: nothing of it was read, the facts are the log's alone
    missing = dataclasses.replace(log, checkpoint=CheckpointFacts(
        source=None, model_path="/models/llama").to_dict())
    assert {item_sources(it, missing) for it in missing.accuracy} == {("log",)}
    assert "log + checkpoint" in facts_text(with_ck).plain


def test_metrics_facts_are_tagged_metrics():
    line = metrics_facts(snapshots([sample(VLLM)]))
    assert line is not None
    assert line.plain.startswith("Metrics   vllm  KV dtype auto  full 342,803 tokens at 0%")
    assert line.plain.rstrip().endswith("· metrics")
    sg = metrics_facts(snapshots([sample(SGLANG)]))
    assert sg is not None and "mamba at 0%" in sg.plain and "≈7,261 B/token" in sg.plain
    assert metrics_facts(None) is None and metrics_facts([]) is None
