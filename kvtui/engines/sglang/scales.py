"""Where SGLang's FP8 KV cache takes its scales from, when it is not the static k_scale/v_scale.

SGLang warns "Using FP8 KV cache but no scaling factors provided. Defaulting to scaling factors
of 1.0" whenever kv_cache_dtype is fp8_e4m3 and --quantization-param-path is absent, whatever
pool the model gets (sglang 0.5.8 model_executor/model_runner.py:906-927). A DSA model
(DeepSeek V3.2: `is_deepseek_nsa`, its architecture and `index_topk`, configs/model_config.py
:54-65) gets NSATokenToKVPool instead (model_executor/model_runner_kv_cache_mixin.py:435-448),
which quantizes each token's latent itself: 512 FP8 values with one float32 scale per
128-element tile (amax / 448), stored inline, and the rope part in BF16 (mem_cache/
memory_pool.py:1676-1706 and :1464-1481, layers/attention/nsa/quant_k_cache.py
`quantize_k_cache_separate`; the same 656-byte layout in 0.5.4 memory_pool.py:1246-1251). The
indexer keys keep a scale per 128 too (memory_pool.py:1731-1755). The static scales are not read
on that path, so the warning says nothing about its precision.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kvtui.core.capacity.presets import spec_for_run
from kvtui.engines.sglang.fromrun import _model_class
from kvtui.engines.sglang.sizing.archs import DSA_BY_CLASS
from kvtui.engines.sglang.sizing.args import SizingArgs
from kvtui.engines.sglang.sizing.cells import dsa_raw_layout
from kvtui.engines.sglang.version import NEWEST

if TYPE_CHECKING:
    from kvtui.core.checkpoint import CheckpointFacts

# The DSA model classes, each with the family it names (DeepSeek V3.2's, GLM-5's): the one list
# the flag refusals read too (kvtui/engines/sglang/sizing/families.py).
DSA_CLASSES = DSA_BY_CLASS


def nsa_pool(run: Any, checkpoint: CheckpointFacts | None = None) -> str | None:
    """How the log shows that this run's KV pool is SGLang's NSA pool, or None.

    The one place that decides it. Facts read: the model spec (the checkpoint's config, or a
    preset the model path names) with index_topk, the attention backend SGLang picks for a DSA
    model (`attention_backend='nsa'` in the dump, server_args.py:1108-1113 in 0.5.8), the
    model class of the weight line. The DSA lines of the start-up ("Setting DSA backend to ...
    for FP8 KV Cache", "DSA with TP mode is active", server_args.py:1144-1183) belong here
    too once the parsers fold them into a fact."""
    found = spec_for_run(None, checkpoint, run.server_args or {}, [], args_name="server_args")
    if found is not None and found[0].is_dsa:
        return f"the model spec ({found[0].name}) sets index_topk: a DSA model"
    if (run.server_args or {}).get("attention_backend") == "nsa":
        return "the server-args dump shows attention_backend='nsa', SGLang's DSA backend"
    cls = _model_class(run)
    if cls in DSA_CLASSES:
        return f"the model class is {cls} ({DSA_CLASSES[cls]})"
    # "Setting KV cache dtype to X for DeepSeek DSA on SM<major> device." (0.5.8+; "for
    # DeepSeek NSA." 0.5.5-0.5.7) is printed only for a DSA model (`is_deepseek_dsa(hf_config)`
    # guards it: 0.5.23 arg_groups/overrides.py:495-538): its variant is a hint of the run
    hints = run.hints
    if "kv_dtype:dsa" in hints or "kv_dtype:nsa" in hints:
        return "SGLang set the KV dtype for DeepSeek DSA (its own line), a DSA model"
    return None


def fp8_scales_inline(run: Any, checkpoint: CheckpointFacts | None = None) -> str | None:
    """Why this run's FP8 KV cache keeps its own scales beside its values (so "scales of 1.0"
    does not apply), or None when it reads the static k_scale/v_scale or that is not known."""
    why = nsa_pool(run, checkpoint)
    if why is None:
        return None
    # the backends the dump or the `Set DSA backends` line names (none: the scaled pool
    # this text describes is not ruled out, so it stays)
    args = SizingArgs.from_server_args(
        {**run.early_args, **{k: v for k, v in (run.server_args or {}).items()
                              if v is not None}})
    if (args.dsa_prefill_backend or args.dsa_decode_backend) and dsa_raw_layout(args, NEWEST):
        return None
    return (f"This run's KV pool is SGLang's NSA pool ({why}). That pool quantizes each "
            "token's latent itself, with one float32 scale per 128 values stored beside them "
            "(amax / 448), and keeps the rope part in BF16; static k_scale/v_scale (the "
            "checkpoint's, or the default 1.0) are not used on that path, so nothing runs at a "
            "scale of 1.0.")
