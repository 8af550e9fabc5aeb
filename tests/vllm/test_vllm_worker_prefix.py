"""A vLLM excerpt that is only a worker's CUDA out-of-memory error names vLLM (issue 36.3).

The CUDA allocator's text reads the same from any engine, so an OOM alone names none; the
process prefix vLLM puts in front of a worker's lines does: `(VllmWorker rank=N pid=P) `
(multiproc executor 0.7-0.10.0: v1/executor/multiproc_executor.py:346 in 0.9.2), `VllmWorker
TP3` (0.10.1), `(Worker_TPn pid=P) ` / `Worker_PPn_TPn` (multiproc_executor.py:672-683 in 0.10.2,
coloured by `decorate_logs`, vllm/utils/__init__.py:3395), `(EngineCore_DPn pid=P) `
(v1/engine/core.py:1479 in 0.33.0). The worker logs the failure with `logger.exception("WorkerProc
hit an exception.")` (multiproc_executor.py:654 in 0.10.2), whose traceback lines vLLM's
formatter prefixes with the same head.
"""

from __future__ import annotations

import json

import pytest

from parsers.vllm.line import parse_line
from tests.test_cli_check import kvtui
from tests.vllm.reports import report_of

OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.50 GiB. GPU 1 has a "
       "total capacity of 79.25 GiB of which 2.19 GiB is free.")
CYAN, RESET = "\x1b[36m", "\x1b[0m"


def _worker(prefix: str, head: str = "ERROR 09-01 10:00:00 [multiproc_executor.py:654] ") \
        -> list[str]:
    return [f"{prefix}{head}WorkerProc hit an exception.",
            f"{prefix}{head}Traceback (most recent call last):",
            f"{prefix}{head}{OOM}"]


PREFIXES = [
    ("(VllmWorker rank=1 pid=4242) ", "rank1", "VllmWorker"),
    ("(VllmWorker TP3 pid=4242) ", "TP3", "VllmWorker TP3"),
    (f"{CYAN}(Worker_TP1 pid=307){RESET} ", "TP1", "Worker_TP1"),
    ("(Worker_PP1_TP3 pid=307) ", "PP1 TP3", "Worker_PP1_TP3"),
    ("(EngineCore_DP0 pid=241) ", "DP0", "EngineCore_DP0"),
    ("(VllmWorkerProcess pid=6499) ", None, "VllmWorkerProcess"),
]


@pytest.mark.parametrize(("prefix", "rank", "process"), PREFIXES)
def test_the_worker_prefix_names_vllm(prefix, rank, process):
    ev = parse_line(_worker(prefix)[-1])
    assert ev is not None and ev.kind == "oom" and ev.get("reason") == "torch"
    assert ev.get("process") == process and ev.rank == rank
    report = report_of(_worker(prefix))
    assert report.engine == "vllm"
    assert [a.rule for a in report.alerts] == ["oom"]
    # the traceback's tail alone, without the level head
    assert report_of([f"{prefix}{OOM}"]).engine == "vllm"


@pytest.mark.parametrize("prefix", ["", "(Worker pid=307) ", "(RayWorkerWrapper pid=9) "])
def test_an_oom_without_vllms_own_prefix_names_no_engine(prefix):
    ev = parse_line(f"{prefix}{OOM}")
    assert ev is not None and ev.get("process") is None
    report = report_of([f"{prefix}{OOM}"])
    assert report.engine is None
    assert [a.rule for a in report.alerts] == ["oom"]  # the alert all the same


@pytest.mark.parametrize(("prefix", "rank", "process"), PREFIXES[:3])
def test_the_gate_fails_a_workers_oom(tmp_path, prefix, rank, process):
    path = tmp_path / "worker.log"
    path.write_text("\n".join(_worker(prefix)) + "\n")
    out = kvtui("check", "--json", str(path))
    assert out.returncode == 1, out.stdout
    doc = json.loads(out.stdout)
    assert doc["engine"] == "vllm" and [a["rule"] for a in doc["alerts"]] == ["oom"]
