"""SGLang's what-if: the same memory in another KV dtype, or another TP / mem_fraction_static.

Why start from the rest memory: SGLang computes `rest = avail - pre x (1 - mem_fraction_static)`,
takes the recurrent state of hybrid models out of it (by its own per-release rule), and divides
what is left by the cell. The KV dtype changes only the cell, so a dtype-only what-if holds the
logged KV bytes and the logged state fixed and is exact. Changing TP or mem_fraction_static
changes the rest memory itself: kvtui moves the logged rest by `pre x delta(mem_fraction)` and by
the weights TP sheds, then replays SGLang's split (`sizing.budget.allocate`), so a Qwen3.5 what-if
gives the Mamba state its r/(1+r) share as SGLang does. Such answers are marked estimates.

Why this calculator computes the per-GPU cell exactly as SGLang does (`cell`, `sizing/`):
"what if the KV cache were BF16 instead of FP8" is answered wrongly by most calculators (TP
replication of KV heads, hybrid layers, head_dim, MLA); this one checks the cell against the
logged pool and holds the logged byte budget fixed to answer to the token. Method:
docs/calculator.md.

API (the same questions vLLM's calculator answers, `kvtui.engines.vllm.calculator`)
----------------------------------------------------------------------------------
- ``fromrun.calculator_from_run(run, model=None, checkpoint=None)``: a Calculator from a log
  (what `ENGINE.calculator` returns); ``fromrun.whatif_for_run`` gives its report.
- ``calc.scenario(dtype, tp=None, mem_fraction_static=None, context_lengths=None,
  target_concurrency=None) -> Scenario``: one row (tokens, bytes_per_token, concurrency per
  context length, max_running_requests, flag, flag_advice, estimate, basis, fits_target).
  Changing ``tp`` or ``mem_fraction_static`` uses the memory lines of the log
  (``memory_budget``) and is marked ``estimate``; without them ``mem_fraction_static`` gives
  ``tokens: None`` and the reason in ``basis``.
- ``calc.scenarios(dtypes=None, context_lengths=None)``: rows for the default dtypes.
- ``calc.inverse(dtype, context_len, concurrency) -> Inverse``: tokens and GiB needed, GiB per
  GPU missing, the mem_fraction_static and TP that would fit (`inverse`).
- ``calc.report(dtypes, context_lengths) -> WhatIf``: the report's ``whatif``.
- ``Calculator(current_dtype=..., tokens=..., pool_bytes=..., spec=..., parallel=Parallel(tp=..))``
  builds a what-if without a log (``kvtui whatif --model M --tp N --pool-gib G``).
- ``cell.kv_cell(spec, dtype, Parallel(tp=..))`` and ``cell.mamba_state(spec, tp)``: the raw
  cell maths.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kvtui.core.capacity.calculator import Calculator as CoreCalculator
from kvtui.core.capacity.modelspec import ModelSpec
from kvtui.core.capacity.parallel import Parallel, tp_refused
from kvtui.core.capacity.whatif import MemoryKnob, request_lengths
from kvtui.core.report_types import Current, Inverse, Scenario, WhatIf
from kvtui.engines.sglang import inverse, scenario
from kvtui.engines.sglang.calibrate import compare, diagnose, measured
from kvtui.engines.sglang.cell import (
    ELEM_BYTES,
    GIB,
    Cell,
    kv_cell,
    pool_rows,
    printed_bytes,
)
from kvtui.engines.sglang.coverage import for_logged_class
from kvtui.engines.sglang.flags import FLAGS
from kvtui.engines.sglang.sizer import MemoryFacts, Rest, Sizer
from kvtui.engines.sglang.sizing import budget as sgl_budget
from kvtui.engines.sglang.sizing import mamba as sgl_mamba
from kvtui.engines.sglang.sizing import swa as sgl_swa
from kvtui.engines.sglang.sizing.args import SizingArgs
from kvtui.engines.sglang.sizing.families import (
    CannotModel,
    check_supported,
    dtype_refusal,
    kv_dtype_spelling,
    linear_kind,
)
from kvtui.engines.sglang.sizing.rules import version_notes
from kvtui.engines.sglang.version import NEWEST, SGLANG_LINE, VersionRange, kv_dtype_flag

DEFAULT_DTYPES: tuple[str, ...] = ("bf16", "fp8_e4m3", "fp8_e5m2", "mxfp8", "nvfp4")

# Bytes per stored value, for the log-only path (no model spec): exact for 16/8-bit dtypes,
# approximate for the block-scaled ones.
VALUE_COST: dict[str, float] = {"bf16": 2.0, "fp16": 2.0, "fp32": 4.0, "fp8_e4m3": 1.0,
                                "fp8_e5m2": 1.0, "mxfp8": 1 + 1 / 32, "nvfp4": 0.5 + 1 / 16,
                                "fp4_mx_block16": 0.5 + 1 / 16, "fp4_e2m1": 0.5 + 1 / 16}
APPROX_DTYPES = frozenset({"mxfp8", "nvfp4", "fp4_mx_block16", "fp4_e2m1"})


def sglang_max_running_requests(tokens: int, context_len: int | None, *,
                                user: int | None = None, attn_dp: int = 1,
                                mamba_slots: int | None = None,
                                mamba_ratio_slots: int = 1,
                                version: tuple[int, int, int] = NEWEST) -> int | None:
    """The max_running_requests SGLang prints in the capacity line (`sizing.budget`)."""
    cap = mamba_slots // max(1, mamba_ratio_slots) if mamba_slots is not None else None
    return sgl_budget.max_running_requests(tokens, context_len, version, user=user,
                                           attn_dp=attn_dp, mamba_cap=cap)


@dataclass
class Calculator:
    """All facts one what-if needs; build it with `calculator_from_run` (log) or directly."""

    current_dtype: str
    # the log names no KV dtype: the current one is the model dtype assumed in its place
    current_dtype_assumed: bool = False
    tokens: int | None = None
    context_len: int | None = None
    parallel: Parallel = field(default_factory=Parallel)
    page_size: int = 1
    spec: ModelSpec | None = None
    spec_reason: str = ""
    pool_gib: dict[str, float | None] | None = None  # logged k_gib, v_gib, kv_gib
    pool_bytes: int | None = None  # an explicit KV byte budget per GPU (--pool-gib)
    version: VersionRange = field(default_factory=SGLANG_LINE.any)
    memory: MemoryFacts | None = None
    mrr_user: int | None = None
    mrr_logged: int | None = None
    disable_radix_cache: bool = False
    mamba_logged: dict[str, Any] | None = None
    swa_pool: bool | None = None  # None: the release's rule decides (no pool line seen)
    swa_logged: dict[str, Any] | None = None
    pool_is_swa: bool = False
    checkpoint_kv_fp8: bool | None = None
    model_dtype: str = "bf16"
    notes: list[str] = field(default_factory=list)
    args: SizingArgs | None = None
    draft_pools: list[dict[str, Any]] = field(default_factory=list)
    model_path: str | None = None
    # The model class the log names, for the rules SGLang keys on it when there is no spec.
    architecture: str | None = None
    # A hybrid-SWA pool's logged total (the SWAKVPool line: both sub-pools, GiB): what the
    # log-only arithmetic holds fixed, where the pool line is the Full sub-pool's alone.
    swa_pool_gib: float | None = None

    def __post_init__(self) -> None:
        if self.args is None:
            self.args = SizingArgs(disable_radix_cache=self.disable_radix_cache,
                                   max_running_requests=self.mrr_user)
        if self.mrr_user is None:
            self.mrr_user = self.args.max_running_requests

    engine = "sglang"  # the engine seam's name (`kvtui.core.engine.load`)
    engine_label = "SGLang"  # how the texts name the engine whose rules these are
    tp_flag = FLAGS.tensor_parallel  # what a TP what-if tells the operator to pass

    @property
    def tp_label(self) -> None:
        """The log states TP in SGLang's server_args: never a label of the header's own."""
        return None

    def sized_by_kv_bytes(self) -> None:
        """SGLang sizes by a memory fraction only: no KV budget in bytes to read the run by."""
        return None

    def with_max_batched(self, tokens: int) -> None:
        """SGLang's pool does not follow a batched-token budget (vLLM's knob)."""
        return None

    def memory_knob(self) -> MemoryKnob:
        mf = self.memory.mem_fraction_static if self.memory is not None else None
        return MemoryKnob("mem_fraction_static", "--mem-fraction-static",
                          mf if isinstance(mf, float) else None, "mem frac")

    # -- release and family -----------------------------------------------------------------
    @property
    def sargs(self) -> SizingArgs:
        assert self.args is not None
        return self.args

    @property
    def rules_version(self) -> tuple[int, int, int]:
        """The release whose rules the arithmetic follows: the newest the log allows."""
        return self.version.hi

    @property
    def kind(self) -> str | None:
        return linear_kind(self.spec, self.rules_version) if self.spec is not None else None

    def supported(self) -> str | None:
        """None when kvtui can give SGLang's number; else the plain reason."""
        if self.spec is None:
            return for_logged_class(self.architecture)
        try:
            check_supported(self.spec, self.rules_version)
            self._state(None)
        except CannotModel as exc:
            return str(exc)
        return None

    def _par(self, tp: int | None) -> Parallel:
        if tp is None:
            return self.parallel
        return Parallel(tp=tp, attn_dp=self.parallel.attn_dp, attn_cp=self.parallel.attn_cp,
                        pp=self.parallel.pp)

    def swa_on(self) -> bool:
        if self.spec is None or not self.spec.has_swa:
            return False
        if self.swa_pool is not None:
            return self.swa_pool
        return sgl_swa.pool_applies(self.spec, self.rules_version, self.sargs)[0]

    def draft_layers(self) -> int:
        """Draft KV layers the target budgets (0.5.14+): an MTP/NextN draft has the model's own
        nextn layers; an external EAGLE draft is assumed to have one (EAGLE heads do)."""
        a = self.sargs
        if not a.spec_decoding or self.spec is None:
            return 0
        own = a.speculative_draft_model_path in (None, self.model_path)
        return self.spec.nextn_layers if (own and self.spec.nextn_layers) else 1

    # -- cells and state ---------------------------------------------------------------------
    def cell(self, dtype: str, tp: int | None = None) -> Cell | None:
        """The release's cell; None without a spec, or when it cannot be sized (`cell_error`)."""
        try:
            return self._cell(dtype, tp)
        except (CannotModel, ValueError):
            return None

    def tp_refusal(self, tp: int) -> str | None:
        """Why SGLang would not shard this model over `tp` GPUs with the logged attention DP /
        CP (`tp_refused`), None when it would or when there is no spec to tell."""
        if self.spec is None:
            return None
        par = self.parallel
        groups = max(1, par.attn_dp) * max(1, par.attn_cp)
        if tp % groups:
            return f"TP {tp} does not divide into the logged attention DP x CP groups ({groups})"
        kv = None if self.spec.is_mla else self.spec.num_kv_heads
        return tp_refused(self.spec.num_attention_heads, kv, tp // groups)

    def cell_error(self, dtype: str, tp: int | None = None) -> str | None:
        """Why `cell(dtype, tp)` is None although there is a spec (plain words), else None."""
        if self.spec is None:
            return None
        try:
            self._cell(dtype, tp)
        except (CannotModel, ValueError) as exc:
            return str(exc)
        return None

    def _cell(self, dtype: str, tp: int | None) -> Cell | None:
        if self.spec is None:
            return None
        check_supported(self.spec, self.rules_version)
        return kv_cell(self.spec, dtype, self._par(tp), swa_pool=self.swa_on(),
                       swa_ratio=self.sargs.swa_full_tokens_ratio, version=self.rules_version,
                       args=self.sargs, draft_layers=self.draft_layers())

    def mamba(self, tp: int | None = None) -> sgl_mamba.StateSlot | None:
        """The per-request state at this TP; None for non-hybrids or when it cannot be sized
        (`supported()` then says why for the logged TP, a what-if row for another TP)."""
        try:
            return self._state(tp)
        except CannotModel:
            return None

    def _state(self, tp: int | None) -> sgl_mamba.StateSlot | None:
        kind = self.kind
        if self.spec is None or kind is None:
            return None
        attn_tp = self._par(tp).attn_tp
        return sgl_mamba.state_per_slot(self.spec, attn_tp, self.sargs, self.rules_version, kind)

    def logged_slots(self) -> int | None:
        return (self.mamba_logged or {}).get("slots")

    def cost_per_token(self, dtype: str, tp: int | None = None) -> float | None:
        """Bytes SGLang spends per full-pool token (SWA hybrids include r x S)."""
        cell = self.cell(dtype, tp)
        if cell is not None:
            return cell.cost
        meas = self._measured_cost()
        if meas is None:
            return None
        return meas * VALUE_COST[dtype] / VALUE_COST[self.current_dtype]

    def _measured_cost(self) -> float | None:
        """Logged bytes per full-pool token of the whole KV cache: the SWAKVPool total over
        the Full sub-pool's rows for a hybrid-SWA pool (the SWA tokens that come with each
        full one included), else the pool line's bytes per token."""
        if self.swa_pool_gib and self.tokens:
            return self.swa_pool_gib * GIB / (self.tokens + max(1, self.page_size))
        meas = self.measured()
        return meas["bytes_per_token"] if meas is not None else None

    # -- the rest memory ---------------------------------------------------------------------
    def state_bytes_now(self) -> int:
        """The state SGLang took at the logged settings (0 for non-hybrids)."""
        st = self.mamba()
        kind = self.kind
        slots = self.logged_slots()
        if st is not None and kind is not None and slots is not None:
            return sgl_mamba.logged_state_bytes(
                slots, st.per_slot, self.rules_version, self.sargs, self.parallel.attn_dp, kind,
                self.spec.arch if self.spec else "", self.page_size)
        if self.mamba_logged:
            gib = (self.mamba_logged.get("conv_gib") or 0) + (self.mamba_logged.get("ssm_gib") or 0)
            return int(gib * GIB)
        return 0

    def kv_now(self) -> tuple[int | None, str, bool]:
        """(KV bytes of the pool at the logged/given settings, basis, estimate)."""
        cost = self.cost_per_token(self.current_dtype)
        if self.pool_bytes is not None:
            return self.pool_bytes, "the given pool size", False
        cap = self.sargs.max_total_tokens
        capped = bool(cap and self.tokens and self.tokens >= cap // max(1, self.page_size)
                      * max(1, self.page_size))
        if capped and self.memory is not None and self.spec is not None:
            # --max-total-tokens cut the pool: the memory SGLang had is larger than the pool
            # shows, so the memory lines size it (estimate) and the cap applies again after.
            rest = int(self.memory.rest_gib() * GIB)
            return rest - self.state_bytes_now(), (
                f"the memory lines (the pool was capped at --max-total-tokens {cap})"), True
        if self.tokens and cost is not None:
            if capped:
                return int(self.tokens * cost), (
                    f"{self.tokens:,} logged tokens x the {self.current_dtype} cell, a lower "
                    f"bound: --max-total-tokens {cap} capped the pool"), True
            if self.spec is not None and self.supported() is None:
                return int(self.tokens * cost), (f"{self.tokens:,} logged tokens x the "
                                                 f"{self.current_dtype} cell"), False
            both = (f" of both sub-pools (SWAKVPool mem usage {self.swa_pool_gib:g} GB)"
                    if self.swa_pool_gib else "")
            return int(self.tokens * cost), (f"{self.tokens:,} logged tokens x the measured "
                                             f"bytes/token{both}"), True
        if self.memory is not None and self.spec is not None:
            rest = int(self.memory.rest_gib() * GIB)
            return rest - self.state_bytes_now(), ("the memory lines (Load weight begin/end, "
                                                    "mem_fraction_static)"), True
        return None, "no pool line, no memory lines", True

    def rest_now(self) -> Rest:
        """The rest memory at the logged settings: the KV bytes plus the state SGLang took."""
        kv, basis, est = self.kv_now()
        if kv is None:
            return Rest(None, basis, est)
        state = self.state_bytes_now()
        if state or self.kind is None or self.mamba() is None:
            return Rest(kv + state, basis + (" + the logged state slots" if state else ""), est)
        # No logged slot count (a what-if without a log): find the rest whose KV share is kv.
        return Rest(self._rest_for_kv(kv), basis + " + the state SGLang would take", True)

    def _rest_for_kv(self, kv: int) -> int:
        lo, hi = kv, kv * 4 + (1 << 30)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            try:
                alloc = self._allocate(mid, self.current_dtype, None, fixed=False)
                left = alloc.kv_bytes
            except CannotModel:
                left = -1
            if left >= kv:
                hi = mid
            else:
                lo = mid
        return hi

    def rest_for(self, tp: int | None = None, mem_fraction_static: float | None = None) -> Rest:
        """The rest memory SGLang would have at another TP / mem_fraction_static."""
        now = self.rest_now()
        mem = self.memory
        tp_changed = tp not in (None, self.parallel.tp)
        mf_changed = mem_fraction_static is not None and (
            mem is None or mem_fraction_static != mem.mem_fraction_static)
        if not (tp_changed or mf_changed) or now.bytes is None:
            return now
        if mem is None:
            if mf_changed:
                return Rest(None, "changing mem_fraction_static needs the Load weight "
                                  "begin/end lines and the server_args dump", True)
            return Rest(now.bytes, "assumed the same rest memory per GPU at the new TP (no "
                                   "memory lines; real capacity is higher because the weights "
                                   "shard further)", True)
        m = mem.mem_fraction_static if mem_fraction_static is None else mem_fraction_static
        delta = (mem.pre_gib * (m - mem.mem_fraction_static)
                 + mem.avail_after(tp) - mem.avail_gib) * GIB
        rest = now.bytes + int(delta)
        moved = [w for w, on in (("the change in mem_fraction_static", mf_changed),
                                 ("the weights per GPU at the new TP", tp_changed)) if on]
        basis = ("the log's memory left after weights, moved by " + " and by ".join(moved)
                 + " (memory lines; estimate)")
        if rest <= 0:
            used = mem.pre_gib - mem.avail_after(tp)
            return Rest(None, basis, True,
                        f"does not fit: weights {used:.2f} GiB > {mem.pre_gib * m:.2f} GiB "
                        f"(mem_fraction_static {m:g} x {mem.pre_gib:g} GiB per GPU)")
        return Rest(rest, basis, True)

    def _allocate(self, rest: int, dtype: str, tp: int | None, *,
                  fixed: bool) -> sgl_budget.Allocation:
        cell = self._cell(dtype, tp)
        assert cell is not None
        kind = self.kind
        slot = self._state(tp) if kind is not None else None
        return sgl_budget.allocate(
            rest, cell, self.spec, self.sargs, self.rules_version, page_size=self.page_size,
            context_len=self.context_len, attn_dp=self.parallel.attn_dp, kind=kind, slot=slot,
            fixed_slots=self.logged_slots() if fixed else None,
            max_total_tokens=self.sargs.max_total_tokens)

    def allocation(self, dtype: str, tp: int | None = None,
                   mem_fraction_static: float | None = None
                   ) -> tuple[sgl_budget.Allocation | None, Rest]:
        """What SGLang would allocate for `dtype` at the given settings (None: cannot say)."""
        rest = self.rest_for(tp, mem_fraction_static)
        if rest.bytes is None or self.spec is None:
            return None, rest
        why = self.cell_error(dtype, tp)
        if why is not None:
            return None, Rest(None, rest.basis, rest.estimate, f"cannot model: {why}")
        unchanged = tp in (None, self.parallel.tp) and (
            mem_fraction_static is None or self.memory is None
            or mem_fraction_static == self.memory.mem_fraction_static)
        fixed = unchanged and self.logged_slots() is not None
        try:
            return self._allocate(rest.bytes, dtype, tp, fixed=fixed), rest
        except CannotModel as exc:
            return None, Rest(None, rest.basis, rest.estimate, str(exc))

    # -- backwards-compatible views ------------------------------------------------------------
    def budget_bytes(self, tp: int | None = None,
                     mem_fraction_static: float | None = None) -> tuple[int | None, str, bool]:
        """(KV bytes per GPU, how they were derived, estimate?) at the given settings."""
        if self.spec is None:
            kv, basis, est = self.kv_now()
            if tp in (None, self.parallel.tp) and mem_fraction_static is None:
                return kv, basis, est
            rest = self.rest_for(tp, mem_fraction_static)
            if rest.bytes is None:
                return None, rest.does_not_fit or rest.basis, True
            return rest.bytes - self.state_bytes_now(), rest.basis, True
        alloc, rest = self.allocation(self.current_dtype, tp, mem_fraction_static)
        if alloc is None:
            return None, rest.does_not_fit or rest.basis, rest.estimate
        return alloc.kv_bytes, rest.basis, rest.estimate

    def tokens_for(self, dtype: str, tp: int | None = None,
                   mem_fraction_static: float | None = None) -> tuple[int | None, int | None]:
        """(full-pool tokens, SWA tokens or None) SGLang would allocate, page-aligned."""
        page = max(1, self.page_size)
        if self.spec is None:
            if self.tokens and tp in (None, self.parallel.tp) and mem_fraction_static is None \
                    and self.pool_bytes is None:
                # Log only: scale the token count by the value-size ratio (exact for 16/8-bit).
                n = int(self.tokens * VALUE_COST[self.current_dtype] / VALUE_COST[dtype])
                return n // page * page, None
            kv, _, _ = self.budget_bytes(tp, mem_fraction_static)
            cost = self.cost_per_token(dtype)
            if kv is None or not cost:
                return None, None
            return int(kv // cost) // page * page, None
        alloc, _ = self.allocation(dtype, tp, mem_fraction_static)
        if alloc is None:
            return None, None
        return alloc.tokens, alloc.swa_tokens

    # -- measurements -----------------------------------------------------------------------
    def measured(self) -> dict[str, float] | None:
        """Logged bytes per token: from the pool line, else (estimate) from the memory lines."""
        if not self.pool_gib:
            if self.memory is not None and self.tokens and self.spec is None:
                bpt = self.memory.rest_gib() * GIB / self.tokens
                return {"bytes_per_token": bpt, "lo": bpt, "hi": bpt, "gib": 0.0,
                        "from_memory_lines": 1.0}
            return None
        n = self._pool_tokens()
        if not n:
            return None
        return measured(n, self.page_size, self.pool_gib.get("k_gib"),
                        self.pool_gib.get("v_gib"), self.pool_gib.get("kv_gib"))

    def _pool_tokens(self) -> int | None:
        if self.pool_is_swa and self.swa_logged:
            return self.swa_logged.get("swa_tokens")
        return self.tokens

    def measured_rows(self) -> int | None:
        """The rows `measured` divides the pool line by: its tokens plus the padding page
        (`cell.pool_rows`); None where the measure is not a pool line's."""
        n = self._pool_tokens()
        meas = self.measured()
        if not n or meas is None or meas.get("from_memory_lines"):
            return None
        return pool_rows(n, self.page_size)

    def calibration(self) -> dict[str, Any] | None:
        """The logged pool line against what this release would print for the same tokens."""
        meas = self.measured()
        cell = self.cell(self.current_dtype)
        if meas is None or cell is None:
            return None
        n = self.tokens or 0
        if self.pool_is_swa and self.swa_logged:
            n = self.swa_logged.get("swa_tokens") or 0
        k, v = printed_bytes(n, cell, self.page_size, swa_pool=self.pool_is_swa)
        per_row = round((k + v) / pool_rows(n, self.page_size)) if n else None
        out = compare(meas, cell, per_row)
        if n:
            size = (f"KV size: {k / GIB:.2f} GB" if cell.kind == "mla" else
                    f"K size: {k / GIB:.2f} GB, V size: {v / GIB:.2f} GB")
            out["predicted_line"] = f"#tokens: {n}, {size}"
        out["printed_includes"] = _printed_includes(cell, self.rules_version)
        if not out["ok"] and self.spec is not None:
            def row_bytes(c: Cell) -> int:
                pk, pv = printed_bytes(n, c, self.page_size, swa_pool=self.pool_is_swa)
                return round((pk + pv) / pool_rows(n, self.page_size))

            out["likely_cause"] = diagnose(self.spec, self.current_dtype, self.parallel, meas,
                                           swa_pool=self.swa_on(), version=self.rules_version,
                                           args=self.sargs, printed=row_bytes if n else None)
        return out

    def memory_check(self) -> dict[str, Any] | None:
        """Replay SGLang's profile step from the memory lines and compare with the pool."""
        if self.memory is None:
            return None
        out = self.memory.to_dict()
        out["estimate"] = True
        out["note"] = ("pre is the 'Load weight begin' avail (SGLang's real pre is measured "
                       "earlier and min-reduced over ranks), so this is an estimate")
        if self.cell(self.current_dtype) is not None:
            try:
                alloc = self._allocate(int(self.memory.rest_gib() * GIB), self.current_dtype,
                                       None, fixed=False)
            except CannotModel:
                return out
            out["predicted_tokens"] = alloc.tokens
            if alloc.mamba is not None:
                out["predicted_mamba_slots"] = alloc.mamba.slots
            if self.tokens and alloc.tokens is not None:
                out["logged_tokens"] = self.tokens
                out["difference"] = round(alloc.tokens / self.tokens - 1, 4)
        return out

    # -- outputs ----------------------------------------------------------------------------
    def contexts(self, context_lengths: list[int] | tuple[int, ...] | None) -> list[int]:
        return request_lengths(self.context_len, context_lengths)

    def flag(self, dtype: str) -> tuple[str | None, str]:
        """The flag that selects `dtype`, never one the model or release refuses."""
        refusal = dtype_refusal(self.spec, dtype, self.rules_version,
                                self.sargs.decode_backend, architecture=self.architecture)
        if refusal is not None:
            return None, f"SGLang refuses it: {refusal}."
        flag, advice = kv_dtype_flag(dtype, self.version, checkpoint_kv_fp8=self.checkpoint_kv_fp8,
                                     model_dtype=self.model_dtype)
        arch = self.spec.arch if self.spec is not None else self.architecture
        spelling = kv_dtype_spelling(dtype, arch, self.rules_version)
        if flag is not None and spelling is not None:
            flag = f"--kv-cache-dtype {spelling}"
            advice = f"{arch} accepts only the spelling {spelling!r} (not 'bf16'); {advice}"
        return flag, advice

    def scenario(self, dtype: str, *, tp: int | None = None,
                 mem_fraction_static: float | None = None,
                 context_lengths: list[int] | tuple[int, ...] | None = None,
                 target_concurrency: float | None = None) -> Scenario:
        """One what-if row: tokens, bytes/token, concurrency, max_running_requests, flag."""
        return scenario.build_row(self, dtype, tp=tp, mem_fraction_static=mem_fraction_static,
                         context_lengths=context_lengths, target_concurrency=target_concurrency)

    def scenarios(self, dtypes: list[str] | tuple[str, ...] | None = None,
                  context_lengths: list[int] | tuple[int, ...] | None = None,
                  **kw: Any) -> list[Scenario]:
        wanted = list(dtypes) if dtypes else list(DEFAULT_DTYPES)
        if self.version.hi < (0, 5, 16):
            wanted = ["fp4_e2m1" if d == "nvfp4" else d for d in wanted]
        if self.current_dtype not in wanted and self.current_dtype in ELEM_BYTES:
            wanted.insert(0, self.current_dtype)
        return [self.scenario(d, context_lengths=context_lengths, **kw) for d in wanted
                if d in ELEM_BYTES and d != "fp32"]

    def report(self, dtypes: list[str] | tuple[str, ...] | None = None,
               context_lengths: list[int] | tuple[int, ...] | None = None) -> WhatIf:
        """The report's what-if (`whatif` of `kvtui check --json`, `kvtui whatif --json`)."""
        return scenario.build_report(self, dtypes, context_lengths)

    def current(self) -> Current:
        return scenario.current(self)

    def mamba_budget(self) -> dict[str, Any] | None:
        return scenario.mamba_budget(self)

    def explanation(self) -> list[str]:
        return scenario.explanation(self)

    def rule_notes(self) -> list[str]:
        return version_notes(self)

    def inverse(self, dtype: str, context_len: int, concurrency: float, *,
                tp: int | None = None, mem_fraction_static: float | None = None) -> Inverse:
        """What `concurrency` requests of `context_len` tokens in `dtype` would take, at the
        logged setting or at `tp` / `mem_fraction_static` (`kvtui.engines.sglang.inverse`)."""
        return inverse.inverse(self, dtype, context_len, concurrency, tp=tp,
                       mem_fraction_static=mem_fraction_static)


def _printed_includes(cell: Cell, version: tuple[int, int, int]) -> str:
    if cell.dtype in ("nvfp4", "fp4_mx_block16", "mxfp8") or (
            cell.dtype == "fp4_e2m1" and version >= (0, 5, 16)):
        return "values + scales (+ dequant workspace): printed from 0.5.16"
    if cell.dtype == "fp4_e2m1":
        return "packed FP4 values only: the scales are budgeted but not printed before 0.5.16"
    if cell.index_bytes:
        return "latent + DSA indexer keys (page-rounded)"
    return "K/V values"


__all__ = ["APPROX_DTYPES", "DEFAULT_DTYPES", "VALUE_COST", "Calculator",
           "MemoryFacts", "Rest", "sglang_max_running_requests"]


def _as_core(calc: Calculator) -> CoreCalculator:
    """Never called: mypy checks here that this class is a core `Calculator`."""
    return calc


def _as_sizer(calc: Calculator) -> Sizer:
    """Never called: mypy checks here that this class is what `scenario` and `inverse` read."""
    return calc
