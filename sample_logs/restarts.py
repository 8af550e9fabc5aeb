"""The bundled logs of a server restarted with another setting (`kvtui compare`'s pairs).

Each second start's pool is what kvtui's calculator, applying the engine's own sizing
arithmetic to the first start's lines, says that setting allocates (`_predicted`): not a
hand-typed number. The FP8 -> BF16 pair is the two Qwen3.5 logs of `generate.py` written one
after the other, the second sized by the generator's own SGLang arithmetic; the check that its
pool is the first run's what-if to the token is then a real check (`tests/core/test_compare.py`).
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # kvtui, from a checkout

import sglang_samples as generate
from sglang_samples import GIB, Clock, Log, _finish_startup, _runtime, base_server_args, gb


def _predicted(text: str, dtype: str, **setting: object) -> int:
    """The pool tokens kvtui's calculator says the last start of `text` would allocate with
    `dtype` at `setting` (tp, mem_fraction_static): the engine's arithmetic, read from the
    engine's release (`kvtui/engines/sglang/sizing/`)."""
    from kvtui.core.pipeline import Session

    session = Session()
    session.feed_lines("sample", text.splitlines())
    session.end()
    calc = session.calculator()
    tokens, _ = calc.tokens_for(dtype, **setting)
    assert isinstance(tokens, int), f"the calculator cannot size {dtype} at {setting}"
    return tokens


def qwen35_fp8_then_bf16() -> str:
    """Qwen3.5-397B NVFP4 at TP=8 with an unscaled FP8 KV cache (the CRITICAL), then the same
    server restarted with --kv-cache-dtype bf16 half an hour later."""
    first = generate.qwen35("fp8", fmt="0.5.10", seed=35)
    return first + generate.qwen35("bf16", fmt="0.5.10", seed=36,
                                   start=datetime(2026, 11, 24, 9, 45, 0))


def llama70b_mem_fraction() -> str:
    """Llama-3.1-70B at TP=8, restarted with --mem-fraction-static 0.80 instead of 0.85."""
    first = generate.llama70b()
    tokens = _predicted(first, "bf16", mem_fraction_static=0.80)
    return first + generate.llama70b(mem_frac=0.80, tokens=tokens,
                                     start=datetime(2025, 12, 9, 9, 10, 0))


def _llama8b(tp: int, *, tokens: int | None, start: datetime, dump: bool) -> str:
    """Llama-3.1-8B on 24 GB GPUs, SGLang 0.5.9+ format: ranks are tagged only at TP > 1.
    `dump`: print the ServerArgs line (a restart captured without it has none)."""
    rng = random.Random(80 + tp)
    log = Log(Clock(start))
    ranks: list[str | None] = [f"TP{i}" for i in range(tp)] if tp > 1 else [None]
    pre, usage, mem_frac = 21.80 * GIB, 14.99 * GIB / tp, 0.88
    after = pre - usage
    rest = after - pre * (1 - mem_frac)
    cell = max(1, 8 // tp) * (128 + 128) * 32 * 2
    tokens = int(rest // cell) if tokens is None else tokens
    if dump:
        log.add(generate.server_args_repr(base_server_args(
            "meta-llama/Llama-3.1-8B-Instruct", tp_size=tp, mem_fraction_static=mem_frac,
            served_model_name="llama-3.1-8b")))
    log.clock.tick(5)
    for r in ranks:
        log.add("Init torch distributed ends. elapsed=0.41 s, mem usage=0.09 GB", r)
    for r in ranks:
        log.add(f"Load weight begin. avail mem={gb(pre)} GB", r)
    log.clock.tick(7)
    for r in ranks:
        log.add(f"Load weight end. elapsed=6.93 s, type=LlamaForCausalLM, avail mem="
                f"{gb(after)} GB, mem usage={gb(usage)} GB.", r)
    log.add("Using KV cache dtype: torch.bfloat16", ranks[0])
    k_bytes = (tokens + 1) * max(1, 8 // tp) * 128 * 32 * 2
    for r in ranks:
        log.add(f"KV Cache is allocated. #tokens: {tokens}, K size: {gb(k_bytes)} GB, V size: "
                f"{gb(k_bytes)} GB", r)
    _finish_startup(log, ranks, pool_end=after - rest, tokens=tokens, ctx=131072,
                    graph=(9, 8.81, 0.41))
    _runtime(log, rng, fmt="0.5.9", prefill_fmt="0.5.10", pool=tokens, steps=120,
             rank=ranks[0], base_running=12)
    return log.text()


def llama8b_tp1_then_tp2() -> str:
    """Llama-3.1-8B at TP=1, then restarted at TP=2 with no argument dump captured: only the
    rank tags that appear (SGLang tags ranks only when TP > 1) show the new start."""
    first = _llama8b(1, tokens=None, start=datetime(2026, 3, 2, 10, 0, 0), dump=True)
    tokens = _predicted(first, "bf16", tp=2)
    return first + _llama8b(2, tokens=tokens, start=datetime(2026, 3, 2, 10, 20, 0),
                            dump=False)


def vllm_llama70b_tp8_then_tp4() -> str:
    """vLLM 0.33.0, Llama-3.1-70B at TP=8, then restarted at TP=4 (`vllm_samples.py`)."""
    import vllm_samples

    first = vllm_samples.llama70b_bf16()
    tokens = _predicted(first, "bf16", tp=4)
    return first + vllm_samples.llama70b_bf16(tp=4, tokens=tokens,
                                              start=datetime(2026, 7, 20, 19, 0, 0))


RESTARTS = {
    "qwen35-397b-nvfp4-tp8-fp8-then-bf16.log": qwen35_fp8_then_bf16,
    "llama31-70b-tp8-mem-fraction-restart.log": llama70b_mem_fraction,
    "llama31-8b-tp1-then-tp2-no-dump.log": llama8b_tp1_then_tp2,
    "vllm-llama31-70b-tp8-then-tp4.log": vllm_llama70b_tp8_then_tp4,
}


def render_all() -> Iterator[tuple[str, str]]:
    for name, make in RESTARTS.items():
        yield name, make()


__all__ = ["GIB", "RESTARTS", "render_all"]
