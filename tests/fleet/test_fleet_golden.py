"""Golden `kvtui fleet --check --json` and text output of two fleets made of the bundled fleet
sample logs (sample_logs/fleet/): replicas (one with an FP8 KV cache and no scales), and a
prefill/decode pair with different KV dtypes behind a router whose decode requests fail.

Read through the same folds and the same gate, JSON and text as `fleet --check` (the SSH read
is the only part left out: tests/fleet/ssh/ runs it against real sshd instances). The JSON's
keys are a contract for the scripts that gate a deploy on it: any change here is a change in
what kvtui tells them; review the diff, then refresh with
`KVTUI_UPDATE_GOLDEN=1 python3 dev.py test tests/fleet/test_fleet_golden.py`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kvtui.core.fleet import evaluate
from kvtui.core.fleet.result import Outcome, exit_code, render_text, to_json
from tests.fleet.fleetlogs import server

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "fleet"
UPDATE = os.environ.get("KVTUI_UPDATE_GOLDEN") == "1"

FLEETS = {
    "fleet-replicas": [("replica-a-bf16.log", "replica", "gpu-a"),
                       ("replica-b-bf16.log", "replica", "gpu-b"),
                       ("replica-c-fp8-unscaled.log", "replica", "gpu-c")],
    "fleet-pd-router": [("pd-prefill-fp8.log", "prefill", "gpu-p"),
                        ("pd-decode-bf16.log", "decode", "gpu-d"),
                        ("pd-router.log", "router", "router-1")],
}


def _compare(path: Path, actual: str) -> None:
    if UPDATE:
        path.write_text(actual, encoding="utf-8")
        return
    if not path.exists():
        pytest.fail(f"missing golden file {path.name}; run with KVTUI_UPDATE_GOLDEN=1")
    assert actual == path.read_text(encoding="utf-8"), f"{path.name} changed"


@pytest.mark.parametrize("name", sorted(FLEETS))
def test_fleet_check_output(name: str) -> None:
    servers = [server(log, role, host=host) for log, role, host in FLEETS[name]]
    outcomes = [Outcome(s.name, s.role, s, source=f"file /var/log/{log}")
                for s, (log, _, _) in zip(servers, FLEETS[name], strict=True)]
    alerts = evaluate(servers)
    code = exit_code(outcomes, alerts, "critical")
    doc = to_json(outcomes, alerts, code)
    doc["kvtui_version"] = "(any)"  # the release that wrote it is not the contract
    _compare(GOLDEN / f"{name}.json", json.dumps(doc, indent=2, sort_keys=False) + "\n")
    _compare(GOLDEN / f"{name}.txt", render_text(outcomes, alerts, code, "critical"))
    assert code == 1  # both fleets carry a critical alert (FP8 without scales; PD dtypes)
