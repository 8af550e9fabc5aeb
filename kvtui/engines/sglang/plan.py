"""An SGLang deployment without a log: the what-if of `kvtui whatif --model M --tp N --pool-gib G`.

Why here and not in the command: which release's rules apply, what a page is and how a budget
becomes a pool are SGLang's; the command only reads the user's options.
"""

from __future__ import annotations

from kvtui.core.capacity import ModelSpec, Parallel
from kvtui.engines.sglang.calculator import Calculator
from kvtui.engines.sglang.cell import GIB
from kvtui.engines.sglang.version import SGLANG_LINE, check_release


def plan(spec: ModelSpec | None, spec_reason: str, *, current_dtype: str, tokens: int | None,
         context_len: int | None, tp: int, attn_dp: int, page_size: int | None,
         pool_gib: float | None, release: str | None) -> Calculator:
    """The calculator of a planned SGLang deployment: `pool_gib` GiB of KV per GPU (K + V), or a
    pool of `tokens` in `current_dtype`, under the rules of `release` (the newest kvtui read
    when None)."""
    version = SGLANG_LINE.pinned(check_release(release) if release else None, "--sglang-version")
    calc = Calculator(current_dtype=current_dtype, tokens=tokens, context_len=context_len,
                      parallel=Parallel(tp=tp, attn_dp=attn_dp), page_size=page_size or 1,
                      spec=spec, spec_reason=spec_reason, version=version,
                      pool_bytes=int(pool_gib * GIB) if pool_gib else None)
    if calc.tokens is None:
        calc.tokens = calc.tokens_for(current_dtype)[0]
        calc.notes.append(f"current pool: {pool_gib} GiB per GPU (given)")
    return calc
