"""The accuracy checklist and its alert rules (kvtui.core.accuracy).

Each rule fires on lines rendered from the engine's own log call (release and file:line beside
each) and stays quiet where the setting is right or where the log cannot tell; the Qwen3.5
sample shows the checklist with its KV item red and its weights stated.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtui.core.accuracy import ITEMS
from kvtui.core.accuracy_text import checklist_markdown, checklist_text
from kvtui.core.pipeline import Options, Session
from kvtui.core.render import render_markdown, render_text
from kvtui.core.report_types import Report
from kvtui.sources.readers import iter_lines
from tests.conftest import corpus_dir
from tests.helpers import session_of

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
QWEN = "qwen35-397b-nvfp4-tp8-fp8.log"
NEW_RULES = {"context-beyond-model", "weights-quantized-on-load", "chat-template-missing",
             "parser-not-enabled", "generation-defaults-ignored"}

T = "[2026-06-01 10:00:"
# an SGLang 0.5.19+ start (the dict dump; 0.5.23 entrypoints/engine.py:173) on 0.5.10+ lines
SG_LOAD = (T + "30 TP0] Load weight end. elapsed=10.00 s, type=Qwen3ForCausalLM, "
           "avail mem=60.00 GB, mem usage=16.00 GB.")  # 0.5.23 model_runner.py:1373
SG_CAP = (T + "40 TP0] max_total_num_tokens=400000, chunked_prefill_size=8192, "
          "max_prefill_tokens=16384, max_running_requests=128, context_len={ctx}, "
          "available_gpu_mem=6.00 GB")  # 0.5.23 managers/scheduler.py:1270


def sg_args(**extra: object) -> str:
    args = {"model_path": "Qwen/Qwen3-8B", "tp_size": 1, "kv_cache_dtype": "auto",
            "quantization": None, "context_length": None, **extra}
    return T + "00] server_args=" + repr(args)


def report(lines: list[str], name: str = "inline") -> Report:
    s = session_of(iter(lines), name)
    return s.report()


def sample(name: str) -> Report:
    s = session_of(iter_lines(str(SAMPLES / name)), name)
    return s.report()


def item(r: Report, key: str):
    return next(i for i in r.accuracy if i.item == key)


def rules(r: Report) -> set[str]:
    return {a.rule for a in r.alerts}


def alert(r: Report, rule: str):
    return next(a for a in r.alerts if a.rule == rule)


# --- context length past the model's window -------------------------------------------------
# SGLang 0.5.23 configs/model_config.py:1299 (warning with the env var set, :1303)
SG_OVER = (T + "05 TP0] Warning: User-specified context_length (524288) is greater than the "
           "derived context_length (262144). This may lead to incorrect model outputs or CUDA "
           "errors. Note that the derived context_length may differ from "
           "max_position_embeddings in the model's config.")


def test_sglang_context_past_the_window_is_critical_and_sure():
    r = report([sg_args(context_length=524288), SG_OVER, SG_LOAD, SG_CAP.format(ctx=524288)])
    a = alert(r, "context-beyond-model")
    assert (a.severity, a.confidence) == ("critical", "high")
    assert a.evidence is not None and a.evidence.line == 2
    assert "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN" in a.fix and "--context-length 262144" \
        in a.fix
    it = item(r, "context")
    assert (it.state, it.rule) == ("critical", "context-beyond-model")


def test_sglang_refused_context_raises_no_accuracy_alert():
    """Without the env var SGLang raises (:1314): the server never served, nothing to fix in
    accuracy (the exception has its own alert)."""
    r = report([sg_args(context_length=524288), "ValueError: " + SG_OVER[len(T) + 8:]
                + " To allow overriding this maximum, set the env var "
                "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"])
    assert "context-beyond-model" not in rules(r)
    assert item(r, "context").state == "info"


def test_vllm_context_past_the_window_names_vllms_flag_and_env():
    # vLLM 0.34.0 config/model.py:2722 (logger.warning_once with VLLM_ALLOW_LONG_MAX_MODEL_LEN)
    lines = [
        "(APIServer pid=1) INFO 05-01 16:27:50 [api_utils.py:281] non-default args: "
        "{'model': 'meta-llama/Llama-3.1-8B-Instruct', 'max_model_len': 262144}",
        "(APIServer pid=1) WARNING 05-01 16:27:51 [model.py:2722] User-specified max_model_len "
        "(262144) is greater than the derived max_model_len (max_position_embeddings=131072 or "
        "model_max_length=None in model's config.json). VLLM_ALLOW_LONG_MAX_MODEL_LEN must be "
        "used with extreme caution.",
    ]
    a = alert(report(lines), "context-beyond-model")
    assert "VLLM_ALLOW_LONG_MAX_MODEL_LEN" in a.fix and "--max-model-len 131072" in a.fix


def test_context_within_the_window_is_ok_only_with_the_start_in_the_log():
    r = report([sg_args(context_length=32768), SG_LOAD, SG_CAP.format(ctx=32768)])
    assert item(r, "context").state == "ok"
    # an excerpt that begins after the start may have cut the engine's warning
    assert item(report([SG_LOAD, SG_CAP.format(ctx=32768)]), "context").state == "unknown"


# --- weights quantized while loading ---------------------------------------------------------
def test_sglang_online_quantization_report_is_sure():
    # 0.5.23 model_runner_components/load_model_utils.py:171
    r = report([sg_args(quantization="fp8"), SG_LOAD,
                T + "31 TP0] Online fp8 quantization: quantized 252 layers of types: "
                "{'QKVParallelLinear'}"])
    a = alert(r, "weights-quantized-on-load")
    assert (a.severity, a.confidence) == ("warning", "high")
    assert item(r, "weights").summary.startswith("fp8, quantized while loading")


def test_sglang_load_line_without_quant_and_a_quantization_is_likely_online():
    """0.5.10+ prints quant= from the checkpoint's config (0.5.23 model_config.py:1899): a
    line without it while --quantization fp8 is given is a BF16 checkpoint quantized on load."""
    a = alert(report([sg_args(quantization="fp8"), SG_LOAD]), "weights-quantized-on-load")
    assert (a.severity, a.confidence) == ("warning", "medium")


def test_sglang_requantized_checkpoint_is_quantization_on_load():
    """0.5.17+ prints `requantization_method` when --quantization re-quantizes the checkpoint
    while loading (0.5.23 model_loader/weight_utils.py:302-304)."""
    line = (T + "30 TP0] Load weight end. elapsed=10.00 s, type=Qwen3MoeForCausalLM, "
            "quant=modelopt_fp4, quant_algo=NVFP4, requantization_method=quark_mxfp4, "
            "avail mem=60.00 GB, mem usage=16.00 GB.")
    r = report([sg_args(quantization="quark_mxfp4"), line])
    a = alert(r, "weights-quantized-on-load")
    assert a.confidence == "high" and "NVFP4 (modelopt_fp4)" in a.detail
    assert item(r, "weights").summary.startswith("quark_mxfp4, re-quantized from NVFP4")


def test_sglang_old_load_line_cannot_tell_and_raises_nothing():
    old = (T + "30 TP0] Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, "
           "avail mem=60.00 GB, mem usage=16.00 GB.")  # 0.4.6 model_runner.py:477
    r = report([sg_args(quantization="fp8"), old])
    assert "weights-quantized-on-load" not in rules(r)
    assert item(r, "weights").state == "info"
    # and with no --quantization an old line says nothing of the checkpoint (DeepSeek-V3's
    # FP8 checkpoint loads so)
    said = item(report([sg_args(), old]), "weights")
    assert said.state == "unknown"
    # the line is there ("Weights  Qwen3ForCausalLM, 16.00 GiB per GPU" in the same report):
    # it names no quantization, which is not "no weight-load line"
    assert "no weight-load line" not in said.summary, said.summary
    assert item(report([sg_args()]), "weights").summary == (
        "no weight-load line or argument says")


def test_prequantized_checkpoint_is_stated_not_alarmed():
    r = sample(QWEN)
    it = item(r, "weights")
    assert it.state == "info" and "NVFP4" in it.summary and "pre-quantized" in it.summary
    assert it.confidence == "high" and it.evidence is not None


def test_vllm_quantization_named_by_the_operator_cannot_be_told():
    lines = [
        "(APIServer pid=1) INFO 05-01 16:27:50 [api_utils.py:281] non-default args: "
        "{'model': 'Qwen/Qwen3-8B', 'quantization': 'fp8'}",
        "(EngineCore pid=7) INFO 05-01 16:27:51 [core.py:140] Initializing a V1 LLM engine "
        "(v0.33.0) with config: model='Qwen/Qwen3-8B', dtype=torch.bfloat16, "
        "max_seq_len=40960, quantization=fp8, kv_cache_dtype=auto, device_config=cuda",
    ]
    r = report(lines)
    assert "weights-quantized-on-load" not in rules(r)
    assert item(r, "weights").state == "info"
    # the config line's method, not asked for: the checkpoint's own (config/model.py:1403)
    lines[0] = lines[0].replace(", 'quantization': 'fp8'", "")
    it = item(report(lines), "weights")
    assert (it.state, it.confidence) == ("info", "high") and "pre-quantized" in it.summary


def test_a_checkpoint_read_settles_the_weights_and_states_the_window():
    """With the checkpoint's config.json read (kvtui ssh, --checkpoint): no quantization_config
    while --quantization is given is quantization on load, sure, even on a pre-0.5.10 line;
    the context item states the model's own window and RoPE scaling."""
    from kvtui.core.checkpoint.facts import CheckpointFacts

    ck = CheckpointFacts(has_config=True, quant_method=None, model_config={
        "max_position_embeddings": 32768,
        "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                         "original_max_position_embeddings": 32768}})
    old = (T + "30 TP0] Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, "
           "avail mem=60.00 GB, mem usage=16.00 GB.")
    s = Session(Options(checkpoint=ck))
    s.feed_lines("inline", iter([sg_args(quantization="fp8", context_length=32768), old,
                                 SG_CAP.format(ctx=32768)]))
    r = s.report()
    assert alert(r, "weights-quantized-on-load").confidence == "high"
    ctx = item(r, "context")
    assert ctx.state == "ok"
    assert "max_position_embeddings 32,768, RoPE yarn x4.0 of 32,768" in ctx.summary


# --- chat template ---------------------------------------------------------------------------
def test_the_models_own_template_is_the_normal_wording():
    """SGLang's "Using default HuggingFace chat template with detected content format" means it
    found the model's own template (0.5.23 parser/template_manager.py:202), not a fallback."""
    r = sample(QWEN)
    assert item(r, "chat_template").state == "ok"
    assert "chat-template-missing" not in rules(r)


def test_no_chat_template_is_a_warning():
    r = report([sg_args(), T + "08] No chat template found, defaulting to 'string' content "
                "format"])  # 0.5.23 parser/template_manager.py:207
    a = alert(r, "chat-template-missing")
    assert (a.severity, a.confidence) == ("warning", "high") and "--chat-template" in a.fix


def test_a_builtin_template_is_stated_as_possible():
    r = report([sg_args(), T + "08] Inferred chat template from model path: llama-3-instruct"])
    it = item(r, "chat_template")
    assert (it.state, it.confidence) == ("info", "low")
    assert not rules(r) & NEW_RULES


def test_vllm_without_a_template_warns_and_its_fallback_is_stated():
    none = ("(APIServer pid=1) ERROR 05-01 16:30:00 [serving.py:1] Error in preprocessing prompt "
            "inputs: As of transformers v4.44, default chat template is no longer allowed, so "
            "you must provide a chat template if the tokenizer does not define one.")
    args = ("(APIServer pid=1) INFO 05-01 16:27:50 [api_utils.py:281] non-default args: "
            "{'model': 'org/base-model'}")
    a = alert(report([args, none, none]), "chat-template-missing")
    assert a.evidence is not None and a.evidence.count == 2
    fallback = ("(APIServer pid=1) INFO 05-01 16:27:56 [hf.py:357] Loading chat template "
                "fallback for org/base-model as there isn't one defined on HF Hub.")
    detected = ("(APIServer pid=1) INFO 05-01 16:28:30 [hf.py:744] Detected the chat template "
                "content format to be 'openai'. You can set `--chat-template-content-format` "
                "to override this.")  # 0.34.0 renderers/hf.py:744, at the first chat request
    r = report([args, fallback, detected])
    assert item(r, "chat_template").state == "info" and not rules(r) & NEW_RULES
    # the format line alone: a template in use and neither a fallback nor an error
    assert item(report([args, detected]), "chat_template").state == "ok"
    # and it says nothing against the error that follows it when there is none
    assert "chat-template-missing" in rules(report([args, detected, none]))


# --- tool-call / reasoning parsers ------------------------------------------------------------
FEATURES = (T + "08] Auto-detected template features: reasoning_parser=qwen3, "
            "tool_call_parser=qwen3_coder")  # 0.5.23 parser/template_manager.py:226


def test_parsers_the_template_calls_for_and_none_given():
    r = report([sg_args(tool_call_parser=None, reasoning_parser=None), FEATURES])
    a = alert(r, "parser-not-enabled")
    assert (a.severity, a.confidence) == ("warning", "medium")
    assert "--tool-call-parser qwen3_coder" in a.fix and "--reasoning-parser qwen3" in a.fix


@pytest.mark.parametrize("given", ["qwen3_coder", "auto"])
def test_parsers_given_or_auto_raise_nothing(given):
    """"auto" takes the template's suggestion (0.5.23 entrypoints/engine.py:215-235)."""
    r = report([sg_args(tool_call_parser=given, reasoning_parser=given), FEATURES])
    assert "parser-not-enabled" not in rules(r)
    assert item(r, "parsers").state == "ok"


def test_parsers_auto_says_what_the_detection_chose():
    r = report([sg_args(tool_call_parser="auto", reasoning_parser="qwen3"), FEATURES])
    assert item(r, "parsers").summary == "tool: qwen3_coder (auto), reasoning: qwen3"
    # without the detection line the log does not say what "auto" became
    assert item(report([sg_args(tool_call_parser="auto")]), "parsers").state == "info"


def test_parsers_not_in_the_dump_are_unknown():
    assert item(report([sg_args(), FEATURES]), "parsers").state == "unknown"


# --- sampling defaults -------------------------------------------------------------------------
def test_sglang_openai_sampling_defaults_is_possible():
    # --sampling-defaults {openai,model} (0.5.23 arg_groups/fields/serving.py:232)
    a = alert(report([sg_args(sampling_defaults="openai")]), "generation-defaults-ignored")
    assert (a.severity, a.confidence) == ("warning", "low")
    assert item(report([sg_args(sampling_defaults="model")]), "generation").state == "ok"


def test_vllm_generation_config_vllm_is_possible_and_its_line_is_ok():
    args = ("(APIServer pid=1) INFO 05-01 16:27:50 [api_utils.py:281] non-default args: "
            "{'model': 'Qwen/Qwen3-8B', 'generation_config': 'vllm'}")
    a = alert(report([args]), "generation-defaults-ignored")
    assert "--generation-config vllm" in a.fix
    # 0.34.0 config/model.py:1931: the model's generation_config.json applied
    applied = ("(APIServer pid=1) WARNING 05-01 16:27:52 [model.py:1931] Default vLLM sampling "
               "parameters have been overridden by the model's `generation_config.json`: "
               "`{'temperature': 0.6}`. If this is not intended, please relaunch vLLM instance "
               "with `--generation-config vllm`.")
    r = report([args.replace(", 'generation_config': 'vllm'", ""), applied])
    assert item(r, "generation").state == "ok" and not rules(r) & NEW_RULES


def test_vllm_complete_args_without_the_argument_mean_its_default():
    """A complete `non-default args` dump (0.10+) leaves out what the operator did not give:
    --generation-config is then "auto" (0.34.0 config/model.py:373) and no parser is given;
    a cut dump says nothing of either."""
    complete = ("(APIServer pid=1) INFO 05-01 16:27:50 [api_utils.py:281] non-default args: "
                "{'model': 'Qwen/Qwen3-8B', 'tensor_parallel_size': 2}")
    r = report([complete])
    assert item(r, "generation").state == "ok" and "the default" in item(r, "generation").summary
    assert item(r, "parsers").state == "info"
    cut = report([complete[:-2]])
    assert item(cut, "generation").state == "unknown" and item(cut, "parsers").state == "unknown"


# --- prompts cut for length ---------------------------------------------------------------------
def test_prompts_rejected_are_counted_over_the_run():
    line = (T + "50 TP0] Input length (70000 tokens) exceeds the maximum allowed length (65536 "
            "tokens). Use a shorter input or enable --allow-auto-truncate.")
    r = report([sg_args(), SG_LOAD, line, line, line])
    it = item(r, "length")
    assert (it.state, it.rule) == ("warning", "input-too-long")
    assert it.summary.startswith("3 request(s) rejected")


def test_vllm_length_silence_says_nothing_its_debug_lines_count():
    """vLLM logs a refusal at DEBUG only (0.34.0 exception_handling/error_response.py:25)."""
    r = sample("vllm-llama31-8b-tp2-fp8-unscaled.log")
    it = item(r, "length")
    assert it.state == "unknown" and "DEBUG" in it.summary
    refused = ("DEBUG 05-01 16:30:00 [error_response.py:25] create_error_response called with "
               "VLLMValidationError: This model's maximum context length is 32768 tokens. "
               "However, your prompt contains 40000 input tokens, which exceeds this limit even "
               "without any output tokens. Please reduce the length of the input prompt.")
    s = session_of(iter_lines(str(SAMPLES / "vllm-llama31-8b-tp2-fp8-unscaled.log")), "x")
    s.feed_lines("x", iter([refused, refused]))
    it = item(s.report(), "length")
    assert (it.state, it.rule) == ("warning", "input-too-long")
    assert it.summary.startswith("2 request(s) rejected")


# --- corpus logs that hold the accuracy lines ----------------------------------------------------
def corpus(name: str) -> Report:
    path = corpus_dir() / name
    if not path.exists():
        pytest.skip("corpus not present")
    s = session_of(iter_lines(str(path)), name)
    return s.report()


def test_corpus_model_template_and_generation_config_are_the_normal_wording():
    """A real SGLang 2026-02 start: "Using default HuggingFace chat template with detected
    content format: string" and "Using default chat sampling params from model generation
    config: {...}" are the model's own, ok, and raise nothing."""
    r = corpus("repofile-53259568910.log")
    assert item(r, "chat_template").state == "ok"
    gen = item(r, "generation")
    assert gen.state == "ok" and "'temperature': 0.7" in gen.summary
    assert not rules(r) & NEW_RULES


@pytest.mark.parametrize("name", ["dsv4_head.log", "repofile-54751690598.log",
                                  "vllm-issue-51454.log"])
def test_corpus_parsers_given_are_ok(name):
    """DeepSeek-V4 starts that give both parsers (SGLang's dump, vLLM's non-default args)."""
    r = corpus(name)
    it = item(r, "parsers")
    assert it.state == "ok" and "deepseek" in it.summary
    assert "parser-not-enabled" not in rules(r)


def test_corpus_rejected_prompts_are_counted():
    """sglang#4048: prompts past the pool's limit, one line per TP rank."""
    r = corpus("sglang-issue-4048.log")
    it = item(r, "length")
    assert (it.state, it.rule) == ("warning", "input-too-long")
    assert it.evidence is not None and it.evidence.count >= 2


def test_corpus_prequantized_checkpoint_from_the_load_line():
    """DeepSeek-V4-Flash-FP8 on SGLang 0.5.11: `Load weight end. ... quant=..., fmt=...`."""
    it = item(corpus("repofile-54751690598.log"), "weights")
    assert it.state == "info" and "pre-quantized" in it.summary and it.confidence == "high"


def test_every_run_has_its_checklist():
    """A restart: each server start judged with its own alerts (`runs[].accuracy`); the last
    run's is the report's."""
    s = session_of(iter_lines(str(SAMPLES / "gpt-oss-120b-tp4-e5m2-restart.log")), "g")
    r = s.report()
    assert len(r.runs) == 2 and all(run.accuracy for run in r.runs)
    assert [(i.item, i.state, i.summary) for i in r.runs[-1].accuracy] == \
        [(i.item, i.state, i.summary) for i in r.accuracy]
    first = {i.item: i for i in r.runs[0].accuracy}
    assert first["kv_cache"].evidence is not None
    assert r.runs[1].start is not None
    assert first["kv_cache"].evidence.line < r.runs[1].start.line  # its own run's line
    assert "accuracy" in r.runs[0].to_json()


# --- the checklist on the Qwen3.5 sample, in check's text, Markdown and JSON --------------------
def test_qwen35_sample_checklist_kv_red_and_weights_stated():
    r = sample(QWEN)
    assert [i.item for i in r.accuracy] == [k for k, _ in ITEMS]
    kv = item(r, "kv_cache")
    assert (kv.state, kv.rule) == ("critical", "kv-fp8-unscaled")
    text = render_text(r)
    assert "Accuracy checklist" in text
    assert any(line.lstrip().startswith("KV cache") and "CRITICAL" in line
               for line in checklist_text(r.accuracy))
    assert any("Weights" in line and "NVFP4" in line and "pre-quantized" in line
               for line in text.splitlines())
    md = render_markdown(r)
    assert "## Accuracy checklist" in md and checklist_markdown(r.accuracy)[0] in md
    js = r.to_json()["accuracy"]
    assert js[0]["item"] == "kv_cache" and js[0]["state"] == "critical"
    assert js[1]["state"] == "info" and "NVFP4" in js[1]["summary"]


def test_log_text_in_a_summary_is_inert():
    r = report([sg_args(), T + "08] Inferred chat template from model path: [red]x\x1b[31m"])
    assert "\x1b" not in "\n".join(checklist_text(r.accuracy))
