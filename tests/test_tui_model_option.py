"""`kvtui replay/tail/demo --model M` hands the analysis a usable model (it once broke every
report in the TUI while `kvtui check --model` worked)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import kvtui.ui.app as app_mod
from kvtui.commands import replay
from kvtui.core.report_types import Report
from kvtui.ui.ingest import Ingest

SAMPLE = Path(__file__).resolve().parents[1] / "sample_logs" / "llama31-70b-tp8.log"


def test_replay_model_option_reaches_the_calculator(monkeypatch):
    seen: dict = {}

    def fake_run_app(source, title, **opts):
        ingest = Ingest(source, session=opts["session"])
        ingest.start()
        deadline = time.monotonic() + 20
        while ingest.last_state != "at_end" and time.monotonic() < deadline:
            time.sleep(0.05)
        ingest.refresh_report()
        seen["drained"] = ingest.drain()
        ingest.close()
        return 0

    monkeypatch.setattr(app_mod, "run_app", fake_run_app)
    p = argparse.ArgumentParser()
    replay.configure(p)
    args = p.parse_args(["--instant", "--model", "meta-llama/Llama-3.1-8B", str(SAMPLE)])
    assert replay.run(args) == 0
    report = seen["drained"].report
    assert isinstance(report, Report)  # not a failed snapshot
    # The 8B spec on a 70B log: the calculator used the given model, and says it does not fit.
    assert report.whatif is not None and report.whatif.model is not None
    assert report.whatif.model["name"] == "meta-llama/Llama-3.1-8B"
    assert "calibration-mismatch" in {a.rule for a in report.alerts}
