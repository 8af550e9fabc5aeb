"""One allocation as a given SGLang release would make it from a rest-memory figure.

Why from the rest memory: SGLang decides a byte budget (`avail - pre x (1 - mem_fraction)`),
then takes the recurrent state out of it (hybrids), then divides what is left by the cell. A
what-if that changes --mem-fraction-static or TP changes the rest memory; everything after it is
this function, so the CLI, the TUI and the inverse search all get the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kvtui.core.capacity.modelspec import ModelSpec
from kvtui.engines.sglang.cell import Cell
from kvtui.engines.sglang.sizing import mamba as mamba_rules
from kvtui.engines.sglang.sizing.args import SizingArgs
from kvtui.engines.sglang.sizing.families import Version

GIB = 1 << 30


def estimated_requests(tokens: int, context_len: int, version: Version | None = None) -> int:
    """clamp(int(tokens / context_len * 512), 2048, 4096): model_runner.py:1252-1261 (0.5.2),
    kv_cache_configurator.py:3123-3124 (0.5.23); the ceiling was 5120 up to 0.3.0
    (model_runner.py:373-381 in 0.2.15, :374-382 in 0.3.0; 4096 from 0.3.1, :388-397)."""
    ceiling = 5120 if version is not None and version <= (0, 3, 0) else 4096
    return min(max(int(tokens / context_len * 512), 2048), ceiling)


def _request_pool(est: int | None, user: int | None, version: Version) -> int | None:
    """The size of the request pool (ReqToTokenPool) the capacity line's cap is taken from.

    0.2.15-0.3.0: the estimate, never the user's --max-running-requests (the pool took the
    separate --max-num-reqs, model_runner.py:111-115 and :384-387 in 0.3.0); 0.3.1: the user's
    value or the estimate (:115-119, :399-401); 0.3.2-0.4.6: one slot more, a padding slot
    (`max_num_reqs + 1`, model_runner.py:402-403 in 0.3.2, :903-904 in 0.4.6.post5); from 0.4.7
    the value itself again (`size=max_num_reqs`, :933-934 in 0.4.7).
    """
    if version <= (0, 3, 0):
        return est
    pool = user if user is not None else est
    if pool is not None and (0, 3, 2) <= version <= (0, 4, 6):
        pool += 1
    return pool


def max_running_requests(tokens: int, context_len: int | None, version: Version, *,
                         user: int | None = None, attn_dp: int = 1,
                         mamba_cap: int | None = None) -> int | None:
    """The max_running_requests of the capacity line, by release.

    <= 0.5.9: min(tokens // 2 or user // dp, req pool size), the pool size being the estimate
    (or the user's value, `_request_pool`) capped by the Mamba slots (tp_worker.py:137-145 in
    0.5.2, model_runner.py:593-600 in 0.5.9); the user's value is divided by the DP size from
    0.4.2 (tp_worker.py:101-108 in 0.4.2; 0.4.1 :92-98 takes it whole), and up to 0.3.0 the cap
    is one below the pool (`req_to_token_pool.size - 1`, tp_worker.py:126-133 in 0.3.0).
    0.5.10-0.5.13: min(user // dp, estimate) or min(estimate, tokens // 2), then the Mamba cap
    (model_runner_kv_cache_mixin.py:840-860 in 0.5.10).
    0.5.14+: min(user // dp, tokens // 2) or min(estimate, tokens // 2), then the Mamba cap
    (mixin :983-1006 in 0.5.14; kv_cache_configurator.py:3119-3160 in 0.5.23).
    """
    if tokens <= 0:
        return 0
    dp = max(1, attn_dp)
    if not context_len and user is None:
        return None
    est = estimated_requests(tokens, context_len, version) if context_len else None
    cap = mamba_cap
    if version <= (0, 5, 9):
        pool = _request_pool(est, user, version)
        if pool is None:
            # <= 0.3.0 with no context length: the pool is unknown, but the estimate is at
            # least 2048, so a user's value below it is the cap as given
            return user if user is not None and user < 2048 else None
        if cap is not None:
            pool = min(pool, cap)
        if version <= (0, 3, 0):
            pool -= 1
        first = tokens // 2 if user is None else (user // dp if version >= (0, 4, 2) else user)
        return min(first, pool)
    if user is not None:
        per_worker = max(1, user // dp) if version >= (0, 5, 23) else user // dp
        reqs = min(per_worker, est) if version <= (0, 5, 13) and est is not None else min(
            per_worker, tokens // 2)
    else:
        assert est is not None
        reqs = min(est, tokens // 2)
    return min(reqs, cap) if cap is not None else reqs


@dataclass
class Allocation:
    """What SGLang would allocate on one GPU for one rest-memory figure."""

    rest_bytes: int
    kv_bytes: int
    tokens: int | None
    swa_tokens: int | None = None
    mamba: mamba_rules.MambaSplit | None = None
    slot: mamba_rules.StateSlot | None = None
    max_running_requests: int | None = None
    slots_per_request: int | None = None
    lines: list[str] = field(default_factory=list)
    does_not_fit: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"rest_bytes": self.rest_bytes, "rest_gib": round(self.rest_bytes / GIB, 3),
                "kv_bytes": self.kv_bytes, "kv_gib": round(self.kv_bytes / GIB, 3),
                "tokens": self.tokens, "swa_tokens": self.swa_tokens,
                "mamba": self.mamba.to_dict() if self.mamba else None,
                "max_running_requests": self.max_running_requests,
                "slots_per_request": self.slots_per_request,
                "does_not_fit": self.does_not_fit, "work": list(self.lines)}


def allocate(rest_bytes: int, cell: Cell, spec: ModelSpec | None, args: SizingArgs,
             version: Version, *, page_size: int = 1, context_len: int | None = None,
             attn_dp: int = 1, kind: str | None = None, slot: mamba_rules.StateSlot | None = None,
             fixed_slots: int | None = None, max_total_tokens: int | None = None) -> Allocation:
    """Split `rest_bytes` like `version` does: state first (hybrids), then the KV pool(s).

    `fixed_slots`: the logged Mamba slot count, used as is when the settings are the log's.
    """
    page = max(1, page_size)
    lines: list[str] = []
    split = None
    kv = rest_bytes
    arch = spec.arch if spec is not None else ""
    if kind is not None and slot is not None:
        if fixed_slots is not None:
            state = mamba_rules.logged_state_bytes(fixed_slots, slot.per_slot, version, args,
                                                   attn_dp, kind, arch, page)
            split = mamba_rules.MambaSplit(fixed_slots, state, "as logged")
        else:
            split = mamba_rules.split(rest_bytes, slot, args, version, kind, arch, attn_dp, page)
        kv = rest_bytes - split.state_bytes
        lines.append(f"state: {split.slots} slots ({split.rule}) = "
                     f"{split.state_bytes / GIB:.3f} GiB; KV gets {kv / GIB:.3f} GiB")
    if kv <= 0:
        return Allocation(rest_bytes, kv, None, mamba=split, slot=slot, lines=lines,
                          does_not_fit="no memory left for the KV pool")
    swa_tokens = None
    if cell.swa is not None:
        tokens, swa_tokens = cell.swa.tokens(kv, page)
    else:
        tokens = kv // cell.bytes_per_token // page * page
    if max_total_tokens is not None and tokens > max_total_tokens:
        # --max-total-tokens caps the profiled value (model_runner.py:1288-1295 in 0.5.2)
        lines.append(f"--max-total-tokens {max_total_tokens} caps the pool")
        tokens = max_total_tokens // page * page
    ratio = None
    cap = None
    if split is not None and kind is not None:
        ratio, why = mamba_rules.slots_per_request(args, version, arch, kind, page)
        cap = split.slots // ratio
        lines.append(f"max_running_requests <= {split.slots} // {ratio} = {cap} ({why})")
    reqs = max_running_requests(tokens, context_len, version, user=args.max_running_requests,
                                attn_dp=attn_dp, mamba_cap=cap)
    return Allocation(rest_bytes, kv, tokens, swa_tokens, split, slot, reqs, ratio, lines)
