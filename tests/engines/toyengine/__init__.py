"""ToyLM, a third engine that lives only in the tests: the proof that an engine joins kvtui
through the seam alone (`kvtui.core.engine.register`), with no edit of kvtui/core, kvtui/ui or
kvtui/commands (tests/engines/test_third_engine.py).

ToyLM is made up, so its rules are its own by definition: its log is three line shapes, its
releases are 1.0.0 to 2.1.0, and its pool holds `pool_bytes // bytes_per_token` tokens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kvtui.core.engine import Engine


def __getattr__(name: str) -> Engine:
    if name != "ENGINE":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from tests.engines.toyengine.engine import ENGINE

    return ENGINE
