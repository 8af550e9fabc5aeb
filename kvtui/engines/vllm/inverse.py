"""vLLM's inverse what-if: what would N requests of L tokens in a dtype take (blocks, GiB per
GPU, the --gpu-memory-utilization, --kv-cache-memory-bytes or TP that fits them)?

Why a module apart from the calculator: the calculator is vLLM's sizer (what the pool holds at a
setting); this module only asks it, at the setting asked about and at others, and searches TP
through the core (`kvtui.core.capacity.inverse.smallest_tp`). It reads the calculator through
`sizer.Sizer`, so it does not import the calculator that calls it.
"""

from __future__ import annotations

import math
from typing import Any

from kvtui.core.capacity.inverse import smallest_tp
from kvtui.core.report_types import Inverse
from kvtui.engines.vllm import kvbytes
from kvtui.engines.vllm.sizer import Sizer
from kvtui.engines.vllm.sizing import GIB

MAX_UTILIZATION = 0.95  # beyond this CUDA graphs and activations rarely fit


def inverse(calc: Sizer, dtype: str, context_len: int, concurrency: float, *,
            tp: int | None = None, mem_fraction_static: float | None = None) -> Inverse:
    """What `concurrency` requests of `context_len` tokens in `dtype` would take: blocks,
    GiB per GPU, the --gpu-memory-utilization or the TP that fits them, at the logged
    setting or at `tp` / the memory knob's value `mem_fraction_static` (the what-if pane's
    target, `kvtui whatif --target-tp / --mem-fraction-static`).

    The per-request arithmetic is the table's (`Layout.blocks_per_request`: a full group's
    blocks for the length, a window's, one state block per Mamba group), and the tokens are
    in the table's unit (`Layout.tokens`, the "GPU KV cache size" this release prints for
    those blocks), so N requests the table says fit are N the inverse says fit."""
    tp = tp if tp not in (None, calc.parallel.tp) else None
    knob = mem_fraction_static if mem_fraction_static != calc.knob_now() else None
    lay = calc.layout(dtype, tp)
    out: dict[str, Any] = {"dtype": dtype, "context_len": context_len,
                           "concurrency": concurrency}
    if tp is not None:
        out["tp_target"] = tp
    if knob is not None:
        name = calc.memory_knob().name
        out[f"{name}_target"] = int(knob) if name == kvbytes.NAME else knob
    have, _ = calc.tokens_for(dtype, tp, knob)
    budget, basis, estimate = calc.budget_bytes(tp, knob)
    if calc.unmodelled:
        out["tokens_available"] = have
        out["note"] = calc.unmodelled
        return Inverse.of(**out)
    if lay is not None and budget is None:
        # the setting cannot be sized (another utilization without the GPU's memory):
        # what the requests take is still the table's, whether they fit is not known
        blocks = math.ceil(concurrency * lay.blocks_per_request(context_len,
                                                                calc.max_batched))
        out["tokens_available"] = have
        out["blocks_needed"] = blocks
        out["tokens_needed"] = lay.tokens(blocks, calc.context_len, calc.max_batched)
        out["kv_gib_needed"] = round(blocks * lay.block_bytes / GIB, 2)
        out["fits_now"] = False
        out["note"] = basis
        return Inverse.of(**out)
    if lay is None or budget is None:
        if calc.tokens_below_concurrency() or calc.hybrid_unsized():
            return _hybrid_inverse(calc, out, dtype, context_len, concurrency, tp, knob, have)
        need = math.ceil(context_len * concurrency)
        conc = calc.concurrency(dtype, [context_len], tp, knob).get(str(context_len))
        if have is None and conc is not None:
            # no pool size, but vLLM's own concurrency (the table quotes it)
            out["tokens_needed"] = need
            out["tokens_available"] = None
            out["fits_now"] = concurrency <= conc
            out["note"] = (f"the log prints no pool size: vLLM's logged concurrency "
                           f"({conc:g} requests of {context_len:,}) answers")
            return Inverse.of(**out)
        out["tokens_needed"] = need
        out["tokens_available"] = have
        out["fits_now"] = have is not None and have >= need
        out["note"] = "no model spec or no pool size: tokens only"
        return Inverse.of(**out)
    blocks = math.ceil(concurrency * lay.blocks_per_request(context_len, calc.max_batched))
    need_bytes = blocks * lay.block_bytes
    out["tokens_available"] = have
    out["blocks_needed"] = blocks
    out["tokens_needed"] = lay.tokens(blocks, calc.context_len, calc.max_batched)
    out["bytes_per_token"] = round(need_bytes / max(1, out["tokens_needed"]), 1)
    out["kv_gib_needed"] = round(need_bytes / GIB, 2)
    out["kv_gib_available"] = round(budget / GIB, 2)
    missing = max(0, need_bytes - budget)
    out["missing_gib_per_gpu"] = round(missing / GIB, 2)
    out["fits_now"] = lay.blocks(budget) >= blocks
    out["estimate"] = estimate
    if calc.sized_by_bytes:
        # vLLM makes num_blocks = budget // block bytes: the least budget that gives the
        # blocks is their bytes (kv_cache_utils.py get_num_blocks)
        now = calc.knob_now()
        out["kv_cache_memory_bytes_current"] = int(now) if now is not None else None
        out["kv_cache_memory_bytes_needed"] = need_bytes
        out["kv_cache_memory_bytes_note"] = (
            "vLLM reserves it on every GPU without profiling: it must fit beside the "
            "weights, activations and CUDA graphs (the log's initial free memory)")
    else:
        _utilization_needed(calc, out, missing, knob)
    out["tp_needed"] = _tp_that_fits(calc, dtype, concurrency, context_len, knob)
    if out["tp_needed"] not in (None, calc.parallel.tp):
        out["tp_note"] = (f"the same {kvbytes.FLAG} per GPU" if calc.sized_by_bytes else
                          "estimate: weights per GPU re-sharded by TP" if calc.weights_gib
                          is not None else "estimate: the same KV bytes per GPU")
    return Inverse.of(**out)


def _hybrid_inverse(calc: Sizer, out: dict[str, Any], dtype: str, context_len: int,
                    concurrency: float, tp: int | None, knob: float | None,
                    have: int | None) -> Inverse:
    """A hybrid's pool without the model spec: a request does not take its length in
    tokens (`_tokens_below_concurrency`), so only the concurrency the table quotes (vLLM's
    own, logged) answers, and the tokens scale with it (vLLM's tokens are linear in the
    blocks, `Layout.tokens`)."""
    conc = calc.concurrency(dtype, [context_len], tp, knob).get(str(context_len))
    out["tokens_available"] = have
    if conc is None or not have:
        out["tokens_needed"] = None
        out["fits_now"] = False
        out["note"] = ("the pool is in several KV cache groups (a hybrid model) and the "
                       "log names no model: what requests of this length take is not "
                       "their tokens (pass --model)")
        return Inverse.of(**out)
    out["tokens_needed"] = math.ceil(have * concurrency / conc)
    out["fits_now"] = concurrency <= conc
    out["estimate"] = True
    out["note"] = (f"a hybrid's pool without the model spec: the tokens scaled by vLLM's "
                   f"logged concurrency ({conc:g} requests of {context_len:,} in "
                   f"{have:,} tokens), not requests x length")
    return Inverse.of(**out)


def _utilization_needed(calc: Sizer, out: dict[str, Any], missing: int,
                        target: float | None = None) -> None:
    """The utilization that adds `missing` bytes to the setting asked about (the logged
    utilization, or the target's)."""
    out["gpu_memory_utilization_current"] = calc.utilization
    base = calc.utilization if target is None else target
    if calc.extensible and missing > 0 and (base or 0) >= 1.0:
        out["gpu_memory_utilization_needed"] = None
        out["gpu_memory_utilization_feasible"] = False
        out["gpu_memory_utilization_note"] = (
            "the extensible KV cache (vLLM 0.34) at gpu_memory_utilization 1.0 already takes "
            "the memory measured free after warmup and CUDA graph capture: no utilization "
            "gives more")
        return
    if calc.extensible and calc.total_gib and base is not None:
        # the pool grows with the utilization only until the measured headroom binds
        # (extensible_kv_cache.py:616): 1.0 gives the most there is
        top = calc.extensible_delta(1.0)
        at = calc.extensible_delta(base) if target is not None else None
        gain = (top[0] if top is not None else 0) - (at[0] if at is not None else 0)
        util = base + missing / (calc.total_gib * GIB)
        feasible = missing <= gain
        out["gpu_memory_utilization_needed"] = (math.ceil(util * 10_000) / 10_000
                                                if feasible else None)
        out["gpu_memory_utilization_feasible"] = feasible
        out["total_gpu_gib"] = round(calc.total_gib, 2)
        out["gpu_memory_utilization_note"] = (
            "the extensible KV cache (vLLM 0.34) takes the memory measured free after "
            "warmup and CUDA graph capture, up to the utilization's share: "
            + ("raising it gives that" if feasible else
               f"at most {gain / GIB:.2f} GiB more at 1.0, short of "
               f"{missing / GIB:.2f} GiB"))
        return
    if calc.total_gib and base is not None:
        util = base + missing / (calc.total_gib * GIB)
        out["gpu_memory_utilization_needed"] = math.ceil(util * 10_000) / 10_000
        out["gpu_memory_utilization_feasible"] = (util <= MAX_UTILIZATION
                                                  or (target is None and not missing))
        out["total_gpu_gib"] = round(calc.total_gib, 2)
        if calc.total_basis:
            out["total_gpu_basis"] = calc.total_basis
    else:
        out["gpu_memory_utilization_needed"] = None
        out["gpu_memory_utilization_note"] = (
            f"raise --gpu-memory-utilization by {missing / GIB:.2f} GiB / the GPU's memory "
            "(the log does not print the GPU's total memory)")


def _tp_that_fits(calc: Sizer, dtype: str, concurrency: float, context_len: int,
                  knob: float | None = None) -> int | None:
    """The smallest TP from the logged one up that vLLM shards the model to and that holds
    the requests, at the memory knob asked about."""
    if calc.spec is None:
        return None

    def holds(tp: int) -> bool:
        lay = calc.layout(dtype, tp)
        budget, _, _ = calc.budget_bytes(None if tp == calc.parallel.tp else tp, knob)
        if lay is None or budget is None:
            return False
        need = math.ceil(concurrency * lay.blocks_per_request(context_len, calc.max_batched))
        return lay.blocks(budget) >= need

    return smallest_tp(calc.parallel.tp, calc.shardable_tp, holds)
