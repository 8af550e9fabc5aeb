"""A vLLM deployment without a log: the what-if of `kvtui whatif --engine vllm --model M ...`.

Why its own calculator inputs: a log gives the pool vLLM settled on, and the calculator checks
its arithmetic against it; a plan gives only the model, the parallel layout and a budget (the
"Available KV cache memory" vLLM would print, per GPU), so the pool is what vLLM's own sizing
makes of that budget, under the rules of the release named (or of the newest kvtui read).
"""

from __future__ import annotations

from kvtui.core.capacity import ModelSpec, Parallel
from kvtui.engines.vllm import coverage, limits
from kvtui.engines.vllm.calculator import Calculator
from kvtui.engines.vllm.sizing import GIB, rules_for
from kvtui.engines.vllm.version import UTIL_NONE, VLLM_LINE, check_release


def plan(spec: ModelSpec | None, spec_reason: str, *, current_dtype: str, tokens: int | None,
         context_len: int | None, tp: int, attn_dp: int, page_size: int | None,
         pool_gib: float | None, release: str | None) -> Calculator:
    """The calculator of a planned vLLM deployment: the V1 engine (the only one from 0.11), its
    --block-size `page_size` (vLLM's choice when None), `pool_gib` GiB of KV per GPU or a pool of
    `tokens` (the "GPU KV cache size" line) in `current_dtype`. ValueError (one line) for
    an input vLLM has no counterpart of."""
    if attn_dp > 1:  # SGLang's DP attention; vLLM's DP ranks each size a pool of their own
        raise ValueError("--attn-dp is SGLang's DP attention; a vLLM data parallel rank sizes "
                         "its own pool like a single deployment: give its --tp")
    version = VLLM_LINE.pinned(check_release(release) if release else None, "--vllm-version")
    calc = Calculator(current_dtype=current_dtype, spec=spec, spec_reason=spec_reason,
                      tokens=tokens, context_len=context_len, parallel=Parallel(tp=tp),
                      user_block=page_size, version=version,
                      pool_bytes=int(pool_gib * GIB) if pool_gib else None,
                      candidates=rules_for(version.lo, version.hi, False),
                      notes=[f"max_num_seqs not given: {limits.RULE}"],
                      max_num_seqs_default=limits.plan_defaults(version),
                      # without --vllm-version a plan follows the newest release's rules
                      unmodelled=coverage.for_run(spec, lo=version.lo if release
                                                  else version.hi, hi=version.hi))
    if version.lo >= UTIL_NONE:
        # 0.34's extensible KV cache, on by default on CUDA and ROCm (config/cache.py:395-400):
        # the pool is sized after warmup, gpu_memory_utilization unset means 1.0 (:494-500)
        calc.extensible = True
        calc.utilization = 1.0
    if calc.tokens is None and pool_gib is not None:
        calc.tokens = calc.tokens_for(current_dtype)[0]
    return calc
