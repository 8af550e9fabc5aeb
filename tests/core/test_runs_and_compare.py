"""Every server start is a run with its own facts and alerts, an earlier run's alert names the
restart that resolved it, and the compare's prediction holds to the token on the bundled
restart pairs (whose second pools `sample_logs/restarts.py` sized through kvtui's calculator)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtui.commands.check import analyse_files
from kvtui.commands.compare import resolve, split_name
from kvtui.core.compare import compare
from kvtui.core.pipeline import Session
from tests.helpers import session_of

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs"


def _session(text: str) -> Session:
    s = session_of(text.splitlines(), "t")
    s.end()
    return s


def _sessions(*names: str) -> dict[str, Session]:
    paths = [str(SAMPLES / n) for n in names]
    return dict(zip(paths, analyse_files(paths), strict=True))


def test_tp1_start_then_a_tp2_start_without_dump_is_a_second_run():
    text = (SAMPLES / "llama31-8b-tp1-then-tp2-no-dump.log").read_text()
    report = _session(text).report()
    assert [r.index for r in report.runs] == [1, 2]
    assert report.runs[0].opened_by == "start" and report.runs[1].opened_by != "start"
    assert report.runs[0].tp == 1 and report.runs[1].tp == 2
    # the report is the last run's: its pool, not the first start's stale one
    first_pool = report.runs[0].pool_tokens
    assert report.pools[0].tokens == report.runs[1].pool_tokens != first_pool


def test_a_second_pool_line_of_a_rank_after_start_up_is_a_restart():
    text = (SAMPLES / "llama31-8b-retraction.log").read_text().splitlines()
    pool = next(line for line in text if "KV Cache is allocated" in line)
    cap = next(line for line in text if "max_total_num_tokens=" in line)
    # the same server sized its pool again later, with no dump and no weight load captured
    report = _session("\n".join([*text, pool, cap])).report()
    assert len(report.runs) == 2 and report.runs[1].opened_by == "kv_pool"


def test_a_second_weight_load_of_a_rank_after_start_up_is_a_restart():
    text = (SAMPLES / "llama31-8b-retraction.log").read_text().splitlines()
    end = next(line for line in text if "Load weight end" in line)
    begin = next(line for line in text if "Load weight begin" in line)
    # its begin line was not captured: the end alone opens the run
    report = _session("\n".join([*text, end])).report()
    assert len(report.runs) == 2 and report.runs[1].opened_by == "load_weight_end"
    # the begin line opens it when it is there (the end then belongs to that run)
    report = _session("\n".join([*text, begin, end])).report()
    assert len(report.runs) == 2 and report.runs[1].opened_by == "load_weight_begin"


def test_a_log_clients_restart_notice_opens_a_run_without_a_dump():
    text = (SAMPLES / "llama31-8b-retraction.log").read_text().splitlines()
    decode = [line for line in text if "Decode batch" in line][:5]
    s = session_of(text, "t")
    assert s.run_count == 1
    s.restart_notice()
    s.feed_lines("t", decode, len(text) + 1)
    s.end()
    assert s.run_count == 2
    assert s.report().runtime.decode_batches == 5


def test_an_alert_resolved_by_a_restart_names_the_run_and_the_changed_flag():
    text = (SAMPLES / "qwen35-397b-nvfp4-tp8-fp8-then-bf16.log").read_text()
    report = _session(text).report()
    first, last = report.runs
    assert [a.rule for a in report.alerts] == [a.rule for a in last.alerts]
    assert "kv-fp8-unscaled" not in {a.rule for a in report.alerts}
    fp8 = next(a for a in first.alerts if a.rule == "kv-fp8-unscaled")
    assert fp8.resolved_by is not None and fp8.resolved_by.run == 2
    assert fp8.resolved_by.line == last.start.line
    assert [c.describe() for c in fp8.resolved_by.cause] == ["--kv-cache-dtype fp8_e4m3 -> bf16"]
    assert "resolved by the restart at line" in fp8.resolved_by.describe()


def test_the_report_of_an_earlier_run_is_that_runs():
    s = _session((SAMPLES / "qwen35-397b-nvfp4-tp8-fp8-then-bf16.log").read_text())
    one = s.run_report(1)
    assert one.kv_cache.effective_dtype == "fp8_e4m3"
    assert "kv-fp8-unscaled" in {a.rule for a in one.alerts}
    assert len(one.runs) == 1
    with pytest.raises(ValueError):
        s.run_report(3)


@pytest.mark.parametrize("name, setting", [
    ("qwen35-397b-nvfp4-tp8-fp8-then-bf16.log", "KV dtype fp8_e4m3 -> bf16"),
    ("llama31-70b-tp8-mem-fraction-restart.log", "mem_fraction_static 0.85 -> 0.8"),
    ("llama31-8b-tp1-then-tp2-no-dump.log", "TP 1 -> 2"),
    ("vllm-llama31-70b-tp8-then-tp4.log", "TP 8 -> 4"),
])
def test_prediction_holds_to_the_token(name, setting):
    sessions = _sessions(name)
    a, b = resolve([str(SAMPLES / name)], sessions)
    c = compare(a, b)
    assert c.prediction is not None, c.prediction_note
    assert c.prediction.setting == setting
    assert c.prediction.predicted_tokens == c.prediction.logged_tokens
    assert c.prediction.ratio == 1.0 and c.prediction.agrees
    assert c.prediction.from_run.endswith("#1")


def test_the_two_bundled_qwen_logs_agree_with_the_restart_pair():
    """The FP8 log's BF16 what-if is the BF16 log's pool, across two files too."""
    fp8, bf16 = "qwen35-397b-nvfp4-tp8-fp8.log", "qwen35-397b-nvfp4-tp8-bf16.log"
    sessions = _sessions(fp8, bf16)
    a, b = resolve([str(SAMPLES / fp8), str(SAMPLES / bf16)], sessions)
    c = compare(a, b)
    assert c.prediction is not None
    assert (c.prediction.predicted_tokens, c.prediction.logged_tokens) == (304_087, 304_087)
    assert [(x.rule, x.status) for x in c.alerts if x.rule == "kv-fp8-unscaled"] == [
        ("kv-fp8-unscaled", "resolved")]


def test_a_disagreeing_prediction_says_why():
    """A prediction whose logged pool differs (another release sized it, or other flags
    changed) is said to disagree, with the reasons the logs show."""
    sessions = _sessions("llama31-70b-tp8.log", "vllm-llama31-70b-tp8-bf16.log")
    a, b = resolve([str(SAMPLES / n) for n in ("llama31-70b-tp8.log",
                                                "vllm-llama31-70b-tp8-bf16.log")], sessions)
    c = compare(a, b)
    assert c.prediction is None and "different engines" in (c.prediction_note or "")
    assert {x.arg for x in c.args} <= {"kv_cache_dtype", "served_model_name"}


def test_runtime_is_compared_at_shared_running_counts_only():
    sessions = _sessions("qwen35-397b-nvfp4-tp8-fp8-then-bf16.log")
    a, b = resolve([str(SAMPLES / "qwen35-397b-nvfp4-tp8-fp8-then-bf16.log")], sessions)
    c = compare(a, b)
    shared = {t.running for t in c.runtime.shared}
    assert shared == set(a.run.runtime.gen_by_running) & set(b.run.runtime.gen_by_running) - {0}
    assert c.runtime.aggregate is not None and c.runtime.aggregate.running == max(shared)
    assert c.runtime.aggregate.a == a.run.runtime.gen_median(max(shared))


def test_median_of_the_histogram():
    from kvtui.core.runtime import Runtime

    rt = Runtime()
    rt.gen_hist = {3: {10: 1, 20: 2, 40: 1}}
    assert rt.gen_median(3) == 20
    rt.gen_hist = {3: {10: 1, 20: 1}}
    assert rt.gen_median(3) == 15
    assert rt.gen_median(4) is None


def test_run_names():
    assert split_name("a.log#2") == ("a.log", 2)
    assert split_name("a#b.log") == ("a#b.log", None)
    assert split_name("a.log") == ("a.log", None)


def test_a_vllm_runs_pool_is_its_kv_cache_size_in_the_runs_lists():
    """vLLM prints no per-pool token line, only 'GPU KV cache size: N tokens': `kvtui compare`
    showed 1,364,400 -> 466,848 while `kvtui check`'s runs list and the TUI's said 'pool -
    tokens' for the same two runs."""
    from kvtui.core.render import render_text
    from kvtui.ui.runs import run_line

    path = SAMPLES / "vllm-llama31-70b-tp8-then-tp4.log"
    report = _session(path.read_text()).report()
    sizes = [r.pool_size for r in report.runs]
    assert sizes == [1_364_400, 466_848]
    assert [r.pool_tokens for r in report.runs] == [None, None]  # the JSON keeps its facts
    text = render_text(report)
    assert "pool 1,364,400 tokens" in text and "pool 466,848 tokens" in text
    assert "pool 466,848 tokens" in run_line(report.runs[1], 0).plain
    cmp = compare(*resolve([f"{path}#1", f"{path}#2"], _sessions(path.name)))
    row = next(r for r in cmp.facts if r.name == "pool_tokens")
    assert (row.a, row.b) == tuple(sizes)


def test_a_run_that_does_not_exist_is_named_as_given():
    """`kvtui compare FILE#3` on a one-run log said 'run 2 does not exist' (the run before the
    one named); `FILE#0` said the log 'holds 2 server start(s)'."""
    one, two = "llama31-70b-tp8.log", "qwen35-397b-nvfp4-tp8-fp8-then-bf16.log"
    sessions = _sessions(one, two)
    with pytest.raises(ValueError, match="run 3 does not exist"):
        resolve([f"{SAMPLES / one}#3"], sessions)
    with pytest.raises(ValueError, match="run 0 does not exist"):
        resolve([f"{SAMPLES / two}#0"], sessions)
    with pytest.raises(ValueError, match="run 1 is the first server start"):
        resolve([f"{SAMPLES / two}#1"], sessions)


def test_a_run_without_a_dump_is_the_same_model_by_its_class():
    """The TP 1 -> 2 restart without a dump: 'model llama-3.1-8b -> LlamaForCausalLM' was
    marked changed (a served name against a class name); both runs load LlamaForCausalLM."""
    path = SAMPLES / "llama31-8b-tp1-then-tp2-no-dump.log"
    cmp = compare(*resolve([str(path)], _sessions(path.name)))
    row = next(r for r in cmp.facts if r.name == "model")
    assert not row.changed, (row.a, row.b)
    assert (row.a, row.b) == ("LlamaForCausalLM", "LlamaForCausalLM")
    # runs that both name themselves keep their names
    two = _sessions("llama31-70b-tp8.log", "vllm-llama31-70b-tp8-bf16.log")
    names = [str(SAMPLES / "llama31-70b-tp8.log"), str(SAMPLES / "vllm-llama31-70b-tp8-bf16.log")]
    row = next(r for r in compare(*resolve(names, two)).facts if r.name == "model")
    assert (row.a, row.b) == ("llama-3.1-70b", "meta-llama/Llama-3.1-70B-Instruct")


def test_no_prediction_across_two_models():
    """Llama-3.1-70B's what-if for Qwen3.5-397B's pool said 'ratio 0.241 (disagrees: other
    flags changed: --model-path ...)': one model's what-if does not size another's."""
    names = ["llama31-70b-tp8.log", "qwen35-397b-nvfp4-tp8-fp8.log"]
    refs = resolve([str(SAMPLES / n) for n in names], _sessions(*names))
    cmp = compare(*refs)
    assert cmp.prediction is None
    assert cmp.prediction_note is not None and "different models" in cmp.prediction_note
    # the same model in two files is still predicted
    same = ["qwen35-397b-nvfp4-tp8-bf16.log", "qwen35-397b-nvfp4-tp8-fp8.log"]
    cmp = compare(*resolve([str(SAMPLES / n) for n in same], _sessions(*same)))
    assert cmp.prediction is not None and cmp.prediction.agrees


def test_the_compare_says_a_16_bit_caches_scales_as_check_does():
    """`kvtui check` says 'scales: none needed (bf16)' for the BF16 restart, the runs list too,
    and the compare said 'kv_scales  missing -> unknown'. The JSON keeps the raw values."""
    from kvtui.core.compare_render import render_comparison

    path = SAMPLES / "qwen35-397b-nvfp4-tp8-fp8-then-bf16.log"
    cmp = compare(*resolve([str(path)], _sessions(path.name)))
    line = next(t for t in render_comparison(cmp).splitlines() if "kv_scales" in t)
    assert "missing  ->  none needed (bf16)" in line, line
    row = next(r for r in cmp.facts if r.name == "kv_scales")
    assert (row.to_json()["a"], row.to_json()["b"]) == ("missing", "unknown")
