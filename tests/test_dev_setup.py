"""dev.py's set-up as the README runs it: what it leaves for every later start."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_kvtui_is_compiled_where_the_environment_forbids_bytecode(monkeypatch) -> None:
    """With PYTHONDONTWRITEBYTECODE set (many container images, this project's machines) an
    editable install was never compiled: every `kvtui` start compiled all of it from source
    (0.54 s against 0.33 s for `check --stream` of a sample here). dev.py compiles it."""
    sys.path.insert(0, str(ROOT))
    try:
        import dev
    finally:
        sys.path.remove(str(ROOT))
    if not dev._bin("python").exists():
        pytest.skip("no .venv (dev.py creates it)")
    if Path(sys.prefix).resolve() != (ROOT / ".venv").resolve():
        pytest.skip("not run by the .venv's python (the .pyc names carry the interpreter's tag)")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    sources = [ROOT / "kvtui" / "core" / "units.py", ROOT / "parsers" / "kinds.py"]
    cached = [Path(importlib.util.cache_from_source(str(s))) for s in sources]
    for pyc in cached:
        pyc.unlink(missing_ok=True)
    dev.ensure_bytecode()
    assert all(pyc.exists() for pyc in cached)
