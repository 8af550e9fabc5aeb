"""Alerts that need both the log and /metrics: real sample logs (sample_logs/) against the
real captures and recorded sequences built from them (tests/metrics/recorded.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtui.core.metrics import cross
from kvtui.core.pipeline import Options, Session
from kvtui.core.report import build_report
from kvtui.core.report_types import Report
from tests.metrics.conftest import sample
from tests.metrics.recorded import SGLANG, VLLM, observing, setting, snapshots

LOGS = Path(__file__).resolve().parents[2] / "sample_logs"


def report(name: str) -> Report:
    path = LOGS / name
    s = Session(Options())
    s.feed_lines(str(path), path.read_text(encoding="utf-8").splitlines(), 1)
    s.end()
    return build_report(s.state, engine=s.engine)


def rules(alerts) -> dict[str, str]:
    return {a.rule: a.severity for a in alerts}


# -- KV dtype -----------------------------------------------------------------------------------
def test_vllm_auto_against_a_log_started_with_fp8_is_another_server():
    log = report("vllm-llama31-8b-tp2-fp8-unscaled.log")
    snaps = snapshots([sample(VLLM)])
    alert = cross.kv_dtype_mismatch(log, snaps)
    assert alert is not None and alert.severity == "warning"
    assert 'cache_dtype="auto"' in alert.detail and "fp8_e4m3" in alert.detail
    assert alert.evidence is not None and alert.evidence.source.endswith(".log")
    assert alert.extra["metrics"]["cache_dtype"] == "auto"


def test_vllm_auto_against_a_bf16_log_agrees():
    assert cross.kv_dtype_mismatch(report("vllm-llama31-70b-tp8-bf16.log"),
                                   snapshots([sample(VLLM)])) is None


def test_vllm_explicit_dtype_that_differs_from_the_log():
    text = sample(VLLM).replace('cache_dtype="auto"', 'cache_dtype="fp8_e5m2"')
    alert = cross.kv_dtype_mismatch(report("vllm-llama31-8b-tp2-fp8-unscaled.log"),
                                    snapshots([text]))
    assert alert is not None and "fp8_e5m2" in alert.title
    same = sample(VLLM).replace('cache_dtype="auto"', 'cache_dtype="fp8"')
    assert cross.kv_dtype_mismatch(report("vllm-llama31-8b-tp2-fp8-unscaled.log"),
                                   snapshots([same])) is None


def _sglang_full_only(gib: float, tokens: float) -> str:
    """The SGLang capture with the pool of the sample log's size (no mamba slots in use)."""
    return setting(sample(SGLANG), {
        "sglang:kv_cache_memory_usage_gb": gib, "sglang:max_total_num_tokens": tokens,
        "sglang:mamba_available_tokens": 0.0, "sglang:mamba_evictable_tokens": 0.0})


def test_sglang_bytes_per_token_name_the_fp8_cell_against_a_bf16_log():
    log = report("llama31-8b-retraction.log")  # bf16, 131,260 B/token on its pool line
    # 34,357 tokens of Llama-3.1-8B's FP8 cell (65,536 B/token) in GiB
    snaps = snapshots([_sglang_full_only(34357 * 65536 / 2**30, 34357)])
    alert = cross.kv_dtype_mismatch(log, snaps)
    assert alert is not None
    assert alert.extra["metrics"]["implied_dtype"] == "fp8"
    assert "the fp8 cell" in alert.detail and "131,257" in alert.detail
    # the same pool at the log's own bytes per token: one server, no alert
    same = snapshots([_sglang_full_only(34357 * 131260.5 / 2**30, 34357)])
    assert cross.kv_dtype_mismatch(log, same) is None


def test_sglang_hybrid_pool_is_not_compared():
    # the capture as captured has a mamba pool: its memory is not the full cell's
    assert cross.kv_dtype_mismatch(report("llama31-8b-retraction.log"),
                                   snapshots([sample(SGLANG)])) is None


def test_engine_mismatch_says_nothing():
    assert cross.kv_dtype_mismatch(report("llama31-8b-retraction.log"),
                                   snapshots([sample(VLLM)])) is None


# -- saturation with a growing queue ------------------------------------------------------------
def _vllm_busy(usage: float, waiting: float, running: float = 20.0) -> str:
    return setting(sample(VLLM), {"vllm:kv_cache_usage_perc": usage,
                                  "vllm:num_requests_waiting": waiting,
                                  "vllm:num_requests_running": running})


def test_saturated_queue_growing_beside_a_quiet_log():
    log = report("vllm-qwen3-next-80b-tp4-hybrid.log")  # peak usage 0.242, never saturated
    snaps = snapshots([_vllm_busy(0.97, 3), _vllm_busy(0.98, 9)])
    alert = cross.saturated_queue(log, snaps)
    assert alert is not None and alert.rule == "metrics-saturated-queue"
    assert "does not" in alert.detail and "0.18" in alert.detail
    assert alert.extra["metrics"]["queue_growth"] == 6
    assert alert.extra["log"]["pool_saturated"] is False
    # a queue that shrinks is not waiting for KV
    assert cross.saturated_queue(log, snapshots([_vllm_busy(0.97, 9),
                                                 _vllm_busy(0.98, 3)])) is None


def test_saturated_queue_growing_the_log_shows_too():
    log = report("vllm-llama31-8b-tp2-fp8-unscaled.log")  # pool-saturated in the log
    alert = cross.saturated_queue(log, snapshots([_vllm_busy(0.97, 3), _vllm_busy(0.98, 9)]))
    assert alert is not None and "The log shows it too" in alert.detail
    assert alert.evidence is not None


# -- retractions the log does not show ----------------------------------------------------------
def test_preemptions_counted_by_metrics_not_in_the_log():
    log = report("vllm-qwen3-next-80b-tp4-hybrid.log")  # no preemption line
    texts = [setting(sample(VLLM), {"vllm:num_preemptions_total": n}) for n in (4, 4, 11)]
    alert = cross.unlogged_retractions(log, snapshots(texts))
    assert alert is not None and alert.severity == "warning"
    assert alert.extra["metrics"]["total"] == 11
    assert alert.extra["metrics"]["in_scrapes"] == 7
    assert "the log shows none" in alert.detail


def test_preemptions_the_log_counts_raise_nothing():
    log = report("vllm-llama31-8b-tp2-fp8-unscaled.log")  # 83 preempted requests logged
    texts = [setting(sample(VLLM), {"vllm:num_preemptions_total": n}) for n in (80, 83)]
    assert cross.unlogged_retractions(log, snapshots(texts)) is None
    more = [setting(sample(VLLM), {"vllm:num_preemptions_total": n}) for n in (83, 90)]
    alert = cross.unlogged_retractions(log, snapshots(more))
    assert alert is not None and alert.severity == "info" and "count 83" in alert.detail


def test_counter_reset_starts_the_sum_again():
    log = report("vllm-qwen3-next-80b-tp4-hybrid.log")
    texts = [setting(sample(VLLM), {"vllm:num_preemptions_total": n}) for n in (10, 12, 3)]
    alert = cross.unlogged_retractions(log, snapshots(texts))
    assert alert is not None
    assert alert.extra["metrics"]["in_scrapes"] == 5  # 2 before the restart, 3 after


# -- latency rising as the pool saturates -------------------------------------------------------
def test_ttft_rising_as_the_pool_fills():
    ttft = "vllm:time_to_first_token_seconds"
    base = sample(VLLM)
    s1 = observing(_vllm_busy(0.40, 0), ttft, 0.05, 20)
    s2 = observing(observing(_vllm_busy(0.60, 1), ttft, 0.05, 20), ttft, 0.05, 20)
    s3 = observing(setting(s2, {"vllm:kv_cache_usage_perc": 0.97,
                                "vllm:num_requests_waiting": 12}), ttft, 2.0, 20)
    log = report("vllm-qwen3-next-80b-tp4-hybrid.log")
    alert = cross.latency_rising(log, snapshots([base, s1, s2, s3]))
    assert alert is not None and alert.rule == "metrics-latency-saturation"
    assert alert.extra["metrics"]["histogram"] == "ttft"
    assert alert.extra["metrics"]["p95_last"] > 10 * alert.extra["metrics"]["p95_first"]
    assert alert.extra["metrics"]["usage_last"] == pytest.approx(0.97)
    # the same latency rise with the pool half empty is not a KV problem
    s3_free = observing(setting(s2, {"vllm:kv_cache_usage_perc": 0.5}), ttft, 2.0, 20)
    assert cross.latency_rising(log, snapshots([base, s1, s2, s3_free])) is None


# -- SGLang token_usage -------------------------------------------------------------------------
def test_token_usage_that_is_the_mamba_pool_beside_the_log():
    text = setting(sample(SGLANG), {"sglang:token_usage": 0.95, "sglang:mamba_usage": 0.95,
                                    "sglang:full_token_usage": 0.30})
    log = report("llama31-8b-retraction.log")
    found = cross.token_usage(log, snapshots([text]))
    assert [a.rule for a in found] == ["metrics-token-usage-is-mamba"]
    assert found[0].severity == "warning"
    assert "0.99" in found[0].detail  # the log's last batch-line usage beside it
    assert "trust" in found[0].detail


def test_cross_alerts_on_the_capture_as_captured_are_quiet():
    # an idle server: nothing saturated, no preemption, auto against a bf16 log
    assert cross.cross_alerts(report("vllm-llama31-70b-tp8-bf16.log"),
                              snapshots([sample(VLLM), sample(VLLM)])) == []


def test_cross_alerts_sorted_most_severe_first():
    log = report("vllm-qwen3-next-80b-tp4-hybrid.log")
    texts = [setting(_vllm_busy(0.97, n), {"vllm:num_preemptions_total": n})
             for n in (1.0, 6.0)]
    found = cross.cross_alerts(log, snapshots(texts))
    assert rules(found) == {"metrics-saturated-queue": "warning",
                            "metrics-retractions-unlogged": "warning"}
