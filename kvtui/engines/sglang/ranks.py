"""What SGLang's rank tags prove beyond their index: a degree is tagged only when it exceeds 1.

The scheduler builds its log prefix from the start's configuration: `DPn` when it has a DP rank,
`PPn` only when pp_size > 1, `TPn` only when tp_size > 1 (from 0.4.7, managers/scheduler.py
:2461-2462; 0.4.6 :1988 tagged `TP{tp_rank}` always), `EPn` only when ep_size > 1 (0.5.6
managers/scheduler.py:2609-2618, 0.5.9 :3085-3096, 0.5.23 :6280-6291). The PP part exists from
0.4.7, EP from 0.4.10, ATTN_CP and MOE_DP from 0.5.9 (sglang-log-lines.md 1), so a tag with one
of them dates the log 0.4.7+ by itself. No other server process tags its lines.
bench_one_batch, which runs the model runner alone, tags every line `TP{tp_rank}` whatever
tp_size is (0.5.9 bench_one_batch.py:467, :660), so a TP tag proves TP >= 2 only on a line the
scheduler printed: a batch line, or a tag that also carries a part only the scheduler adds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kvtui.core.engine import Run

from kvtui.engines.sglang.version import infer_version

# The first release whose scheduler tags TP only when tp_size > 1 (sglang-log-lines.md 1).
TP_TAG_IF_SIZED = (0, 4, 7)
# Kinds only the scheduler logs (its batch statistics), never bench_one_batch.
_SCHEDULER_KINDS = frozenset({"prefill_batch", "decode_batch"})
_SCHEDULER_PARTS = ("DP", "PP", "ATTN_CP", "MOE_DP", "EP")
# Tag parts no release before 0.4.7 prints.
_NEW_PARTS = ("PP", "ATTN_CP", "MOE_DP", "EP")


def _tagged(ranks: Any, name: str) -> bool:
    return any(tok.startswith(name) and tok[len(name):].isdigit()
               for r in ranks for tok in str(r).split())


# Kinds of lines the scheduler process prints (its model runner's start-up and its batch
# statistics), which it would tag `TPn` at tp_size > 1: the launcher's own lines (the args
# dump, the tokenizer's) carry no tag at any size (sglang-log-lines.md 1).
_SCHEDULER_LINES = frozenset({"load_weight_begin", "load_weight_end", "kv_pool", "capacity",
                              "memory_pool_end", "cuda_graph_begin", "cuda_graph_end",
                              "prefill_batch", "decode_batch"})


def tag_floors(run: Run) -> dict[str, tuple[int, str]]:
    """{degree: (least size, why)} for each degree (TP, PP, EP) whose tag on this run proves
    it exceeds 1; a degree left out proves only its index + 1. TP maps to (1, why) when the
    run's scheduler lines carry no TP tag on a release that tags TP only when tp_size > 1:
    then TP is 1 (`kvtui.core.deployment.layout` says it is inferred)."""
    ranks = tuple(run.ranks)
    out: dict[str, tuple[int, str]] = {}
    for name, flag in (("PP", "pp_size"), ("EP", "ep_size")):
        if _tagged(ranks, name):
            out[name] = (2, f"SGLang's scheduler tags {name} only when {flag} > 1")
    if not _tagged(ranks, "TP"):
        # (not behind a wrapper that replaced SGLang's head and its tags: `ts:envelope`)
        if (_SCHEDULER_LINES & set(run.kinds_seen)
                and "ts:envelope" not in run.hints
                and infer_version(run).lo >= TP_TAG_IF_SIZED):
            out["TP"] = (1, "SGLang's scheduler lines carry no TP tag, which 0.4.7+ prints "
                            "whenever tp_size > 1 (managers/scheduler.py:2461-2462 in 0.4.7)")
        return out
    scheduler = bool(_SCHEDULER_KINDS & set(run.kinds_seen)) or any(
        _tagged(ranks, part) for part in _SCHEDULER_PARTS)
    dated = any(_tagged(ranks, part) for part in _NEW_PARTS) or (
        infer_version(run).lo >= TP_TAG_IF_SIZED)
    if scheduler and dated:
        out["TP"] = (2, "SGLang's scheduler tags TP only when tp_size > 1 (0.4.7+)")
    return out
