"""A stand-in for kvtui.core.state.Run with just the attributes the calculator reads.

The calculator only duck-types the run, so its arithmetic can be tested without the parsers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kvtui.core.state import Pool


def FakePool(rank: str | None = "TP0", label: str | None = None, kind: str = "mha",
             dtype: str | None = None, dtype_raw: str | None = None, tokens: int | None = None,
             **sizes: Any) -> Pool:
    """The real `Pool`, with the defaults these tests want (rank TP0, an MHA pool)."""
    return Pool(rank=rank, label=label, kind=kind, dtype=dtype, dtype_raw=dtype_raw,
                tokens=tokens, **sizes)


@dataclass
class FakeRun:
    server_args: dict[str, Any] = field(default_factory=dict)
    pools: dict[Any, Pool] = field(default_factory=dict)
    capacity: dict[str | None, dict[str, Any]] = field(default_factory=dict)
    weights: dict[str | None, dict[str, Any]] = field(default_factory=dict)
    weights_begin: dict[str | None, float] = field(default_factory=dict)
    swa_split: dict[str, Any] | None = None
    ranks: set[str] = field(default_factory=set)
    hints: set[str] = field(default_factory=set)
    kv_dtype: str | None = None

    @property
    def effective(self) -> tuple[str | None, str, Any]:
        if self.kv_dtype:
            return self.kv_dtype, "pool_line", None
        return None, "unknown", None

    @property
    def configured_kv_dtype(self) -> str | None:
        v = self.server_args.get("kv_cache_dtype")
        return v if v is not None else None

    def primary_capacity(self) -> dict[str, Any] | None:
        return next(iter(self.capacity.values()), None)

    def kv_pools(self) -> list[Pool]:
        return [p for p in self.pools.values() if p.kind != "mamba"]

    def primary_kv_pool(self) -> Pool | None:
        pools = self.kv_pools()
        return pools[0] if pools else None

    def mamba_pool(self) -> Pool | None:
        return next((p for p in self.pools.values() if p.kind == "mamba"), None)


def qwen35_run() -> FakeRun:
    """The motivating deployment: Qwen3.5-397B-A17B-NVFP4, TP8, FP8 pool of 608,174 tokens."""
    run = FakeRun(
        server_args={"model_path": "/models/nvidia/Qwen3.5-397B-A17B-NVFP4", "tp_size": 8,
                     "kv_cache_dtype": "auto", "page_size": 1, "context_length": None},
        kv_dtype="fp8_e4m3",
        ranks={f"TP{i}" for i in range(8)},
        hints={"kv_pool:dtype", "server_args:dict"},
    )
    run.pools[("TP0", None, "mha")] = FakePool(
        rank="TP0", dtype="fp8_e4m3", dtype_raw="torch.float8_e4m3fn", tokens=608174,
        k_gib=2.17, v_gib=2.17)
    run.capacity["TP0"] = {"max_total_num_tokens": 608174, "context_len": 262144,
                           "max_running_requests": 2048}
    return run
