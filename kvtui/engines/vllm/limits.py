"""vLLM's cap on the requests running at once: `max_num_seqs`, as the log gives it or by default.

vLLM prints no capacity line with its cap (SGLang's `max_running_requests=` has no vLLM
counterpart), so the cap is the operator's `--max-num-seqs` when the log's arguments show it,
and otherwise vLLM's default, which depends on the engine, the release and the GPU. Read from
`vllm/engine/arg_utils.py` of each wheel:

- V0: `max_num_seqs: int = 256` (0.6.3 :115); from 0.8 the field defaults to None and the V0
  path sets 256 (`_set_default_args_v0`, 0.8.5 :1561-1563, 0.10.2 :1611-1613).
- V1: 1024 on a GPU with at least 70 GiB, else 256 (`_set_default_args_v1`, 0.8.5
  :1596-1621); from 0.10.2 an A100 takes the 256 tier whatever its memory (0.10.2 :1669,
  0.14.0 `get_batch_defaults` :1846, 0.33.0 :2984-2987, which also keeps a GB10 there; its
  >= 160 GiB tier, 0.28.0 :2582 / 0.33.0 :2973, is 1024 too). From 0.10.2 the default is capped
  at max_num_batched_tokens (0.10.2 :1740-1743, 0.14.0 :2023-2025, 0.33.0 :3232-3234), and from
  0.22.0 `--performance-mode throughput` doubles it first (0.22.0 :2508-2512, 0.33.0
  :3184-3188). A CPU build uses 128 x world size for the API server (0.10.2 :1706-1714).
- V1 before 0.8 (opt-in in 0.7) was not read: no default is claimed for it.

The log does not say which GPU it ran on, so on V1 the default is one of two values.
"""

from __future__ import annotations

from typing import Any

from kvtui.core.releases import Version, VersionRange
from kvtui.core.report_types import RunningLimit
from kvtui.core.values import as_int
from kvtui.engines.vllm.fromrun import v0_engine

NAME = "max_num_seqs"
RULE = ("vLLM's default: 256 on the V0 engine; on V1 1024 on GPUs with at least 70 GiB (not "
        "A100, from 0.10.2), else 256, capped at max_num_batched_tokens (0.10.2+) and doubled "
        "by --performance-mode throughput (0.22+)")

_V1_FIRST: Version = (0, 7, 0)  # V1 appeared (opt-in)
_V1_READ: Version = (0, 8, 0)  # the first V1 default read (0.8.5); V1 was opt-in in 0.7
_V1_ONLY: Version = (0, 11, 0)  # V0's engine is absent from the 0.11.0 wheel
_CAPPED: Version = (0, 10, 2)  # min(default, max_num_batched_tokens)
_THROUGHPUT: Version = (0, 22, 0)  # --performance-mode throughput doubles the default
_V0_DEFAULT = 256
_V1_TIERS = (256, 1024)


def running_limit(run: Any, vr: VersionRange) -> RunningLimit:
    """The run's max_num_seqs: logged, vLLM's default (when the log lists every argument the
    operator gave and this one is not among them), or not known."""
    sa = run.server_args or {}
    logged = as_int(sa.get("max_running_requests"))  # max_num_seqs (parsers/vllm/args.py)
    if logged is not None:
        return RunningLimit(NAME, logged, "logged")
    if not run.args_complete:
        return RunningLimit(NAME, None, "not logged")
    found = defaults(run, vr)
    if len(found) == 1:
        return RunningLimit(NAME, found[0], "default", rule=RULE)
    return RunningLimit(NAME, None, "default", found, RULE)


def defaults(run: Any, vr: VersionRange) -> tuple[int, ...]:
    """The values vLLM's default max_num_seqs can take for this run's engine and releases
    (empty when the releases it allows were not read)."""
    sa = run.server_args or {}
    v0 = v0_engine(run) or vr.hi < _V1_FIRST
    v1 = "engine:v1" in run.hints or vr.lo >= _V1_ONLY
    return _values(vr, v0=v0, v1=v1, performance_mode=sa.get("performance_mode"),
                   batched=as_int(sa.get("max_num_batched_tokens")))


def plan_defaults(vr: VersionRange) -> tuple[int, ...]:
    """The values vLLM's default max_num_seqs can take in a planned deployment of the releases
    `vr` (its engine: V1, the default from 0.8, `VLLM_USE_V1`; V0 before), with vLLM's own
    max_num_batched_tokens (2048 / 8192 for the API server, which caps neither tier:
    engine/arg_utils.py:1605-1623 and :1676-1679 in 0.11.0)."""
    v0 = vr.hi < _V1_READ
    return _values(vr, v0=v0, v1=not v0, performance_mode=None, batched=None)


def _values(vr: VersionRange, *, v0: bool, v1: bool, performance_mode: Any,
            batched: int | None) -> tuple[int, ...]:
    out: set[int] = set()
    if not v1:
        out.add(_V0_DEFAULT)
    if not v0 and vr.hi >= _V1_READ:
        tiers = list(_V1_TIERS)
        if performance_mode == "throughput" and vr.hi >= _THROUGHPUT:
            doubled = [2 * t for t in tiers]
            tiers = doubled if vr.lo >= _THROUGHPUT else tiers + doubled
        if batched is not None and vr.hi >= _CAPPED:
            capped = [min(t, batched) for t in tiers]
            tiers = capped if vr.lo >= _CAPPED else tiers + capped
        out.update(tiers)
    return tuple(sorted(out))
