"""A vLLM log that does not state tensor_parallel_size / pipeline_parallel_size: the header and
the what-if take the same TP and PP from the worker prefixes (kvtui.core.deployment.layout).

The excerpts are the sample logs with their startup lines (the `non-default args` dump and the
engine's config line, which carry the sizes) cut out, as a paste that begins at the workers
shows them. vLLM names a worker process by each degree above 1 (`Worker_PP1_TP3`:
setup_proc_title_and_log_prefix, vllm 0.10.2 v1/executor/multiproc_executor.py:672-679, 0.33.0
:1214-1227); parsers/vllm reads the prefix as the rank tags "PP1 TP3".
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from kvtui.core.deployment import degree_label, proven
from kvtui.core.pipeline import Session
from kvtui.core.render import render_text
from kvtui.engines.vllm import ENGINE
from tests.helpers import session_of

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs"
BF16_70B = SAMPLES / "vllm-llama31-70b-tp8-bf16.log"  # TP 8, Worker_TP0..TP7
FP8_8B = SAMPLES / "vllm-llama31-8b-tp2-fp8-unscaled.log"  # TP 2, Worker_TP0..TP1
GIB = 1 << 30
STARTUP = ("non-default args: {", "with config: ")


def excerpt(path: Path, *, drop_workers: tuple[str, ...] = (),
            rename: dict[str, str] | None = None) -> list[str]:
    """The log without its startup lines (and the lines of `drop_workers`), worker prefixes
    renamed by `rename` ("Worker_TP1" -> "Worker_PP2_TP1")."""
    out = []
    for line in path.read_text().splitlines():
        if any(s in line for s in STARTUP) or any(f"({w} pid=" in line for w in drop_workers):
            continue
        for old, new in (rename or {}).items():
            line = line.replace(f"({old} pid=", f"({new} pid=")
        out.append(line)
    return out


def session(lines: list[str], model: str | None = None) -> Session:
    s = session_of(iter(lines), "excerpt.log", model=model)
    return s


def header_parallel(s: Session) -> str:
    return next(line for line in render_text(s.report()).splitlines()
                if line.startswith("Parallel"))


def test_an_excerpt_of_six_tp_workers_reads_the_same_in_the_header_and_the_what_if():
    """Worker_TP0..TP5 of a TP 8 run: the tags prove TP >= 6; the layout sizes TP 8 (the next
    power of two), which is what the run had: the what-if says both, and its arithmetic (at TP
    8) explains the logged pool."""
    lines = excerpt(BF16_70B, drop_workers=("Worker_TP6", "Worker_TP7"))
    s = session(lines, model="meta-llama/Llama-3.1-70B")  # the config line named it
    rep = s.report().to_json()
    par = rep["parallel"]
    assert par["basis"]["tp"] == "rank tags"
    least = proven(par["ranks_seen"], "TP")
    assert least == 6 and par["tp"] == 8
    shown = degree_label("TP", par["tp"], "rank tags", par["ranks_seen"])
    assert shown in header_parallel(s)
    cur = rep["whatif"]["current"]
    # the what-if's TP is the header's, with the size its arithmetic took
    assert cur["parallel"]["tp"] == par["tp"]
    assert cur["parallel"]["label"]["tp"] == f"{shown} (sized as {par['tp']})"
    assert cur["parallel"]["basis"]["tp"] == "rank tags"
    assert cur["parallel"]["ranks_seen"] == [f"TP{i}" for i in range(6)]
    assert cur["calibration"]["within_rounding"]  # 8 KV heads / TP 8: the logged pool
    assert s.calculator().tp_label == f"{shown} (sized as {par['tp']})"
    notes = " ".join(rep["whatif"]["explanation"])
    assert "Worker_TP5 proves TP >= 6" in notes and "sized as 8" in notes


def test_the_whatif_command_prints_the_header_label_and_tp_overrides(tmp_path):
    log = tmp_path / "excerpt.log"
    log.write_text("\n".join(excerpt(BF16_70B, drop_workers=("Worker_TP6", "Worker_TP7")))
                   + "\n")
    cmd = [sys.executable, "-m", "kvtui", "whatif", "--from-log", str(log), "--model",
           "meta-llama/Llama-3.1-70B"]
    text = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[0].count("TP>=6 (sized as 8)") == 1
    given = subprocess.run([*cmd, "--tp", "4", "--json"], cwd=ROOT, capture_output=True,
                           text=True, timeout=120)
    assert given.returncode == 0, given.stderr
    par = json.loads(given.stdout)["current"]["parallel"]
    # --tp wins; TP no longer came from the tags, so the JSON has no basis of its own
    assert par["tp"] == 4 and "basis" not in par and "ranks_seen" not in par


def test_a_log_that_states_tp_keeps_its_json():
    """The full sample states tensor_parallel_size: no basis, ranks_seen or label (the goldens'
    shape)."""
    s = session(BF16_70B.read_text().splitlines())
    par = s.report().to_json()["whatif"]["current"]["parallel"]
    assert set(par) == {"tp", "attn_dp", "attn_cp", "pp", "attn_tp"} and par["tp"] == 8
    assert s.calculator().tp_label is None


def vllm_pp_partition(layers: int, pp: int) -> list[int]:
    """Layers per PP stage: vLLM's get_pp_indices (vllm 0.33.0 distributed/utils.py:225-230,
    0.14.0 :124-129): the remainder goes to the stages before the last."""
    parts = [layers // pp] * pp
    for i in range(2, layers % pp + 2):
        parts[-i] += 1
    return parts


def pp_excerpt(pp: int) -> tuple[list[str], int]:
    """The TP 2 Llama-3.1-8B FP8 run as pipeline stages: its two workers' prefixes renamed to
    the last stage's (`Worker_PP{pp-1}_TP0`, `_TP1`), and its pool line the size vLLM gives 30.25
    GiB per GPU when each GPU holds one stage's layers: vLLM sizes every worker by the smallest
    num_blocks (get_kv_cache_configs, 0.33.0 v1/core/kv_cache_planning.py:1583; 0.14.0
    v1/core/kv_cache_utils.py:1551), the stage with the most layers."""
    layers = max(vllm_pp_partition(32, pp))
    page = 16 * 4 * (128 + 128) * 1  # block 16 x 4 KV heads (8 / TP 2) x K+V x fp8, one layer
    blocks = int(30.25 * GIB) // (page * layers)
    tokens = blocks * 16
    lines = []
    for line in excerpt(FP8_8B, rename={"Worker_TP0": f"Worker_PP{pp - 1}_TP0",
                                        "Worker_TP1": f"Worker_PP{pp - 1}_TP1"}):
        line = line.replace("GPU KV cache size: 991,200 tokens",
                            f"GPU KV cache size: {tokens:,} tokens")
        line = re.sub(r"per request: [\d.]+x", f"per request: {tokens / 131072:.2f}x", line)
        lines.append(line)
    return lines, tokens


def test_pp_rank_tags_give_the_layers_per_gpu():
    """Worker_PP2_TP1: PP >= 3 and TP >= 2; each GPU holds 11 of Llama's 32 layers (vLLM's
    split 11, 11, 10), so 30.25 GiB hold 32/11 as many tokens as at PP 1."""
    lines, tokens = pp_excerpt(3)
    s = session(lines, model="meta-llama/Llama-3.1-8B")
    rep = s.report().to_json()
    assert rep["parallel"]["pp"] == 3 and rep["parallel"]["basis"]["pp"] == "rank tags"
    assert "PP>=3" in header_parallel(s) and "TP>=2" in header_parallel(s)
    cur = rep["whatif"]["current"]
    assert cur["parallel"]["pp"] == 3 and cur["parallel"]["tp"] == 2
    assert cur["parallel"]["label"] == {"tp": "TP>=2 (sized as 2)", "pp": "PP>=3 (sized as 3)"}
    assert cur["cell"]["group_size"] == max(vllm_pp_partition(32, 3)) == 11
    cal = cur["calibration"]
    assert cal["logged_tokens"] == tokens and cal["within_rounding"]
    calc = ENGINE.calculator(s.fold.state.current, "meta-llama/Llama-3.1-8B")
    assert calc.parallel.pp == 3
    assert any("Worker_PP2" in n and "1/3 of the layers" in n for n in calc.notes)


def test_pp_tags_without_tp_tags_assume_tp_1_in_the_header_words():
    """Worker_PP0 / Worker_PP1 name no TP rank (vLLM adds _TPn only when TP > 1): the header
    shows no TP (TP=? in the TUI's) and the what-if says it assumed 1, PP 2 from the tags."""
    lines = excerpt(FP8_8B, rename={"Worker_TP0": "Worker_PP0", "Worker_TP1": "Worker_PP1"})
    s = session(lines, model="meta-llama/Llama-3.1-8B")
    assert not re.search(r"\bTP", header_parallel(s)) and "PP>=2" in header_parallel(s)
    calc = s.calculator()
    assert calc.parallel.tp == 1 and calc.parallel.pp == 2
    assert calc.tp_label == "TP=? (assumed 1)"
    assert any("TP=? (assumed 1)" in n and "Worker_PPn" in n for n in calc.notes)
    # TP 1 x PP 2 holds 8 heads x 16 layers per GPU, the TP 2 x PP 1 run's 4 x 32: the logged
    # pool is explained
    assert calc.report().current.calibration["within_rounding"]


# -- 0.7-0.10.0: `(VllmWorker rank=N pid=...)` counts TP and PP together ----------------------
# MultiprocExecutor starts a worker per `rank in range(world_size)`, world_size = TP x PP with PP
# outermost ("0-7, PP rank 0; 8-15, PP rank 1" at TP 8), and prefixes its lines `VllmWorker
# rank={rank}` (vllm 0.9.2 v1/executor/multiproc_executor.py:52-58, :81-87, :277-286, :346; the
# same prefix in 0.7.0 :222, 0.8.5 :294, 0.10.0 :370). So rank=N proves TP x PP >= N+1, no TP.

# vllm-project/vllm#15255 (https://github.com/vllm-project/vllm/issues/15255, 0.8.x V1, TP 2 by
# its title): the two workers' prefixes, lines kept as pasted.
ISSUE_15255 = [
    "(VllmWorker rank=0 pid=85) INFO 03-20 23:20:39 [parallel_state.py:967] rank 0 in world size "
    "2 is assigned as DP rank 0, PP rank 0, TP rank 0",
    "(VllmWorker rank=1 pid=97) INFO 03-20 23:20:39 [parallel_state.py:967] rank 1 in world size "
    "2 is assigned as DP rank 0, PP rank 0, TP rank 1",
]


def test_vllm_worker_rank_is_a_world_rank_not_a_tp_rank():
    from parsers.prefix import vllm_head

    assert [vllm_head(line)[2] for line in ISSUE_15255] == ["rank0", "rank1"]  # type: ignore[index]
    assert proven({"rank0", "rank1"}, "TP") is None


def test_world_rank_tags_leave_tp_unknown_in_the_header_and_bound_the_product():
    from kvtui.core.deployment import layout
    from kvtui.core.state import Run

    lay = layout(Run(index=0, ranks={"rank0", "rank1"}))
    assert (lay.tp, lay.pp, lay.world) == (None, None, 2)
    assert lay.basis == {"world": "rank tags"}

    # TP stated: the rest of the product is PP
    tp2 = Run(index=0, server_args={"tp_size": 2}, ranks={f"rank{i}" for i in range(4)})
    lay = layout(tp2)
    assert (lay.tp, lay.pp, lay.world) == (2, 2, None)
    assert degree_label("PP", lay.pp, lay.basis["pp"], tp2.ranks) == "PP>=2"


def test_a_0_9_style_excerpt_says_tp_unknown_and_sizes_the_product():
    """The TP 8 sample with its sizes cut and its workers named as 0.7-0.10.0 name them
    (`VllmWorker rank=0` .. `rank=7`): the header says TP=? and TPxPP>=8; the what-if sizes TP 8
    (the same bytes per GPU as any TP x PP of 8 while TP <= the KV heads) and says it assumed
    it, and its arithmetic still explains the logged pool."""
    lines = excerpt(BF16_70B, rename={f"Worker_TP{i}": f"VllmWorker rank={i}" for i in range(8)})
    s = session(lines, model="llama-3.1-70b")
    assert header_parallel(s) == "Parallel   TP=?  TPxPP>=8"
    rep = s.report().to_json()
    assert rep["parallel"]["tp"] is None and rep["parallel"]["world"] == 8
    cur = rep["whatif"]["current"]
    assert cur["parallel"]["tp"] == 8
    assert cur["parallel"]["label"] == {"tp": "TP=? (assumed 8)", "world": "TPxPP>=8"}
    assert s.calculator().tp_label == "TP=? (assumed 8)"
    assert cur["calibration"]["within_rounding"]
    assert "count TP and PP together" in " ".join(rep["whatif"]["explanation"])


def test_0_10_1_names_its_workers_by_tp_and_pp():
    """0.10.1 alone prefixes `VllmWorker TP3` / `VllmWorker PP1_TP3` (multiproc_executor.py:
    382-391 in 0.10.1); vllm-project/vllm#20495 (https://github.com/vllm-project/vllm/pull/20495)
    pastes `(VllmWorker TP3 pid=2012390) INFO 08-11 07:28:26 [shm_broadcast.py:289] ...`."""
    from parsers.prefix import vllm_head

    head = vllm_head("(VllmWorker TP3 pid=2012390) INFO 08-11 07:28:26 [shm_broadcast.py:289] "
                     "vLLM message queue communication handle")
    assert head is not None and head[2] == "TP3"
    head = vllm_head("(VllmWorker PP1_TP3 pid=9) INFO 08-11 07:28:26 [core.py:1] x")
    assert head is not None and head[2] == "PP1 TP3"


# -- PP's layer split: get_pp_indices ---------------------------------------------------------
def test_the_default_split_is_get_pp_indices_and_its_log_line_is_read():
    """get_pp_indices (distributed/utils.py:118-129 in 0.9.2 and 0.10.2, :123-135 in 0.14.0,
    :224-236 in 0.33.0) gives the remainder to the stages before the last, counted back from
    the second-to-last, and logs the split when the layers do not divide; the what-if takes the
    layers of the logged stage with the most (11 of Llama's 32 over PP 3)."""
    from kvtui.engines.vllm.sizing import default_partition
    from parsers.vllm import parse_line

    for layers, pp in ((32, 3), (61, 4), (80, 8), (48, 5)):
        assert default_partition(layers, pp) == vllm_pp_partition(layers, pp)
    assert default_partition(61, 4) == [15, 15, 16, 15]
    split = ("(Worker_PP2_TP0 pid=9) INFO 03-02 14:05:30 [utils.py:125] Hidden layers were "
             "unevenly partitioned: [11,11,10]. This can be manually overridden using the "
             "VLLM_PP_LAYER_PARTITION environment variable")
    ev = parse_line(split)
    assert ev is not None and ev.kind == "kv_layout" and ev.get("pp_partition") == "11,11,10"
    lines, _ = pp_excerpt(3)
    s = session([lines[0], split, *lines[1:]], model="meta-llama/Llama-3.1-8B")
    calc = s.calculator()
    assert calc.pp_partition == (11, 11, 10)
    cur = s.report().to_json()["whatif"]["current"]
    assert cur["cell"]["group_size"] == 11 and cur["calibration"]["within_rounding"]


def test_a_hybrid_stage_holds_the_kinds_of_its_own_layer_range():
    """Qwen3-Next (48 layers, every 4th full attention) over PP 5: the split is 9, 10, 10, 10, 9;
    the largest stages hold 10 layers, 2 or 3 of them full attention, never the 3 + 8 that
    dividing each kind by PP (cdiv) gave."""
    from kvtui.core.capacity import preset_spec
    from kvtui.engines.vllm.sizing import stage_layers

    spec = preset_spec("qwen3-next-80b-a3b")
    assert spec.num_layers == 48 and len(spec.full_layer_ids) == 12
    full, swa, lin = stage_layers(spec, 5)
    assert full + swa + lin == 10 and (full, lin) in ((2, 8), (3, 7))
