"""Which vLLM releases a log could come from, and which flag selects a KV dtype there.

Logs print the release more often than SGLang's do (the engine config line carries it, the API
server prints it), and when they do not, format features narrow it: each hint the grammar
records (`parsers.vllm.hints`) maps to the releases that print it, read from the wheels named
beside each entry (a line format's entry is its variant in `parsers.vllm.catalog`, beside the
parser that reads it). Boundaries between two downloaded releases are given conservatively (the
range stays wide where the change happened between them). The range itself is the
engine-neutral `kvtui.core.releases.VersionRange` over `VLLM_LINE`.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet

from kvtui.core.releases import ReleaseLine, Version, parse_version

# the engine-neutral range and its format, which this engine's modules import from here
from kvtui.core.releases import VersionRange as VersionRange
from kvtui.core.releases import fmt as fmt
from parsers.vllm import catalog

OLDEST: Version = (0, 5, 0)
NEWEST: Version = (0, 34, 0)
VLLM_LINE = ReleaseLine("vllm", OLDEST, NEWEST, json_names_engine=True)


# hint -> (lowest release that prints it, highest release that prints it, why): the heads' and
# process names' forms here, the line formats' from the catalogue.
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
    # the line formats' ranges, declared once next to each format's text in vLLM's line
    # catalogue (`parsers.vllm.catalog`; a variant's id is the hint its line shows)
    **catalog.dating(),
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
