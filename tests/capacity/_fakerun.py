"""Real `Run` objects of kvtui.core.state built by hand, so the calculator's arithmetic can be
tested without going through the parsers (the pools carry the dtype their lines would print)."""

from __future__ import annotations

from typing import Any

from kvtui.core.state import Pool, Run


def FakePool(rank: str | None = "TP0", label: str | None = None, kind: str = "mha",
             dtype: str | None = None, dtype_raw: str | None = None, tokens: int | None = None,
             **sizes: Any) -> Pool:
    """The real `Pool`, with the defaults these tests want (rank TP0, an MHA pool)."""
    return Pool(rank=rank, label=label, kind=kind, dtype=dtype, dtype_raw=dtype_raw,
                tokens=tokens, **sizes)


def FakeRun(*, kv_dtype: str | None = None, **fields: Any) -> Run:
    """A real `Run`; `kv_dtype` is what its pools print (added pools get it as their dtype)."""
    run = Run(index=0, **fields)
    if kv_dtype:
        run.kv_dtype_lines.append((kv_dtype, "resolved", None))  # type: ignore[arg-type]
    return run


def qwen35_run() -> Run:
    """The motivating deployment: Qwen3.5-397B-A17B-NVFP4, TP8, FP8 pool of 608,174 tokens."""
    run = FakeRun(
        server_args={"model_path": "/models/nvidia/Qwen3.5-397B-A17B-NVFP4", "tp_size": 8,
                     "kv_cache_dtype": "auto", "page_size": 1, "context_length": None},
        ranks={f"TP{i}" for i in range(8)},
        hints={"kv_pool:dtype", "server_args:dict"},
    )
    run.pools[("TP0", None, "mha")] = FakePool(
        rank="TP0", dtype="fp8_e4m3", dtype_raw="torch.float8_e4m3fn", tokens=608174,
        k_gib=2.17, v_gib=2.17)
    run.capacity["TP0"] = {"max_total_num_tokens": 608174, "context_len": 262144,
                           "max_running_requests": 2048}
    return run
