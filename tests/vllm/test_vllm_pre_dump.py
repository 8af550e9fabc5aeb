"""What vLLM logs of its configuration before the engine's config line, and how the dump keeps it.

vLLM resolves its configuration (`EngineArgs.create_engine_config`) before the engine prints
it, and logs some settings on the way: "Resolved architecture: %s" (config/__init__.py:711 in
0.10.1, config/model.py:547 in 0.11.0, :530 in 0.14.1), "Using max model len %s"
(config/__init__.py:1750 in 0.10.1, config/model.py:1510 in 0.11.0, :1545 in 0.14.1) and
"Chunked prefill is enabled with max_num_batched_tokens=%d." (config.py:1006 in 0.6.3,
config/scheduler.py:223 in 0.10.1, :206 in 0.11.0, :230 in 0.14.1). The ModelConfig and
SchedulerConfig are built in engine/arg_utils.py only (0.6.3 :837/:1021, 0.10.1 :904/:1281,
0.14.1 :1223/:1631; a draft's ModelConfig in the speculative config after the target's), and
the engine prints its config after (V0 engine/llm_engine.py:238 in 0.6.3; V1
v1/engine/core.py:74 in 0.10.1, :98 in 0.14.1). The config line never prints
max_num_batched_tokens nor the architecture (`VllmConfig.__str__`, config/vllm.py:1331-1362 in
0.14.1), so a value only such a line states must survive it; the config line's own value is
the resolved one and wins over theirs: NomicBert's `verify_and_update_model_config` logs
"Using max model len" a second time with the corrected length (model_executor/models/
config.py:171 and :217 in 0.14.1, from `VllmConfig.__post_init__`, config/vllm.py:537).

The lines below are written for these tests in the wording of those format strings.
"""

from __future__ import annotations

from kvtui.core.pipeline import Session
from tests.helpers import session_of

V0_CHUNKED = "INFO 03-02 09:00:01 config.py:1006] Chunked prefill is enabled with " \
             "max_num_batched_tokens=1024."
V0_CONFIG = ("INFO 03-02 09:00:01 llm_engine.py:238] Initializing an LLM engine (v0.6.3) with "
             "config: model='org/tiny-llama', speculative_config=None, tokenizer='org/tiny-llama', "
             "dtype=torch.float16, max_seq_len=4096, tensor_parallel_size=1, "
             "pipeline_parallel_size=1, quantization=None, kv_cache_dtype=auto, "
             "enable_prefix_caching=False, mm_processor_kwargs=None)")
V0_BLOCKS = "INFO 03-02 09:00:20 gpu_executor.py:122] # GPU blocks: 2000, # CPU blocks: 512"
V0_CONC = "INFO 03-02 09:00:20 gpu_executor.py:126] Maximum concurrency for 4096 tokens per " \
          "request: 7.81x"

H = "(APIServer pid=3) INFO 03-02 10:00:0{s} [{f}] "
ARGS = H.format(s=0, f="utils.py:263") + "non-default args: {'model_tag': 'org/embed', " \
    "'model': 'org/embed', 'runner': 'pooling'}"
ARCH = H.format(s=1, f="model.py:530") + "Resolved architecture: {arch}"
MAXLEN = H.format(s=1, f="model.py:1545") + "Using max model len {n}"
CHUNKED = H.format(s=2, f="scheduler.py:230") + "Chunked prefill is enabled with " \
    "max_num_batched_tokens=2048."
V1_CONFIG = ("(EngineCore_DP0 pid=9) INFO 03-02 10:00:05 [core.py:98] Initializing a V1 LLM "
             "engine (v0.14.1) with config: model='org/embed', speculative_config=None, "
             "dtype=torch.float16, max_seq_len={n}, tensor_parallel_size=1, "
             "pipeline_parallel_size=1, data_parallel_size={dp}, quantization=None, "
             "kv_cache_dtype=auto, enable_prefix_caching=False, compilation_config={{}}")


def fold(lines: list[str]) -> Session:
    s = session_of(lines, "log")
    return s


def test_a_setting_logged_before_a_first_config_line_survives_it():
    """No args line (an offline `LLM(...)`, or a paste that starts below it): the config line
    is the start's first dump part, and it must not drop what the chunked-prefill line said."""
    run = fold([V0_CHUNKED, V0_CONFIG, V0_BLOCKS, V0_CONC]).state.current
    assert run.server_args["max_num_batched_tokens"] == 1024
    assert run.server_args["context_length"] == 4096
    assert run.server_args["model_path"] == "org/tiny-llama"


def test_the_config_lines_length_wins_over_a_length_logged_before_it():
    """After the args line: the first "Using max model len" (8192) was corrected by a second
    (2048, NomicBert's re-check); the config line states the resolved length, and wins."""
    lines = [ARGS, ARCH.format(arch="NomicBertModel"), MAXLEN.format(n=8192), CHUNKED,
             MAXLEN.format(n=2048), V1_CONFIG.format(n=2048, dp=1)]
    run = fold(lines).state.current
    assert run.server_args["context_length"] == 2048
    assert run.server_args["max_num_batched_tokens"] == 2048
    assert run.server_args["architecture"] == "NomicBertModel"


def test_without_the_args_line_the_first_architecture_is_the_targets():
    """A draft's ModelConfig is built after the target's and logs its own architecture: the
    config line does not name one, so the target's (the first) stays."""
    lines = [ARCH.format(arch="LlamaForCausalLM"), MAXLEN.format(n=8192),
             ARCH.format(arch="EagleLlamaForCausalLM"), MAXLEN.format(n=8192),
             V1_CONFIG.format(n=8192, dp=1)]
    run = fold(lines).state.current
    assert run.server_args["architecture"] == "LlamaForCausalLM"
    assert run.server_args["context_length"] == 8192


def test_a_restart_without_an_args_line_keeps_its_own_pre_config_settings():
    """Two offline starts in one log: the second start's chunked-prefill line opens it (it is
    logged while that start resolves its configuration), so its value is that run's."""
    second = [V0_CHUNKED.replace("09:00", "09:10").replace("=1024", "=4096"),
              V0_CONFIG.replace("09:00", "09:10"), V0_BLOCKS.replace("09:00", "09:10"),
              V0_CONC.replace("09:00", "09:10")]
    s = fold([V0_CHUNKED, V0_CONFIG, V0_BLOCKS, V0_CONC, *second])
    assert len(s.state.runs) == 2
    assert s.state.runs[0].server_args["max_num_batched_tokens"] == 1024
    assert s.state.runs[1].server_args["max_num_batched_tokens"] == 4096
    assert s.state.runs[1].start is not None and s.state.runs[1].start.line == 6


def test_a_dp_siblings_config_after_pre_config_lines_joins_the_run():
    """DP 2, rank-less engines: the second engine's config equals the first as printed; what
    the pre-config lines added to the run's arguments does not make it look different."""
    config = V1_CONFIG.format(n=4096, dp=2).replace("(EngineCore_DP0 pid=9) ", "")
    lines = [CHUNKED, MAXLEN.format(n=4096), config, config]
    s = fold(lines)
    assert len(s.state.runs) == 1
    assert s.state.current.server_args["max_num_batched_tokens"] == 2048
