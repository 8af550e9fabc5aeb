"""vLLM behind the engine seam (`kvtui.core.engine`): the object is `engine.ENGINE`.

Why this file is nearly empty: the CLI reads each engine's release option (`flags.RELEASE_OPTION`)
to build its parser, and importing `kvtui.engines.vllm.flags` runs this file first; the engine
object pulls in the grammar and the calculator (0.4 s), which `kvtui --help` should not pay.
`ENGINE` is loaded on first use (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kvtui.core.engine import Engine


def __getattr__(name: str) -> Engine:
    if name != "ENGINE":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from kvtui.engines.vllm.engine import ENGINE

    return ENGINE
