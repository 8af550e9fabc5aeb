"""Which rule sizes an architecture on an engine, or why none does: the shape of the answer.

Why a verdict per architecture: a what-if computed from a config the engine reads differently
(a lightning-attention hybrid read as 80 full-attention layers, KV shared between layers read as
one cache per layer) is a confident wrong number, the one thing the calculator must never
print. Each engine keeps its model registry as data, read from a wheel with the release
(`kvtui/engines/<engine>/registry/`, `tools/read_registry.py`), and decides per name in its
`coverage` module; this module holds only the engine-neutral verdict and the data loader.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any


@dataclass(frozen=True, slots=True)
class Verdict:
    """How kvtui sizes `arch` on an engine: by `rule` (cited in `source`), or not at all
    (`unmodelled` says why, in words a user reads)."""

    arch: str
    rule: str | None
    source: str
    unmodelled: str | None = None

    @property
    def sized(self) -> bool:
        return self.unmodelled is None


@cache
def load_registry(package: str, name: str) -> dict[str, Any]:
    """A registry JSON an engine package ships (`<package>/registry/<name>`)."""
    text = resources.files(package).joinpath("registry").joinpath(name).read_text(
        encoding="utf-8")
    doc: dict[str, Any] = json.loads(text)
    return doc
