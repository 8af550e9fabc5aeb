"""The one value a parser returns.

An `Event` is deliberately a small slotted record with a free-form `fields` dict rather than one
class per kind: the JSON contract (`kvtui events`) is flat, the core folds fields by name, and a
dict keeps the per-line cost low on the 2M-line hot path. The field names per kind are the
contract listed in `parsers.kinds.KIND_FIELDS`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FieldValue = None | bool | int | float | str


@dataclass(slots=True)
class Event:
    kind: str
    rank: str | None = None
    ts: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    # Which layout of its kind the line showed, as the engine's catalogue names it (e.g.
    # "kv_pool:dtype"): the event's dating hint. Not part of the JSON contract (`to_dict`).
    variant: str | None = None
    # Read by another engine's grammar than the stream's (a paste that mixes engines): the
    # stream's own dating rules do not apply to it. Not part of the JSON contract.
    foreign: bool = False

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)

    def to_dict(self) -> dict[str, Any]:
        """Flat JSON shape: kind, rank, ts, then the typed fields."""
        out: dict[str, Any] = {"kind": self.kind, "rank": self.rank, "ts": self.ts}
        out.update(self.fields)
        return out
