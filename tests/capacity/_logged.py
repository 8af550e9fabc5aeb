"""The SGLang calculator of some log lines, folded the one way (a Session): what `kvtui
whatif --from-log` sizes for them."""

from __future__ import annotations

from typing import Any

from kvtui.engines.sglang.calculator import Calculator
from kvtui.engines.sglang.fromrun import calculator_from_run
from tests.helpers import session_of


def calculator_of(lines: list[str], model: Any = None, name: str = "log") -> Calculator:
    s = session_of(lines, name)
    calc = calculator_from_run(s.state.current, model)
    assert calc is not None
    return calc
