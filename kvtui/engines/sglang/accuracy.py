"""SGLang's side of the accuracy checklist (`kvtui.core.accuracy`): its flags and env var, and
what its weight-load line proves about the checkpoint's quantization.

The weight-load line prints `quant=...` from the checkpoint's own quantization config
(config.json's quantization_config or ModelOpt's hf_quant_config.json:
`get_quantization_config_log_str`, 0.5.23 configs/model_config.py:1899-1919, called at
model_executor/model_runner.py:1369 and printed at :1373) from 0.5.10, the layout without
`dtype=` (parsers/sglang/catalog.py `load_weight_end:no_dtype`). On that layout a line without
`quant=` while --quantization is given means the checkpoint carries no quantization config: the
weights were quantized while loading. "likely", not "sure": the function returns None on any
exception too. 0.5.23 also reports the online quantization itself
(`report_online_quantization`, model_runner_components/load_model_utils.py:171): "sure".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kvtui.core.accuracy_terms import AccuracyTerms, WeightsOrigin

if TYPE_CHECKING:
    from kvtui.core.state import Run


def _first(run: Run) -> dict[str, Any] | None:
    for rank in sorted(run.weights, key=lambda r: r or ""):
        return run.weights[rank]
    return None


def weights(run: Run) -> WeightsOrigin | None:
    online = run.notices.get("online_quant")
    if online is not None:
        return "online", str(online.fields.get("method")), online.evidence, "high"
    w = _first(run)
    asked = run.server_args.get("quantization")
    if w is None or w.get("overlap"):
        if asked:
            return "given", f"--quantization {asked}", run.server_args_evidence, "low"
        return None
    ev = w.get("evidence")
    quant = w.get("quant")
    if quant:
        algo = w.get("quant_algo") or w.get("quant_fmt")
        bits = w.get("quant_bits")
        what = f"{algo} ({quant})" if algo else (f"{quant}, {bits}-bit" if bits else str(quant))
        requant = w.get("requant_method")
        if requant:
            # `requantization_method` is the --quantization that re-quantizes a quantized
            # checkpoint while loading (an FP4 / FP8 checkpoint to MXFP4: 0.5.23
            # model_loader/weight_utils.py:302-304, :365), printed from 0.5.17 (model_config.py
            # :1913)
            return "requant", f"{requant} from {what}", ev, "high"
        return "checkpoint", what, ev, "high"
    # the 0.5.10+ layout (no dtype column, the memory columns read): quant would be printed
    prints_quant = w.get("dtype") is None and w.get("avail_gib") is not None \
        and w.get("elapsed_s") is not None
    if asked:
        if prints_quant:
            return "online", str(asked), ev, "medium"
        return "given", f"--quantization {asked}", ev, "low"
    if prints_quant:
        # Before 0.5.10 the line never names the quantization, and an absent --quantization
        # means "whatever the checkpoint's config says" (DeepSeek-V3's FP8 included): only
        # the layout that prints it tells an unquantized checkpoint.
        return "none", str(run.server_args.get("dtype") or ""), ev, "high"
    return None


ACCURACY = AccuracyTerms(
    context_flag="--context-length",
    context_env="SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN",
    template_flag="--chat-template",
    tool_flag="--tool-call-parser",
    reasoning_flag="--reasoning-parser",
    # --sampling-defaults {openai,model}, "model" the default (0.5.23
    # arg_groups/fields/serving.py:232-238)
    generation_arg="sampling_defaults",
    generation_off="openai",
    generation_fix="Drop --sampling-defaults openai (the default, model, applies the model's "
                   "generation_config.json), or set the sampling parameters in every request.",
    generation_on="model",  # the default: 0.5.4+ (0.5.23 arg_groups/fields/serving.py:238)
    weights=weights,
    # The scheduler's refusals are logged (`set_finish_with_abort` at ERROR, 0.5.23
    # managers/schedule_batch.py:2228) and truncations warn (managers/utils.py:273,
    # tokenizer_manager.py:1340); the tokenizer's refusal of an input past the context length
    # (tokenizer_manager.py:1348) is logged on /generate (entrypoints/http_server.py:989) but
    # returned unlogged by the OpenAI API (entrypoints/openai/serving_base.py:123).
    length_caveat="an OpenAI-API prompt past the context length is refused unlogged",
    # logged (and the longer length kept) when the env var is on; on by default up to 0.4.10
    # (0.4.10 configs/model_config.py:162-164, `default="True"`), off from 0.5.1 (:176), an
    # EnvBool(False) from 0.5.4 (environ.py:212; 0.5.23 :320), else a ValueError
    context_allowed="SGLang went on with it because SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN "
                    "is on (set by the operator; on by default up to 0.4.10).",
    # 0.5.23: no template name and no Jinja template (parser/template_manager.py:205-209), so a
    # chat request goes to the tokenizer's apply_chat_template
    # (entrypoints/openai/serving_chat.py:1957-1958, :2299), which transformers refuses
    # without a template (no default since v4.44)
    no_template="chat requests fail in the tokenizer (it has no template to apply); only "
                "raw completions and /generate work",
)
