"""Where a fact came from: the first line that showed it, and how often it repeated.

Every fact and alert carries one, so a reader can always go to the line (source, 1-based line
number, rank prefix, timestamp) and see the text itself, bounded so that a 1 MB prompt logged by
`--log-requests` never travels into a report.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
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


def evidence_in(obj: Any) -> Iterator[Evidence]:
    """Every Evidence inside a state (dataclasses, dicts, lists, sets, tuples), each once."""
    seen: set[int] = set()
    stack = [obj]
    while stack:
        node = stack.pop()
        if id(node) in seen or isinstance(node, (str, bytes, int, float)) or node is None:
            continue
        seen.add(id(node))
        if isinstance(node, Evidence):
            yield node
        elif dataclasses.is_dataclass(node) and not isinstance(node, type):
            stack.extend(getattr(node, f.name) for f in dataclasses.fields(node))
        elif isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, (list, tuple, set, frozenset)):
            stack.extend(node)
