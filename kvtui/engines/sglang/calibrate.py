"""Logged pool size vs computed cell: does the model spec explain what SGLang allocated?

Why calibrate instead of trusting the spec: a preset can be the wrong size of a family, the TP
guess can be wrong under DP-attention, a draft model can share the pool. The pool line is ground
truth (to 0.01 GiB), so every number the what-if prints is first checked against it, and when it
does not fit, the most likely wrong assumption is named rather than hidden.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from kvtui.core.capacity.modelspec import FULL, ModelSpec
from kvtui.core.capacity.parallel import Parallel
from kvtui.engines.sglang.cell import GIB, Cell, kv_cell, pool_rows
from kvtui.engines.sglang.sizing.args import SizingArgs
from kvtui.engines.sglang.version import NEWEST

TOLERANCE = 0.02
ROUNDING_GIB = 0.005  # each printed GiB figure is rounded to 2 decimals
EDGE_GIB = 1e-4  # float formatting right at a .xx5 boundary can go either way


def measured(tokens: int, page_size: int, k_gib: float | None, v_gib: float | None,
             kv_gib: float | None) -> dict[str, float] | None:
    """Bytes per token the pool line implies, with the interval its rounding allows."""
    if not tokens:
        return None
    parts = [x for x in ((kv_gib,) if kv_gib is not None else (k_gib, v_gib)) if x is not None]
    if not parts:
        return None
    rows = pool_rows(tokens, page_size)
    total = sum(parts)
    if not total:
        # Printed as 0.00 GB (`{k_size_GB:.2f}`, 0.5.9 mem_cache/memory_pool.py:652): under
        # 0.005 GiB, no figure per token.
        return None
    slack = (ROUNDING_GIB + EDGE_GIB) * len(parts)
    return {
        "bytes_per_token": total * GIB / rows,
        "lo": max(0.0, total - slack) * GIB / rows,
        "hi": (total + slack) * GIB / rows,
        "gib": total,
    }


def compare(meas: dict[str, float], cell: Cell, printed_bytes: int | None = None) -> dict[str, Any]:
    """Ratio measured / computed; `within_rounding` when the computed cell reproduces the line.

    `printed_bytes`: what the pool line prints per row for this release (scales, DSA indexer
    and draft layers differ between the budget cell and the printed sizes), so the comparison
    is like with like."""
    computed = printed_bytes if printed_bytes is not None else cell.k_bytes + cell.v_bytes
    ratio = meas["bytes_per_token"] / computed if computed else float("nan")
    within = meas["lo"] <= computed <= meas["hi"]
    return {
        "measured_bytes_per_token": round(meas["bytes_per_token"], 1),
        "computed_bytes_per_token": computed,
        "ratio": round(ratio, 4),
        "ratio_interval": [round(meas["lo"] / computed, 4), round(meas["hi"] / computed, 4)]
        if computed else None,
        "within_rounding": within,
        "ok": within or abs(ratio - 1) <= TOLERANCE,
    }


def diagnose(spec: ModelSpec, dtype: str, par: Parallel, meas: dict[str, float], *,
             swa_pool: bool = False, version: tuple[int, int, int] = NEWEST,
             args: SizingArgs | None = None,
             printed: Callable[[Cell], int] | None = None) -> str | None:
    """Name the assumption that most likely differs, by testing the usual suspects one by one.

    `printed`: what the pool line prints per row for a cell (as `compare` takes it), so each
    suspect is held against the line like with like: an FP8 DSA pool prints 656 B per layer
    and its indexer keys, neither of which the cell's K and V bytes hold."""
    candidates: list[tuple[str, Cell]] = []
    kw: dict[str, Any] = {"version": version, "args": args}
    for other in ("bf16", "fp8_e4m3"):
        if other != dtype and not (dtype in ("fp16", "bf16") and other == "bf16"):
            candidates.append((f"the KV dtype is {other}, not {dtype}",
                               kv_cell(spec, other, par, swa_pool=swa_pool, **kw)))
    for tp in (1, 2, 4, 8, 16, 32):
        if tp != par.attn_tp:
            alt = Parallel(tp=tp)
            candidates.append((f"attention TP is {tp}, not {par.attn_tp} (a different --tp, or "
                               "DP-attention dividing it)", kv_cell(spec, dtype, alt,
                                                                    swa_pool=swa_pool, **kw)))
    if spec.is_hybrid_linear or spec.has_swa:
        alt_spec = replace(spec, layer_kinds=(FULL,) * spec.num_layers)
        candidates.append(("every layer holds KV (the layer layout differs from the spec)",
                           kv_cell(alt_spec, dtype, par, **kw)))
    if spec.has_swa:
        candidates.append(("the sliding-window layers are in a separate SWA pool" if not swa_pool
                           else "the sliding-window layers are sized like full ones",
                           kv_cell(spec, dtype, par, swa_pool=not swa_pool, **kw)))
    if spec.hidden_size and not spec.is_mla and \
            spec.hidden_size // spec.num_attention_heads != spec.head_dim:
        hd = spec.hidden_size // spec.num_attention_heads
        alt_spec = replace(spec, head_dim=hd, v_head_dim=hd)
        candidates.append((f"head_dim is {hd} (hidden/heads), not {spec.head_dim}",
                           kv_cell(alt_spec, dtype, par, swa_pool=swa_pool, **kw)))
    if spec.nextn_layers:
        base = kv_cell(spec, dtype, par, swa_pool=swa_pool, **kw)
        bumped = base.k_bytes + base.v_bytes
        bumped += int(bumped * spec.nextn_layers / max(1, base.layers))
        candidates.append((f"a draft (MTP/EAGLE) model's {spec.nextn_layers} layer(s) share the "
                           "pool", replace(base, k_bytes=bumped, v_bytes=0)))
    best: tuple[float, str] | None = None
    for why, cell in candidates:
        computed = printed(cell) if printed is not None else cell.k_bytes + cell.v_bytes
        if not computed:
            continue
        err = abs(meas["bytes_per_token"] / computed - 1)
        if err <= TOLERANCE and (best is None or err < best[0]):
            best = (err, why)
    if best:
        return (f"likely: {best[1]} (that assumption reproduces the logged pool within "
                f"{best[0]:.1%})")
    return ("no single usual suspect (dtype, TP, layers counted, head_dim, draft layers) explains "
            "it: the model is probably a different size than the spec")
