"""What SGLang's what-if assembly (`scenario`, `inverse`) and its rule notes
(`sizing.rules`) ask of the calculator: the sizer's answers at a setting, and the run's facts.

Why a protocol apart from `calculator`: the calculator hands its answers to those modules, and
they must not import it back (issue 41: calculator -> scenario -> calculator was a circle). They
name this protocol; `kvtui.engines.sglang.calculator.Calculator` satisfies it (mypy checks that
at `calculator._as_sizer`). `MemoryFacts` and `Rest`, the values the sizer answers with, live
here for the same reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from kvtui.core.capacity.modelspec import ModelSpec
from kvtui.core.capacity.parallel import Parallel
from kvtui.core.report_types import Current, Inverse, Scenario
from kvtui.engines.sglang.cell import Cell
from kvtui.engines.sglang.sizing.args import SizingArgs
from kvtui.engines.sglang.sizing.budget import Allocation
from kvtui.engines.sglang.sizing.mamba import StateSlot
from kvtui.engines.sglang.version import VersionRange


@dataclass
class MemoryFacts:
    """The memory lines SGLang's budget is computed from (section 8.1), as logged.

    `pre_gib` is a proxy: SGLang's `pre` is measured after distributed init, min over ranks, and
    not logged; "Load weight begin. avail mem" is the closest logged value.

    `reserved_gib`: what SGLang takes out of the budget before sizing the pool for memory it
    allocates after (0.5.18+, multimodal models: "Reserving X GB of the KV budget for
    post-sizing multimodal allocations"): `rest_memory = available_gpu_memory - slack_gb -
    mm_reservation_gb` (mem_cache/kv_cache_configurator.py:1789 in 0.5.18, :3038 in 0.5.23),
    then the Mamba split and the token count.
    """

    pre_gib: float
    avail_gib: float
    mem_fraction_static: float
    weights_gib: float | None = None
    tp: int = 1
    reserved_gib: float = 0.0

    def rest_gib(self, mem_fraction_static: float | None = None, tp: int | None = None) -> float:
        m = self.mem_fraction_static if mem_fraction_static is None else mem_fraction_static
        return self.avail_after(tp) - self.pre_gib * (1 - m) - self.reserved_gib

    def avail_after(self, tp: int | None = None) -> float:
        """Free memory after the weights load; the weights shard across TP as tp_old / tp_new."""
        if tp and tp != self.tp and self.weights_gib is not None:
            return self.avail_gib + self.weights_gib - self.weights_gib * self.tp / tp
        return self.avail_gib

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"pre_gib": self.pre_gib, "avail_gib": self.avail_gib,
                               "mem_fraction_static": self.mem_fraction_static,
                               "weights_gib": self.weights_gib, "tp": self.tp}
        if self.reserved_gib:
            out["reserved_gib"] = self.reserved_gib
        out["rest_gib"] = round(self.rest_gib(), 4)
        return out


@dataclass
class Rest:
    """The rest memory of one setting: bytes, how it was derived, and what went wrong."""

    bytes: int | None
    basis: str
    estimate: bool
    does_not_fit: str | None = None


class Sizer(Protocol):
    """SGLang's calculator as its what-if assembly reads it."""

    current_dtype: str
    tokens: int | None
    context_len: int | None
    parallel: Parallel
    page_size: int
    spec: ModelSpec | None
    spec_reason: str
    pool_gib: dict[str, float | None] | None
    version: VersionRange
    memory: MemoryFacts | None
    mrr_user: int | None
    mrr_logged: int | None
    mamba_logged: dict[str, Any] | None
    swa_logged: dict[str, Any] | None
    notes: list[str]
    draft_pools: list[dict[str, Any]]

    @property
    def sargs(self) -> SizingArgs: ...

    @property
    def rules_version(self) -> tuple[int, int, int]: ...

    @property
    def kind(self) -> str | None: ...

    def supported(self) -> str | None: ...

    def cell(self, dtype: str, tp: int | None = None) -> Cell | None: ...

    def cell_error(self, dtype: str, tp: int | None = None) -> str | None: ...

    def tp_refusal(self, tp: int) -> str | None: ...

    def mamba(self, tp: int | None = None) -> StateSlot | None: ...

    def logged_slots(self) -> int | None: ...

    def cost_per_token(self, dtype: str, tp: int | None = None) -> float | None: ...

    def state_bytes_now(self) -> int: ...

    def kv_now(self) -> tuple[int | None, str, bool]: ...

    def rest_now(self) -> Rest: ...

    def rest_for(self, tp: int | None = None,
                 mem_fraction_static: float | None = None) -> Rest: ...

    def allocation(self, dtype: str, tp: int | None = None,
                   mem_fraction_static: float | None = None
                   ) -> tuple[Allocation | None, Rest]: ...

    def budget_bytes(self, tp: int | None = None,
                     mem_fraction_static: float | None = None) -> tuple[int | None, str, bool]: ...

    def tokens_for(self, dtype: str, tp: int | None = None,
                   mem_fraction_static: float | None = None) -> tuple[int | None, int | None]: ...

    def measured(self) -> dict[str, float] | None: ...

    def measured_rows(self) -> int | None: ...

    def calibration(self) -> dict[str, Any] | None: ...

    def memory_check(self) -> dict[str, Any] | None: ...

    def contexts(self, context_lengths: list[int] | tuple[int, ...] | None) -> list[int]: ...

    def flag(self, dtype: str) -> tuple[str | None, str]: ...

    def rule_notes(self) -> list[str]: ...

    def scenario(self, dtype: str, *, tp: int | None = None,
                 mem_fraction_static: float | None = None,
                 context_lengths: list[int] | tuple[int, ...] | None = None,
                 target_concurrency: float | None = None) -> Scenario: ...

    def scenarios(self, dtypes: list[str] | tuple[str, ...] | None = None,
                  context_lengths: list[int] | tuple[int, ...] | None = None,
                  **kw: Any) -> list[Scenario]: ...

    def current(self) -> Current: ...

    def mamba_budget(self) -> dict[str, Any] | None: ...

    def explanation(self) -> list[str]: ...

    def inverse(self, dtype: str, context_len: int, concurrency: float, *,
                tp: int | None = None, mem_fraction_static: float | None = None) -> Inverse: ...


__all__ = ["MemoryFacts", "Rest", "Sizer"]
