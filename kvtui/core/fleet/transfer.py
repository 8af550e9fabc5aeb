"""KV-transfer failures of a disaggregated (prefill/decode) server, read beside the pipeline.

Why a watch of its own and not a fold kind: the failure lines belong to the pair, not to one
server's report (the single-host `check` says nothing new from them), so only the fleet reads
them. The grammar is the engine's (`Engine.transfer_failure`: SGLang's lines and their sources
in parsers/sglang/disagg.py); this module keeps a bounded count and the first and last lines,
as evidence for `fleet-kv-transfer-failing`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kvtui.core.engine import Engine, all_engines
from kvtui.core.evidence import Evidence
from parsers.prefix import line_timestamp


@dataclass(slots=True)
class TransferWatch:
    """Count and keep the first and last KV-transfer failure lines of one server's log."""

    count: int = 0
    kinds: dict[str, int] = field(default_factory=dict)  # handshake | transfer | bootstrap
    first: Evidence | None = None
    last: Evidence | None = None
    # every engine is asked: a decode log opened after its start-up names its engine only by
    # its batch lines, and a failure line may come first
    engines: Sequence[Engine] = field(default_factory=all_engines, repr=False)

    def feed(self, source: str, line_no: int, text: str) -> bool:
        """Read one raw line; True when it was a transfer failure."""
        hit = None
        for engine in self.engines:
            hit = engine.transfer_failure(text)
            if hit is not None:
                break
        if hit is None:
            return False
        kind, _side = hit
        self.count += 1
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        ev = Evidence.of(source, line_no, None, line_timestamp(text), text)
        if self.first is None:
            self.first = ev
        self.last = ev
        return True

    def feed_lines(self, source: str, lines: list[str], first_line_no: int = 1) -> None:
        for i, text in enumerate(lines):
            self.feed(source, first_line_no + i, text)

    @property
    def evidence(self) -> tuple[Evidence, ...]:
        if self.first is None:
            return ()
        if self.last is None or self.last is self.first:
            return (self.first,)
        return (self.first, self.last)
