"""Pure parser library for SGLang server logs (no IO, no UI imports).

`parse_line(text) -> Event | None` is the whole public surface; `KIND_FIELDS` lists the keys
every event of a kind carries and `OPTIONAL_FIELDS` the extra keys some variants add.
"""

from __future__ import annotations

from parsers.event import Event, FieldValue
from parsers.kinds import KIND_FIELDS, KINDS, OPTIONAL_FIELDS, RESERVED_KEYS
from parsers.line import parse_line

__all__ = [
    "KINDS",
    "KIND_FIELDS",
    "OPTIONAL_FIELDS",
    "RESERVED_KEYS",
    "Event",
    "FieldValue",
    "parse_line",
]
