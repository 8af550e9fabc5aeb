"""What vLLM's what-if assembly (`scenario`: the rows, the current setting, the report) and its
inverse (`inverse`) ask of the calculator: the sizer's answers at a setting, and the run's facts;
with the dtype tables both sides read.

Why protocols apart from `calculator`: the calculator hands the rows and the inverse question to
`scenario` and `inverse`, which must not import it back (an import circle, issue 41).
`kvtui.engines.vllm.calculator.Calculator` satisfies them (mypy checks that at
`calculator._as_sizer`).
"""

from __future__ import annotations

from typing import Any, Protocol

from kvtui.core.capacity.modelspec import ModelSpec
from kvtui.core.capacity.parallel import Parallel
from kvtui.core.capacity.whatif import MemoryKnob
from kvtui.core.releases import VersionRange
from kvtui.core.report_types import Inverse
from kvtui.engines.vllm.sizing import Layout

DEFAULT_DTYPES: tuple[str, ...] = ("bf16", "fp8_e4m3", "fp8_e5m2", "nvfp4")
ROUNDING_GIB = 0.005  # "Available KV cache memory" is printed to 0.01 GiB
# Bytes per cached value, for a log without a model spec (exact ratios for dense models:
# NVFP4 is d/2 + d/16 bytes per d values).
VALUE_COST: dict[str, float] = {"bf16": 2.0, "fp16": 2.0, "fp32": 4.0, "fp8_e4m3": 1.0,
                                "fp8_e5m2": 1.0, "nvfp4": 9 / 16, "fp8_ds_mla": 656 / 576}


class Sizer(Protocol):
    """vLLM's calculator as its inverse reads it."""

    context_len: int | None
    parallel: Parallel
    spec: ModelSpec | None
    max_batched: int | None
    utilization: float | None
    total_gib: float | None
    total_basis: str
    weights_gib: float | None
    sized_by_bytes: bool
    extensible: bool
    unmodelled: str | None

    def memory_knob(self) -> MemoryKnob: ...

    def knob_now(self) -> float | None: ...

    def layout(self, dtype: str, tp: int | None = None) -> Layout | None: ...

    def tokens_for(self, dtype: str, tp: int | None = None,
                   mem_fraction_static: float | None = None) -> tuple[int | None, int | None]: ...

    def budget_bytes(self, tp: int | None = None,
                     mem_fraction_static: float | None = None) -> tuple[int | None, str, bool]: ...

    def concurrency(self, dtype: str, contexts: list[int], tp: int | None = None,
                    mem_fraction_static: float | None = None) -> dict[str, float | None]: ...

    def hybrid_unsized(self) -> bool: ...

    def tokens_below_concurrency(self) -> bool: ...

    def extensible_delta(self, util: float) -> tuple[int, str] | None: ...

    def shardable_tp(self, tp: int) -> bool: ...


class Rows(Sizer, Protocol):
    """vLLM's calculator as its what-if rows, current setting and report read it."""

    current_dtype: str
    current_dtype_assumed: bool
    tokens: int | None
    spec_reason: str
    version: VersionRange
    notes: list[str]
    available_gib: float | None
    available_said: str | None
    blocks_forced: int | None
    logged_block: int | None
    user_block: int | None
    max_batched_given: bool
    max_num_seqs: int | None
    max_num_seqs_default: tuple[int, ...]
    concurrency_logged: float | None
    concurrency_logged_at: int | None
    parallel_origin: dict[str, Any] | None
    pool_bytes: int | None
    kv_bytes: int | None
    async_scheduling: bool | None
    warmup: dict[str, float] | None
    flight_score: int
    flight_ties: list[tuple[int, int]]

    @property
    def flight(self) -> tuple[int, int, bool]: ...

    def flag(self, dtype: str) -> tuple[str | None, str]: ...

    def ds_layout(self, dtype: str) -> tuple[str, str | None]: ...

    def cost_per_token(self, dtype: str, tp: int | None = None) -> float | None: ...

    def calibration(self, variant: Any = None) -> dict[str, Any] | None: ...

    def measured_bytes_per_token(self) -> float | None: ...

    def concurrency_exact(self) -> float | None: ...

    def inverse(self, dtype: str, context_len: int, concurrency: float, *,
                tp: int | None = None, mem_fraction_static: float | None = None) -> Inverse: ...


__all__ = ["DEFAULT_DTYPES", "ROUNDING_GIB", "VALUE_COST", "Rows", "Sizer"]
