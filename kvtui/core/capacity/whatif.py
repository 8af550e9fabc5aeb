"""What-if: the same KV bytes in another dtype, or another TP / mem_fraction_static.

Why hold the byte budget fixed: SGLang computes the pool as `available_bytes // cell` after the
weights and the `(1 - mem_fraction_static)` slack are set aside, and the KV dtype changes neither.
So the honest answer to "what if BF16" is: the same bytes divided by the BF16 cell, page-aligned,
which is what SGLang itself would allocate. For hybrids the Mamba state budget is kept as it was
(its dtype does not follow --kv-cache-dtype). Changing TP or mem_fraction_static changes the
budget itself; that needs the memory lines of the log and is reported as an estimate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from kvtui.core.capacity.calibrate import compare, diagnose, measured
from kvtui.core.capacity.cell import (
    ELEM_BYTES,
    GIB,
    Cell,
    MambaState,
    Parallel,
    kv_cell,
    mamba_state,
    pool_gib,
)
from kvtui.core.capacity.modelspec import ModelSpec
from kvtui.core.version import VersionRange, kv_dtype_flag

DEFAULT_DTYPES: tuple[str, ...] = ("bf16", "fp8_e4m3", "fp8_e5m2", "mxfp8", "nvfp4")
DEFAULT_CONTEXTS: tuple[int, ...] = (32768, 131072)

# Bytes per stored value, for the log-only path (no model spec): exact for 16/8-bit dtypes,
# approximate for the block-scaled ones.
VALUE_COST: dict[str, float] = {"bf16": 2.0, "fp16": 2.0, "fp32": 4.0, "fp8_e4m3": 1.0,
                                "fp8_e5m2": 1.0, "mxfp8": 1 + 1 / 32, "nvfp4": 0.5 + 1 / 16,
                                "fp4_mx_block16": 0.5 + 1 / 16, "fp4_e2m1": 0.5 + 1 / 16}
APPROX_DTYPES = frozenset({"mxfp8", "nvfp4", "fp4_mx_block16", "fp4_e2m1"})


def sglang_max_running_requests(tokens: int, context_len: int | None, *,
                                user: int | None = None, attn_dp: int = 1,
                                mamba_slots: int | None = None,
                                mamba_ratio_slots: int = 1) -> int | None:
    """The max_running_requests SGLang prints in the capacity line (section 8.6)."""
    if tokens <= 0:
        return 0
    if user is None:
        if not context_len:
            return None
        est = min(max(int(tokens / context_len * 512), 2048), 4096)
        reqs = min(tokens // 2, est)
    else:
        reqs = min(user // max(1, attn_dp), tokens // 2)
    if mamba_slots is not None:
        reqs = min(reqs, mamba_slots // max(1, mamba_ratio_slots))
    return reqs


@dataclass
class MemoryFacts:
    """The memory lines SGLang's budget is computed from (section 8.1), as logged.

    `pre_gib` is a proxy: SGLang's `pre` is measured after distributed init, min over ranks, and
    not logged; "Load weight begin. avail mem" is the closest logged value.
    """

    pre_gib: float
    avail_gib: float
    mem_fraction_static: float
    weights_gib: float | None = None
    tp: int = 1

    def rest_gib(self, mem_fraction_static: float | None = None, tp: int | None = None) -> float:
        m = self.mem_fraction_static if mem_fraction_static is None else mem_fraction_static
        avail = self.avail_gib
        if tp and tp != self.tp and self.weights_gib is not None:
            # Weights shard across TP: the per-GPU footprint scales with tp_old / tp_new.
            avail = self.avail_gib + self.weights_gib - self.weights_gib * self.tp / tp
        return avail - self.pre_gib * (1 - m)

    def to_dict(self) -> dict[str, Any]:
        return {"pre_gib": self.pre_gib, "avail_gib": self.avail_gib,
                "mem_fraction_static": self.mem_fraction_static,
                "weights_gib": self.weights_gib, "tp": self.tp,
                "rest_gib": round(self.rest_gib(), 4)}


@dataclass
class Calculator:
    """All facts one what-if needs; build it with `from_run` (log) or directly (CLI/TUI)."""

    current_dtype: str
    tokens: int | None = None
    context_len: int | None = None
    parallel: Parallel = field(default_factory=Parallel)
    page_size: int = 1
    spec: ModelSpec | None = None
    spec_reason: str = ""
    pool_gib: dict[str, float | None] | None = None  # logged k_gib, v_gib, kv_gib
    pool_bytes: int | None = None  # an explicit KV byte budget per GPU (--pool-gib)
    version: VersionRange = field(default_factory=VersionRange)
    memory: MemoryFacts | None = None
    mrr_user: int | None = None
    mrr_logged: int | None = None
    disable_radix_cache: bool = False
    mamba_logged: dict[str, Any] | None = None
    swa_pool: bool = False
    swa_logged: dict[str, Any] | None = None
    pool_is_swa: bool = False
    checkpoint_kv_fp8: bool | None = None
    model_dtype: str = "bf16"
    notes: list[str] = field(default_factory=list)

    # -- cells ------------------------------------------------------------------------------
    def cell(self, dtype: str, tp: int | None = None) -> Cell | None:
        if self.spec is None:
            return None
        par = self.parallel if tp is None else Parallel(tp=tp, attn_dp=self.parallel.attn_dp,
                                                         attn_cp=self.parallel.attn_cp,
                                                         pp=self.parallel.pp)
        recipe = "0.5.5" if self.version.hi < (0, 5, 16) else "0.5.16+"
        return kv_cell(self.spec, dtype, par, swa_pool=self.swa_pool, fp4_recipe=recipe)

    def mamba(self, tp: int | None = None) -> MambaState | None:
        if self.spec is None:
            return None
        return mamba_state(self.spec, tp or self.parallel.attn_tp)

    def _mamba_slots(self) -> int | None:
        return (self.mamba_logged or {}).get("slots")

    def _mamba_ratio(self) -> int:
        """State slots per running request: 1 without the radix cache, else SGLang's
        MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO = 3 (model_runner, 0.5.x; newer releases
        may add extra-buffer slots on top, which would lower the cap further)."""
        return 1 if self.disable_radix_cache else 3

    def _mamba_bytes(self, tp: int | None = None) -> int:
        """Bytes of Mamba state per GPU, held at the logged slot count."""
        st = self.mamba(tp)
        slots = self._mamba_slots()
        if st is not None and slots is not None:
            return (slots + 1) * st.per_slot
        if self.mamba_logged and tp in (None, self.parallel.tp):
            gib = (self.mamba_logged.get("conv_gib") or 0) + (self.mamba_logged.get("ssm_gib") or 0)
            return int(gib * GIB)
        return 0

    # -- the budget -------------------------------------------------------------------------
    def _cost_per_token(self, dtype: str) -> float | None:
        """Bytes SGLang divides by for one full-pool token (SWA hybrids include r x S)."""
        cell = self.cell(dtype)
        if cell is not None:
            if cell.swa is not None:
                return cell.swa.full_bytes + cell.swa.ratio * cell.swa.swa_bytes
            return float(cell.bytes_per_token)
        meas = self.measured()
        if meas is None:
            return None
        return meas["bytes_per_token"] * VALUE_COST[dtype] / VALUE_COST[self.current_dtype]

    def budget_bytes(self, tp: int | None = None,
                     mem_fraction_static: float | None = None) -> tuple[int | None, str, bool]:
        """(KV bytes per GPU, how it was derived, is it an estimate)."""
        base: int | None = None
        basis = ""
        estimate = False
        cost = self._cost_per_token(self.current_dtype)
        if self.pool_bytes is not None:
            base, basis = self.pool_bytes, "the given pool size"
        elif self.tokens and cost is not None:
            base = int(self.tokens * cost)
            if self.spec is not None:
                basis = f"{self.tokens:,} logged tokens x the {self.current_dtype} cell"
            else:
                basis = f"{self.tokens:,} logged tokens x the measured bytes/token"
                estimate = True
        elif self.memory is not None and self.spec is not None:
            base = int(self.memory.rest_gib() * GIB) - self._mamba_bytes()
            basis, estimate = "the memory lines (Load weight begin/end, mem_fraction_static)", True
        changed = (tp not in (None, self.parallel.tp)) or (
            mem_fraction_static is not None and (
                self.memory is None or mem_fraction_static != self.memory.mem_fraction_static))
        if not changed:
            return base, basis, estimate
        if self.memory is None:
            if mem_fraction_static is not None:
                return None, ("changing mem_fraction_static needs the Load weight begin/end lines "
                              "and the server_args dump"), True
            return base, ("assumed the same KV bytes per GPU at the new TP (no memory lines; real "
                          "capacity is higher because the weights shard further)"), True
        offset = 0
        if base is not None:
            offset = base - (int(self.memory.rest_gib() * GIB) - self._mamba_bytes())
        new = int(self.memory.rest_gib(mem_fraction_static, tp) * GIB) - self._mamba_bytes(tp)
        return new + offset, ("memory budget: avail - pre x (1 - mem_fraction_static), weights "
                              "rescaled by TP, calibrated to the logged pool"), True

    def tokens_for(self, dtype: str, tp: int | None = None,
                   mem_fraction_static: float | None = None) -> tuple[int | None, int | None]:
        """(full-pool tokens, SWA tokens or None) SGLang would allocate, page-aligned."""
        page = max(1, self.page_size)
        unchanged = tp in (None, self.parallel.tp) and mem_fraction_static is None
        if self.spec is None and self.tokens and unchanged and self.pool_bytes is None:
            # Log only: scale the token count by the value-size ratio (exact for 16/8-bit).
            n = int(self.tokens * VALUE_COST[self.current_dtype] / VALUE_COST[dtype])
            return n // page * page, None
        budget, _, _ = self.budget_bytes(tp, mem_fraction_static)
        if budget is None:
            return None, None
        cell = self.cell(dtype, tp)
        if cell is not None and cell.swa is not None:
            return cell.swa.tokens(budget, page)
        cost = float(cell.bytes_per_token) if cell is not None else self._cost_per_token(dtype)
        if not cost:
            return None, None
        n = int(budget // cost)
        return n // page * page, None

    # -- measurements -----------------------------------------------------------------------
    def measured(self) -> dict[str, float] | None:
        """Logged bytes per token: from the pool line, else (estimate) from the memory lines."""
        if not self.pool_gib:
            if self.memory is not None and self.tokens and self.spec is None:
                bpt = self.memory.rest_gib() * GIB / self.tokens
                return {"bytes_per_token": bpt, "lo": bpt, "hi": bpt, "gib": 0.0,
                        "from_memory_lines": 1.0}
            return None
        n = self.tokens
        if self.pool_is_swa and self.swa_logged:
            n = self.swa_logged.get("swa_tokens")
        if not n:
            return None
        return measured(n, self.page_size, self.pool_gib.get("k_gib"),
                        self.pool_gib.get("v_gib"), self.pool_gib.get("kv_gib"))

    def calibration(self) -> dict[str, Any] | None:
        meas = self.measured()
        cell = self.cell(self.current_dtype)
        if meas is None or cell is None:
            return None
        printed = None
        if self.pool_is_swa and cell.swa is not None:
            printed = cell.swa.swa_bytes - 0
        out = compare(meas, cell, printed)
        rows_tokens = self.tokens or 0
        if not self.pool_is_swa and rows_tokens:
            k, v = pool_gib(rows_tokens, cell, self.page_size)
            out["predicted_line"] = (f"#tokens: {rows_tokens}, KV size: {k:.2f} GB"
                                     if cell.kind == "mla" else
                                     f"#tokens: {rows_tokens}, K size: {k:.2f} GB, "
                                     f"V size: {v:.2f} GB")
        if not out["ok"] and self.spec is not None:
            out["likely_cause"] = diagnose(self.spec, self.current_dtype, self.parallel, meas,
                                           swa_pool=self.swa_pool)
        return out

    def memory_check(self) -> dict[str, Any] | None:
        """Replay SGLang's profile step from the memory lines and compare with the pool."""
        if self.memory is None:
            return None
        out = self.memory.to_dict()
        out["estimate"] = True
        out["note"] = ("pre is the 'Load weight begin' avail (SGLang's real pre is measured "
                       "earlier and min-reduced over ranks), so this is an estimate")
        cell = self.cell(self.current_dtype)
        if cell is not None:
            avail_bytes = int(self.memory.rest_gib() * GIB) - self._mamba_bytes()
            if cell.swa is not None:
                n = cell.swa.tokens(avail_bytes, self.page_size)[0]
            else:
                n = avail_bytes // cell.bytes_per_token
                n = n // max(1, self.page_size) * max(1, self.page_size)
            out["predicted_tokens"] = n
            if self.tokens:
                out["logged_tokens"] = self.tokens
                out["difference"] = round(n / self.tokens - 1, 4)
        return out

    # -- outputs ----------------------------------------------------------------------------
    def _contexts(self, context_lengths: list[int] | tuple[int, ...] | None) -> list[int]:
        ctxs: list[int] = []
        for c in ([self.context_len] if self.context_len else []) + list(
                context_lengths if context_lengths is not None else DEFAULT_CONTEXTS):
            if c and c not in ctxs:
                ctxs.append(int(c))
        return ctxs

    def flag(self, dtype: str) -> tuple[str | None, str]:
        return kv_dtype_flag(dtype, self.version, checkpoint_kv_fp8=self.checkpoint_kv_fp8,
                             model_dtype=self.model_dtype)

    def scenario(self, dtype: str, *, tp: int | None = None,
                 mem_fraction_static: float | None = None,
                 context_lengths: list[int] | tuple[int, ...] | None = None,
                 target_concurrency: float | None = None) -> dict[str, Any]:
        """One what-if row: tokens, bytes/token, concurrency, max_running_requests, flag."""
        tokens, swa_tokens = self.tokens_for(dtype, tp, mem_fraction_static)
        _, basis, estimate = self.budget_bytes(tp, mem_fraction_static)
        cell = self.cell(dtype, tp)
        cost = self._cost_per_token(dtype) if tp in (None, self.parallel.tp) else (
            float(cell.bytes_per_token) if cell else None)
        ctxs = self._contexts(context_lengths)
        conc = {str(c): (round(tokens / c, 2) if tokens is not None else None) for c in ctxs}
        attn_dp = self.parallel.attn_dp
        mrr = (sglang_max_running_requests(tokens, self.context_len, user=self.mrr_user,
                                           attn_dp=attn_dp, mamba_slots=self._mamba_slots(),
                                           mamba_ratio_slots=self._mamba_ratio())
               if tokens is not None else None)
        flag, advice = self.flag(dtype)
        row: dict[str, Any] = {
            "dtype": dtype,
            "tokens": tokens,
            "bytes_per_token": (cell.bytes_per_token if cell is not None else
                                (round(cost, 1) if cost is not None else None)),
            "concurrency": conc,
            "max_running_requests": mrr,
            "flag": flag,
            "flag_advice": advice,
            "vs_current": (round(tokens / self.tokens, 4)
                           if tokens is not None and self.tokens else None),
            "current": dtype == self.current_dtype and tp in (None, self.parallel.tp)
            and mem_fraction_static in (None, getattr(self.memory, "mem_fraction_static", None)),
            "approximate": dtype in APPROX_DTYPES or bool(cell and cell.approximate),
            "estimate": estimate,
            "basis": basis,
        }
        if swa_tokens is not None:
            row["swa_tokens"] = swa_tokens
        if tp is not None:
            row["tp"] = tp
        if mem_fraction_static is not None:
            row["mem_fraction_static"] = mem_fraction_static
        if target_concurrency is not None and self.context_len and tokens is not None:
            need = self.context_len * target_concurrency
            row["fits_target"] = tokens >= need
        return row

    def scenarios(self, dtypes: list[str] | tuple[str, ...] | None = None,
                  context_lengths: list[int] | tuple[int, ...] | None = None,
                  **kw: Any) -> list[dict[str, Any]]:
        wanted = list(dtypes) if dtypes else list(DEFAULT_DTYPES)
        if self.version.hi < (0, 5, 16):
            wanted = ["fp4_e2m1" if d == "nvfp4" else d for d in wanted]
        if self.current_dtype not in wanted and self.current_dtype in ELEM_BYTES:
            wanted.insert(0, self.current_dtype)
        return [self.scenario(d, context_lengths=context_lengths, **kw) for d in wanted
                if d in ELEM_BYTES and d != "fp32"]

    def current(self) -> dict[str, Any]:
        cell = self.cell(self.current_dtype)
        meas = self.measured()
        cal = self.calibration()
        out: dict[str, Any] = {
            "dtype": self.current_dtype,
            "tokens": self.tokens,
            "bytes_per_token": (round(meas["bytes_per_token"], 1) if meas
                                else (cell.bytes_per_token if cell else None)),
            "theoretical_bytes_per_token": cell.bytes_per_token if cell else None,
            "calibration_ratio": cal["ratio"] if cal else None,
            "context_len": self.context_len,
            "page_size": self.page_size,
            "parallel": self.parallel.to_dict(),
            "max_running_requests_logged": self.mrr_logged,
            "max_running_requests_sglang": sglang_max_running_requests(
                self.tokens, self.context_len, user=self.mrr_user, attn_dp=self.parallel.attn_dp,
                mamba_slots=self._mamba_slots(), mamba_ratio_slots=self._mamba_ratio())
            if self.tokens else None,
        }
        if self.context_len and self.tokens:
            out["concurrency_at_context_len"] = round(self.tokens / self.context_len, 2)
        if cell is not None:
            out["cell"] = cell.to_dict()
        if cal is not None:
            out["calibration"] = cal
        if self.swa_logged:
            out["swa_split"] = self.swa_logged
        return out

    def mamba_budget(self) -> dict[str, Any] | None:
        st = self.mamba()
        if st is None and not self.mamba_logged:
            return None
        out: dict[str, Any] = {"held_fixed": True,
                               "note": "the Mamba/linear-attention state is not affected by "
                                       "--kv-cache-dtype; its budget is kept as logged"}
        if self.mamba_logged:
            out["logged"] = self.mamba_logged
        if st is not None:
            out["theory"] = st.to_dict()
            slots = self._mamba_slots()
            if slots is not None:
                out["theory_gib"] = round((slots + 1) * st.per_slot / GIB, 2)
        return out

    def explanation(self) -> list[str]:
        """Show-your-work lines, in the order a reader checks them."""
        lines = list(self.notes)
        if self.spec is not None:
            lines.append(f"model: {self.spec.summary()} ({self.spec_reason})")
            cell = self.cell(self.current_dtype)
            if cell is not None:
                lines.extend(cell.lines)
        else:
            lines.append(f"no model spec ({self.spec_reason}): log-only arithmetic, the logged "
                         "bytes/token scaled by the value size of each dtype")
        meas = self.measured()
        if meas is not None and meas.get("from_memory_lines"):
            lines.append(f"no pool line: {meas['bytes_per_token']:,.0f} B/token estimated as the "
                         "memory budget (avail - pre x (1 - mem_fraction_static)) / tokens")
        cal = self.calibration()
        if cal is not None:
            lines.append(f"logged pool: {cal['measured_bytes_per_token']:,} B/token vs computed "
                         f"{cal['computed_bytes_per_token']:,}: ratio {cal['ratio']:.3f}"
                         + (" (within the 0.01 GiB rounding)" if cal["within_rounding"] else ""))
            if cal.get("likely_cause"):
                lines.append(f"mismatch > 2%: {cal['likely_cause']}")
        st = self.mamba()
        if st is not None:
            lines.extend(st.lines)
        budget, basis, est = self.budget_bytes()
        if budget is not None:
            lines.append(f"KV budget held fixed: {budget:,} B = {budget / GIB:.2f} GiB per GPU "
                         f"({basis}{', estimate' if est else ''})")
        return lines

    def report(self, dtypes: list[str] | tuple[str, ...] | None = None,
               context_lengths: list[int] | tuple[int, ...] | None = None) -> dict[str, Any]:
        """The `whatif` object of `kvtui check --json` / `kvtui whatif --json`."""
        out: dict[str, Any] = {
            "current": self.current(),
            "scenarios": self.scenarios(dtypes, context_lengths),
            "model": self.spec.to_dict() if self.spec else None,
            "model_reason": self.spec_reason,
            "version": self.version.to_dict(),
            "explanation": self.explanation(),
        }
        mb = self.mamba_budget()
        if mb is not None:
            out["mamba"] = mb
        mc = self.memory_check()
        if mc is not None:
            out["memory_budget"] = mc
        if self.context_len and self.tokens:
            from kvtui.core.capacity.inverse import inverse

            # The question people ask after a precision alert: what would it take to keep today's
            # full-context concurrency in BF16 (or, when already BF16, to double it)?
            conc = self.tokens / self.context_len
            if self.current_dtype != "bf16":
                out["inverse"] = inverse(self, "bf16", self.context_len,
                                         max(1, math.floor(conc)))
            else:
                out["inverse"] = inverse(self, "bf16", self.context_len,
                                         max(1, math.ceil(conc)) * 2)
        return out
