"""The metric names kept by release (kvtui/engines/<name>/metrics.py) checked against the
released wheels themselves: each name is defined by the newest release read unless it has an
`until`, missing from its `after` release, defined by its `until` release. Skipped where the
wheels are not on this machine (../wheels, or KVTUI_WHEELS)."""

from __future__ import annotations

import functools
import os
import re
import zipfile
from pathlib import Path

import pytest

from kvtui.core.metrics import catalogue
from tests.metrics.conftest import ROOT

WHEELS = Path(os.environ.get("KVTUI_WHEELS", ROOT.parent / "wheels"))
NEWEST = {"sglang": "0.5.23", "vllm": "0.34.0"}


@functools.cache
def defined(engine: str, release: str) -> frozenset[str]:
    """Every `engine:name` literal in the release's metrics modules, `_total` dropped as the
    parser drops it from a counter's family."""
    found = sorted(WHEELS.glob(f"{engine}-{release}-*.whl"))
    if not found:
        pytest.skip(f"no {engine} {release} wheel in {WHEELS}")
    names = set()
    with zipfile.ZipFile(found[0]) as z:
        for member in z.namelist():
            if member.endswith(".py") and ("metrics" in member or "observability" in member):
                text = z.read(member).decode("utf-8", "replace")
                for m in re.finditer(rf"[\"']({engine}:[a-z0-9_]+)[\"']", text):
                    names.add(m.group(1).removesuffix("_total"))
    return frozenset(names)


CASES = [(engine, n) for engine in NEWEST for n in catalogue.load(engine).names]


@pytest.mark.parametrize(("engine", "name"), CASES, ids=[n.name for _, n in CASES])
def test_name_matches_the_wheels(engine, name):
    if name.until is None:
        assert name.name in defined(engine, NEWEST[engine])
    else:
        assert name.name in defined(engine, name.until)
        assert name.name not in defined(engine, NEWEST[engine])
    if name.after is not None:
        assert name.name not in defined(engine, name.after)
