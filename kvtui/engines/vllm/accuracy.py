"""vLLM's side of the accuracy checklist (`kvtui.core.accuracy`): its flags and env var, and what
its configuration lines prove about the weights' quantization.

The engine's config line (`Initializing a V1 LLM engine (vX) with config: ... quantization=...`)
prints the method it resolved: the argument, else the checkpoint's own quantization config
(`ModelConfig._verify_quantization`, 0.34.0 config/model.py:1403-1479: a method given that
differs from the checkpoint's is refused). So a quantization the config line states and the
operator's complete argument list (`non-default args`) does not is the checkpoint's: "sure".
One the operator gave may be either (a pre-quantized checkpoint of that method, or fp8 applied
to a BF16 checkpoint while loading): the log does not say, and no alert fires.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtui.core.accuracy_terms import AccuracyTerms, WeightsOrigin

if TYPE_CHECKING:
    from kvtui.core.state import Run


def weights(run: Run) -> WeightsOrigin | None:
    sa = run.server_args
    ev = run.server_args_evidence
    quant = sa.get("quantization")
    config_seen = any(form == "config" for form, _ in run.dump_parts)
    if quant:
        if config_seen and run.args_complete and "quantization" in run.resolved_keys:
            return "checkpoint", str(quant), ev, "high"
        return "given", f"quantization={quant}", ev, "low"
    if config_seen:
        return "none", str(sa.get("dtype") or ""), ev, "high"
    return None


def absent_is_default(run: Run) -> bool:
    """A complete `non-default args` dump (0.10+) lists every argument the operator gave, so
    one it leaves out is the default; a Namespace (up to 0.9) prints every argument of its
    release, so one it leaves out did not exist yet."""
    return run.args_complete and any(form == "args" for form, _ in run.dump_parts)


ACCURACY = AccuracyTerms(
    context_flag="--max-model-len",
    context_env="VLLM_ALLOW_LONG_MAX_MODEL_LEN",
    template_flag="--chat-template",
    tool_flag="--enable-auto-tool-choice --tool-call-parser",
    reasoning_flag="--reasoning-parser",
    # --generation-config: "auto" (the default) loads the model's generation_config.json,
    # "vllm" ignores it (0.34.0 config/model.py:373-379, :1900)
    generation_arg="generation_config",
    generation_off="vllm",
    generation_fix="Drop --generation-config vllm (the default, auto, applies the model's "
                   "generation_config.json), or set the sampling parameters in every request.",
    generation_on="auto",  # the default: 0.34.0 config/model.py:373
    weights=weights,
    # the refusal goes back to the client; the server logs it at DEBUG only (0.34.0
    # entrypoints/serve/exception_handling/error_response.py:25)
    length_unlogged="not logged: vLLM logs a prompt refused for length at DEBUG only",
    absent_is_default=absent_is_default,
    # logged only with the env var set, else a ValueError (0.34.0 config/model.py:2721-2727;
    # envs.py:1177 defaults it to "0")
    context_allowed="vLLM went on with it only because VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set.",
    no_template="every chat request is refused with an error (0.34.0 renderers/hf.py:891-896)",
)
