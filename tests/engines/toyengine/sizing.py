"""ToyLM's pool sizing: the pool's bytes are its tokens times the bytes a token takes in the
start's KV dtype; another dtype holds those bytes' worth of its own tokens."""

from __future__ import annotations

from dataclasses import dataclass

from kvtui.core.releases import VersionRange
from kvtui.core.report_types import Current, Scenario, WhatIf

BYTES_PER_TOKEN: dict[str, int] = {"bf16": 4096, "fp8_e4m3": 2048}


@dataclass
class ToyCalculator:
    tokens: int
    dtype: str
    context_len: int | None
    version: VersionRange

    def tokens_for(self, dtype: str) -> int:
        pool_bytes = self.tokens * BYTES_PER_TOKEN[self.dtype]
        return pool_bytes // BYTES_PER_TOKEN[dtype]

    def report(self) -> WhatIf:
        rows = tuple(Scenario.of(dtype=d, current=d == self.dtype, tokens=self.tokens_for(d),
                                 bytes_per_token=float(BYTES_PER_TOKEN[d]))
                     for d in BYTES_PER_TOKEN)
        return WhatIf(engine="toyengine",
                      current=Current.of(dtype=self.dtype, tokens=self.tokens,
                                         context_len=self.context_len),
                      scenarios=rows, model=None, model_reason="ToyLM sizes no model",
                      version=self.version.to_dict(),
                      explanation=(f"pool = {self.tokens} tokens x "
                                   f"{BYTES_PER_TOKEN[self.dtype]} B ({self.dtype})",))
