"""`alert_watch` (what a replay's "next alert" stops on) never misses a line that changes the
alerts: every rule's facts are watched, pool saturation and queue growth included."""

from __future__ import annotations

import random

import pytest

from kvtui.core.pipeline import Session
from tests.conftest import SAMPLES
from tests.helpers import session_of


def rules(session: Session) -> set[tuple[str, str]]:
    return {(a["rule"], a["severity"]) for a in session.report().to_json()["alerts"]}


def decode(i: int, usage: float, queue: int) -> str:
    return (f"[2026-01-01 10:00:{i % 60:02d} TP0] Decode batch, #running-req: 4, #token: {i}, "
            f"token usage: {usage:.2f}, cuda graph: True, gen throughput (token/s): 50.00, "
            f"#queue-req: {queue}")


def walk(lines: list[str], start: int) -> int:
    """Feed `lines` one by one from `start`, each time checking that a change of the alerts was
    announced by the watch made just before the line; returns how many lines changed them."""
    session = session_of(lines[:start], "x")
    changes = 0
    for n, text in enumerate(lines[start:], start + 1):
        before = rules(session)
        ev = session.parse(text)
        watched = ev is not None and session.alert_watch()(ev)
        session.feed_line("x", n, text)
        if rules(session) != before:
            changes += 1
            assert watched, f"line {n} changed the alerts unannounced: {text[:90]}"
    return changes


def test_saturation_and_queue_growth_are_announced():
    head = (SAMPLES / "llama31-70b-tp8.log").read_text().splitlines()
    head = [ln for ln in head if "batch" not in ln]
    rng = random.Random(5)
    body = [decode(i, rng.choice([0.5, 0.97]), 1) for i in range(40)]
    body += [decode(i, 0.97, 1) for i in range(40, 50)]  # a saturated run
    body += [decode(i, 0.4, i) for i in range(50, 90)]  # a growing queue (20 rises)
    assert walk(head + body, len(head)) >= 1


@pytest.mark.full
@pytest.mark.parametrize("name", ["qwen35-397b-nvfp4-tp8-fp8.log", "llama31-8b-retraction.log",
                                  "gpt-oss-120b-tp4-e5m2-restart.log"])
def test_samples_line_by_line(name):
    lines = (SAMPLES / name).read_text().splitlines()
    assert walk(lines, 0) >= 1
