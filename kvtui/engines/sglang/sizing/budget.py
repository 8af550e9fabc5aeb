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


def estimated_requests(tokens: int, context_len: int) -> int:
    """clamp(int(tokens / context_len * 512), 2048, 4096): model_runner.py:1252-1261 (0.5.2),
    kv_cache_configurator.py:3123-3124 (0.5.23)."""
    return min(max(int(tokens / context_len * 512), 2048), 4096)


def max_running_requests(tokens: int, context_len: int | None, version: Version, *,
                         user: int | None = None, attn_dp: int = 1,
                         mamba_cap: int | None = None) -> int | None:
    """The max_running_requests of the capacity line, by release.

    <= 0.5.9: min(tokens // 2 or user // dp, req pool size), the pool size being the estimate
    (or the user's value) capped by the Mamba slots (tp_worker.py:137-145 in 0.5.2,
    model_runner.py:593-600 in 0.5.9).
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
    est = estimated_requests(tokens, context_len) if context_len else None
    cap = mamba_cap
    if version <= (0, 5, 9):
        pool = user if user is not None else est
        assert pool is not None
        if cap is not None:
            pool = min(pool, cap)
        first = tokens // 2 if user is None else user // dp
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
