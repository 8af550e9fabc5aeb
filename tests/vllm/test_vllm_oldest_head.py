"""vLLM 0.1-0.2's pool line, and a pool of no block, which must never pass the gate (issue 36.1).

Those releases print the pool from the engine itself, `logger.info(f"# GPU blocks:
{num_gpu_blocks}, " f"# CPU blocks: {num_cpu_blocks}")` (vllm/engine/llm_engine.py:199-200 in
0.1.7, :205-206 in 0.2.0), under `_FORMAT = "%(levelname)s %(asctime)s %(filename)s:%(lineno)d]
%(message)s"` with `%m-%d %H:%M:%S` (vllm/logger.py:7-8 in both): no `[` before the file name.
Right after it, `if num_gpu_blocks <= 0: raise ValueError("No available memory for the cache
blocks. Try increasing `gpu_memory_utilization` when initializing the engine.")`
(llm_engine.py:202-205 in 0.1.7, :208-211 in 0.2.0): such a log is a server that never started.
"""

from __future__ import annotations

import json

import pytest

from parsers.vllm.line import parse_line
from tests.test_cli_check import kvtui
from tests.vllm.reports import report_of

# the lines as 0.2.0 prints them (llm_engine.py:205) and 0.1.7 (:199)
V020 = "INFO 10-02 14:03:11 llm_engine.py:205] # GPU blocks: {b}, # CPU blocks: 512"
V017 = "INFO 09-14 08:00:02 llm_engine.py:199] # GPU blocks: {b}, # CPU blocks: 2048"
# the ValueError the engine raises next (0.2.0 llm_engine.py:209-211), as a traceback's tail
RAISED = ("ValueError: No available memory for the cache blocks. Try increasing "
          "`gpu_memory_utilization` when initializing the engine.")


@pytest.mark.parametrize("line", [V020, V017])
@pytest.mark.parametrize("blocks", [7445, 0, -3])
def test_the_oldest_pool_line_is_read_with_its_count(line, blocks):
    ev = parse_line(line.format(b=blocks))
    assert ev is not None and ev.kind == "capacity"
    assert ev.get("gpu_blocks") == blocks and ev.ts is not None
    assert ev.get("default_page_size") == 16  # EngineArgs.block_size = 16 (arg_utils.py in 0.2)


def test_the_oldest_pool_line_names_vllm_and_its_capacity():
    report = report_of([V020.format(b=7445)])
    assert report.engine == "vllm"
    assert report.capacity is not None
    assert report.capacity.max_total_num_tokens == 7445 * 16
    assert not report.alerts


@pytest.mark.parametrize("lines", [
    [V020.format(b=0)],
    [V017.format(b=0)],
    [V020.format(b=-3)],  # a build that does not clamp the count
    [V020.format(b=0), RAISED],
])
def test_a_pool_of_no_block_is_critical(lines):
    report = report_of(lines)
    assert report.engine == "vllm"
    rules = {a.rule: a for a in report.alerts}
    alert = rules["profiled-capacity-negative"]
    assert alert.severity == "critical"
    assert alert.evidence is not None and alert.evidence.line == 1
    assert "No available memory for the cache blocks" in alert.detail
    assert report.capacity is None or not report.capacity.max_total_num_tokens


# Every way a pool of no block can reach the gate: each exits 1, in text and JSON.
@pytest.mark.parametrize("lines", [
    [V020.format(b=0)],
    [V017.format(b=-1)],
    [RAISED],  # the error alone (an oom of vLLM's own: no_kv_memory)
    # V1's debug line of the count (v1/metrics/loggers.py log_engine_initialized)
    ["INFO 05-01 10:00:42 [loggers.py:147] Engine 000: vllm cache_config_info with "
     "initialization after num_gpu_blocks is: 0"],
    # behind docker's timestamps
    ["2023-10-02T14:03:11.123456789Z " + V020.format(b=0)],
])
def test_the_gate_never_passes_a_pool_of_no_block(tmp_path, lines):
    path = tmp_path / "v0.log"
    path.write_text("\n".join(lines) + "\n")
    text = kvtui("check", str(path))
    assert text.returncode == 1, text.stdout
    assert "CRITICAL" in text.stdout
    out = kvtui("check", "--json", str(path))
    assert out.returncode == 1
    doc = json.loads(out.stdout)
    assert doc["engine"] == "vllm"
    assert any(a["severity"] == "critical" for a in doc["alerts"])


def test_the_same_log_with_blocks_passes(tmp_path):
    path = tmp_path / "v0.log"
    path.write_text(V020.format(b=7445) + "\n")
    out = kvtui("check", "--json", str(path))
    assert out.returncode == 0, out.stdout
    doc = json.loads(out.stdout)
    assert doc["engine"] == "vllm" and doc["capacity"]["max_total_num_tokens"] == 119120
