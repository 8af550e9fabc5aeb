"""Where a fact came from: the first line that showed it, and how often it repeated.

Every fact and alert carries one, so a reader can always go to the line (source, 1-based line
number, rank prefix, timestamp) and see the text itself, bounded so that a 1 MB prompt logged by
`--log-requests` never travels into a report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

EVIDENCE_TEXT_MAX = 400


@dataclass(slots=True)
class Evidence:
    source: str
    line: int
    rank: str | None
    ts: str | None
    text: str
    count: int = 1

    @classmethod
    def of(cls, source: str, line: int, rank: str | None, ts: str | None,
           text: str) -> Evidence:
        if len(text) > EVIDENCE_TEXT_MAX:
            text = text[:EVIDENCE_TEXT_MAX] + "…"
        return cls(source=source, line=line, rank=rank, ts=ts, text=text)

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "line": self.line, "rank": self.rank, "ts": self.ts,
                "text": self.text, "count": self.count}
