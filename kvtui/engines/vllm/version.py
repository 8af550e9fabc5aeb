"""Which vLLM releases a log could come from, and which flag selects a KV dtype there.

Logs print the release more often than SGLang's do (the engine config line carries it, the API
server prints it), and when they do not, format features narrow it: each hint the grammar
records (`parsers.vllm.hints`) maps to the releases that print it, read from the wheels named
beside each entry. Boundaries between two downloaded releases are given conservatively (the
range stays wide where the change happened between them). The range itself is the
engine-neutral `kvtui.core.releases.VersionRange` over `VLLM_LINE`.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet

from kvtui.core.releases import ReleaseLine, Version, parse_version

# the engine-neutral range and its format, which this engine's modules import from here
from kvtui.core.releases import VersionRange as VersionRange
from kvtui.core.releases import fmt as fmt

OLDEST: Version = (0, 5, 0)
NEWEST: Version = (0, 34, 0)
VLLM_LINE = ReleaseLine("vllm", OLDEST, NEWEST, json_names_engine=True)


# hint -> (lowest release that prints it, highest release that prints it, why)
_HINTS: dict[str, tuple[Version | None, Version | None, str]] = {
    # vllm/logger.py _FORMAT: "%(filename)s:%(lineno)d]" in 0.6.3, "[%(filename)s:%(lineno)d]"
    # in 0.8.5 (0.7.x pastes still show the bare form, e.g. vllm PR 12569).
    "head:bare": (None, (0, 7, 3), "'file.py:N]' head without '[' (<= 0.7)"),
    "head:bracket": ((0, 8, 0), None, "'[file.py:N]' head (0.8+)"),
    # v1/engine/core.py process names: EngineCore_{i} (0.9-0.10.1), EngineCore_DP{i} (0.10.2+);
    # workers below.
    "proc:engine_core_n": ((0, 9, 0), (0, 10, 1), "'(EngineCore_0 pid=...)' (0.9-0.10.1)"),
    "proc:engine_core_dp": ((0, 10, 2), None, "'(EngineCore_DP0 pid=...)' (0.10.2+)"),
    # V1 workers (v1/executor/multiproc_executor.py): "VllmWorker rank={rank}" in 0.7.0 (:222),
    # 0.8.5 (:294), 0.9.2 (:346), 0.10.0 (:370); "VllmWorker TPn" / "VllmWorker PPm_TPn" in
    # 0.10.1 (:382-391); "Worker_TPn" from 0.10.2.
    "proc:vllm_worker_rank": ((0, 7, 0), (0, 10, 0), "'(VllmWorker rank=N pid=...)' (0.7-0.10.0)"),
    "proc:vllm_worker_named": ((0, 10, 1), (0, 10, 1), "'(VllmWorker TPn pid=...)' (0.10.1)"),
    "proc:worker": ((0, 10, 2), None, "'(Worker_TPn pid=...)' (0.10.2+)"),
    # V0's engine (engine/llm_engine.py) was removed in 0.11 (absent from the 0.11.0 wheel).
    "engine:v0": (None, (0, 10, 2), "'Initializing an LLM engine' (the V0 engine, <= 0.10)"),
    # engine/llm_engine.py: "Initializing an LLM engine (v%s)" in 0.6.6 (:235) and 0.7.0 (:233),
    # "Initializing a V0 LLM engine (v%s)" in 0.7.3 (:235), 0.8.0 (:242), 0.10.2 (:222).
    "engine:v0_named": ((0, 7, 1), (0, 10, 2),
                        "'Initializing a V0 LLM engine' (0.7.1-0.10.2)"),
    "engine:v0_unnamed": (None, (0, 7, 0), "'Initializing an LLM engine' (V0, <= 0.7.0)"),
    "engine:v1": ((0, 7, 0), None, "'Initializing a V1 LLM engine' (0.7+)"),
    "capacity:cpu_blocks": (None, (0, 10, 2), "'# GPU blocks: N, # CPU blocks: M' (V0, <= 0.10)"),
    # executor/gpu_executor.py:76 in 0.6.6.post1 "# GPU blocks: %d, # CPU blocks: %d";
    # executor/executor_base.py:108 in 0.7.0 ... :114 in 0.10.2 "# %s blocks: ..." with the
    # platform's device_name ("cuda", "rocm", "xpu", ...).
    "capacity:gpu_word": (None, (0, 6, 6), "'# GPU blocks: N, # CPU blocks: M' (V0, <= 0.6)"),
    "capacity:device_name": ((0, 7, 0), (0, 10, 2),
                             "'# cuda blocks: N, # CPU blocks: M' (V0, 0.7-0.10)"),
    "capacity:gpu_blocks": ((0, 7, 0), (0, 7, 3), "'# GPU blocks: N' alone (V1 0.7)"),
    # v1/core/kv_cache_utils.py: "GPU KV cache size: %s tokens" from 0.8.0, one line with the
    # concurrency from 0.28.0 (0.25.0:2146 still two lines).
    "capacity:tokens": ((0, 8, 0), (0, 27, 9), "'GPU KV cache size' on its own line (0.8-0.27)"),
    "capacity:merged": ((0, 28, 0), None, "KV cache size and concurrency on one line (0.28+)"),
    # v1/worker/gpu_worker.py: "Available KV cache memory" from 0.9.2; format_gib (trailing
    # zeros dropped) from 0.14.0 (0.11.0 prints %.2f).
    "avail:two_digits": ((0, 9, 2), None, "'Available KV cache memory' (0.9.2+)"),
    "avail:short": ((0, 12, 0), None, "'Available KV cache memory' without '%.2f' (0.12+)"),
    # quantization/kv_cache.py: "This may cause accuracy issues" up to 0.11.0, "If this is
    # unintended, verify ..." in 0.14.0 and later.
    "scales:may_cause": (None, (0, 13, 9), "scale-1.0 warning, old wording (<= 0.13)"),
    "scales:verify": ((0, 12, 0), None, "scale-1.0 warning, 'If this is unintended' (0.12+)"),
    # "Loading model weights took %.4f GB" (0.6.3 model_runner.py:1071); "Model loading took
    # %.4f GiB and" (0.8.5-0.11.0 gpu_model_runner.py); "%s GiB memory and" (0.14.0+).
    "weights:old": (None, (0, 7, 3), "'Loading model weights took X GB' (<= 0.7)"),
    # V0's XPU runner (worker/xpu_model_runner.py): "%.4f GB" to 0.8.0 (:425), "%.4f GiB" in
    # 0.8.5 (:414) and 0.9.2 (:415); the runner is gone in 0.10.2.
    "weights:xpu_gb": (None, (0, 8, 4), "'Loading model weights took X GB' (XPU, <= 0.8.0)"),
    "weights:xpu_gib": ((0, 8, 1), (0, 10, 1),
                        "'Loading model weights took X GiB' (XPU, 0.8.5-0.9)"),
    # ("%.4f GB and" with the same GiB figure in 0.8.2: model_runner.py:1146,
    # gpu_model_runner.py:1186)
    "weights:gib": ((0, 8, 0), (0, 13, 9), "'Model loading took X GiB and' (0.8-0.13)"),
    "weights:memory": ((0, 12, 0), None, "'Model loading took X GiB memory and' (0.12+)"),
    # gpu_worker.py: the "In v0.19 ... will be enabled by default" notice (absent in 0.14.0),
    # "default since v0.21.0" (0.22.0+).
    "memory:cg_soon": ((0, 15, 0), (0, 18, 9), "'In v0.19, CUDA graph memory profiling ...'"),
    "memory:cg_default": ((0, 21, 0), None, "'CUDA graph memory profiling ... default since "
                                           "v0.21.0'"),
    # distributed/parallel_state.py "rank %s in world size %s is assigned as ..." (the group
    # lists quoted in parsers/vllm/startup.py): none in 0.7.3; "DP, PP, TP" 0.8.0-0.8.5; "+ EP"
    # 0.9.0-0.11.2; "+ PCP" 0.12.0-0.16.0; "+ EPLB" 0.17.0-0.29.0; "+ ETP" 0.30.0-0.33.0; the EP
    # rank "N/A" (a dense model) from 0.14.0 (0.13.0 has none).
    "assign:dp_pp_tp": ((0, 8, 0), (0, 8, 9), "'assigned as DP rank, PP rank, TP rank' (0.8)"),
    "assign:ep": ((0, 9, 0), (0, 11, 9), "'assigned as ..., TP rank, EP rank' (0.9-0.11)"),
    "assign:pcp": ((0, 12, 0), (0, 16, 9), "'assigned as ..., PCP rank, ...' (0.12-0.16)"),
    "assign:eplb": ((0, 17, 0), (0, 29, 9), "'assigned as ..., EPLB rank' (0.17-0.29)"),
    "assign:etp": ((0, 30, 0), None, "'assigned as ..., ETP rank, ...' (0.30+)"),
    "assign:ep_na": ((0, 14, 0), None, "'assigned as ..., EP rank N/A' (0.14+)"),
    # v1/metrics/loggers.py prints "Engine %03d: " from 0.8.5; V0's metrics have "Swapped:".
    "stats:engine": ((0, 8, 0), None, "stats line with 'Engine NNN:' (V1, 0.8+)"),
    "stats:v0": (None, (0, 10, 2), "stats line with 'Swapped:' (V0, <= 0.10)"),
    # v1/worker/extensible_kv_cache.py (absent from the 0.33.0 wheel): "Memory after warmup",
    # "Remapping the KV cache from", "Extended KV cache to N blocks" (:526-537, :693-705 in
    # 0.34.0); v1/executor/abstract.py:176 "Disabling the extensible KV cache" (0.34.0).
    "memory:extensible": ((0, 34, 0), None, "the extensible KV cache's lines (0.34+)"),
}


def infer_version(hints: AbstractSet[str], known: str | None = None) -> VersionRange:
    """The range a run's hints allow; `known` (a printed release) pins it."""
    vr = VLLM_LINE.any()
    printed = [h.split(":", 1)[1] for h in hints if h.startswith("version:")]
    for text in ([known] if known else []) + sorted(printed):
        v = parse_version(text)
        if v is not None:
            vr = vr.narrow(v, v, f"the log prints release {text}")
            break
    for hint in sorted(hints):
        entry = _HINTS.get(hint)
        if entry is not None:
            vr = vr.narrow(entry[0], entry[1], entry[2])
    return vr


# -- flags ------------------------------------------------------------------------------------
# `--kv-cache-dtype` choices (engine/arg_utils.py 0.6.3; CacheDType in config/cache.py 0.8.5+):
# 0.6.3 auto/fp8/fp8_e5m2/fp8_e4m3; 0.11.0 adds bfloat16; 0.22.0 adds float16 and nvfp4
# (absent in 0.14.0). `auto` is the model dtype up to 0.13; from 0.14.0 it follows a ModelOpt
# checkpoint's kv_cache_quant_algo (utils/torch_utils.py resolve_kv_cache_dtype_string).
_SPELLING = {"bf16": "bfloat16", "fp16": "float16", "fp8_e4m3": "fp8_e4m3",
             "fp8_e5m2": "fp8_e5m2", "nvfp4": "nvfp4"}
_SINCE: dict[str, Version] = {"bf16": (0, 11, 0), "fp16": (0, 22, 0), "fp8_e4m3": (0, 5, 0),
                              "fp8_e5m2": (0, 5, 0), "nvfp4": (0, 22, 0)}
AUTO_FOLLOWS_CHECKPOINT: Version = (0, 14, 0)


def kv_dtype_flag(dtype: str, vr: VersionRange, *, model_dtype: str = "bf16",
                  checkpoint_kv_fp8: bool | None = None) -> tuple[str | None, str]:
    """(flag, advice): the vLLM flag that gives a `dtype` KV cache on the releases `vr` allows
    (None when no release in the range has it), and what to know about it."""
    since = _SINCE.get(dtype)
    if since is None:
        return None, f"{dtype} is not a vLLM KV cache dtype (--kv-cache-dtype choices: auto, " \
                     "bfloat16, float16, fp8, fp8_e4m3, fp8_e5m2, nvfp4 by release)"
    flag = f"--kv-cache-dtype {_SPELLING[dtype]}"
    if dtype in ("bf16", "fp16") and dtype == model_dtype:
        auto = "--kv-cache-dtype auto"
        if vr.hi < AUTO_FOLLOWS_CHECKPOINT or checkpoint_kv_fp8 is False:
            return auto, "auto stores the KV cache in the model dtype on these releases"
        if vr.lo >= since:
            # (a checkpoint without FP8 KV returned above: auto is the model dtype there)
            why = "auto follows the checkpoint's kv_cache_quant_algo from 0.14 on, so pin it"
            return flag, why + "; it must match the model dtype"
        return flag, (f"{flag} exists from {fmt(since)}; before that {auto} gives the model "
                      "dtype")
    if vr.hi < since:
        return None, f"{dtype} KV cache needs vLLM {fmt(since)}+ (this log: {vr.label()})"
    if vr.lo < since:
        return flag, f"needs vLLM {fmt(since)}+ (this log: {vr.label()})"
    advice = "calibrated k/v scales in the checkpoint, or the scales are 1.0" \
        if dtype.startswith("fp8") else ("block-scaled FP4 (FlashInfer backend)"
                                         if dtype == "nvfp4" else "")
    return flag, advice


# --gpu-memory-utilization's default (config/cache.py): 0.9 up to 0.19.0 (:42 in 0.10.2, :50 in
# 0.14.0, :41 in 0.19.0), 0.92 from 0.20.0 (:66 in 0.20.0, :66 in 0.22.0, :215 in 0.33.0); 0.34.0
# makes it None, resolved to 1.0 with the extensible KV cache, else
# DEFAULT_GPU_MEMORY_UTILIZATION = 0.92 (:186, :216, :494-501).
UTIL_092: Version = (0, 20, 0)
UTIL_NONE: Version = (0, 34, 0)


def default_utilization(vr: VersionRange, extensible: bool) -> tuple[float, str]:
    """(vLLM's gpu_memory_utilization when the operator gave none, why): the value of the
    newest release `vr` allows, said to be assumed when the range spans a change."""
    def at(v: Version) -> float:
        if v >= UTIL_NONE:
            return 1.0 if extensible else 0.92
        return 0.92 if v >= UTIL_092 else 0.9
    value = at(vr.hi)
    why = ("vLLM 0.34's default with the extensible KV cache (unset means 1.0)"
           if vr.hi >= UTIL_NONE and extensible else f"vLLM's default on {vr.label()}")
    if at(vr.lo) != value:
        why += ("; assumed: 0.9 up to 0.19, 0.92 from 0.20"
                + (", 1.0 with 0.34's extensible KV cache" if extensible else ""))
    return value, why


def check_release(text: str) -> Version:
    """The release named by `--vllm-version` (ValueError, one line, when kvtui cannot model it):
    OLDEST .. NEWEST, the span whose wheels were read (the sizing eras, `sizing.rules_for`,
    cover every release in it); a `.postN` or local suffix is ignored."""
    raw = str(text).strip()
    core = raw.lstrip("v").split(".post")[0].split("+")[0]
    parts = core.split(".")
    v = parse_version(core) if len(parts) == 3 and all(p.isdigit() for p in parts) else None
    if v is None:
        raise ValueError(f"--vllm-version {raw!r}: not a release number such as 0.11.0")
    if not OLDEST <= v <= NEWEST:
        raise ValueError(f"--vllm-version {raw!r}: kvtui knows vLLM {fmt(OLDEST)} .. "
                         f"{fmt(NEWEST)}")
    return v
