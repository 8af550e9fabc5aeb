"""The names of the engines behind the seam, and the modules that hold them.

Why apart from `kvtui.core.engine`: the checkpoint facts name each engine's release by engine
name (`<engine>_version`), and the seam's protocols name the checkpoint facts; with the names
here, below both, neither imports the other in a circle.
"""

from __future__ import annotations

# Engine name -> the module that holds its `ENGINE` object. Detection tries them in this order.
ENGINE_MODULES: dict[str, str] = {
    "sglang": "kvtui.engines.sglang",
    "vllm": "kvtui.engines.vllm",
}


def first_name() -> str:
    """The first engine's name (SGLang's): the one the core's own sentences (`alerts.WORDING`)
    and defaults were written for, and whose checkpoint verdict a report without a known
    engine states (the JSON's `kv_scale_verdict`, pinned by tests/golden)."""
    return next(iter(ENGINE_MODULES))
