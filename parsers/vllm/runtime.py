"""vLLM's periodic runtime line and its preemption messages.

The stats line is vLLM's equivalent of SGLang's decode-batch line: one line every few seconds
with the running and waiting requests, the KV cache usage and the throughput of the interval.
- V1 (v1/metrics/loggers.py): "Engine 000: Avg prompt throughput: %.1f tokens/s, Avg
  generation throughput: %.1f tokens/s, Running: %d reqs, Waiting: %d reqs, [Preemptions: %d, ]
  GPU KV cache usage: %.1f%%, Prefix cache hit rate: %.1f%%" (0.8 without "Engine NNN: ";
  "Preemptions" from 0.14, counted over the interval: `_reset` in 0.33.0 loggers.py:149; the
  device name instead of "GPU" on other platforms from 0.30).
- V0 (engine/metrics.py): "Avg prompt throughput: %.1f tokens/s, Avg generation throughput:
  %.1f tokens/s, Running: %d reqs, Swapped: %d reqs, Pending: %d reqs, GPU KV cache usage:
  %.1f%%, CPU KV cache usage: %.1f%%."
- V0 preemption (core/scheduler.py:1485 in 0.6.3): "Sequence group %s is preempted by %s mode
  because there is not enough KV cache space. ... total_num_cumulative_preemption=%d".
"""

from __future__ import annotations

import math
from typing import Any

import regex

from parsers.catalogue import Format, Variant
from parsers.kinds import KIND_FIELDS
from parsers.vllm.releases import since, until

_NUM = r"\d+(?:\.\d+)?"
_STAT = regex.compile(
    rf"(Avg prompt throughput|Avg generation throughput|Running|Waiting|Pending|Swapped|"
    rf"Preemptions|CPU KV cache usage|[A-Z]+ KV cache usage|Prefix cache hit rate): "
    rf"({_NUM})(?: tokens/s| reqs|%)?")
_NAMES = {
    "Avg prompt throughput": "prompt_throughput", "Avg generation throughput": "gen_throughput",
    "Running": "running_req", "Waiting": "queue_req", "Pending": "queue_req",
    "Swapped": "swapped_req", "Preemptions": "preempted_reqs",
    "CPU KV cache usage": "cpu_token_usage", "Prefix cache hit rate": "prefix_cache_hit_rate",
}
_PERCENT = frozenset({"token_usage", "cpu_token_usage", "prefix_cache_hit_rate"})
_INTS = frozenset({"running_req", "queue_req", "swapped_req", "preempted_reqs"})


# The dominant V1 layout in one match (the bulk of a busy log); anything else (V0's Swapped and
# Pending, KV-fetch counts, cut lines) takes the general scan below.
_V1 = regex.compile(
    rf"Avg prompt throughput: ({_NUM}) tokens/s, Avg generation throughput: ({_NUM}) "
    rf"tokens/s, Running: (\d+) reqs, Waiting: (\d+) reqs, (?:Preemptions: (\d+), )?"
    rf"[A-Z]+ KV cache usage: ({_NUM})%(?:, Prefix cache hit rate: ({_NUM})%)?$")
_FIELDS = KIND_FIELDS["decode_batch"]


def _fast(msg: str, start: int) -> dict[str, Any] | None:
    m = _V1.match(msg, start)
    if m is None:
        return None
    prompt, gen, running, waiting, preempt, usage, hit = m.groups()
    fields: dict[str, Any] = dict.fromkeys(_FIELDS)
    fields.update(running_req=int(running), queue_req=int(waiting),
                  token_usage=round(float(usage) / 100, 6), gen_throughput=float(gen),
                  prompt_throughput=float(prompt))
    if preempt is not None:
        fields["preempted_reqs"] = int(preempt)
    if hit is not None:
        fields["prefix_cache_hit_rate"] = round(float(hit) / 100, 6)
    return fields


def parse_stats(msg: str) -> dict[str, Any] | None:
    """The fields of a stats line (from "Avg prompt throughput" on), or None."""
    start = msg.find("Avg prompt throughput: ", 0, 40)
    if start < 0:
        return None
    fast = _fast(msg.rstrip(), start)
    return fast if fast is not None else _scan(msg, start)


def _scan(msg: str, start: int) -> dict[str, Any] | None:
    """Every `label: value` of a stats line, whatever the layout."""
    fields: dict[str, Any] = dict.fromkeys(_FIELDS)
    seen = 0
    for m in _STAT.finditer(msg, start):
        label = m.group(1)
        name = _NAMES.get(label)
        if name is None:  # "<DEVICE> KV cache usage", the pool's usage
            name = "token_usage"
        raw = m.group(2)
        if name in _INTS:
            value: Any = int(float(raw))
        else:
            x = float(raw)
            if not math.isfinite(x):
                continue
            value = round(x / 100, 6) if name in _PERCENT else x
        if fields.get(name) is None:
            fields[name] = value
            seen += 1
    if fields["running_req"] is None and fields["token_usage"] is None:
        return None
    return fields


_PREEMPT = regex.compile(
    r"Sequence group \S+ is preempted by PreemptionMode\.(\w+) mode because there is not "
    r"enough KV cache space\.(?:.*?total_num_cumulative_preemption=(\d+))?")


def parse_preemption(msg: str) -> dict[str, Any] | None:
    m = _PREEMPT.match(msg)
    if m is None:
        return None
    fields: dict[str, Any] = dict.fromkeys(KIND_FIELDS["retraction"])
    fields.update({"retracted_reqs": 1, "wording": "preempted", "mode": m.group(1).lower(),
                   "cumulative": int(m.group(2)) if m.group(2) else None})
    return fields


# Speculative decoding, every stats interval: V1 "SpecDecoding metrics: Mean acceptance length:
# %.2f, Accepted throughput: %.2f tokens/s, Drafted throughput: %.2f tokens/s, Accepted: %d
# tokens, Drafted: %d tokens, Per-position acceptance rate: %s, Avg Draft acceptance rate:
# %.1f%%" (v1/spec_decode/metrics.py:96-104 in 0.10.2, :120-128 in 0.34.0; the per-position
# rates `, `-joined `:.3f`); V0 "Speculative metrics: Draft acceptance rate: %.3f, System
# efficiency: %.3f, Number of speculative tokens: %d, Number of accepted tokens: %d, Number of
# draft tokens: %d, Number of emitted tokens: %d." (engine/metrics.py:380-386 in 0.6.3).
_SPEC_V1 = regex.compile(
    rf"SpecDecoding metrics: Mean acceptance length: ({_NUM}), Accepted throughput: ({_NUM}) "
    rf"tokens/s, Drafted throughput: ({_NUM}) tokens/s, Accepted: (\d+) tokens, Drafted: (\d+) "
    rf"tokens, Per-position acceptance rate: ((?:{_NUM}(?:, )?)*?), Avg Draft acceptance rate: "
    rf"({_NUM})%")
_SPEC_V0 = regex.compile(
    rf"Speculative metrics: Draft acceptance rate: ({_NUM}), System efficiency: ({_NUM}), "
    rf"Number of speculative tokens: (\d+), Number of accepted tokens: (\d+), Number of draft "
    rf"tokens: (\d+), Number of emitted tokens: (\d+)")


def _ratio(raw: str) -> float | None:
    x = float(raw)
    return x if math.isfinite(x) else None


def parse_spec_decode(msg: str) -> dict[str, Any] | None:
    """The acceptance of a speculative-decoding metrics line, or None (a line cut before its
    acceptance rate is no metrics line: the rate is its last column)."""
    m = _SPEC_V1.match(msg)
    if m is not None:
        rate = _ratio(m.group(7))
        return {"accept_len": _ratio(m.group(1)),
                "accept_rate": None if rate is None else round(rate / 100, 6),
                "accepted_throughput": _ratio(m.group(2)),
                "drafted_throughput": _ratio(m.group(3)), "accepted_tokens": int(m.group(4)),
                "drafted_tokens": int(m.group(5)), "per_position": m.group(6) or None}
    m = _SPEC_V0.match(msg)
    if m is not None:
        return {"accept_len": None, "accept_rate": _ratio(m.group(1)),
                "system_efficiency": _ratio(m.group(2)), "spec_tokens": int(m.group(3)),
                "accepted_tokens": int(m.group(4)), "drafted_tokens": int(m.group(5)),
                "emitted_tokens": int(m.group(6))}
    return None


# --- the catalogue: the kinds this module parses, their layouts and releases -----------------
FORMATS: tuple[Format, ...] = (
    Format("decode_batch", ("Engine ", "Avg prompt throughput: "), None, (
        # v1/metrics/loggers.py prints "Engine %03d: " from 0.8.5; V0's metrics have "Swapped:".
        Variant("stats:engine", since("0.8.0"), "stats line with 'Engine NNN:' (V1, 0.8+)",
                "v1/metrics/loggers.py (0.8.5+)",
                "(APIServer pid=1) INFO 05-19 10:13:11 [loggers.py:271] Engine 000: Avg prompt "
                "throughput: 12068.8 tokens/s, Avg generation throughput: 734.9 tokens/s, "
                "Running: 18 reqs, Waiting: 33 reqs, GPU KV cache usage: 87.7%, Prefix cache "
                "hit rate: 62.1%", ("running_req", "queue_req", "token_usage")),
        Variant("stats:v0", until("0.10.2"), "stats line with 'Swapped:' (V0, <= 0.10)",
                "engine/metrics.py (V0)",
                "INFO 05-25 06:50:29 [metrics.py:486] Avg prompt throughput: 0.0 tokens/s, Avg "
                "generation throughput: 15.5 tokens/s, Running: 1 reqs, Swapped: 0 reqs, "
                "Pending: 2 reqs, GPU KV cache usage: 0.5%, CPU KV cache usage: 0.1%.",
                ("running_req", "swapped_req", "token_usage")),
        Variant("stats:v1", None, "stats line without 'Engine NNN:' (V1 0.8.0)",
                "v1/metrics/loggers.py (0.8 without 'Engine NNN: ')",
                "INFO 03-20 10:00:00 [loggers.py:80] Avg prompt throughput: 0.0 tokens/s, Avg "
                "generation throughput: 80.1 tokens/s, Running: 24 reqs, Waiting: 7 reqs, GPU KV "
                "cache usage: 99.1%, Prefix cache hit rate: 0.0%",
                ("running_req", "queue_req", "token_usage")),
    )),
    Format("retraction", ("Sequence group ",), None, (
        Variant("retraction:v0_preempted", None,
                "Sequence group %s is preempted by %s mode because there is not enough KV cache "
                "space. ... total_num_cumulative_preemption=%d",
                "core/scheduler.py:1485 (0.6.3)",
                "WARNING 10-17 09:00:00 scheduler.py:1485] Sequence group cmpl-7f3a is preempted "
                "by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. "
                "This can affect the end-to-end performance. Increase gpu_memory_utilization or "
                "tensor_parallel_size to provide more KV cache memory. "
                "total_num_cumulative_preemption=51", ("retracted_reqs", "cumulative")),
    )),
    Format("spec_decode", ("SpecDecoding metrics: ", "Speculative metrics: "), None, (
        Variant("spec_decode:v1", None,
                "SpecDecoding metrics: Mean acceptance length: .., Accepted throughput: .., ...",
                "v1/spec_decode/metrics.py:96-104 (0.10.2), :120-128 (0.34.0)",
                "(EngineCore_DP0 pid=9) INFO 05-01 10:01:00 [metrics.py:120] SpecDecoding "
                "metrics: Mean acceptance length: 2.74, Accepted throughput: 51.20 tokens/s, "
                "Drafted throughput: 87.90 tokens/s, Accepted: 512 tokens, Drafted: 879 tokens, "
                "Per-position acceptance rate: 0.812, 0.571, 0.357, Avg Draft acceptance rate: "
                "58.2%", ("accept_len", "accept_rate")),
        Variant("spec_decode:v0", None,
                "Speculative metrics: Draft acceptance rate: .., System efficiency: .., ...",
                "engine/metrics.py:380-386 (0.6.3)",
                "INFO 10-17 07:51:08 metrics.py:367] Speculative metrics: Draft acceptance rate: "
                "0.651, System efficiency: 0.570, Number of speculative tokens: 5, Number of "
                "accepted tokens: 3255, Number of draft tokens: 5000, Number of emitted tokens: "
                "3420.", ("accept_rate", "system_efficiency")),
    )),
)
