"""The metrics core on recorded sequences: deltas, percentiles, rates, alerts."""

from __future__ import annotations

import math

import pytest

from kvtui.core.metrics import alerts, catalogue, window
from kvtui.core.metrics.exposition import parse
from kvtui.core.metrics.snapshot import Histogram
from tests.metrics.conftest import DATA, sample


def snap(name: str, at: float):
    scrape = parse((DATA / name).read_text(), at)
    engine = catalogue.detect(scrape)
    assert engine is not None
    return engine, engine.snapshot(scrape)


def test_quantile_follows_histogram_quantile():
    # cumulative 10 <= 0.1, 30 <= 0.5, 40 <= 1.0: p50 is rank 20, halfway through (0.1, 0.5]
    h = Histogram(((0.1, 10.0), (0.5, 30.0), (1.0, 40.0), (math.inf, 40.0)), 0.0, 40.0)
    assert window.quantile(0.5, h) == pytest.approx(0.3)
    assert window.quantile(0.95, h) == pytest.approx(0.9)
    # a rank in the +Inf bucket answers the highest finite bound
    tail = Histogram(((1.0, 1.0), (math.inf, 2.0)), 0.0, 2.0)
    assert window.quantile(0.99, tail) == 1.0
    assert window.quantile(0.5, Histogram(((1.0, 0.0), (math.inf, 0.0)), 0.0, 0.0)) is None


def test_counter_reset_gives_no_delta():
    new = Histogram(((1.0, 1.0), (math.inf, 1.0)), 1.0, 1.0)
    old = Histogram(((1.0, 5.0), (math.inf, 5.0)), 3.0, 5.0)
    assert window.delta(new, old) is None


def test_sglang_window_rates_percentiles_and_alerts():
    engine, old = snap("sglang-seq-1.prom", 100.0)
    _, new = snap("sglang-seq-2.prom", 104.0)
    w = window.window(new, old)
    assert w.seconds == 4.0
    ttft = w.percentiles["ttft"]
    assert ttft is not None
    assert ttft["p50"] == pytest.approx(0.3)
    assert ttft["p95"] == pytest.approx(0.9)
    assert ttft["p99"] == pytest.approx(0.98)
    assert w.counts["ttft"] == 40
    assert w.rates["retracted"] == pytest.approx(3 / 4)
    # prompt tokens summed over the is_streaming breakdown: (3000-1000) x 2 in 4 s
    assert w.rates["prompt_tokens"] == pytest.approx(1000.0)
    assert w.queue_growth == 4
    # constants from both TP ranks are not double counted
    full = new.pools[0]
    assert (full.kind, full.tokens, full.used, full.evictable, full.available) == \
        ("full", 100000, 97000, 2000, 1000)
    # 1.430511474609375 GiB over 100,000 tokens
    assert new.bytes_per_token == pytest.approx(15360.0)
    kinds = {a.kind: a.severity for a in alerts.general(new, old, w)}
    assert kinds == {"saturated_queue_growing": "warning", "retracted_in_window": "warning"}
    assert engine.alerts(new, old) == []


def test_vllm_pool_from_kv_cache_size_tokens_and_hit_rate_window():
    _, old = snap("vllm-seq-1.prom", 0.0)
    _, new = snap("vllm-seq-2.prom", 2.0)
    pool = new.pools[0]
    # 200,000 from the label, not num_gpu_blocks x block_size (12,500 x 16 = 200,000 here too,
    # so the real capture's test below is the one that tells them apart)
    assert (pool.tokens, pool.used, pool.evictable) == (200000, 100000, None)
    assert pool.approximate == ("used", "available")
    assert new.kv_cache_dtype == "fp8_e4m3"
    assert window.hit_rate(new, old) == pytest.approx(0.5)
    w = window.window(new, old)
    assert w.percentiles["ttft"]["p50"] == pytest.approx(0.55)
    assert w.percentiles["ttft"]["p95"] == 1.0
    assert w.rates["preempted"] == pytest.approx(1.0)


def test_real_vllm_capture_pool_is_the_group_aware_label():
    scrape = parse(sample("vllm-0.24.0-yongzane00-vllmtop-fixture.txt"))
    s = catalogue.load("vllm").snapshot(scrape)
    # kv_cache_size_tokens="342803"; num_gpu_blocks x block_size would be 442 x 784 = 346,528
    assert s.pools[0].tokens == 342803
    assert s.kv_cache_dtype == "auto"


def test_real_sglang_capture_evictable_alert_says_which_to_trust():
    scrape = parse(sample("sglang-mratsim-sgtop-live-excerpt.txt"))
    engine = catalogue.detect(scrape)
    assert engine is not None and engine.engine == "sglang"
    s = engine.snapshot(scrape)
    found = engine.alerts(s, None)
    assert [a.kind for a in found] == ["evictable_hidden"]
    assert "trust token_usage / kv_used_tokens" in found[0].message
    assert {p.kind for p in s.pools} == {"full", "mamba"}  # SWA gauges all 0: no SWA pool


def test_token_usage_driven_by_mamba_is_named():
    text = (DATA / "sglang-seq-1.prom").read_text().replace(
        "sglang:token_usage{engine_type=\"unified\",model_name=\"m\",moe_ep_rank=\"0\","
        "pp_rank=\"0\",tp_rank=\"0\"} 0.97",
        "sglang:token_usage{tp_rank=\"0\"} 0.99\n"
        "# TYPE sglang:mamba_usage gauge\nsglang:mamba_usage{tp_rank=\"0\"} 0.99")
    text = text.replace("sglang:full_token_usage{engine_type=\"unified\",model_name=\"m\","
                        "moe_ep_rank=\"0\",pp_rank=\"0\",tp_rank=\"0\"} 0.97",
                        "sglang:full_token_usage{tp_rank=\"0\"} 0.30")
    engine = catalogue.load("sglang")
    found = engine.alerts(engine.snapshot(parse(text)), None)
    assert [(a.kind, a.severity) for a in found] == [("token_usage_is_mamba", "warning")]


def test_release_range_from_the_metric_set():
    scrape = parse(sample("sglang-mratsim-sgtop-live-excerpt.txt"))
    # kv_cache_memory_usage_gb was first read in the 0.5.17 wheel (absent from 0.5.14)
    assert catalogue.releases(scrape, catalogue.load("sglang").names) == ">0.5.14"
    v0 = parse("# TYPE vllm:gpu_cache_usage_perc gauge\nvllm:gpu_cache_usage_perc 0.5\n")
    assert catalogue.releases(v0, catalogue.load("vllm").names) == "<=0.11.0"


def test_vllm_release_floor_from_the_size_label():
    # kv_cache_size_tokens is a CacheConfig field from the 0.25.0 wheel (absent in 0.22.0)
    scrape = parse(sample("vllm-0.24.0-yongzane00-vllmtop-fixture.txt"))
    assert catalogue.load("vllm").snapshot(scrape).releases == ">0.22.0"


def test_sglang_bytes_per_token_against_the_model_cell():
    from kvtui.core.capacity.presets import resolve_model

    spec, _ = resolve_model("llama-3.1-8b")
    engine = catalogue.load("sglang")
    # 3.0517578125 GiB over 100,000 tokens = 32,768 B/token; TP 2 from the tp_rank labels:
    # Llama-3.1-8B's cell at TP 2 is 65,536 B (bf16) and 32,768 B (fp8)
    text = (DATA / "sglang-seq-1.prom").read_text().replace(
        "} 1.430511474609375", "} 3.0517578125")
    snap = engine.snapshot(parse(text))
    assert (snap.tp, snap.pp) == (2, 1)
    cell = engine.kv_cell(snap, spec, "0.5.23")
    assert cell["cells"] == {"bf16": 65536, "fp8_e4m3": 32768}
    assert cell["matches"] == "fp8_e4m3"
    # 15,360 B/token matches neither: none is claimed
    other = engine.kv_cell(engine.snapshot(parse((DATA / "sglang-seq-1.prom").read_text())),
                           spec, None)
    assert other["matches"] is None
    assert catalogue.load("vllm").kv_cell(snap, spec, None) is None


def test_no_cell_match_claimed_under_dp():
    from kvtui.core.capacity.presets import resolve_model

    spec, _ = resolve_model("llama-3.1-8b")
    engine = catalogue.load("sglang")
    text = (DATA / "sglang-seq-1.prom").read_text().replace("} 1.430511474609375",
                                                            "} 3.0517578125")
    # two DP groups (dp_rank 0 and 1), each its own pool of 100,000 tokens
    text = text.replace('tp_rank="1"} 100000.0', 'tp_rank="1",dp_rank="1"} 100000.0')
    text = text.replace('moe_ep_rank="0",pp_rank="0",tp_rank="0"} 100000.0',
                        'moe_ep_rank="0",pp_rank="0",tp_rank="0",dp_rank="0"} 100000.0')
    snap = engine.snapshot(parse(text))
    assert snap.dp == 2
    assert snap.pools[0].tokens == 200000
    assert engine.kv_cell(snap, spec, None)["matches"] is None
