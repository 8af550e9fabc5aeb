"""vLLM 0.7-0.9 print the weights as "Model loading took %.4f GB and %.6f seconds" (GiB figures:
`model_memory_usage / float(2**30)`), in V0 worker/model_runner.py:1146 and V1
v1/worker/gpu_model_runner.py:1186 of 0.8.2; "GiB" from 0.10 (model_runner.py:1112 and
gpu_model_runner.py:2007 in 0.10.1). Seen on vllm-project/vllm#15340 (V0, TP8 GGUF DeepSeek-R1,
VllmWorkerProcess prefixes): kvtui read no weights at all. The lines are written here in that
wording with figures of their own.
"""

from __future__ import annotations

from kvtui.core.pipeline import Session
from parsers.vllm import parse_line
from tests.helpers import session_of

V0 = ("(VllmWorkerProcess pid=311) INFO 04-02 11:20:31 [model_runner.py:1146] Model loading "
      "took 21.0417 GB and 310.204518 seconds")
V1 = ("INFO 04-02 11:20:31 [gpu_model_runner.py:1186] Model loading took 14.9975 GB and "
      "8.116231 seconds")


def test_the_gb_wording_is_a_weight_line():
    for text, gib, secs in ((V0, 21.0417, 310.204518), (V1, 14.9975, 8.116231)):
        ev = parse_line(text)
        assert ev is not None and ev.kind == "load_weight_end", text
        assert (ev.get("usage_gib"), ev.get("elapsed_s")) == (gib, secs)


def test_the_gb_wording_gives_the_report_its_weights():
    s = session_of([V1], "log")
    assert s.report().to_json()["weights"] is not None


# A V0 pool line pasted without its leading "# " (vllm-project/vllm#10517, a comment's first
# block: "GPU blocks: N, # CPU blocks: M" beside "# GPU blocks: ..." in its second): V0 prints
# "# GPU blocks: %d, # CPU blocks: %d" (executor/gpu_executor.py, 0.5-0.6); the ", # CPU blocks"
# tail names it.
def test_a_v0_pool_line_without_its_leading_hash_is_read():
    s = Session()
    s.feed_lines("log", [
        "Loading model weights took 14.9888 GB",
        "GPU blocks: 2210, # CPU blocks: 2048",
        "Maximum concurrency for 16000 tokens per request: 2.21x",
    ])
    cap = s.report().to_json()["capacity"]
    assert cap is not None and cap["max_total_num_tokens"] == 2210 * 16
