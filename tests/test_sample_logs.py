"""The bundled sample logs are exactly what sample_logs/generate.py writes."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_samples_are_reproducible():
    sys.path.insert(0, str(ROOT / "sample_logs"))
    try:
        import generate
    finally:
        sys.path.pop(0)
    made = dict(generate.render_all())
    on_disk = {p.name for p in (ROOT / "sample_logs").glob("*.log")}
    assert set(made) == on_disk
    for name, text in made.items():
        assert (ROOT / "sample_logs" / name).read_text(encoding="utf-8") == text, name
