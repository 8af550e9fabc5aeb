"""Pure parser library for LLM-server logs (no IO, no UI imports).

Each engine's grammar lives in its own package (`parsers.sglang`; `parsers.vllm` next) and turns
one line into an `Event` of the shared vocabulary in `parsers.kinds`: the same kind means the same
fact whichever engine printed it, so everything above the parsers is engine-neutral.
`parsers.prefix` holds the one grammar of line heads and timestamps that every reader uses.
"""

from __future__ import annotations

from parsers.event import Event, FieldValue
from parsers.kinds import (
    BATCH_KINDS,
    KIND_FIELDS,
    KIND_TRAITS,
    KINDS,
    OPTIONAL_FIELDS,
    RESERVED_KEYS,
)

__all__ = [
    "BATCH_KINDS",
    "KINDS",
    "KIND_FIELDS",
    "KIND_TRAITS",
    "OPTIONAL_FIELDS",
    "RESERVED_KEYS",
    "Event",
    "FieldValue",
]
