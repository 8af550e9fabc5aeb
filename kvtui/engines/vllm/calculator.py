"""The what-if for a vLLM run: the same KV cache memory in another dtype, TP or utilization.

Why hold the blocks' bytes fixed: vLLM sizes the cache as `available // (page x group_size)`
after the weights, activations and CUDA graphs are set aside from `total x
gpu_memory_utilization`, and the KV dtype changes none of those. So "what if BF16" is: the same
bytes divided by the BF16 block (`sizing.layout`), reported the way that release reports it.
The logged "GPU KV cache size" and "Available KV cache memory" check the arithmetic first
(`calibration`): the model spec, the block size and the era's rules must reproduce the logged
tokens from the logged memory within its 0.01 GiB rounding.

The object answers the same questions as the SGLang calculator (`report`, `scenario`,
`current`, `inverse`, `tokens_for`, `budget_bytes`), so the report, `kvtui whatif` and the TUI's
what-if pane use it unchanged; `mem_fraction_static` there is the engine's memory knob, in the
knob's unit: for vLLM `--gpu-memory-utilization` (a fraction), or on a run started with
`--kv-cache-memory-bytes` that flag (bytes per GPU, `kvbytes.py`): vLLM then reserves exactly
that many bytes on every GPU whatever the TP, and the utilization sizes nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from kvtui.core.capacity import ModelSpec, Parallel
from kvtui.core.capacity.calculator import Calculator as CoreCalculator
from kvtui.core.capacity.parallel import tp_refused
from kvtui.core.capacity.whatif import MemoryKnob, floor_fit
from kvtui.core.deployment import sized_label
from kvtui.core.report_types import Current, Inverse, Scenario, WhatIf
from kvtui.engines.vllm import inverse, kvbytes, scenario
from kvtui.engines.vllm.flags import FLAGS
from kvtui.engines.vllm.sizer import DEFAULT_DTYPES, ROUNDING_GIB, VALUE_COST, Rows
from kvtui.engines.vllm.sizing import (
    GIB,
    Layout,
    Rules,
    batch_token_defaults,
    chunked_hybrid,
    in_flight_batches,
    layout,
    rules_for,
)
from kvtui.engines.vllm.states import NEMOTRON_H_SSM_DEFAULT
from kvtui.engines.vllm.version import VLLM_LINE, VersionRange, kv_dtype_flag

# The budget's words by the line that gave it (`available_said`; V1's own "Available KV cache
# memory" is the default): V0's "the rest of the memory reserved for KV Cache is %.2fGiB"
# (worker.py:225 in 0.6.5, :274 in 0.10.2), V1's "Current kv cache memory in use is %d bytes"
# (gpu_worker.py:373 in 0.10.2).
_SAID = {"reserved": "memory reserved for KV Cache", "in_use": "kv cache memory in use",
         "extended": "Extended KV cache to"}
# The extensible KV cache (vLLM 0.34, v1/worker/extensible_kv_cache.py): after warmup it takes
# min(requested - non-KV use, free + committed - margin) - max(transient peak, torch growth)
# (`measure_kv_cache_bytes`, :592-618), margin = max(1 GiB on CUDA (3 on ROCm), 0.75 x the
# transient peak) (:64-65); requested = ceil(total x gpu_memory_utilization)
# (v1/worker/utils.py:742-743), the utilization None -> 1.0 in this mode (config/cache.py:216,
# :494-500).
EXT_MARGIN_FLOOR = GIB
EXT_MARGIN_FRACTION = 0.75


@dataclass
class Calculator:
    """All facts one vLLM what-if needs (built by `fromrun.calculator_from_run`)."""

    current_dtype: str
    # the log names no KV dtype: the current one is the model dtype `auto` stands for
    current_dtype_assumed: bool = False
    spec: ModelSpec | None = None
    spec_reason: str = ""
    tokens: int | None = None  # the logged "GPU KV cache size"
    blocks_logged: int | None = None
    blocks_forced: int | None = None  # num_gpu_blocks_override
    # "Maximum concurrency for N tokens per request: X.XXx" as logged: X.XX, and N (None: the
    # run's context_len)
    concurrency_logged: float | None = None
    concurrency_logged_at: int | None = None
    context_len: int | None = None  # max_model_len
    available_gib: float | None = None  # "Available KV cache memory" (min over workers)
    # the line that gave `available_gib` when it is not V1's "Available KV cache memory": the
    # memory profile's `kv_said` (parsers.kinds), V0's wordings and V1's summary
    available_said: str | None = None
    workers_logged: int = 1  # how many workers' memory lines the log shows
    parallel: Parallel = field(default_factory=Parallel)
    # where TP / PP came from when rank tags imply them (`fromrun._parallel`): the JSON's
    # current.parallel `basis`, `ranks_seen` and `label`; None when the log states them
    parallel_origin: dict[str, Any] | None = None
    tp_unknown: bool = False  # neither the log nor --tp gives TP: 1 assumed
    user_block: int | None = None  # --block-size (a floor for hybrids)
    logged_block: int | None = None  # the block size the log shows vLLM settled on
    max_batched: int | None = None
    max_num_seqs: int | None = None
    # The values vLLM's default max_num_seqs can take where none is given (a plan:
    # `limits.plan_defaults`); () when not claimed.
    max_num_seqs_default: tuple[int, ...] = ()
    model_dtype: str = "bf16"
    ssm_dtype: str | None = None
    weights_gib: float | None = None
    utilization: float | None = None
    total_gib: float | None = None
    total_basis: str = ""
    version: VersionRange = field(default_factory=VLLM_LINE.any)
    candidates: list[Rules] = field(default_factory=list)
    checkpoint_kv_fp8: bool | None = None
    notes: list[str] = field(default_factory=list)
    memory: Any = None  # the SGLang calculator's memory lines; vLLM's budget is `utilization`
    padding_logged: int | None = None  # "Add N padding layers"
    speculative_method: str | None = None
    speculative_tokens: int | None = None
    prefix_caching: bool | None = None
    mamba_mode: str | None = None  # logged "Mamba cache mode is set to 'align'"
    # the log shows the attention page sized to a Mamba state ("Setting attention block size to
    # N tokens to ensure that attention page size is >= mamba page size." / "Padding mamba page
    # size by ...", platforms/interface.py:670-699 in 0.23.0): a hybrid, whatever the spec says
    mamba_logged: bool = False
    # --kv-cache-memory-bytes: the run's value (its arguments), and whether the run is sized by
    # it (its arguments, or the "reserved ... as specified by kv_cache_memory_bytes" line)
    kv_bytes: int | None = None
    sized_by_bytes: bool = False
    # 0.33's multimodal frontend reservation as logged ("Reserving X GiB ...; KV cache memory
    # reduced to Y GiB", multimodal/gpu_ipc_memory.py:255-266): X, and whether `available_gib`
    # is that Y (the budget the pool is sized by)
    reserved_gib: float | None = None
    budget_reduced: bool = False
    # PP's layers per stage as logged ("Hidden layers were unevenly partitioned: [11,11,10]")
    pp_partition: tuple[int, ...] | None = None
    # a KV budget per GPU the user gives (`kvtui whatif --engine vllm --pool-gib G`, no log)
    pool_bytes: int | None = None
    # --async-scheduling / --no-async-scheduling as the arguments give it, or False when vLLM
    # logged turning it off ("Async scheduling is disabled because ..."); None: vLLM's default
    async_scheduling: bool | None = None
    # False: the log says vLLM turned the hybrid KV cache manager off for chunked local
    # attention ("There is a latency regression when using chunked local attention ...")
    chunked_hybrid_logged: bool | None = None
    max_batched_given: bool = False  # max_batched is the what-if's --max-num-batched-tokens
    # vLLM 0.34's extensible KV cache sized this pool after warmup (its lines are in the log, or
    # a 0.34 plan), and the "Memory after warmup" figures (GiB: warmup_free_gib,
    # kv_committed_gib, transient_kept_gib, transient_peak_gib, requested_gib) with the free
    # memory at startup ("Free memory on device (F/T GiB)"), when logged
    extensible: bool = False
    # DeepSeek sparse MLA's FP8 rows as the log says (True: fp8_ds_mla, 656 B; False: the plain
    # 576 B; None: not logged, `ds_layout`)
    ds_mla_fp8: bool | None = None
    warmup: dict[str, float] | None = None
    initial_free_gib: float | None = None
    # why kvtui does not size this model on vLLM (`coverage.unmodelled`, or the spec's own
    # `unsupported`): every figure but the logged ones is then withheld, never approximated
    unmodelled: str | None = None
    _variant: tuple[Rules, int, int] | None = None
    # (scheduler batches in flight, max_num_batched_tokens, hybrid KV cache manager on) that
    # reproduce this log: what a windowed group reserves per request (`sizing.in_flight_batches`)
    _flight: tuple[int, int, bool] | None = None
    flight_score: int = 0
    flight_ties: list[tuple[int, int]] = field(default_factory=list)

    engine = "vllm"  # the engine seam's name (`kvtui.core.engine.load`)
    engine_label = "vLLM"

    @property
    def rules_version(self) -> tuple[int, int, int]:
        """The newest release the log's range allows: the rules the arithmetic follows."""
        return self.version.hi
    tp_flag = FLAGS.tensor_parallel  # what a TP what-if tells the operator to pass

    @property
    def tp_label(self) -> str | None:
        """TP in the header's words when the log does not state it (`TP>=6 (sized as 8)`,
        `TP=? (assumed 1)`: kvtui.core.deployment.sized_label); None when it does."""
        labels = (self.parallel_origin or {}).get("label") or {}
        if "tp" in labels:
            return str(labels["tp"])
        if self.tp_unknown:
            return sized_label("TP", None, None, (), assumed=self.parallel.tp)
        return None

    def memory_knob(self) -> MemoryKnob:
        if self.sized_by_bytes:
            return MemoryKnob(kvbytes.NAME, kvbytes.FLAG, self._bytes_now(), kvbytes.SHORT,
                              unit="bytes", parse=kvbytes.parse_knob)
        return MemoryKnob("gpu_memory_utilization", "--gpu-memory-utilization", self.utilization,
                          "gpu util")

    def sized_by_kv_bytes(self) -> Calculator:
        """This run as if started with --kv-cache-memory-bytes (its knob is then the bytes, its
        value the KV budget the run has): `kvtui whatif --kv-cache-memory-bytes N`."""
        return replace(self, sized_by_bytes=True, notes=list(self.notes))

    def _bytes_now(self) -> float | None:
        """The run's KV budget per GPU in bytes: its --kv-cache-memory-bytes, else the logged
        budget (the reserved or available GiB, to 0.01 GiB)."""
        if self.kv_bytes is not None:
            return float(self.kv_bytes)
        base, _ = self._logged_budget()
        return float(base) if base is not None else None

    def knob_now(self) -> float | None:
        return self.memory_knob().value

    # -- the layout --------------------------------------------------------------------------
    @property
    def page_size(self) -> int:
        lay = self.layout(self.current_dtype)
        return lay.block_size if lay is not None else (self.logged_block or 16)

    @property
    def rules(self) -> Rules:
        return self.variant[0]

    @property
    def variant(self) -> tuple[Rules, int, int]:
        """(era rules, draft layers, Mamba blocks per request) that reproduce this log."""
        if self._variant is None:
            self._choose_variant()
        assert self._variant is not None
        return self._variant

    @property
    def flight(self) -> tuple[int, int, bool]:
        """(batches in flight, max_num_batched_tokens, hybrid manager on) for windowed groups."""
        if self._flight is None:
            self._choose_variant()
        assert self._flight is not None
        return self._flight

    def with_max_batched(self, tokens: int) -> Calculator:
        """This run with another max_num_batched_tokens (`kvtui whatif --max-num-batched-tokens`):
        what a sliding-window or chunked group reserves per request follows it."""
        out = replace(self, max_batched=tokens, max_batched_given=True, notes=list(self.notes),
                      _variant=None, _flight=None)
        if self.pool_bytes is not None:  # a plan: its pool is what the budget gives (plan.py)
            out.tokens = None
            out.tokens = out.tokens_for(self.current_dtype)[0]
            return out
        lay = self.layout(self.current_dtype)
        blocks = self._blocks_from_tokens(lay) if lay is not None and lay.swa_groups else None
        if lay is None or blocks is None:
            return out  # no windowed group (nothing moves), or no pool to re-read
        # the same blocks, as vLLM would print them with these batch tokens: the log's own
        # figures were printed with the run's value
        out.blocks_logged = blocks
        out.concurrency_logged = out.concurrency_logged_at = None
        new = out.layout(self.current_dtype)
        if new is not None:
            out.tokens = new.tokens(blocks, self.context_len)
        out.notes.append(f"max_num_batched_tokens {tokens:,} given: the logged pool's {blocks:,} "
                         "blocks re-read with it (the log's own size and concurrency were "
                         "printed with the run's value)")
        return out

    def ds_layout(self, dtype: str) -> tuple[str, str | None]:
        """(the dtype vLLM sizes a DSA model's FP8 KV as, why it is not exact or None). FP8 is
        DeepSeek's 656-byte fp8_ds_mla row in 0.11-0.14 (models/config.py:419-422 in 0.11.0,
        :485-487 in 0.13.0, :522-524 in 0.14.0); from 0.18 the sparse backend decides: 656 on
        FLASHMLA_SPARSE, the plain 576 bytes on FLASHINFER_MLA_SPARSE (model_executor/layers/
        attention/mla_attention.py:358-375, :524-544 in 0.33.0)."""
        spec = self.spec
        if spec is None or not spec.is_dsa or dtype not in ("fp8_e4m3", "fp8_e5m2"):
            return dtype, None
        if self.ds_mla_fp8 is not None:
            return ("fp8_ds_mla" if self.ds_mla_fp8 else dtype), None
        if self.version.hi < (0, 15, 0):
            return "fp8_ds_mla", None
        return "fp8_ds_mla", ("FP8 sized as DeepSeek's 656-byte fp8_ds_mla row "
                              "(FLASHMLA_SPARSE); FLASHINFER_MLA_SPARSE stores 576 bytes, and "
                              "the log does not say which backend ran")

    def layout(self, dtype: str, tp: int | None = None,
               rules: Rules | None = None,
               variant: tuple[Rules, int, int] | None = None) -> Layout | None:
        if self.spec is None or self.unmodelled:
            return None
        dtype = self.ds_layout(dtype)[0]
        v = variant or (self.variant if rules is None else (rules, *self.variant[1:]))
        r = v[0]
        batches, batch_tokens, hybrid_manager = self.flight
        block = self.user_block
        hybrid = bool(self.spec.linear_layer_ids or self.spec.swa_layer_ids)
        if dtype == self.current_dtype and tp in (None, self.parallel.tp) and self.logged_block:
            block = self.logged_block  # what vLLM settled on for this run
        elif not hybrid and self.logged_block:
            block = self.logged_block  # a non-hybrid block size does not follow the dtype
        try:
            return layout(self.spec, dtype, tp or self.parallel.tp, r, block_size=block,
                          model_dtype=self.model_dtype, ssm_dtype=self._ssm(r),
                          pp=self.parallel.pp, draft_layers=v[1], mamba_blocks=v[2],
                          pp_partition=self.pp_partition, hybrid_allocator=hybrid_manager,
                          batches=batches, batch_tokens=batch_tokens,
                          release=self.rules_version)
        except ValueError:
            return None

    def _ssm(self, rules: Rules) -> str | None:
        if self.ssm_dtype:
            return self.ssm_dtype
        lin = self.spec.linear if self.spec is not None else None
        model_type = (self.spec.model_type or "") if self.spec is not None else ""
        if lin is not None and rules.ssm_from_config and model_type.startswith("qwen3_5"):
            return lin.ssm_dtype  # Qwen3_5ForConditionalGenerationConfig (0.22+)
        if self.spec is not None and self.spec.arch == "NemotronHForCausalLM":
            return NEMOTRON_H_SSM_DEFAULT  # NemotronHForCausalLMConfig (states.py)
        return None  # mamba_ssm_cache_dtype auto: the model dtype

    # -- the budget --------------------------------------------------------------------------
    def _blocks_from_tokens(self, lay: Layout) -> int | None:
        """The num_blocks behind the logged token count, when the era's rule can be inverted."""
        if self.blocks_forced is not None:
            return self.blocks_forced
        if self.blocks_logged is not None:
            return self.blocks_logged
        n = self.tokens
        if not n:
            return None
        r = lay.rules.tokens
        if r == "blocks" or (r == "per_group" and lay.groups == 1):
            return n // lay.block_size if n % lay.block_size == 0 else None
        if r == "per_group":
            return n // lay.report_block * lay.groups  # up to groups - 1 blocks more
        if not self.context_len:
            return None
        per_req = lay.blocks_per_request(self.context_len, self.max_batched)
        guess = round(n * per_req / self.context_len)
        for cand in range(max(0, guess - 2), guess + 3):
            if lay.tokens(cand, self.context_len, self.max_batched) == n:
                return cand
        return None

    def _logged_budget(self) -> tuple[int | None, str]:
        """The KV bytes per GPU the log shows: the logged pool's blocks in the current layout,
        else the logged GiB; without a log, the budget the user gave."""
        if self.pool_bytes is not None:
            return self.pool_bytes, f"given: --pool-gib {self.pool_bytes / GIB:g}"
        lay = self.layout(self.current_dtype)
        blocks = self._blocks_from_tokens(lay) if lay is not None else None
        if lay is not None and blocks is not None:
            return blocks * lay.block_bytes, (
                f"{blocks:,} blocks x {lay.block_bytes:,} B (the logged pool in the "
                f"{self.current_dtype} layout)")
        if self.available_gib is not None:
            gib = self.available_gib
            what = "reserved" if self.sized_by_bytes else _SAID.get(
                self.available_said or "", "Available KV cache memory")
            if self.budget_reduced:
                what = "KV cache memory reduced to"  # after the multimodal reservation
            elif not self.sized_by_bytes and self.available_said == "kv_cache_size":
                # as 0.6.4 prints it (worker.py:236, "kv_cache_size=%.2fGiB")
                return int(gib * GIB), (f"kv_cache_size={gib:.2f}GiB (logged: 'Memory "
                                        "profiling results')")
            return int(gib * GIB), f"{what} {gib} GiB (logged)"
        return None, ""

    def _kv_bytes_budget(self, tp: int | None,
                         value: float | None) -> tuple[int | None, str, bool]:
        """The budget of a run sized by --kv-cache-memory-bytes: that value on every GPU, at any
        TP (kvbytes.py); a what-if on the knob replaces it. When the run's value does not give
        the logged pool (0.33 takes a multimodal frontend reservation out of it), the logged
        pool is the budget, and a what-if keeps the shortfall (an estimate)."""
        logged, logged_basis = self._logged_budget()
        reproduces = self.kv_bytes is not None and self._reproduces(self.kv_bytes)
        short = 0
        mm = (f"the {self.reserved_gib:g} GiB vLLM logged reserving for frontend multimodal "
              "decoding (\"KV cache memory reduced to\")") if self.reserved_gib else ""
        if self.reserved_gib:
            # reserve_mm_ipc_gpu_memory takes a fixed reservation out of the flag's value
            # (multimodal/gpu_ipc_memory.py:245-266 in 0.33.0): the log says how much
            short = int(self.reserved_gib * GIB)
            reproduces = self.kv_bytes is not None and self._reproduces(self.kv_bytes - short)
        elif self.kv_bytes is not None and not reproduces and logged is not None:
            short = max(0, self.kv_bytes - logged)
        estimate = False
        if value is not None and value != self.knob_now():
            base: int | None = int(value) - short
            basis = f"{kvbytes.FLAG} {int(value):,} B per GPU (what-if)"
            if mm:
                basis += f", less {mm}"
            elif short:
                basis += (f", less the {short / GIB:.2f} GiB the logged pool lacks against the "
                          f"run's {self.kv_bytes:,} (not logged: an estimate)")
                estimate = True
        elif self.kv_bytes is not None and reproduces and mm:
            base = self.kv_bytes - short
            basis = (f"{kvbytes.FLAG} {self.kv_bytes:,} B per GPU (the run's argument), less "
                     f"{mm}")
        elif self.kv_bytes is not None and reproduces:
            base = self.kv_bytes
            basis = f"{kvbytes.FLAG} {self.kv_bytes:,} B per GPU (the run's argument)"
        else:
            base, basis = logged, logged_basis
            if mm:
                basis += f" ({mm})"
            elif short:
                basis += (f"; the run's {kvbytes.FLAG} {self.kv_bytes:,} gives more: "
                          f"{short / GIB:.2f} GiB went elsewhere (not logged)")
        if tp not in (None, self.parallel.tp) and base is not None:
            basis += (f"; the same bytes per GPU at TP {tp} ({kvbytes.FLAG} is per GPU, "
                      "whatever the TP)")
        return base, basis, estimate

    def _reproduces(self, budget: int) -> bool:
        """Does `budget` give the logged pool in the current layout (or is there none to check)?"""
        lay = self.layout(self.current_dtype)
        blocks = self._blocks_from_tokens(lay) if lay is not None else None
        if lay is None or blocks is None:
            return True
        return lay.blocks(budget) == blocks

    def budget_bytes(self, tp: int | None = None,
                     mem_fraction_static: float | None = None) -> tuple[int | None, str, bool]:
        """(KV bytes per GPU, how it was derived, is it an estimate). `mem_fraction_static` is
        the memory knob's value (`memory_knob`): a utilization, or bytes per GPU."""
        if self.sized_by_bytes:
            return self._kv_bytes_budget(tp, mem_fraction_static)
        base, basis = self._logged_budget()
        estimate = False
        if tp not in (None, self.parallel.tp) and base is not None:
            if self.weights_gib is not None and tp:
                extra = int(self.weights_gib * (1 - self.parallel.tp / tp) * GIB)
                base += extra
                basis += (f"; weights {self.weights_gib} GiB per GPU re-sharded from TP "
                          f"{self.parallel.tp} to {tp}: {extra / GIB:+.2f} GiB")
            else:
                basis += "; the same KV bytes per GPU at the new TP (no weight line)"
            estimate = True
        if mem_fraction_static is not None and base is not None and \
                mem_fraction_static != self.utilization and self.extensible:
            moved = self.extensible_delta(mem_fraction_static)
            if moved is None:
                return None, ("changing --gpu-memory-utilization under the extensible KV cache "
                              "needs the GPU's total memory and the \"Memory after warmup\" "
                              "line"), True
            delta, how = moved
            return base + delta, basis + f"; {how}", True
        if mem_fraction_static is not None and base is not None and \
                mem_fraction_static != self.utilization:
            if self.total_gib is None or self.utilization is None:
                return None, ("changing --gpu-memory-utilization needs the GPU's total memory "
                              "and the current utilization, which this log does not show"), True
            delta = int((mem_fraction_static - self.utilization) * self.total_gib * GIB)
            base += delta
            basis += (f"; --gpu-memory-utilization {self.utilization:g} -> "
                      f"{mem_fraction_static:g} of {self.total_gib:.2f} GiB: "
                      f"{delta / GIB:+.2f} GiB")
            estimate = True
        return base, basis, estimate

    # -- per dtype ---------------------------------------------------------------------------
    def _log_only(self, dtype: str) -> int | None:
        if not self.tokens or dtype not in VALUE_COST:
            return None
        return int(self.tokens * VALUE_COST[self.current_dtype] / VALUE_COST[dtype])

    def _is_logged_setting(self, dtype: str, tp: int | None,
                           mem_fraction_static: float | None) -> bool:
        """Is this the setting the log ran (its dtype, TP and memory knob)?"""
        return (dtype == self.current_dtype and tp in (None, self.parallel.tp)
                and mem_fraction_static in (None, self.knob_now()))

    def tokens_for(self, dtype: str, tp: int | None = None,
                   mem_fraction_static: float | None = None) -> tuple[int | None, int | None]:
        """(GPU KV cache size vLLM would print, None)."""
        if self._is_logged_setting(dtype, tp, mem_fraction_static) and self.tokens:
            return self.tokens, None
        lay = self.layout(dtype, tp)
        if lay is None:
            if (tp in (None, self.parallel.tp) and mem_fraction_static is None
                    and not self.hybrid_unsized() and not self.unmodelled):
                return self._log_only(dtype), None
            return None, None
        budget, _, _ = self.budget_bytes(tp, mem_fraction_static)
        if budget is None:
            return None, None
        return lay.tokens(lay.blocks(budget), self.context_len, self.max_batched), None

    def cost_per_token(self, dtype: str, tp: int | None = None) -> float | None:
        """Pool bytes per token of `dtype` at `tp` (None: the logged TP): the block's bytes
        over the tokens it yields. The layout's own figure where no budget is sized at that TP
        (the weights do not fit it); never the logged TP's figure for another TP (a KV head's
        bytes per GPU change with the split)."""
        other_tp = tp is not None and tp != self.parallel.tp
        lay = self.layout(dtype, tp)
        if lay is None:
            cur = self.measured_bytes_per_token()
            if cur is None or dtype not in VALUE_COST or self.unmodelled or other_tp:
                return None
            return cur * VALUE_COST[dtype] / VALUE_COST[self.current_dtype]
        tokens, _ = self.tokens_for(dtype, tp)
        budget, _, _ = self.budget_bytes(tp)
        if not tokens or budget is None:
            return lay.block_bytes * max(1, lay.groups) / lay.block_size
        return budget / tokens

    def _mamba_bytes(self, tp: int | None = None) -> int:
        return 0  # inside the KV cache's blocks in vLLM, held with the budget

    def concurrency(self, dtype: str, contexts: list[int], tp: int | None = None,
                    mem_fraction_static: float | None = None) -> dict[str, float | None]:
        """Requests of each length the pool fits. Two kinds of figure, kept apart:

        - kvtui's own answer to "how many fit" is cut, never rounded (`floor_fit`): 2.3056 is
          2.30, as no 2.31st request fits;
        - the cell of the setting and the length vLLM itself printed ("Maximum concurrency for
          N tokens per request: %.2fx", v1/core/kv_cache_utils.py:853 / :1017 in 0.10.1, :1311
          in 0.14.1) quotes that figure, rounded as vLLM's "%.2f" rounds it (2.31x), so the
          table never contradicts the log it reproduces (vllm-project/vllm#25350), as
          `tokens_for` quotes the logged "GPU KV cache size"."""
        lay = self.layout(dtype, tp)
        budget, _, _ = self.budget_bytes(tp, mem_fraction_static)
        out: dict[str, float | None] = {}
        logged_at = self.concurrency_logged_at or self.context_len
        quoted = (self.concurrency_logged is not None and logged_at is not None
                  and self._is_logged_setting(dtype, tp, mem_fraction_static))
        for c in contexts:
            if quoted and c == logged_at:
                out[str(c)] = self.concurrency_logged
            elif lay is not None and budget is not None:
                out[str(c)] = floor_fit(*lay.concurrency_ratio(lay.blocks(budget), c,
                                                               self.max_batched))
            elif (self.tokens_below_concurrency() or self.hybrid_unsized()
                  or self.unmodelled):
                out[str(c)] = None  # the tokens do not scale to a length (`explanation`)
            else:
                n, _ = self.tokens_for(dtype, tp, mem_fraction_static)
                out[str(c)] = floor_fit(n, c) if n is not None else None
        return out

    def hybrid_unsized(self) -> bool:
        """A Mamba hybrid without the spec: its tokens are not the pool scaled. vLLM 0.22+ print
        "GPU KV cache size" as int(max_concurrency x max_model_len) (`_report_kv_cache_config`,
        v1/core/kv_cache_utils.py:1735-1744 in 0.23.0), so `_tokens_below_concurrency` cannot
        tell a hybrid there, and a request's Mamba state neither follows --kv-cache-dtype nor
        the length the way its attention pages do."""
        return self.mamba_logged and self.layout(self.current_dtype) is None

    def tokens_below_concurrency(self) -> bool:
        """Does the logged pool hold fewer tokens per token of a request than its logged
        concurrency, beyond the %.2f rounding (and V1 0.2x's int() of concurrency x length)?
        A dense pool never does (V1: blocks x block size / max_model_len >= blocks /
        cdiv(max_model_len, block size); V0 prints that ratio): so the pool is in several KV
        cache groups (a hybrid, "GPU KV cache size" num_blocks // groups x block size,
        v1/core/kv_cache_utils.py:1288-1311 in 0.14.1), and without the spec no other length
        or dtype is the tokens scaled."""
        at = self.concurrency_logged_at or self.context_len
        if self.concurrency_logged is None or not at or not self.tokens:
            return False
        return self.tokens / at < self.concurrency_logged - 0.005 - 1 / at

    def concurrency_exact(self) -> float | None:
        """vLLM's own float behind the logged "Maximum concurrency ...: %.2fx" (num_blocks /
        blocks per request, `get_max_concurrency_for_kv_cache_config` in v1/core/
        kv_cache_utils.py of 0.10.1 and 0.14.1; V0: blocks x block size / max_model_len), when
        the layout reproduces the printed figure from the logged pool; None when it does not
        (no spec, a block count the pool's tokens do not fix, another figure)."""
        at = self.concurrency_logged_at or self.context_len
        lay = self.layout(self.current_dtype)
        if self.concurrency_logged is None or not at or lay is None:
            return None
        if (lay.rules.tokens == "per_group" and lay.groups > 1 and self.blocks_logged is None
                and self.blocks_forced is None):
            return None  # tokens = blocks // groups x block size: the blocks are not fixed
        n = self._blocks_from_tokens(lay)
        if n is None:
            return None
        exact = lay.concurrency(n, at, self.max_batched)
        return exact if f"{exact:.2f}" == f"{self.concurrency_logged:.2f}" else None

    # -- measurements ------------------------------------------------------------------------
    def measured_bytes_per_token(self) -> float | None:
        if self.available_gib is None or not self.tokens:
            return None
        return self.available_gib * GIB / self.tokens

    def _tokens_at(self, lay: Layout, gib: float) -> int:
        return lay.tokens(lay.blocks(int(gib * GIB)), self.context_len, self.max_batched)

    def calibration(self, variant: tuple[Rules, int, int] | None = None
                    ) -> dict[str, Any] | None:
        """Do the spec and the rules reproduce the logged pool from the logged memory?"""
        lay = self.layout(self.current_dtype, variant=variant)
        if lay is None or self.available_gib is None or not self.tokens or \
                self.blocks_forced is not None:
            return None
        lo = self._tokens_at(lay, max(0.0, self.available_gib - ROUNDING_GIB))
        hi = self._tokens_at(lay, self.available_gib + ROUNDING_GIB)
        mid = self._tokens_at(lay, self.available_gib)
        within = lo <= self.tokens <= hi
        ratio = mid / self.tokens if self.tokens else float("nan")
        out = {
            "logged_tokens": self.tokens, "computed_tokens": mid, "computed_interval": [lo, hi],
            "available_gib": self.available_gib, "block_size": lay.block_size,
            "rules": lay.rules.name, "within_rounding": within, "ratio": round(ratio, 4),
            "ok": within or abs(ratio - 1) <= 0.02,
        }
        workers = self.parallel.tp * self.parallel.pp
        if not within and self.tokens < lo and self.workers_logged < workers:
            # vLLM sizes every worker's pool by the smallest num_blocks of all workers
            # (get_kv_cache_configs, kv_cache_utils.py 0.11.0); this log shows the memory of
            # fewer workers than there are, so it only bounds the pool from above.
            out["bound"] = "upper"
            out["ok"] = True
            out["note"] = (f"the log shows {self.workers_logged} of {workers} workers' memory; "
                           "vLLM takes the smallest, so another worker had less")
        return out

    def _variants(self) -> list[tuple[Rules, int, int]]:
        """Every (rules, draft layers, Mamba blocks) the log's release range and flags allow,
        the likeliest first."""
        rules = self.candidates or [rules_for((0, 33, 0), (0, 33, 0), False)[0]]
        spec = self.spec
        drafts = [0]
        if spec is not None and spec.nextn_layers and (spec.linear_layer_ids or
                                                        spec.swa_layer_ids):
            mtp = (self.speculative_method or "").lower() in ("mtp", "qwen3_next_mtp")
            drafts = [spec.nextn_layers, 0] if mtp else [0, spec.nextn_layers]
        extra = self.speculative_tokens or 0
        if self.mamba_mode == "align":
            mambas = [2 + extra]
        elif self.mamba_mode == "none":
            mambas = [1 + extra]
        elif self.prefix_caching:
            mambas = [2 + extra, 1 + extra]
        else:
            mambas = [1 + extra, 2 + extra]
        out: list[tuple[Rules, int, int]] = []
        for r in rules:
            for m in (mambas if r.tokens != "blocks" else [1]):
                out.extend((r, d, m) for d in drafts)
        return out

    def _fits(self, variant: tuple[Rules, int, int]) -> int:
        """How many of the log's own figures this variant reproduces (-1: it contradicts one)."""
        lay = self.layout(self.current_dtype, variant=variant)
        if lay is None:
            return 0
        score = 0
        if self.padding_logged is not None:
            if lay.padding_layers != self.padding_logged:
                return -1
            score += 1
        if self.tokens and self.context_len and self.concurrency_logged is not None and \
                variant[0].tokens != "blocks":
            n = self._blocks_from_tokens(lay)
            if n is None or round(lay.concurrency(n, self.context_len, self.max_batched),
                                  2) != round(self.concurrency_logged, 2):
                return -1
            score += 1
        cal = self.calibration(variant)
        if cal is not None:
            if not cal["within_rounding"]:
                return -1 if cal.get("bound") != "upper" else score
            score += 1
        return score

    def _flights(self) -> list[tuple[int, int, bool]]:
        """Every (batches in flight, max_num_batched_tokens, hybrid manager on) the log's
        releases and settings allow for its windowed groups, vLLM's default first: the batch
        tokens logged or given, else the API server's default tiers (`batch_token_defaults`);
        chunked local attention turns the hybrid manager off before 0.14 (`chunked_hybrid`),
        and with an EAGLE draft in every release read (config/vllm.py:2239-2245 in 0.33.0)."""
        spec = self.spec
        lo, hi = self.version.lo, self.version.hi
        tokens = [self.max_batched] if self.max_batched else batch_token_defaults(
            hi, self.total_gib)
        if spec is None or not spec.swa_layer_ids:
            return [(1, tokens[0], True)]
        batches = in_flight_batches(lo, hi, self.parallel.pp, self.async_scheduling)
        hybrid = [True]
        if spec.attention_chunk_size:
            eagle = (self.speculative_method or "").lower().startswith("eagle")
            hybrid = [False] if self.chunked_hybrid_logged is False or eagle else \
                chunked_hybrid(lo, hi)
        return [(b, t, h) for h in hybrid for b in batches for t in tokens]

    def _choose_variant(self) -> None:
        """Set the variant and the flight that reproduce the most of the log's own figures
        (the first, vLLM's default, on a tie or without a log)."""
        variants = self._variants()
        flights = self._flights()
        if self.spec is None or len(variants) * len(flights) == 1:
            self._variant, self._flight = variants[0], flights[0]
            return
        best: tuple[int, tuple[Rules, int, int], tuple[int, int, bool]] | None = None
        scored: list[tuple[int, tuple[int, int, bool]]] = []
        for fl in flights:
            self._flight = fl
            for v in variants:
                score = self._fits(v)
                scored.append((score, fl))
                if best is None or score > best[0]:
                    best = (score, v, fl)
        assert best is not None
        self._variant, self._flight = best[1], best[2]
        self.flight_score = best[0]
        # the other (batches, batch tokens) that reproduce the log as well: not fixed by it
        self.flight_ties = sorted({fl[:2] for sc, fl in scored if sc == best[0]} -
                                   {best[2][:2]})

    # -- outputs -----------------------------------------------------------------------------
    def flag(self, dtype: str) -> tuple[str | None, str]:
        return kv_dtype_flag(dtype, self.version, model_dtype=self.model_dtype,
                             checkpoint_kv_fp8=self.checkpoint_kv_fp8)

    def scenario(self, dtype: str, *, tp: int | None = None,
                 mem_fraction_static: float | None = None,
                 context_lengths: list[int] | tuple[int, ...] | None = None,
                 target_concurrency: float | None = None) -> Scenario:
        """One what-if row (`kvtui.engines.vllm.scenario.build_row`)."""
        return scenario.build_row(self, dtype, tp=tp, mem_fraction_static=mem_fraction_static,
                                  context_lengths=context_lengths,
                                  target_concurrency=target_concurrency)

    def scenarios(self, dtypes: list[str] | tuple[str, ...] | None = None,
                  context_lengths: list[int] | tuple[int, ...] | None = None,
                  **kw: Any) -> list[Scenario]:
        return scenario.build_rows(self, dtypes, context_lengths, **kw)

    def current(self) -> Current:
        return scenario.current(self)

    def explanation(self) -> list[str]:
        return scenario.explanation(self)

    def knob_facts(self) -> dict[str, Any]:
        return scenario.knob_facts(self)

    def report(self, dtypes: list[str] | tuple[str, ...] | None = None,
               context_lengths: list[int] | tuple[int, ...] | None = None) -> WhatIf:
        """The report's what-if (`kvtui.engines.vllm.scenario.build_report`)."""
        return scenario.build_report(self, dtypes, context_lengths)

    def inverse(self, dtype: str, context_len: int, concurrency: float, *,
                tp: int | None = None, mem_fraction_static: float | None = None) -> Inverse:
        """What `concurrency` requests of `context_len` tokens in `dtype` would take, at the
        logged setting or at `tp` / the memory knob's value (`kvtui.engines.vllm.inverse`)."""
        return inverse.inverse(self, dtype, context_len, concurrency, tp=tp,
                               mem_fraction_static=mem_fraction_static)

    def _extensible_avail(self, util: float) -> int | None:
        """What the extensible KV cache takes after warmup at `util` (`measure_kv_cache_bytes`,
        extensible_kv_cache.py:613-618 in 0.34.0), from the "Memory after warmup" figures; the
        free memory at startup, when not logged, taken as the total (nothing else on the GPU).
        Never more than the capacity reserved from the profiling estimate, which moves with the
        requested memory (`min(..., scheduler num_blocks)`, kv_cache_planning.py:1883-1884;
        "Available KV cache memory" = requested - non-KV - CUDA graphs, gpu_worker.py:775-779)."""
        w = self.warmup or {}
        total = self.total_gib
        need = ("warmup_free_gib", "kv_committed_gib", "transient_kept_gib")
        if total is None or any(w.get(k) is None for k in need):
            return None
        free, committed, kept = (w[k] * GIB for k in need)
        init_free = (self.initial_free_gib if self.initial_free_gib is not None else total) * GIB
        margin = max(EXT_MARGIN_FLOOR, EXT_MARGIN_FRACTION * (w.get("transient_peak_gib") or 0)
                     * GIB)
        requested = math.ceil(total * GIB * util)
        non_kv = init_free - free - committed
        measured = min(requested - non_kv, free + committed - margin) - kept
        est = w.get("estimate_gib")
        if est is not None:
            now = self.utilization if self.utilization is not None else 1.0
            measured = min(measured, est * GIB + (util - now) * total * GIB)
        return int(max(0.0, measured))

    def extensible_delta(self, util: float) -> tuple[int, str] | None:
        """(bytes the pool gains at `util`, how) under the extensible KV cache."""
        now = self.utilization if self.utilization is not None else 1.0
        a, b = self._extensible_avail(util), self._extensible_avail(now)
        if a is None or b is None:
            return None
        assumed = ("" if self.initial_free_gib is not None else
                   "; the free memory at startup not logged: taken as the whole GPU")
        if (self.warmup or {}).get("estimate_gib") is None:
            assumed += ("; the cap of the profiled capacity (within the CUDA graph estimate's "
                        "error of the measured figure) not applied: its estimate was replaced")
        return a - b, (f"--gpu-memory-utilization {now:g} -> {util:g} under the extensible KV "
                       f"cache (0.34: sized after warmup from measured free memory, capped at "
                       f"the utilization's share of {self.total_gib:.2f} GiB): "
                       f"{(a - b) / GIB:+.2f} GiB{assumed}")

    def shardable_tp(self, tp: int) -> bool:
        """Would vLLM shard this model over `tp` GPUs (`tp_refused`)?"""
        if self.spec is None:
            return False
        kv = None if self.spec.is_mla else self.spec.num_kv_heads
        return tp_refused(self.spec.num_attention_heads, kv, tp) is None



def _as_core(calc: Calculator) -> CoreCalculator:
    """Never called: mypy checks here that this class is a core `Calculator`."""
    return calc


def _as_sizer(calc: Calculator) -> Rows:
    """Never called: mypy checks here that this class is what `inverse` and `scenario`
    read."""
    return calc


# DEFAULT_DTYPES, ROUNDING_GIB and VALUE_COST live in `sizer` (the rows read them too) and are
# named here as they always were.
__all__ = ["DEFAULT_DTYPES", "EXT_MARGIN_FLOOR", "EXT_MARGIN_FRACTION", "ROUNDING_GIB",
           "VALUE_COST", "Calculator"]
