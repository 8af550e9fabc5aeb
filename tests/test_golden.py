"""Golden `kvtui check` output (JSON and human) for every sample log.

The core is deterministic, so any change to these files is a change in what kvtui tells a user:
review the diff, then refresh with `KVTUI_UPDATE_GOLDEN=1 python3 dev.py test tests/test_golden.py`.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"
SAMPLES = sorted(p.name for p in (ROOT / "sample_logs").glob("*.log"))
UPDATE = os.environ.get("KVTUI_UPDATE_GOLDEN") == "1"


def run_check(name: str, *extra: str) -> str:
    """`kvtui check sample_logs/NAME` as the command runs it (its `main`, in this process: a
    new interpreter per file cost more than the check; `test_golden_command_line` runs one
    through the real entry point)."""
    from kvtui.cli import main

    out = io.StringIO()
    with contextlib.chdir(ROOT), contextlib.redirect_stdout(out):
        code = main(["check", f"sample_logs/{name}", "--fail-on", "never", *extra])
    assert code == 0
    return out.getvalue()


def test_golden_command_line():
    """One golden through the real entry point (`python -m kvtui` in a process of its own)."""
    name = SAMPLES[0]
    out = subprocess.run([sys.executable, "-m", "kvtui", "check", f"sample_logs/{name}",
                          "--fail-on", "never", "--json"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout == (GOLDEN / (name.removesuffix(".log") + ".json")).read_text()


def compare(path: Path, actual: str) -> None:
    if UPDATE or not path.exists():
        if not UPDATE:
            pytest.fail(f"missing golden file {path.name}; run with KVTUI_UPDATE_GOLDEN=1")
        path.write_text(actual, encoding="utf-8")
        return
    assert actual == path.read_text(encoding="utf-8"), f"{path.name} changed"


@pytest.mark.parametrize("name", SAMPLES)
def test_golden_json(name):
    actual = run_check(name, "--json")
    json.loads(actual)
    compare(GOLDEN / (name.removesuffix(".log") + ".json"), actual)


@pytest.mark.parametrize("name", SAMPLES)
def test_golden_text(name):
    compare(GOLDEN / (name.removesuffix(".log") + ".txt"), run_check(name))


def test_no_stale_golden_files():
    expected = {n.removesuffix(".log") + ext for n in SAMPLES for ext in (".json", ".txt")}
    assert {p.name for p in GOLDEN.glob("*") if p.suffix in (".json", ".txt")} == expected
