"""vLLM's rank-assignment lines (`rank 3 in world size 8 is assigned as DP rank 0, PP rank 0, TP
rank 3`, distributed/parallel_state.py, wordings quoted in parsers/vllm/startup.py): the sizes
they prove exactly reach the header and the what-if, and what they cannot prove stays unsaid.

Every line here is written for the test in the shape of a real paste (each names its thread);
the numbers are made up unless the test says otherwise.
"""

from __future__ import annotations

from typing import Any

from kvtui.core.pipeline import Session
from kvtui.engines.vllm.version import infer_version
from parsers.vllm import hints, parse_line
from tests.helpers import session_of
from tests.vllm.test_vllm_parallel_layout import BF16_70B, excerpt, header_parallel, session

# vllm-ascend 0.14.0rc1, TP 8 (https://github.com/vllm-project/vllm-ascend/issues/6829): the
# workers print the line before they rename themselves, so it has no process prefix.
ASCEND_HEAD = "INFO 02-26 08:38:05 [parallel_state.py:1425] "


def assigned(rank: int, world: int, *, dp: int = 0, pp: int = 0, tp: int = 0,
             head: str = ASCEND_HEAD) -> str:
    """A 0.12-0.16 line: DP, PP, PCP, TP, EP (EP = DP x TP here)."""
    return (f"{head}rank {rank} in world size {world} is assigned as DP rank {dp}, PP rank {pp}, "
            f"PCP rank 0, TP rank {tp}, EP rank {tp}")


def report(lines: list[str]) -> tuple[Session, dict[str, Any]]:
    s = session_of(iter(lines), "log")
    return s, s.report().to_json()


def test_eight_worker_lines_alone_prove_tp_8():
    """The vllm-ascend#6829 paste holds only worker start-up (no args, no config line): the
    eight assignment lines, in the order the workers printed them, say TP 8 exactly."""
    lines = [assigned(r, 8, tp=r) for r in (0, 2, 6, 5, 1, 3, 7, 4)]
    lines += [f"(Worker_TP{r} pid={111 + r}) INFO 02-26 08:38:05 [model_runner_v1.py:2188] "
              "Starting to load model /data/models/m..." for r in range(8)]
    s, rep = report(lines)
    assert rep["engine"] == "vllm"
    par = rep["parallel"]
    assert (par["tp"], par["pp"], par["dp"]) == (8, 1, 1)
    # stated by the engine's assignment lines, not implied by rank tags, and not an argument
    assert par["basis"] == {"tp": "rank assignment", "dp": "rank assignment",
                            "pp": "rank assignment"}
    assert par["world_size"] == 8
    # no dump, and the places write none: only the loading lines' model (vllm#33155's finding)
    assert rep["server_args"] == {"model_path": "/data/models/m"}
    assert "TP=8" in header_parallel(s) and "TP>=" not in header_parallel(s)
    assert "world=8" in header_parallel(s)


def test_two_lines_whose_least_sizes_fill_the_world_prove_tp_and_pp():
    """A TP 4 x PP 2 run on Ray, Ray's dedup folding seven workers' lines into one (a vLLM 0.10.1
    benchmark README in the code index: `(EngineCore_0 pid=...) (RayWorkerWrapper pid=...,
    ip=...) INFO ... rank 7 in world size 8 is assigned as DP rank 0, PP rank 1, TP rank 3, EP
    rank 3 [repeated 7x across cluster]`): TP rank 3 and PP rank 1 already make 4 x 2 = 8."""
    head = "0: (EngineCore_0 pid=13) (RayWorkerWrapper pid={}, ip=10.0.0.2) INFO 10-08 13:12:14 " \
           "[parallel_state.py:1134] "
    lines = [head.format(20) + "rank 1 in world size 8 is assigned as DP rank 0, PP rank 0, TP "
             "rank 1, EP rank 1",
             head.format(21) + "rank 7 in world size 8 is assigned as DP rank 0, PP rank 1, TP "
             "rank 3, EP rank 3 [repeated 7x across cluster]"]
    _, rep = report(lines)
    assert (rep["parallel"]["tp"], rep["parallel"]["pp"], rep["parallel"]["dp"]) == (4, 2, 1)


def test_one_dp_rank_line_proves_dp_2():
    """kuberay#4366 (https://github.com/ray-project/kuberay/issues/4366, vLLM 0.11.0, DP 2 over
    Ray): the world spans both DP engines ("Adjusting world_size=2 rank=1 ... for DP"), and DP
    rank 1 of a world of 2 leaves room for nothing else."""
    line = ("(APIServer pid=53) (DPEngineCoreActor pid=54, ip=10.0.0.3) INFO 01-12 06:15:21 "
            "[parallel_state.py:1208] rank 1 in world size 2 is assigned as DP rank 1, PP rank 0, "
            "TP rank 0, EP rank 1")
    _, rep = report([line])
    assert (rep["parallel"]["tp"], rep["parallel"]["pp"], rep["parallel"]["dp"]) == (1, 1, 2)


def test_part_of_the_world_proves_no_size():
    """Four TP ranks of a world of 8: TP 4 x PP 2, TP 8 with half the lines cut, or TP 4 x DP 2
    all fit; the lines decide nothing (the rank tags' lower bound stays the header's)."""
    lines = [assigned(r, 8, tp=r, head=f"(Worker_TP{r} pid={r}) " + ASCEND_HEAD)
             for r in range(4)]
    _, rep = report(lines)
    par = rep["parallel"]
    assert par["pp"] is None and par["dp"] is None
    assert par["basis"]["tp"] == "rank tags"  # TP>=4 from the tags, as without the lines
    assert par["world_size"] == 8  # what the lines do prove: the world they name


def test_lines_that_disagree_prove_nothing():
    """Two world sizes (or one rank in two places) in one run: a paste of two servers."""
    _, rep = report([assigned(0, 1), assigned(1, 2, tp=1)])
    assert rep["parallel"]["tp"] is None and "world_size" not in rep["parallel"]
    _, rep = report([assigned(0, 2), assigned(0, 2, tp=1), assigned(1, 2, tp=1)])
    assert rep["parallel"]["tp"] is None


def test_the_operators_arguments_win_and_a_dump_read_later_keeps_the_sizes():
    """A cut `non-default args` dump states no TP (the paste lost it): the places fill it. A
    dump that states it keeps its own value, whatever line order."""
    dump_cut = ("(APIServer pid=1) INFO 05-01 16:27:50 [utils.py:233] non-default args: "
                "{'model': 'org/m', 'max_model_len': 4096, 'gpu_memory_ut")
    lines = [assigned(r, 2, tp=r) for r in range(2)]
    _, rep = report([dump_cut, *lines])
    assert rep["parallel"]["tp"] == 2
    assert rep["parallel"]["basis"]["tp"] == "rank assignment"
    assert rep["server_args"].get("tp_size") is None  # the dump did not say it
    # the dump pasted below the worker lines, stamped no later than them (a dump stamped after
    # them is a restart whose log was cut short: Run.takes_dump)
    _, rep = report([*lines, dump_cut.replace("05-01 16:27:50", "02-26 08:38:00")])
    assert rep["parallel"]["tp"] == 2
    stated = ("(APIServer pid=1) INFO 05-01 16:27:50 [utils.py:233] non-default args: "
              "{'model': 'org/m', 'tensor_parallel_size': 2}")
    _, rep = report([stated, *lines])
    assert rep["parallel"]["tp"] == 2 and rep["server_args"]["tp_size"] == 2
    assert "tp" not in (rep["parallel"].get("basis") or {})


def test_a_tp8_excerpt_with_its_assignment_lines_is_sized_as_stated():
    """The TP 8 sample cut to its workers (as tests/vllm/test_vllm_parallel_layout.py cuts it)
    says TP>=8 from the tags alone; with the workers' assignment lines the header and the
    what-if say TP=8, with no sizing note, and the arithmetic still explains the pool."""
    lines = excerpt(BF16_70B)
    at = next(i for i, line in enumerate(lines) if "Model loading took" in line)
    places = [assigned(r, 8, tp=r, head=f"vllm-70b  | (Worker_TP{r} pid={120 + r}) INFO 07-20 "
                       "18:02:50 [parallel_state.py:2386] ") for r in range(8)]
    s = session([*lines[:at], *places, *lines[at:]], model="meta-llama/Llama-3.1-70B")
    assert "TP=8" in header_parallel(s) and ">=" not in header_parallel(s)
    rep = s.report().to_json()
    cur = rep["whatif"]["current"]
    assert cur["parallel"]["tp"] == 8 and "label" not in cur["parallel"]
    assert s.calculator().tp_label is None
    assert cur["calibration"]["within_rounding"]
    without = session(lines, model="meta-llama/Llama-3.1-70B")
    assert "TP>=8" in header_parallel(without)  # the tags alone: what the lines change


def test_worker_rank_tags_and_assignment_lines_together_say_tp_not_the_product():
    """0.8's V1 workers are tagged `VllmWorker rank=N` over TP x PP (kvtui.core.deployment); their
    assignment lines (vllm-project/vllm#15255, https://github.com/vllm-project/vllm/issues/
    15255: `(VllmWorker rank=1 pid=97) INFO 03-20 23:20:39 [parallel_state.py:967] rank 1 in world
    size 2 is assigned as DP rank 0, PP rank 0, TP rank 1`) tell TP from PP."""
    lines = [f"(VllmWorker rank={r} pid={40 + r}) INFO 03-20 23:20:39 [parallel_state.py:967] "
             f"rank {r} in world size 4 is assigned as DP rank 0, PP rank {r // 2}, TP rank "
             f"{r % 2}" for r in range(4)]
    s, rep = report(lines)
    assert (rep["parallel"]["tp"], rep["parallel"]["pp"]) == (2, 2)
    assert "world" not in rep["parallel"]
    assert "TPxPP" not in header_parallel(s)


def test_a_plugins_own_groups_are_read_but_date_nothing():
    """vllm-ascend adds groups of its own ("SP rank", "SP_TP rank", seen in an ascend patch in
    the code index): the factor groups are read, the list matches no upstream release."""
    line = (ASCEND_HEAD + "rank 1 in world size 2 is assigned as DP rank 0, PP rank 0, TP rank "
            "1, EP rank 1, SP rank 1, SP_TP rank 0")
    ev = parse_line(line)
    assert ev is not None and ev.kind == "parallel_rank" and ev.get("tp_rank") == 1
    assert not [h for h in hints(ev, line) if h.startswith("assign:")]


def test_a_collapsed_paste_reads_the_first_lines_groups_only():
    """A thread that lost its newlines (`... TP rank 1 (VllmWorker rank=6 pid=3085) INFO ...
    rank 6 in world size 8 ...`, an issue dump of vLLM 0.8 in the code index)."""
    line = ("(VllmWorker rank=1 pid=3) INFO 03-20 03:14:59 [parallel_state.py:967] rank 1 in world "
            "size 8 is assigned as DP rank 0, PP rank 0, TP rank 1 (VllmWorker rank=6 pid=4) INFO "
            "03-20 03:14:59 [parallel_state.py:967] rank 6 in world size 8 is assigned as DP rank "
            "0, PP rank 0, TP rank 6")
    ev = parse_line(line)
    assert ev is not None and (ev.get("global_rank"), ev.get("tp_rank")) == (1, 1)


def test_not_a_rank_assignment():
    for line in (ASCEND_HEAD + "rank 8 in world size 8 is assigned as DP rank 0, PP rank 0, TP "
                 "rank 8",  # no such rank
                 ASCEND_HEAD + "rank 0 in world size 1 is assigned as ",
                 "[Gloo] Rank 0 is connected to 7 peer ranks. Expected number of connected peer "
                 "ranks is : 7",
                 ASCEND_HEAD + "world_size=8 rank=0 local_rank=0 distributed_init_method=tcp://"
                 "127.0.0.1:59091 backend=hccl"):
        assert parse_line(line) is None, line


def test_each_wording_dates_the_log():
    """The group list each release prints (parallel_state.py, quoted in startup.py)."""
    cases = {
        "DP rank 0, PP rank 0, TP rank 0": ((0, 8, 0), (0, 8, 9)),
        "DP rank 0, PP rank 0, TP rank 0, EP rank 0": ((0, 9, 0), (0, 11, 9)),
        "DP rank 0, PP rank 0, PCP rank 0, TP rank 0, EP rank 0": ((0, 12, 0), (0, 16, 9)),
        "DP rank 0, PP rank 0, PCP rank 0, TP rank 0, EP rank N/A": ((0, 14, 0), (0, 16, 9)),
        "DP rank 0, PP rank 0, PCP rank 0, TP rank 0, EP rank 0, EPLB rank N/A":
            ((0, 17, 0), (0, 29, 9)),
        "DP rank 0, PP rank 0, PCP rank 0, TP rank 0, ETP rank 0, EP rank 0, EPLB rank N/A":
            ((0, 30, 0), (0, 34, 0)),  # the same in 0.34.0 (parallel_state.py:2395)
    }
    for groups, (lo, hi) in cases.items():
        line = f"{ASCEND_HEAD}rank 0 in world size 1 is assigned as {groups}"
        ev = parse_line(line)
        assert ev is not None, line
        vr = infer_version(set(hints(ev, line)))
        assert (vr.lo, vr.hi) == (lo, hi), groups
