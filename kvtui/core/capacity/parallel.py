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
