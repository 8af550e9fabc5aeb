"""The parallel layout a what-if sizes for: one figure for every engine.

Why its own module: every engine divides the KV heads (and the weights) by the same attention
TP, and the report shows one layout (`kvtui.core.deployment.layout`); the engines' calculators
share this type, each applying its own rule for the heads one GPU holds.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Parallel:
    """The parallel layout that decides how many KV heads one GPU holds."""

    tp: int = 1
    attn_dp: int = 1
    attn_cp: int = 1
    pp: int = 1

    @property
    def attn_tp(self) -> int:
        return max(1, self.tp // max(1, self.attn_dp) // max(1, self.attn_cp))

    def to_dict(self) -> dict[str, int]:
        return {"tp": self.tp, "attn_dp": self.attn_dp, "attn_cp": self.attn_cp, "pp": self.pp,
                "attn_tp": self.attn_tp}


TP_CHOICES = (1, 2, 4, 8, 16, 32, 64)  # the TPs an inverse what-if tries, smallest first


def tp_refused(num_attention_heads: int, num_kv_heads: int | None, attn_tp: int) -> str | None:
    """Why the engines refuse to shard a model's attention over `attn_tp` GPUs (None: they
    do). Both split the query heads evenly (vLLM 0.34.0 config/model.py:1577-1584 refuses a TP
    that does not divide them; SGLang 0.5.23 asserts it in each model, models/llama.py:183,
    qwen3_next.py:624, deepseek_v2.py:2057) and the KV heads evenly or replicate them a whole
    number of times (QKVParallelLinear's `divide`: vLLM 0.34.0 model_executor/layers/linear.py
    :1114-1118, SGLang 0.5.23 layers/linear.py:1140-1144). An MLA model has no KV heads to
    split (`num_kv_heads` None)."""
    if attn_tp < 1 or num_attention_heads % attn_tp:
        return f"{num_attention_heads} attention heads do not split over {attn_tp} GPUs"
    if num_kv_heads and ((attn_tp >= num_kv_heads and attn_tp % num_kv_heads) or (
            attn_tp < num_kv_heads and num_kv_heads % attn_tp)):
        return f"{num_kv_heads} KV heads do not split over {attn_tp} GPUs"
    return None
