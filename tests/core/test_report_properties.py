"""Nothing a log contains can crash the analysis: random mixes of real lines, mangled numbers
and garbage always give a JSON-serializable report."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvtui.core.analyzer import Analyzer

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
REAL = sorted({ln for p in SAMPLES.glob("*.log") for ln in p.read_text().splitlines()
               if "HTTP/1.1" not in ln})
NUMBER = re.compile(r"\d+(?:\.\d+)?")


def mangle(line: str, how: int) -> str:
    """Zeros, huge values, empty values or a cut: what pastes and odd builds produce."""
    if how == 0:
        return NUMBER.sub("0", line)
    if how == 1:
        return NUMBER.sub("99999999999999999999", line)
    if how == 2:
        return NUMBER.sub("", line)
    if how == 3:
        return line[: len(line) // 2]
    return line


lines = st.one_of(
    st.builds(mangle, st.sampled_from(REAL), st.integers(0, 4)),
    st.text(max_size=200),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(lines, max_size=60))
def test_any_mix_of_lines_gives_a_report(batch):
    a = Analyzer()
    a.feed_many("fuzz", batch)
    report = a.report()
    json.dumps(report)
    assert isinstance(report["alerts"], list)
