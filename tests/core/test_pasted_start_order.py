"""A start pasted below its own start-up joins that start-up's run; a real restart stays apart.

Users paste the KV-cache and memory-pool lines first and the `server_args` line after them (or
two excerpts of one server in the wrong order). The dump then comes after lines of a run that
has no start of its own: when its stamp is no later than that run's lines, or when it is
untimed and carries no lines of its own before the next start or the end, it is that run's start
(`Run.takes_start`, `Run.takes_dump`, `State.settled`). A restart is stamped after every line
before it and prints its own start-up (or is cut short after its dump), so two genuine starts
still make two runs.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kvtui.core.pipeline import Session
from tests.core.test_merge import check_cuts, line_offsets
from tests.helpers import session_of

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
CORPUS = Path(os.environ.get("KVTUI_CORPUS")
              or Path(__file__).resolve().parents[2].parent / "shared" / "corpus")

ARGS = ("server_args=ServerArgs(model_path='Qwen/Qwen3-14B', tokenizer_path='Qwen/Qwen3-14B', "
        "kv_cache_dtype='auto', tp_size=1, page_size=1, mem_fraction_static=0.88)")
STARTUP = [
    "Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=19.67 GB, "
    "mem usage=27.57 GB.",
    "KV Cache is allocated. #tokens: 91749, K size: 7.00 GB, V size: 7.00 GB",
    "Memory pool end. avail mem=5.27 GB",
]
DECODE = ("Decode batch. #running-req: 1, #token: 64, token usage: 0.00, gen throughput "
          "(token/s): 84.39, #queue-req: 0")


def fold(lines: list[str]) -> Session:
    s = session_of(lines, "paste")
    return s


def stamped(ts: str, text: str, rank: str | None = "TP0") -> str:
    return f"[2025-06-01 {ts}{' ' + rank if rank else ''}] {text}"


def reordered() -> list[str]:
    """Start-up lines at 10:00:41, the dump (printed at 10:00:05) pasted below them."""
    return [*(stamped("10:00:41", t) for t in STARTUP), stamped("10:00:05", ARGS, None),
            stamped("10:00:52", DECODE)]


def test_a_dump_stamped_before_the_startup_above_it_is_that_startups_start():
    s = fold(reordered())
    assert len(s.state.runs) == 1
    run = s.state.current
    assert run.server_args["model_path"] == "Qwen/Qwen3-14B"
    assert run.start is not None and run.start.line == 4
    assert run.primary_kv_pool() is not None and run.primary_kv_pool().tokens == 91749
    assert run.runtime.decode_batches == 1
    report = s.report()
    assert len(report.runs) == 1 and report.pools and report.model.path == "Qwen/Qwen3-14B"


def test_an_untimed_dump_with_no_lines_of_its_own_joins_the_startup_above_it():
    lines = [*STARTUP, ARGS]
    s = fold(lines)
    # the fold keeps it apart (a start-up may still follow it) ...
    assert len(s.state.runs) == 2
    # ... the report reads it as the start of the lines above it
    report = s.report()
    assert len(report.runs) == 1
    assert report.model.path == "Qwen/Qwen3-14B" and report.pools
    assert report.pools[0].tokens == 91749
    # and a next start settles it in the fold too
    s.feed_lines("paste", [ARGS.replace("Qwen3-14B", "Qwen3-8B"), *STARTUP], len(lines) + 1)
    assert len(s.state.runs) == 2
    first, second = s.state.runs
    assert first.server_args["model_path"] == "Qwen/Qwen3-14B" and first.primary_kv_pool()
    assert second.server_args["model_path"] == "Qwen/Qwen3-8B" and second.primary_kv_pool()


def test_a_last_dump_stamped_no_later_than_the_lines_above_it_is_their_start():
    # the dump of 10:00:52, the second of the last decode line, pasted below its lines
    lines = [*(stamped("10:00:41", t) for t in STARTUP), stamped("10:00:52", DECODE),
             stamped("10:00:52", ARGS, None)]
    s = fold(lines)
    assert len(s.state.runs) == 1 and len(s.state.settled().runs) == 1
    report = s.report()
    assert len(report.runs) == 1
    assert report.model.path == "Qwen/Qwen3-14B" and report.pools[0].tokens == 91749


def test_a_last_dump_stamped_hours_after_the_lines_above_it_is_a_restart_cut_short():
    """A start with nothing but its dump, stamped hours after the run before it, is a restart
    whose log ends there (`Run.takes_dump`): the report keeps it as its own run, and the run
    before it keeps no server_args it never printed."""
    restart = stamped("14:00:00", ARGS.replace("Qwen3-14B", "Qwen3-8B"), None)
    lines = [*(stamped("10:00:41", t) for t in STARTUP), stamped("10:00:52", DECODE), restart]
    s = fold(lines)
    settled = s.state.settled()
    assert len(settled.runs) == 2
    assert not settled.runs[0].server_args and settled.runs[0].primary_kv_pool() is not None
    assert settled.current.server_args["model_path"] == "Qwen/Qwen3-8B"
    report = s.report()
    assert len(report.runs) == 2 and report.model.path == "Qwen/Qwen3-8B"
    # a next start does not fold it into the run before either
    s.feed_lines("paste", [stamped("14:30:00", ARGS, None),
                           *(stamped("14:30:40", t) for t in STARTUP)], len(lines) + 1)
    assert len(s.state.runs) == 3 and not s.state.runs[0].server_args
    assert s.state.runs[1].server_args["model_path"] == "Qwen/Qwen3-8B"


def test_every_cut_before_a_restart_cut_short_gives_the_sequential_answer(tmp_path):
    path = tmp_path / "cut-short.log"
    runtime = [stamped(f"10:01:{i % 60:02d}", DECODE) for i in range(20)]
    path.write_text("\n".join([*(stamped("10:00:41", t) for t in STARTUP), *runtime,
                               stamped("14:00:00", ARGS, None), stamped("14:30:00", ARGS, None),
                               *(stamped("14:30:40", t) for t in STARTUP), *runtime[:5]])
                    + "\n")
    joined = [check_cuts(path, [0, off]) for off in line_offsets(path)[:-1]]
    assert joined[len(STARTUP) + len(runtime) - 1]  # the cut right before the dump: joined


def test_a_restart_stamped_after_the_lines_before_it_is_a_new_run():
    lines = [*(stamped("10:00:41", t) for t in STARTUP), stamped("10:00:52", DECODE),
             stamped("10:05:00", ARGS, None), *(stamped("10:05:40", t) for t in STARTUP)]
    s = fold(lines)
    assert len(s.state.runs) == 2
    assert s.state.runs[0].primary_kv_pool() is not None
    assert s.state.runs[1].server_args and s.state.runs[1].primary_kv_pool() is not None
    assert not s.state.runs[1].draft_kv_pools()  # the second pool is the restart's own
    assert len(s.report().runs) == 2


def test_an_untimed_restart_with_its_own_startup_stays_apart():
    s = fold([*STARTUP, DECODE, ARGS, *STARTUP])
    assert len(s.state.runs) == 2 and len(s.report().runs) == 2
    assert s.state.runs[1].primary_kv_pool() is not None


def test_the_restart_sample_keeps_its_two_starts():
    s = Session()
    path = SAMPLES / "gpt-oss-120b-tp4-e5m2-restart.log"
    s.feed_lines(str(path), path.read_text().splitlines())
    assert len(s.report().runs) == 2
    assert [r.start.line for r in s.state.runs] == [1, 15]


def test_every_cut_of_a_reordered_paste_gives_the_sequential_answer(tmp_path):
    path = tmp_path / "reordered.log"
    body = reordered()
    runtime = [stamped(f"10:01:{i % 60:02d}", DECODE) for i in range(40)]
    path.write_text("\n".join([*body, *runtime, stamped("10:09:00", ARGS, None),
                               *(stamped("10:09:30", t) for t in STARTUP), *runtime[:5]]) + "\n")
    for off in line_offsets(path)[:-1]:
        check_cuts(path, [0, off])  # joined exactly, or declined


def _corpus(name: str) -> list[str]:
    path = CORPUS / name
    if not path.exists():
        pytest.skip(f"{name} not in {CORPUS} (set KVTUI_CORPUS)")
    return path.read_text(encoding="utf-8", errors="replace").splitlines()


def test_corpus_decode_lines_pasted_above_their_dump_make_one_run():
    # sgl-project/sglang-jax#564: nine decode lines of 05:10:47, then the dump of 05:06:30
    s = fold(_corpus("sglangjax-pr-564.log"))
    assert len(s.state.runs) == 1
    run = s.state.current
    assert run.server_args["model_path"] == "deepseek-ai/DeepSeek-V2-Lite"
    assert run.runtime.decode_batches == 9


def test_a_restart_after_midnight_in_time_only_stamps_opens_a_run():
    """SGLang 0.3 stamps a bare time of day: decode lines at 23:50 and a full start at 00:10 are
    a restart (the next day), not a start pasted below its own lines."""
    from pathlib import Path

    from kvtui.core.pipeline import Session

    sample = Path(__file__).resolve().parents[2] / "sample_logs" / "sglang-0.3-legacy.log"
    lines = sample.read_text().splitlines()
    args = next(ln for ln in lines if "server_args=" in ln)
    decode = [ln for ln in lines if "Decode batch" in ln][:3]
    late = [ln.replace(ln[1:9], "23:5" + str(i) + ":00", 1) for i, ln in enumerate(decode)]
    s = Session()
    start = [ln.replace(ln[1:9], "00:10:00", 1) for ln in lines[:10] if ln.startswith("[")]
    assert start[0] == args.replace(args[1:9], "00:10:00", 1)
    s.feed_lines("log", [*late, *start])
    s.end()
    assert len(s.report().runs) == 2


# Two launches pasted one after the other, the later launch first (sgl-project/sglang#11309:
# "with PR" at 23:17:19, then "main" at 22:29:11, both DP0 TP0 of DeepSeek-V3.2): the second
# launch's lines are stamped before the first's. A pool line of a rank whose pool the run
# already holds, stamped before that pool, is another start's: a draft model's pool, or a
# post-capture re-sizing, is printed after its target's (the lines below are written for this
# test in the wording).
def launch(ts: str, tokens: int, kv_gib: float, avail: float) -> list[str]:
    return [f"[2025-10-07 {ts} DP0 TP0] KV Cache is allocated. #tokens: {tokens}, "
            f"KV size: {kv_gib:.2f} GB",
            f"[2025-10-07 {ts} DP0 TP0] Memory pool end. avail mem={avail:.2f} GB"]


def two_launches() -> list[str]:
    return [*launch("23:17:19", 975424, 43.67, 37.71), *launch("22:29:11", 1462784, 54.52, 15.38)]


def test_a_pool_stamped_before_the_same_ranks_pool_is_another_start():
    s = fold(two_launches())
    assert len(s.state.runs) == 2
    first, second = s.state.runs
    assert [p.tokens for p in first.kv_pools()] == [975424] and not first.draft_kv_pools()
    assert [p.tokens for p in second.kv_pools()] == [1462784] and not second.draft_kv_pools()
    assert second.memory_pool_end == {"DP0 TP0": 15.38}
    report = s.report()
    assert len(report.runs) == 2 and report.whatif.current.tokens == 1462784


def test_a_draft_pool_after_its_target_stays_in_the_run():
    # the draft worker's pool, printed after the target's: the same run, a draft pool
    lines = launch("23:17:19", 975424, 43.67, 37.71)
    lines.append("[2025-10-07 23:17:20 DP0 TP0] KV Cache is allocated. #tokens: 975424, "
                 "KV size: 1.23 GB")
    s = fold(lines)
    assert len(s.state.runs) == 1 and len(s.state.current.draft_kv_pools()) == 1


def test_a_weight_load_stamped_before_the_same_ranks_load_is_another_start():
    def start_up(ts: str, tokens: int) -> list[str]:
        return [stamped(ts, "Load weight begin. avail mem=78.50 GB"),
                stamped(ts, "Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, "
                            "avail mem=50.67 GB, mem usage=27.57 GB."),
                stamped(ts, f"KV Cache is allocated. #tokens: {tokens}, K size: 7.00 GB, "
                            "V size: 7.00 GB")]
    s = fold([*start_up("11:00:00", 91749), *start_up("10:00:00", 91000)])
    assert [[p.tokens for p in r.kv_pools()] for r in s.state.runs] == [[91749], [91000]]


def test_every_cut_of_two_pasted_launches_gives_the_sequential_answer(tmp_path):
    path = tmp_path / "two-launches.log"
    decode = [f"[2025-10-07 23:18:{i:02d} DP0 TP0] {DECODE}" for i in range(10)]
    late = [f"[2025-10-07 22:30:{i:02d} DP0 TP0] {DECODE}" for i in range(10)]
    first, second = two_launches()[:2], two_launches()[2:]
    path.write_text("\n".join([*first, *decode, *second, *late]) + "\n")
    for off in line_offsets(path)[:-1]:
        check_cuts(path, [0, off])  # joined exactly, or declined
    s = fold(path.read_text().splitlines())
    assert [r.runtime.decode_batches for r in s.state.runs] == [10, 10]


def test_a_run_without_a_start_line_says_so_in_the_runs_list():
    """Runs opened by a pool or weight line (no start line) are listed as such, not `line -`."""
    from kvtui.core.render import render_text

    s = Session()
    s.feed_lines("paste", [
        "[2025-10-09 23:17:40 DP0 TP0] KV Cache is allocated. #tokens: 975424, KV size: 36.36 GB",
        "[2025-10-09 22:29:30 DP0 TP0] KV Cache is allocated. #tokens: 1462784, KV size: 54.52 GB",
    ])
    text = render_text(s.report())
    assert "#1 (no start line):" in text and "line -" not in text
