"""vLLM behind the engine seam: its grammar, its release dating, its flags, its pool sizing."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import parsers.vllm as grammar
import parsers.vllm.frames as vllm_frames
from kvtui.core import dtypes
from kvtui.core.engine import DiscoverySigns, KVScaleRules
from kvtui.core.releases import VersionRange, fmt
from kvtui.core.report_types import RunningLimit
from kvtui.engines.vllm import fromrun, limits, plan
from kvtui.engines.vllm.accuracy import ACCURACY
from kvtui.engines.vllm.calculator import DEFAULT_DTYPES, VALUE_COST
from kvtui.engines.vllm.flags import FLAGS, RELEASE_OPTION
from kvtui.engines.vllm.kvscales import KV_SCALES
from kvtui.engines.vllm.version import check_release, infer_version, kv_dtype_flag
from parsers import Event
from parsers.frames import Frame
from parsers.vllm import disagg

if TYPE_CHECKING:
    from kvtui.core.accuracy_terms import AccuracyTerms
    from kvtui.core.capacity.modelspec import ModelSpec
    from kvtui.core.checkpoint import CheckpointFacts
    from kvtui.core.engine import ColumnGrammar, Engine, Run
    from kvtui.engines.vllm.calculator import Calculator


# The sentences of the alert texts that are vLLM's own (kvtui.core.alerts WORDING keys).
WORDING: dict[str, str] = {
    # the KV dtype line's own words (0.6.3 config.py:637, 0.11.0 config/cache.py:181; 0.22+
    # names the resolved dtype in place of "fp8": parsers/vllm/startup.py `_KV_DTYPE`)
    "basis.kv_dtype_line": "the 'Using ... data type to store kv cache' line",
    "scales_missing.said": 'vLLM printed "Using KV cache scaling factor 1.0 for fp8_e4m3"',
    "scales_missing.checkpoint_has_scales": (
        "The checkpoint has k_scale/v_scale tensors, yet vLLM warns only after loading, when "
        "both scales of a layer are exactly 1.0: either the tensors hold 1.0 or this model "
        "class did not map them (look for a warning about unloaded k_scale/v_scale weights)."),
    "scales_missing.unknown": (
        "vLLM prints this warning after loading the weights, when k_scale and v_scale are both "
        "exactly 1.0: the checkpoint carries no KV scales for these layers (vLLM V1 has no "
        "scales-file flag; calculate_kv_scales was removed), so check the checkpoint's "
        "model.safetensors.index.json for k_scale/v_scale (kvtui ssh does this for you)."),
    "auto_fp8.since": ">= 0.14",
    "auto_fp8.silence": (
        'vLLM announces it only as an INFO line ("Using fp8 data type to store kv cache"), '
        "and the scales default to 1.0 unless the checkpoint carries k_scale/v_scale."),
    "fp8.silence": (
        "(no \"Using KV cache scaling factor 1.0\" warning). vLLM prints that warning when a "
        "layer's scales are 1.0 after loading, so its absence suggests the checkpoint's "
        "scales were loaded, unless the log excerpt does not reach the weight loading."),
    "context.reject": (
        "vLLM can run only a fraction of a full-context request at a time: long requests are "
        "preempted and recomputed, and one at full length may never finish"),
    "retraction.verb": "preempted",
    "retraction.nouns": "preemptions",
    "retraction.Noun": "Preemption",
    "retraction.admit": "--max-num-seqs, --max-num-batched-tokens",
    "oom.fix": (
        "Raise --gpu-memory-utilization, or lower --max-model-len, when the KV cache cannot "
        "hold one request (\"KV cache is needed, which is larger than the available KV cache "
        "memory\"); lower --gpu-memory-utilization if CUDA graph capture or activations run "
        "out; lower --max-num-seqs or --max-num-batched-tokens for activation peaks."),
    # a run started with --kv-cache-memory-bytes (kvbytes.py): the worker returns the value
    # without profiling (v1/worker/gpu_worker.py:235-252 in 0.10.2), so nothing leaves room
    # for activations or CUDA graphs but the operator's number
    "oom.fix.fixed_budget": (
        "This run's KV cache is sized by --kv-cache-memory-bytes, which vLLM reserves on every "
        "GPU without profiling (--gpu-memory-utilization changes nothing then): lower it if "
        "CUDA graph capture or activations run out (the reserved line's initial free memory, "
        "less the weights, bounds it); raise it, or lower --max-model-len, when the KV cache "
        "cannot hold one request; lower --max-num-seqs or --max-num-batched-tokens for "
        "activation peaks."),
    # "Available KV cache memory: <= 0" (kvtui.core.alerts _rule_profiled_negative): V1's
    # budget is requested_memory - non_kv_cache_memory, requested = total x
    # gpu_memory_utilization (v1/worker/gpu_worker.py:175-176, :256-257 in 0.10.1; :341-343
    # and v1/worker/utils.py:258-260 in 0.14.1), non_kv = weights + torch peak + non-torch
    # (utils/__init__.py:2744 in 0.10.1, utils/mem_utils.py:283 in 0.14.1), and releases that
    # profile CUDA graphs take them out too ("CUDA graph memory profiling is enabled",
    # parsers/vllm/startup.py). A budget <= 0
    # raises "No available memory for the cache blocks. Try increasing
    # `gpu_memory_utilization` ..." (v1/core/kv_cache_utils.py:681-684 in 0.10.1, :615-617 in
    # 0.14.1) and the EngineCore logs "EngineCore failed to start." (vllm-project/vllm#23278).
    "profiled_negative.budget_why": (
        "the weights, the activation peak of the profile run, the CUDA graph memory (on "
        "releases that profile it) and the non-torch memory (NCCL, the CUDA context) already "
        "exceed the share vLLM may use, gpu_memory_utilization x total GPU memory, so there "
        "is no KV cache at all: vLLM stops at start-up (\"No available memory for the cache "
        "blocks\", then \"EngineCore failed to start\")."),
    # "# GPU blocks: 0, # CPU blocks: C": V0 sizes the pool as num_gpu_blocks = (total GPU
    # memory x gpu_memory_utilization - the profile's peak) // block bytes, clamped at 0
    # (worker/worker.py:124-128 in 0.2.0), and raises "No available memory for the cache
    # blocks. Try increasing `gpu_memory_utilization` ..." when it is <= 0
    # (engine/llm_engine.py:208-211 in 0.2.0, :202-205 in 0.1.7)
    "profiled_negative.blocks_why": (
        "the weights and the activation peak of the profile run already take the share vLLM "
        "may use, gpu_memory_utilization x total GPU memory, so not one KV block fits: vLLM "
        "stops at start-up (\"No available memory for the cache blocks\")."),
    "profiled_negative.budget_fix": (
        "Raise --gpu-memory-utilization (or free the GPU of other processes); lower the "
        "activation peak with a smaller --max-num-batched-tokens, --max-num-seqs or "
        "--max-model-len; shard the weights over more GPUs (higher -tp); or serve quantized "
        "weights (a smaller checkpoint)."),
    "unbalanced": "",
}


# The report's capacity figures as vLLM's user names them: max_model_len (config/model.py:249
# in 0.33.0), max_num_batched_tokens (config/scheduler.py:48), the flags they set and grep; and
# the pool in tokens as the log prints it, "GPU KV cache size: N tokens" (0.10.1
# v1/core/kv_cache_utils.py:849 and :1013, logger.info), the only place a user meets it (the
# variable that holds it is vLLM's own: a local `num_tokens` there).
TERMS: dict[str, str] = {
    "context_len": "max_model_len",
    "max_total_num_tokens": "GPU KV cache size",
    "chunked_prefill_size": "max_num_batched_tokens",
}
# The pool stated as the log states it: `logger.info("GPU KV cache size: %s tokens", ...)`
# (v1/core/kv_cache_utils.py:849 and :1013 in 0.10.1.1, :1087 in 0.11.0).
FIGURE_FORMATS: dict[str, str] = {"max_total_num_tokens": "{term}: {value} tokens"}


class VLLM:
    name = "vllm"
    accuracy: AccuracyTerms | None = ACCURACY  # the accuracy checklist's terms (accuracy.py)
    label = "vLLM"
    package = "vllm"
    # `vllm serve MODEL`, `python -m vllm.entrypoints.openai.api_server` (or
    # `vllm.entrypoints.cli.main serve`), and the titles its children give themselves with
    # setproctitle ("VLLM::EngineCore", "VLLM::Worker_TP0": vllm 0.11.0 utils/__init__.py:3443
    # set_process_title, prefix VLLM_PROCESS_NAME_PREFIX, default "VLLM")
    kv_scales: KVScaleRules = KV_SCALES
    discovery = DiscoverySigns(
        process_patterns=('*vllm"$US"serve*', "*vllm.entrypoints.openai.api_server*",
                          "*vllm/entrypoints/openai/api_server*",
                          '*vllm.entrypoints.cli.main"$US"serve*', "VLLM::*"),
        image_patterns=("*vllm*",),
        log_signs=("vLLM", "vllm", "GPU KV cache size", "non-default args"))
    flags = FLAGS
    release_option = RELEASE_OPTION
    wording: Mapping[str, str] = WORDING
    terms: Mapping[str, str] = TERMS
    figure_formats: Mapping[str, str] = FIGURE_FORMATS
    # "Using KV cache scaling factor 1.0" is logged after loading, when a layer's scales are
    # 1.0 (model_executor/layers/quantization/kv_cache.py, process_weights_after_loading).
    scale_warning_after_load = True
    tag_shape_starts = False  # engine core `DP0` and workers `rank0` in one start
    # one stats line every few seconds: the line route is enough
    columns: ColumnGrammar | None = None
    # One scheduler per engine preempts, in the engine's process, never in a TP worker's
    # (0.10.1 v1/core/sched/scheduler.py:255-271; V0 core/scheduler.py:1774-1776 warns of it),
    # and the stats line that counts preemptions is one per engine ("Engine %03d: ",
    # v1/metrics/loggers.py:124): each retraction line is an episode.
    retraction_groups: frozenset[str] | None = None
    # The lines that begin a server start: the CLI args, the engine's config line, the API
    # server's release line (parsers/vllm/args.py, startup.py).
    start_markers: tuple[bytes, ...] = (b"non-default args: {", b"args: Namespace(",
                                        b" LLM engine (v", b"vLLM API server version ")
    # every engine logs its config line: "Initializing an LLM engine (v%s) with config" in
    # vllm 0.6.3 engine/llm_engine.py:238, "Initializing a V1 LLM engine (v%s) ..." in
    # 0.33.0 v1/engine/core.py:140
    start_anchors: tuple[bytes, ...] = (b" LLM engine (v",)
    # the default rows, then the other dtypes a pool is sized for (calculator.py VALUE_COST)
    kv_dtypes = DEFAULT_DTYPES + tuple(d for d in VALUE_COST if d not in DEFAULT_DTYPES)

    def parse_line(self, text: str) -> Event | None:
        return grammar.parse_line(text)

    def identifies(self, ev: Event) -> bool:
        # An out-of-memory error reads the same from any engine (the CUDA allocator's text);
        # the KV-too-small errors are vLLM's own, and so is one a vLLM process printed (its
        # `(VllmWorker rank=0 pid=9) ` prefix: parsers.prefix.vllm_process).
        return (ev.kind != "oom" or ev.get("reason") != "torch"
                or ev.get("process") is not None)

    def owns_frame(self, frame: Frame) -> bool:
        return vllm_frames.owns_frame(frame)

    def hints(self, ev: Event, text: str) -> Iterable[str]:
        return grammar.hints(ev, text)

    def version_range(self, run: Run, known: str | None = None) -> VersionRange:
        return infer_version(run.hints, known or run.engine_version)

    def kv_dtype_advice(self, dtype: str, run: Run,
                        checkpoint: CheckpointFacts | None = None, *,
                        release: str | None = None) -> str:
        """The flag that gives a `dtype` KV cache on the vLLM releases this log implies (or
        the user's pinned `release`)."""
        known = release or (checkpoint.engine_version(self.name) if checkpoint else None)
        vr = self.version_range(run, known)
        model = dtypes.normalize((run.server_args or {}).get("dtype"))
        algo = checkpoint.kv_cache_quant_algo if checkpoint is not None else None
        flag, advice = kv_dtype_flag(
            dtype, vr, model_dtype=model if model in ("bf16", "fp16") else "bf16",
            checkpoint_kv_fp8=(str(algo).upper() == "FP8") if algo else None)
        return f"{flag}; {advice.rstrip('.')}" if flag else advice.rstrip(".")

    def calculator(self, run: Run, model: ModelSpec | str | None = None,
                   checkpoint: CheckpointFacts | None = None, *,
                   release: str | None = None, tp: int | None = None,
                   attn_dp: int | None = None, page_size: int | None = None,
                   context_len: int | None = None) -> Calculator | None:
        return fromrun.calculator_from_run(run, model, checkpoint, release=release, tp=tp,
                                           attn_dp=attn_dp, page_size=page_size,
                                           context_len=context_len)

    def check_release(self, text: str) -> str:
        return fmt(check_release(text))

    def plan(self, spec: ModelSpec | None, spec_reason: str, *, current_dtype: str,
             tokens: int | None, context_len: int | None, tp: int, attn_dp: int,
             page_size: int | None, pool_gib: float | None,
             release: str | None) -> Calculator:
        return plan.plan(spec, spec_reason, current_dtype=current_dtype, tokens=tokens,
                         context_len=context_len, tp=tp, attn_dp=attn_dp, page_size=page_size,
                         pool_gib=pool_gib, release=release)

    def fp8_scales_inline(self, run: Run,
                          checkpoint: CheckpointFacts | None = None) -> str | None:
        # Not read yet for vLLM (its DSA cache, fp8_ds_mla, is left to whoever reads it):
        # its FP8 warnings keep their meaning.
        return None

    def transfer_failure(self, text: str) -> tuple[str, str] | None:
        return disagg.transfer_failure(text)

    def tag_floors(self, run: Run) -> Mapping[str, tuple[int, str]]:
        return {}  # not read for vLLM: its tags prove their highest index + 1

    def running_limit(self, run: Run, checkpoint: CheckpointFacts | None = None, *,
                      release: str | None = None) -> RunningLimit | None:
        """max_num_seqs: logged, or vLLM's default for the releases the log (or the user's
        pinned `release`, or the checkpoint host's vllm) allows."""
        known = release or (checkpoint.engine_version(self.name) if checkpoint else None)
        return limits.running_limit(run, self.version_range(run, known))

    def metrics_endpoint(self, server_args: Mapping[str, object]) -> tuple[int | None, str]:
        """The API server's `--port` (0.34.0 entrypoints/common/cli_args.py:296, default
        8000), which always serves /metrics (entrypoints/serve/instrumentator/metrics.py:
        55-80). `non-default args` leaves out a default port, so an absent one is 8000."""
        port = server_args.get("port")
        if isinstance(port, int) and not isinstance(port, bool):
            return port, "the server's --port in the log"
        return 8000, "vLLM's default port 8000 (--metrics-port to change it)"

    def http_port(self, server_args: Mapping[str, object]) -> int:
        """The API server's --port, default 8000 (0.34.0 entrypoints/common/cli_args.py:296),
        where /metrics is also served."""
        port, _ = self.metrics_endpoint(server_args)
        return port if port is not None else 8000


ENGINE: Engine = VLLM()
