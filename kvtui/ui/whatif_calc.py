"""The what-if pane's arithmetic: the log's deployment next to the one the user is typing.

Why this sits in ui/: it is the glue between the pane's inputs and the core calculator. The cell
size (bytes per token per GPU) always comes from `kvtui.core.capacity.cell.kv_cell`, and the
budget follows SGLang's own rule (sglang-log-lines.md 8.1):
`rest = avail_after_weights - pre_load * (1 - mem_fraction_static)`, `tokens = rest // cell`.
The budget inputs are read from the same log (weights, "Load weight begin"), so the current
column is the log's own figures and the target column changes only what the user changed.
When the core grows a complete interactive what-if (`capacity.interactive_whatif`), it is used
instead. No Textual import: tests call `compute` directly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

GIB = 1 << 30
DTYPES = ("bf16", "fp8_e4m3", "fp8_e5m2", "mxfp8", "nvfp4", "fp4_mx_block16")


@dataclass
class WhatIfInputs:
    dtype: str = "bf16"
    tp: int | None = None
    mem_fraction: float | None = None
    contexts: list[int] = field(default_factory=lambda: [8192, 32768, 131072])
    concurrency: int | None = None
    preset: str | None = None  # preset id; None = the one matching the log's model
    config_path: str | None = None


@dataclass
class WhatIfResult:
    rows: list[tuple[str, str, str]] = field(default_factory=list)  # label, current, target
    flag: str = ""
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    model: str = ""
    target_tokens: int | None = None
    current_tokens: int | None = None


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def max_running(tokens: int, context_len: int, user: int | None = None) -> int:
    """SGLang's default cap on concurrent requests (sglang-log-lines.md 8.6)."""
    est = min(max(int(tokens / max(1, context_len) * 512), 2048), 4096)
    if user is None:
        return min(tokens // 2, est)
    return min(user, tokens // 2)


def resolve_spec(report: dict[str, Any], inputs: WhatIfInputs) -> tuple[Any, str]:
    """(ModelSpec, where it came from) or (None, why not)."""
    from kvtui.core.capacity import modelspec, presets

    if inputs.config_path:
        try:
            return modelspec.from_path(inputs.config_path), f"config {inputs.config_path}"
        except Exception as exc:
            return None, f"cannot read {inputs.config_path}: {exc}"
    pid = inputs.preset
    how = "picked preset"
    if not pid:
        model = report.get("model") or {}
        for name in (model.get("path"), model.get("served_name")):
            found = presets.match_preset(name) if name else None
            if found:
                pid, how = found
                break
    if not pid:
        return None, "no preset matches the log's model: pick one or give a config.json"
    try:
        return presets.preset_spec(pid), how
    except Exception as exc:
        return None, f"preset {pid}: {exc}"


def compute(report: dict[str, Any] | None, inputs: WhatIfInputs) -> WhatIfResult:
    res = WhatIfResult()
    r = report or {}
    try:
        from kvtui.core import capacity

        interactive = getattr(capacity, "interactive_whatif", None)
        if callable(interactive):
            return _from_core(interactive(r, inputs))
    except Exception:  # fall back to the local arithmetic below
        pass
    try:
        return _compute(r, inputs, res)
    except Exception as exc:
        res.error = f"what-if failed: {type(exc).__name__}: {exc}"
        return res


def _from_core(obj: Any) -> WhatIfResult:
    if isinstance(obj, WhatIfResult):
        return obj
    res = WhatIfResult()
    if isinstance(obj, dict):
        res.rows = [tuple(map(str, row)) for row in obj.get("rows", [])]  # type: ignore[misc]
        res.flag = str(obj.get("flag") or "")
        res.notes = [str(n) for n in obj.get("notes", [])]
        res.error = obj.get("error")
    return res


def _compute(r: dict[str, Any], inputs: WhatIfInputs, res: WhatIfResult) -> WhatIfResult:
    from kvtui.core import dtypes
    from kvtui.core.capacity.cell import Parallel, kv_cell

    spec, how = resolve_spec(r, inputs)
    if spec is None:
        res.error = how
        return res
    res.model = f"{spec.name} ({how})"
    kv = r.get("kv_cache") or {}
    par = r.get("parallel") or {}
    cap = r.get("capacity") or {}
    w = r.get("weights") or {}
    sa = r.get("server_args") or {}
    pools = [p for p in r.get("pools") or [] if p.get("kind") != "mamba"]

    cur_dtype = dtypes.normalize(kv.get("effective_dtype")) or "bf16"
    if cur_dtype == "auto":
        cur_dtype = "bf16"
    cur_tp = int(par.get("tp") or 1)
    attn_dp = int(par.get("attn_dp") or 1)
    pp = int(par.get("pp") or 1)
    cur_mf = _num(sa.get("mem_fraction_static"))
    cur_tokens = cap.get("max_total_num_tokens") or (pools[0].get("tokens") if pools else None)
    context_len = int(cap.get("context_len") or spec.max_position_embeddings or 131072)
    swa_pool = any(p.get("label") in ("Full", "SWA") for p in pools) or bool(
        cap.get("swa_split") if isinstance(cap, dict) else None)

    tgt_dtype = inputs.dtype
    tgt_tp = inputs.tp or cur_tp
    tgt_mf = inputs.mem_fraction if inputs.mem_fraction is not None else cur_mf

    cell_cur = kv_cell(spec, cur_dtype, Parallel(tp=cur_tp, attn_dp=attn_dp, pp=pp),
                       swa_pool=swa_pool)
    cell_tgt = kv_cell(spec, tgt_dtype, Parallel(tp=tgt_tp, attn_dp=attn_dp, pp=pp),
                       swa_pool=swa_pool)
    cb: float = cell_cur.bytes_per_token
    tb: float = cell_tgt.bytes_per_token
    if cell_cur.swa is not None:
        cb = cell_cur.swa.full_bytes + cell_cur.swa.swa_bytes * cell_cur.swa.ratio
    if cell_tgt.swa is not None:
        tb = cell_tgt.swa.full_bytes + cell_tgt.swa.swa_bytes * cell_tgt.swa.ratio

    avail_after = _num(w.get("min_avail_gib")) or _num(w.get("avail_gib"))
    pre = _num(w.get("min_avail_before_gib")) or _num(w.get("avail_before_gib"))
    usage = _num(w.get("max_usage_gib")) or _num(w.get("usage_gib"))
    notes: list[str] = []
    if cur_mf is None:
        cur_mf = 0.85 if tgt_mf is None else tgt_mf
        notes.append("mem_fraction_static not in the log: assumed "
                     f"{cur_mf:.3f}")
    if tgt_mf is None:
        tgt_mf = cur_mf
    if avail_after is None and cur_tokens:
        notes.append("no weight-load lines: budget inferred from the pool size")
    rest_cur: float | None = None
    if avail_after is not None and pre is not None:
        rest_cur = avail_after - pre * (1 - cur_mf)
    elif cur_tokens:
        rest_cur = cur_tokens * cb / GIB
        if avail_after is not None:
            pre = (avail_after - rest_cur) / max(1e-6, 1 - cur_mf)
    if rest_cur is None:
        res.error = "no capacity or pool lines yet: nothing to compare against"
        return res

    # Target budget: the same GPUs; weights per GPU scale with 1/TP; the slack with the fraction.
    if pre is not None and avail_after is not None:
        weights_now = usage if usage is not None else pre - avail_after
        avail_new = pre - weights_now * cur_tp / tgt_tp
        rest_tgt = avail_new - pre * (1 - tgt_mf)
    else:
        rest_tgt = rest_cur
        if tgt_tp != cur_tp or tgt_mf != cur_mf:
            notes.append("TP / mem fraction change needs the weight-load lines; not applied")
    tokens_cur_calc = max(0, int(int(rest_cur * GIB) // cb))
    tokens_tgt = max(0, int(int(rest_tgt * GIB) // tb))
    tokens_cur = int(cur_tokens) if cur_tokens else tokens_cur_calc
    if cur_tokens and tokens_cur_calc:
        dev = (tokens_cur_calc - cur_tokens) / cur_tokens * 100
        if abs(dev) > 2:
            notes.append(f"calculator vs log for the current setting: {dev:+.1f}% "
                         "(preset or budget inputs differ from the server)")
            # Scale the target by the same factor so the comparison stays like for like.
            tokens_tgt = int(tokens_tgt * cur_tokens / tokens_cur_calc)
    res.current_tokens = tokens_cur
    res.target_tokens = tokens_tgt

    user_mrr = sa.get("max_running_requests") if isinstance(sa.get("max_running_requests"),
                                                            int) else None
    mrr_cur = cap.get("max_running_requests") or max_running(tokens_cur, context_len, user_mrr)
    mrr_tgt = max_running(tokens_tgt, context_len, user_mrr)
    rows = res.rows
    rows.append(("KV dtype", cur_dtype, tgt_dtype))
    rows.append(("TP", str(cur_tp), str(tgt_tp)))
    rows.append(("mem_fraction_static", f"{cur_mf:.3f}", f"{tgt_mf:.3f}"))
    rows.append(("bytes/token/GPU", f"{cb:,.0f}", f"{tb:,.0f}"))
    rows.append(("KV budget/GPU", f"{rest_cur:.2f} GiB", f"{rest_tgt:.2f} GiB"))
    rows.append(("tokens", f"{tokens_cur:,}", _delta(tokens_tgt, tokens_cur)))
    rows.append(("max_running_requests", f"{int(mrr_cur):,}", f"{mrr_tgt:,}"))
    for ctx in inputs.contexts:
        if ctx > 0:
            rows.append((f"concurrent @ {_k(ctx)}", f"{tokens_cur // ctx:,}",
                         f"{tokens_tgt // ctx:,}"))
    if inputs.concurrency and inputs.contexts and pre:
        ctx = max(inputs.contexts)
        need = inputs.concurrency * ctx
        fits = tokens_tgt >= need
        rows.append((f"{inputs.concurrency} reqs @ {_k(ctx)}", f"needs {need:,} tok",
                     "fits" if fits else "does NOT fit"))
        if not fits and avail_after is not None:
            weights_now = usage if usage is not None else pre - avail_after
            avail_new = pre - weights_now * cur_tp / tgt_tp
            mf_need = 1 - (avail_new - need * tb / GIB) / pre
            rows.append(("mem_fraction needed", "",
                         f"{mf_need:.3f}" if mf_need < 0.99 else "impossible on these GPUs"))
    flags = [f"--kv-cache-dtype {tgt_dtype}"]
    if tgt_tp != cur_tp:
        flags.append(f"--tp-size {tgt_tp}")
    if abs(tgt_mf - cur_mf) > 1e-6:
        flags.append(f"--mem-fraction-static {tgt_mf:g}")
    res.flag = " ".join(flags)
    if tokens_tgt <= 0:
        notes.append("the target leaves no memory for the KV cache")
    elif tokens_tgt < context_len:
        notes.append(f"target pool ({tokens_tgt:,}) is smaller than context_len "
                     f"({context_len:,}): one long request cannot fit")
    if cell_tgt.approximate:
        notes.append("FP4 cell size is approximate (scale layout)")
    res.notes = notes
    return res


def _k(n: int) -> str:
    return f"{n // 1024}K" if n % 1024 == 0 else f"{n:,}"


def _delta(new: int, old: int) -> str:
    if not old:
        return f"{new:,}"
    pct = (new - old) / old * 100
    return f"{new:,} ({pct:+.0f}%)" if math.isfinite(pct) else f"{new:,}"
