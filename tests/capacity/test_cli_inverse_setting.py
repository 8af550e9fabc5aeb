"""`kvtui whatif --mem-fraction-static F` (or `--target-tp N`) without `--target-concurrency`:
the calculator's own inverse line is asked at that setting too, so its "missing per GPU" is the
budget what-if's gap beside it, not the logged pool's (issue 35 point 8)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import SAMPLES

LOG = SAMPLES / "qwen35-397b-nvfp4-tp8-fp8.log"


def _whatif(*flags: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "kvtui", "whatif", "--from-log", str(LOG),
                          "--dtype", "bf16", "--json", *flags],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def test_the_default_inverse_follows_the_memory_setting() -> None:
    logged = _whatif()["inverse"]
    gaps = {}
    for mf in (0.85, 0.9):
        doc = _whatif("--mem-fraction-static", str(mf))
        inv, budget = doc["inverse"], doc["budget_scenarios"][0]
        assert inv["mem_fraction_static_target"] == mf
        # the gap is the budget what-if's own: (needed - its tokens) x the bf16 cell
        missing = (inv["tokens_needed"] - budget["tokens"]) * inv["bytes_per_token"] / 2**30
        assert abs(inv["missing_gib_per_gpu"] - round(missing, 2)) <= 0.011
        gaps[mf] = inv["missing_gib_per_gpu"]
    assert gaps[0.9] < gaps[0.85] < logged["missing_gib_per_gpu"]
