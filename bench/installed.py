"""What the benches that time fresh `kvtui` processes need first: the tool as installed."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def as_installed() -> None:
    """kvtui's bytecode up to date before a bench times fresh processes, as an installed kvtui
    has it (dev.py's `ensure_bytecode`: where PYTHONDONTWRITEBYTECODE is set, as on this
    project's machines, every start would compile kvtui from source otherwise)."""
    sys.path.insert(0, str(ROOT))
    import dev

    dev.ensure_bytecode()
