"""vLLM's start-up lines: weights, KV dtype and scales, memory, KV pool size, capacity, layout.

Every format string is quoted from the releases named beside it (wheels of 0.6.3, 0.6.4,
0.6.5, 0.7.0, 0.8.0, 0.8.5, 0.9.2, 0.10.2, 0.11.0, 0.14.0, 0.22.0, 0.25.0, 0.28.0, 0.33.0).
vLLM's "GB" in the older weight line is GiB too (`model_memory_usage / float(2**30)`,
worker/model_runner.py in 0.6.3), hence `_gib`.
"""

from __future__ import annotations

import math
from typing import Any

import regex

from parsers.catalogue import Format, Variant
from parsers.kinds import KIND_FIELDS
from parsers.vllm.releases import E, H, W, between, since, until

_NUM = r"\d+(?:\.\d+)?"
_INT = r"\d[\d,]*"  # `{:,}` formatted from 0.8 on, plain `%d` before
_GIB_BYTES = float(1 << 30)


def _f(s: str | None) -> float | None:
    if s is None:
        return None
    x = float(s)
    return x if math.isfinite(x) else None


def _i(s: str | None) -> int | None:
    return None if s is None else int(s.replace(",", ""))


def _blank(kind: str, **values: Any) -> dict[str, Any]:
    fields: dict[str, Any] = dict.fromkeys(KIND_FIELDS[kind])
    fields.update(values)
    return fields


# -- weights ---------------------------------------------------------------------------------
# "Loading model weights took %.4f GB" (V0 worker/model_runner.py, 0.5-0.6; V1 0.7
# gpu_model_runner.py; V0 worker/xpu_model_runner.py to 0.8.0, :425), "... %.4f GiB" (the XPU
# runner, xpu_model_runner.py:414 in 0.8.5, :415 in 0.9.2); "Model loading took %.4f GiB and
# %.6f seconds" (gpu_model_runner.py, 0.10-0.1x; "GB" with the same GiB figure in 0.7-0.9: V0
# worker/model_runner.py:1146 and V1 gpu_model_runner.py:1186 in 0.8.2); "Model loading took %s
# GiB memory and %.6f seconds" (0.2x-0.33).
_WEIGHTS_OLD = regex.compile(rf"Loading model weights took ({_NUM}) Gi?B")
_WEIGHTS = regex.compile(rf"Model loading took ({_NUM}) Gi?B(?: memory)? and ({_NUM}) seconds")


def parse_weights(msg: str) -> dict[str, Any] | None:
    m = _WEIGHTS.match(msg)
    if m is not None:
        return _blank("load_weight_end", usage_gib=_f(m.group(1)), elapsed_s=_f(m.group(2)))
    m = _WEIGHTS_OLD.match(msg)
    if m is not None:
        return _blank("load_weight_end", usage_gib=_f(m.group(1)))
    return None


# -- KV dtype --------------------------------------------------------------------------------
# 0.5-0.19: "Using fp8 data type to store kv cache. It reduces ..." for any fp8* dtype (the word
# "fp8" is fixed text: config.py:637 in 0.6.3, config/cache.py:207 in 0.14.0), so it names the
# family only. 0.22+: "Using %s data type to store kv cache. ..." with the resolved dtype string
# (config/cache.py:262 in 0.22.0, :485 in 0.33.0).
_KV_DTYPE = regex.compile(r"Using ([\w.]+) data type to store kv cache\.")
_DS_MLA = "Using custom fp8 kv-cache format for DeepSeekV3.2"  # models/config.py:422, 0.11.0


def parse_kv_dtype(msg: str) -> dict[str, Any] | None:
    m = _KV_DTYPE.match(msg)
    if m is not None:
        dtype = m.group(1)
        if dtype == "fp8" and "Meanwhile, it may cause accuracy drop" in msg and \
                "Dynamic per-token-head" not in msg:
            # The 0.5-0.19 text and a 0.22+ `--kv-cache-dtype fp8` read the same; both mean
            # an E4M3 cache on CUDA (`fp8` = `fp8_e4m3`), but the older one is printed for
            # fp8_e5m2 as well, so it only says "an FP8 cache".
            return {"dtype": "fp8", "origin": "family"}
        return {"dtype": dtype, "origin": "resolved"}
    if msg.startswith(_DS_MLA):
        return {"dtype": "fp8_ds_mla", "origin": "override", "reason": "DeepSeekV3.2"}
    return None


# -- FP8 scales ------------------------------------------------------------------------------
# model_executor/layers/quantization/kv_cache.py: "Using KV cache scaling factor 1.0 for
# fp8_e4m3. This may cause accuracy issues. ..." (0.6.3:71 print_warning_once, 0.11.0:101) /
# "... If this is unintended, verify that k/v_scale scaling factors are properly set in the
# checkpoint." (0.12+, 0.33.0:166): printed after loading when k_scale == v_scale == 1.0 and the
# dtype is not e5m2. "Checkpoint does not provide a q scaling factor. Setting it to k_scale."
# (0.8.5:86, 0.33.0:149). "Using uncalibrated q_scale %s and/or prob_scale %s with fp8
# attention." (0.11.0:135, 0.33.0:204). V0: "Defaulting to KV cache scaling factors = 1.0 for
# all layers in TP rank %d as an error occurred during loading." (weight_utils.py:508, 0.6.3),
# "Loaded KV cache scaling factors from %s" (worker/model_runner.py:1125, 0.6.3).
_TP_RANK = regex.compile(r"in TP rank (\d+)")
_QPROB = regex.compile(rf"Using uncalibrated q_scale ({_NUM}) and/or prob_scale ({_NUM})")


def parse_scales(msg: str) -> tuple[str, dict[str, Any]] | None:
    if msg.startswith("Using KV cache scaling factor 1.0 for fp8"):
        return "fp8_scales_missing", {"form": "unit_scale"}
    if msg.startswith("Defaulting to KV cache scaling factors = 1.0"):
        m = _TP_RANK.search(msg)
        return "fp8_scales_missing", {"form": "load_error",
                                      "tp_rank": int(m.group(1)) if m else None}
    if msg.startswith("Loaded KV cache scaling factors from "):
        path = msg[len("Loaded KV cache scaling factors from "):].strip()
        return "fp8_scales_loaded", {"path": path or None}
    if msg.startswith("Checkpoint does not provide a q scaling factor"):
        return "fp8_qscale_missing", {"form": "q_from_k", "q_scale": None, "prob_scale": None}
    m = _QPROB.match(msg)
    if m is not None:
        return "fp8_qscale_missing", {"form": "uncalibrated", "q_scale": _f(m.group(1)),
                                      "prob_scale": _f(m.group(2))}
    return None


# -- memory ----------------------------------------------------------------------------------
# "Available KV cache memory: %.2f GiB" (v1/worker/gpu_worker.py, 0.9.2-0.13) / "%s GiB" with
# format_gib (round(x, 2): "11.5", 0.14-0.33, gpu_worker.py:773 in 0.33.0); forks append a
# note ("(process-scoped)"), so anything after the unit is allowed.
_AVAIL = regex.compile(rf"Available KV cache memory: (-?{_NUM}) GiB")


def parse_available(msg: str) -> dict[str, Any] | None:
    m = _AVAIL.match(msg)
    if m is None:
        return None
    return _blank("kv_pool", kv_gib=_f(m.group(1)), scope="all")


# With --kv-cache-memory-bytes the worker skips memory profiling and prints no "Available KV
# cache memory" line; the budget it sizes the pool by is on "Initial free memory %s GiB, reserved
# %.2fGiB memory for KV Cache as specified by kv_cache_memory_bytes config and skipped memory
# profiling. ..." (v1/worker/gpu_worker.py:241 in 0.10.2 and 0.11.0, the free memory an
# unrounded float) / "... reserved %s GiB memory for ..." (format_gib: gpu_worker.py:301 in
# 0.14.0, :495 in 0.28.0, :665 in 0.33.0). Seen in vllm-project/vllm#49878 (0.26).
_RESERVED = regex.compile(
    rf"Initial free memory {_NUM} GiB, reserved ({_NUM}) ?GiB memory for KV Cache as specified "
    r"by kv_cache_memory_bytes")


def parse_reserved(msg: str) -> dict[str, Any] | None:
    m = _RESERVED.match(msg)
    if m is None:
        return None
    return _blank("kv_pool", kv_gib=_f(m.group(1)), scope="all", configured=True)


# 0.33's multimodal frontend reservation, taken out of the KV budget after "Available KV cache
# memory" (or the kv_cache_memory_bytes line) is printed and before the pool is sized:
# `reserve_mm_ipc_gpu_memory` logs "Reserving %s GiB of GPU memory for frontend multimodal
# decoding (%s GiB raw-frame semaphore budget, %s GiB decoder+CUDA-context across %d API
# server(s) @ %s GiB/server); KV cache memory reduced to %s GiB." (format_gib, round to 0.01;
# multimodal/gpu_ipc_memory.py:255-266 in 0.33.0, returned by v1/worker/gpu_worker.py:677 and
# :816; absent from 0.14.0). The remaining figure is the budget vLLM sizes the pool by.
_MM_RESERVED = regex.compile(
    rf"Reserving ({_NUM}) GiB of GPU memory for frontend multimodal decoding \(.*?\); KV cache "
    rf"memory reduced to ({_NUM}) GiB")


def parse_mm_reserved(msg: str) -> dict[str, Any] | None:
    m = _MM_RESERVED.match(msg)
    if m is None:
        return None
    return _blank("kv_budget_reserved", reserved_gib=_f(m.group(1)), purpose="multimodal",
                  remaining_gib=_f(m.group(2)))


# V0 worker.py. 0.6.4 and 0.6.4.post1 print the pairs separated by spaces ("Memory profiling
# results: total_gpu_memory=%.2fGiB initial_memory_usage=%.2fGiB ... kv_cache_size=%.2fGiB
# gpu_memory_utilization=%.2f", worker.py:233; pasted in vllm-project/vllm#10517). The comma
# form with a duration ("Memory profiling results: duration=71.88 seconds, total_gpu_memory=
# 79.15GiB, ..., kv_cache_size=34.96GiB, gpu_memory_utilization=0.90.") is in no release wheel
# (0.6.4.post1 has the space form, 0.6.5 the three-line form): it was printed by builds between
# the two (vllm-project/vllm#10909, Dec 2024, worker.py:237; a 0.6.4.post2.dev258 build) and by
# ROCm builds of that time. The three-line form, 0.6.5-0.10.2 (worker.py:225 in 0.6.5, :271 in
# 0.8.5, :274 in 0.10.2; every line carries the head): "Memory profiling takes %.2f seconds" /
# "the current vLLM instance can use total_gpu_memory (23.58GiB) x gpu_memory_utilization
# (0.99) = 23.35GiB" / "model weights take 21.21GiB; non_torch_memory takes 0.20GiB; PyTorch
# activation peak memory takes 0.37GiB; the rest of the memory reserved for KV Cache is
# 1.57GiB."
_PROFILE_KEYS = {
    "total_gpu_memory": "total_gib", "non_torch_memory": "non_torch_gib",
    "kv_cache_size": "kv_gib", "gpu_memory_utilization": "gpu_memory_utilization",
    "peak_torch_memory": None,
}
_PROFILE_PAIR = regex.compile(rf"(\w+)=({_NUM})(?:GiB)?(?=[,. ]|$)")
_INSTANCE = regex.compile(
    rf"the current vLLM instance can use total_gpu_memory \(({_NUM})GiB\) x "
    rf"gpu_memory_utilization \(({_NUM})\) = ({_NUM})GiB")
_TAKES = regex.compile(
    rf"model weights take ({_NUM})GiB; non_torch_memory takes ({_NUM})GiB; PyTorch activation "
    rf"peak memory takes ({_NUM})GiB; the rest of the memory reserved for KV Cache is "
    rf"(-?{_NUM})GiB")
# CUDA graph memory taken out of the KV budget (gpu_worker.py): "CUDA graph memory profiling is
# enabled (default since v0.21.0). The current --gpu-memory-utilization=%.4f is equivalent to
# --gpu-memory-utilization=%.4f without CUDA graph memory profiling. To maintain the same
# effective KV cache size as before, increase --gpu-memory-utilization to %.4f." (0.22-0.33) and
# the 0.1x notice "... increase --gpu-memory-utilization from %.4f to %.4f to maintain ...".
_CG_ON = regex.compile(
    rf"CUDA graph memory profiling is enabled .*?--gpu-memory-utilization=({_NUM}) is "
    rf"equivalent to --gpu-memory-utilization=({_NUM})(?:.*?increase --gpu-memory-utilization "
    rf"to ({_NUM}))?")
# V1's XPU worker profiles in MB (v1/worker/xpu_worker.py:88/:122 in 0.9.2, :100/:134 in
# 0.10.2, :84/:119 in 0.14.0; gone by 0.33.0): "Before memory profiling run, total GPU memory:
# %.2f MB, model load takes %.2f MB, free gpu memory is %.2f MB." and "After memory profiling
# run, peak memory usage is %.2f MB,torch mem is %.2f MB, non-torch mem is %.2f MB, free gpu
# memory is %.2f MB." The total is not read as `total_gib`: the vLLM calculator takes that
# field for V0's profiler (kvtui/engines/vllm/fromrun.py `v0_engine`).
_XPU_BEFORE = regex.compile(rf"Before memory profiling run, total GPU memory: {_NUM} MB, model "
                            rf"load takes ({_NUM}) MB")
_XPU_AFTER = regex.compile(rf"After memory profiling run, peak memory usage is {_NUM} MB, ?torch "
                           rf"mem is {_NUM} MB, non-torch mem is (-?{_NUM}) MB")
_CG_SOON = regex.compile(rf"In v0\.\d+, CUDA graph memory profiling will be enabled .*?"
                         rf"increase --gpu-memory-utilization from ({_NUM}) to ({_NUM})")


# V1's start-up memory summary (v1/worker/gpu_worker.py, when the budget was profiled, i.e. no
# --kv-cache-memory-bytes), in three wordings:
#   0.10.2 :373 (logger.info): "Free memory on device (%F/%T GiB) on startup. Desired GPU memory
#     utilization is (%U, %R GiB). Actual usage is %W GiB for weight, %P GiB for peak
#     activation, %N GiB for non-torch memory, and %C GiB for CUDAGraph memory. Replace
#     gpu_memory_utilization config with `--kv-cache-memory=%d` to fit into requested memory,
#     or `--kv-cache-memory=%d` to fully utilize gpu memory. Current kv cache memory in use is
#     %d bytes."
#   0.14.0 :490 (logger.debug, so not in a default log): the same with "(%s GiB)" after each
#     suggestion and "... in use is %s GiB."
#   0.33.0 :1045 (logger.info): "Actual usage is %S GiB for consumed memory (weights +
#     non-torch), %P GiB for peak activation, and %C GiB for CUDAGraph memory." (public builds
#     also say "to fit into the configured static budget").
# `free_gib` only this line gives: it tells V1's total apart from V0's profiler's (fromrun).
_FREE = regex.compile(
    rf"Free memory on device \(({_NUM})/({_NUM}) GiB\) on startup\. Desired GPU memory "
    rf"utilization is \(({_NUM}), ({_NUM}) GiB\)\. Actual usage is (?:({_NUM}) GiB for weight, "
    rf"({_NUM}) GiB for peak activation, ({_NUM}) GiB for non-torch memory|({_NUM}) GiB for "
    rf"consumed memory \(weights \+ non-torch\), ({_NUM}) GiB for peak activation), and "
    rf"({_NUM}) GiB for CUDAGraph memory\.")
_FREE_KV = regex.compile(
    rf"`--kv-cache-memory=(-?\d+)`.*?`--kv-cache-memory=(-?\d+)`.*?Current kv cache memory "
    rf"in use is ({_NUM}) (GiB|bytes)")


def _parse_free(msg: str) -> dict[str, Any] | None:
    m = _FREE.match(msg)
    if m is None:
        return None
    fields = _blank("memory_profile", free_gib=_f(m.group(1)), total_gib=_f(m.group(2)),
                    gpu_memory_utilization=_f(m.group(3)), requested_gib=_f(m.group(4)),
                    weights_gib=_f(m.group(5)), activation_gib=_f(m.group(6) or m.group(9)),
                    non_torch_gib=_f(m.group(7)), consumed_gib=_f(m.group(8)),
                    cuda_graph_gib=_f(m.group(10)))
    k = _FREE_KV.search(msg, m.end())
    if k is not None:
        fields["kv_cache_memory_bytes_to_fit"] = int(k.group(1))
        fields["kv_cache_memory_bytes_to_fill"] = int(k.group(2))
        kv = _f(k.group(3))
        fields["kv_gib"] = kv / _GIB_BYTES if kv is not None and k.group(4) == "bytes" else kv
        fields["kv_said"] = "in_use"
    return fields


# vLLM 0.34's extensible KV cache, sized after warmup and CUDA graph capture from the memory
# then free (v1/worker/extensible_kv_cache.py in 0.34.0): "Memory after warmup: %s GiB free,
# %s GiB committed to the KV cache, %s GiB kept for transient activations (%s GiB allocated at
# peak, %s GiB of torch reservation growth); %d KV cache blocks (%s GiB) fit within the
# requested %s GiB. Torch may reserve up to %s GiB." (:693-705); "Remapping the KV cache from
# %d to %d blocks to fit the measured budget." (:526); "Extended KV cache to %d blocks (%.2f
# GiB)." (:537); the fallbacks "Disabling the extensible KV cache: %s. The KV cache will be
# sized from profiling estimates instead of measured memory." (v1/executor/abstract.py:176)
# and "Extensible KV cache off: without an IMEX channel, ..." (config/vllm.py:3256).
_WARMUP = regex.compile(
    rf"Memory after warmup: ({_NUM}) GiB free, ({_NUM}) GiB committed to the KV cache, "
    rf"({_NUM}) GiB kept for transient activations \(({_NUM}) GiB allocated at peak, "
    rf"({_NUM}) GiB of torch reservation growth\); (\d+) KV cache blocks \(({_NUM}) GiB\) fit "
    rf"within the requested ({_NUM}) GiB")
_REMAP = regex.compile(r"Remapping the KV cache from (\d+) to (\d+) blocks")
_EXTENDED = regex.compile(rf"Extended KV cache to (\d+) blocks \(({_NUM}) GiB\)")
_EXT_OFF = ("Disabling the extensible KV cache: ", "Extensible KV cache off: ")
# A utilization in (0.7, 1.0) that withholds >= 1 GiB from the extensible cache: "gpu_memory_
# utilization=%s caps this instance at %s GiB, keeping %s GiB of free device memory out of the
# KV cache. ..." (v1/worker/extensible_kv_cache.py:655-675 in 0.34.0): the utilization and the
# requested memory, as the operator set them.
_CAPS = regex.compile(rf"gpu_memory_utilization=({_NUM}) caps this instance at ({_NUM}) GiB, "
                      rf"keeping ({_NUM}) GiB of free device memory out of the KV cache")


def parse_extensible(msg: str) -> dict[str, Any] | None:
    """The extensible KV cache's post-warmup lines (vLLM 0.34+) as memory_profile facts; the
    "Extended KV cache" line is the pool (`parse_extended_pool`)."""
    m = _WARMUP.match(msg)
    if m is not None:
        return _blank("memory_profile", warmup_free_gib=_f(m.group(1)),
                      kv_committed_gib=_f(m.group(2)), transient_kept_gib=_f(m.group(3)),
                      transient_peak_gib=_f(m.group(4)), warmup_blocks=int(m.group(6)),
                      warmup_kv_gib=_f(m.group(7)), requested_gib=_f(m.group(8)),
                      extensible=True)
    m = _REMAP.match(msg)
    if m is not None:
        return _blank("memory_profile", remapped_from_blocks=int(m.group(1)),
                      remapped_to_blocks=int(m.group(2)), extensible=True)
    if msg.startswith(_EXT_OFF):
        return _blank("memory_profile", extensible=False)
    m = _CAPS.match(msg)
    if m is not None:
        return _blank("memory_profile", gpu_memory_utilization=_f(m.group(1)),
                      requested_gib=_f(m.group(2)), extensible=True)
    return None


def parse_extended_pool(msg: str) -> dict[str, Any] | None:
    """"Extended KV cache to N blocks (X GiB)." as the rank's pool: the post-warmup size that
    replaces the profiling estimate "Available KV cache memory" gave (a post-capture pool)."""
    m = _EXTENDED.match(msg)
    if m is None:
        return None
    return _blank("kv_pool", kv_gib=_f(m.group(2)), scope="all", post_capture=True)


def parse_memory_profile(msg: str) -> dict[str, Any] | None:
    if msg.startswith("Free memory on device "):
        return _parse_free(msg)
    if msg.startswith("Memory after warmup: "):
        return parse_extensible(msg)
    if msg.startswith("Memory profiling results:"):
        fields = _blank("memory_profile")
        for m in _PROFILE_PAIR.finditer(msg):
            name = _PROFILE_KEYS.get(m.group(1))
            if name is not None and fields[name] is None:
                fields[name] = _f(m.group(2))
        if fields["kv_gib"] is not None:
            fields["kv_said"] = "kv_cache_size"
        return fields
    m = _INSTANCE.match(msg)
    if m is not None:
        return _blank("memory_profile", total_gib=_f(m.group(1)),
                      gpu_memory_utilization=_f(m.group(2)), requested_gib=_f(m.group(3)))
    m = _TAKES.match(msg)
    if m is not None:
        return _blank("memory_profile", weights_gib=_f(m.group(1)),
                      non_torch_gib=_f(m.group(2)), activation_gib=_f(m.group(3)),
                      kv_gib=_f(m.group(4)), kv_said="reserved")
    m = _CG_ON.match(msg)
    if m is not None:
        fields = _blank("memory_profile", gpu_memory_utilization=_f(m.group(1)),
                        equivalent_gpu_memory_utilization=_f(m.group(2)))
        if m.group(3):
            fields["suggested_gpu_memory_utilization"] = _f(m.group(3))
        return fields
    m = _CG_SOON.match(msg)
    if m is not None:
        return _blank("memory_profile", gpu_memory_utilization=_f(m.group(1)),
                      suggested_gpu_memory_utilization=_f(m.group(2)))
    m = _GRAPH_EST.match(msg)
    if m is not None:
        return _blank("memory_profile", cuda_graph_gib=_f(m.group(1)))
    m = _XPU_BEFORE.match(msg)
    if m is not None:
        return _blank("memory_profile", weights_gib=_mib_gib(m.group(1)))
    m = _XPU_AFTER.match(msg)
    if m is not None:
        return _blank("memory_profile", non_torch_gib=_mib_gib(m.group(1)))
    return None


def _mib_gib(s: str) -> float | None:
    """A `/ 1024**2` "MB" figure in GiB."""
    x = _f(s)
    return None if x is None else x / 1024


# -- capacity --------------------------------------------------------------------------------
# V0 executor/gpu_executor.py:122 (0.6.3, :76 in 0.6.6.post1): "# GPU blocks: %d, # CPU
# blocks: %d" ("# HPU/TPU blocks" on those platforms); 0.7-0.10 names the platform's
# device_name, "# %s blocks: %d, # CPU blocks: %d" ("# cuda blocks", "# rocm blocks", "# xpu
# blocks", ...: executor/executor_base.py:108 in 0.7.0, :111 in 0.8.0, :112 in 0.8.5, :114 in
# 0.10.2); V1 0.7: "# GPU blocks: %d" (v1/core/kv_cache_utils.py); then "Maximum concurrency
# for %s tokens per request: %.2fx" (%s an int in V0, `{:,}` in V1). 0.8-0.27: "GPU KV cache
# size: %s tokens" and the concurrency line apart; 0.28-0.29 one line; 0.30+ "%s KV cache
# size: ..." (the device: GPU, XPU, ...) with " + host" under HiSparse (kv_cache_utils.py
# update_kv_cache_capacity, 0.33.0).
# The oldest form, 0.1-0.2, is the same "# GPU blocks: {num_gpu_blocks}, # CPU blocks:
# {num_cpu_blocks}" printed by the engine itself (vllm/engine/llm_engine.py:199-200 in 0.1.7,
# :205-206 in 0.2.0) under the head `%(levelname)s %(asctime)s %(filename)s:%(lineno)d]`
# (vllm/logger.py:7 in both), just before `if num_gpu_blocks <= 0: raise ValueError("No available
# memory for the cache blocks. ...")` (:202-205 / :208-211): a count of 0 or less is a server
# that did not start, so the count is read signed (the worker clamps it at 0 in those releases,
# worker/worker.py:127 in 0.1.7, :128 in 0.2.0, but a paste or a patched build may not).
_BLOCKS = regex.compile(r"# (?:GPU blocks: (-?\d+)(?:, # CPU blocks: (-?\d+))?|([A-Za-z]+) "
                        r"blocks: (-?\d+), # CPU blocks: (-?\d+))")
# the V0 line pasted without its first "# " (vllm-project/vllm#10517): the CPU tail names it
_BLOCKS_UNHASHED = regex.compile(r"(GPU) blocks: (-?\d+), # CPU blocks: (-?\d+)")
# The block size a V0 pool line's device runs at when nothing sets another (the line does not
# print it; `--block-size`, a dump's block_size and a "Forcing kv cache block size" line come
# first): `EngineArgs.block_size = 16` (engine/arg_utils.py:107 in 0.6.3, every device but
# neuron: GPU and TPU), then the platform's (0.10.1.1: platforms/cuda.py:137-138,
# rocm.py:326-327, tpu.py:106-107 set 16, xpu.py:90-91 sets 64; cpu.py:147-148 16 or, with
# IPEX, 128: no default). The cache engine sizes its blocks by it (worker/cache_engine.py:41
# and get_cache_block_size :102-112 in 0.6.3) and no V0 line prints it: the config line does
# not list it, the concurrency line only implies it.
_V0_DEFAULT_BLOCK = {"GPU": 16, "TPU": 16, "cuda": 16, "rocm": 16, "tpu": 16, "xpu": 64}
_SIZE = regex.compile(
    rf"(?:[A-Z]+(?: \+ host)? )?KV cache size: ({_INT}) tokens"
    rf"(?:, Maximum concurrency for ({_INT}) tokens per request: ({_NUM})x)?")
_CONC = regex.compile(rf"Maximum concurrency for ({_INT}) tokens per request: ({_NUM})x")
_OVERRIDE = regex.compile(r"Overriding num_gpu_blocks=(\d+) with num_gpu_blocks_override=(\d+)")
# "[Engine 000: ]vllm cache_config_info with initialization after num_gpu_blocks is: %d"
# (v1/metrics/loggers.py log_engine_initialized: info up to 0.1x, debug in 0.33.0)
_INIT_BLOCKS = regex.compile(r"(?:Engine \d+: )?vllm cache_config_info with initialization "
                             r"after num_gpu_blocks is: (\d+)")


# The EngineCore sizes each worker's cache in turn and logs each one's size and concurrency
# (get_kv_cache_config in v1/engine/core.py's loop: 0.9.0 :142, 0.10.2 :193; the lines at
# kv_cache_utils.py:637 / :864), then runs all of them at the smallest (unify_kv_cache_configs:
# 0.9.0 :151, 0.10.2 :202); 0.14.0 logs once (info_once, kv_cache_utils.py:1305). So a run's
# pool is its smallest printed size: `per_worker`.
def parse_capacity(msg: str) -> dict[str, Any] | None:
    m = _SIZE.match(msg)
    if m is not None:
        return _blank("capacity", max_total_num_tokens=_i(m.group(1)),
                      context_len=_i(m.group(2)), max_concurrency=_f(m.group(3)),
                      per_worker=True)
    m = _CONC.match(msg)
    if m is not None:
        return _blank("capacity", context_len=_i(m.group(1)), max_concurrency=_f(m.group(2)),
                      per_worker=True)
    m = _BLOCKS.match(msg)
    if m is not None:
        if m.group(1) is None:  # the device's name (0.7-0.10) or another platform's
            return _blank("capacity", gpu_blocks=_i(m.group(4)), cpu_blocks=_i(m.group(5)),
                          default_page_size=_V0_DEFAULT_BLOCK.get(m.group(3)))
        v0 = m.group(2) is not None  # V1 0.7 prints "# GPU blocks: %d" alone
        return _blank("capacity", gpu_blocks=_i(m.group(1)), cpu_blocks=_i(m.group(2)),
                      default_page_size=_V0_DEFAULT_BLOCK["GPU"] if v0 else None)
    m = _BLOCKS_UNHASHED.match(msg)
    if m is not None:
        return _blank("capacity", gpu_blocks=_i(m.group(2)), cpu_blocks=_i(m.group(3)),
                      default_page_size=_V0_DEFAULT_BLOCK["GPU"])
    m = _OVERRIDE.match(msg)
    if m is not None:
        return _blank("capacity", gpu_blocks_override=_i(m.group(2)))
    m = _INIT_BLOCKS.match(msg)
    if m is not None:
        return _blank("capacity", gpu_blocks=_i(m.group(1)))
    return None


# -- CUDA graphs -----------------------------------------------------------------------------
# "Graph capturing finished in %.0f secs, took %.2f GiB" (gpu_model_runner.py, 0.8-0.33; V0
# model_runner.py "Graph capturing finished in %.0f secs."); "CUDA graph pool memory: %s GiB
# (actual), %s GiB (estimated), ..." (0.22+). The estimate made before the KV cache is sized,
# "Estimated CUDA graph memory: %s GiB total" (gpu_model_runner.py:6100 in 0.25), is part of the
# memory profile (`parse_memory_profile`).
_GRAPH = regex.compile(rf"Graph capturing finished in ({_NUM}) secs?(?:, took ({_NUM}) GiB)?")
_GRAPH_EST = regex.compile(rf"Estimated CUDA graph memory: ({_NUM}) GiB total")
_GRAPH_POOL = regex.compile(rf"CUDA graph pool memory: ({_NUM}) GiB \(actual\)")


def parse_graph(msg: str) -> dict[str, Any] | None:
    m = _GRAPH.match(msg)
    if m is not None:
        return _blank("cuda_graph_end", elapsed_s=_f(m.group(1)), usage_gib=_f(m.group(2)),
                      graph="capture")
    m = _GRAPH_POOL.match(msg)
    if m is not None:
        return _blank("cuda_graph_end", usage_gib=_f(m.group(1)), graph="pool")
    return None


# -- KV page layout --------------------------------------------------------------------------
# "Add %d padding layers, may waste at most %.2f%% KV cache memory" (kv_cache_utils.py:982 in
# 0.11.0, kv_cache_planning.py:538 in 0.33.0); "Setting attention block size to %d tokens to
# ensure that attention page size is >= mamba page size." and "Padding mamba page size by
# %.2f%% to ensure that mamba page size and attention page size are exactly equal."
# (model_executor/models/config.py:376/397 in 0.11.0, platforms/interface.py:1109 in 0.33.0);
# "Setting kv cache block size to %d for %s backend(s)." (platforms/interface.py, 0.33.0).
_PADDING = regex.compile(rf"Add (\d+) padding layers, may waste at most ({_NUM})% KV cache")
# "Forcing kv cache block size to 64 for FlashMLA backend." (platforms/cuda.py:167 in 0.11.0);
# "Setting attention block size to %d tokens so the quantized primary KV page covers the
# higher-precision padded-spec page." (a quantized cache with --kv-cache-dtype-skip-layers:
# platforms/interface.py:752 in 0.28.0, :925 in 0.33.0; absent from 0.22.0)
_ATTN_BLOCK = regex.compile(r"(?:Setting|Forcing) (?:attention|kv cache) block size to (\d+)")
_MAMBA_PAD = regex.compile(rf"Padding mamba page size by ({_NUM})%")
# "Mamba cache mode is set to '%s' for %s by default when prefix caching is enabled"
# (models/config.py MambaModelConfig, 0.22.0:355 warning, 0.33.0:765 info)
_MAMBA_MODE = regex.compile(r"Mamba cache mode is set to '(\w+)'")


# PP's default split when the layers do not divide: get_pp_indices logs "Hidden layers were
# unevenly partitioned: [%s]. This can be manually overridden using the VLLM_PP_LAYER_PARTITION
# environment variable" (distributed/utils.py:125-129 in 0.9.2 and 0.10.2, :130-135 in 0.14.0,
# :231-236 in 0.33.0). A VLLM_PP_LAYER_PARTITION split is logged nowhere.
_PP_SPLIT = regex.compile(r"Hidden layers were unevenly partitioned: \[([\d, ]+)\]")
# "There is a latency regression when using chunked local attention with the hybrid KV cache
# manager. Disabling it, by default. ..." (config/__init__.py:3551 in 0.10.2, config/vllm.py:968
# in 0.14.0, :2247 in 0.33.0, :2168 in 0.34.0): every chunked layer is then sized as a full one.
_CHUNKED_OFF = "There is a latency regression when using chunked local attention with the hybrid"


# DeepSeek sparse MLA's FP8 rows as the 0.33 backend picks them (model_executor/layers/
# attention/mla_attention.py:524-544 in 0.33.0): "Using %s KV cache format for %s backend."
# (fp8_ds_mla, 656 bytes per token, for FLASHMLA_SPARSE) or "Using standard fp8 KV cache format.
# To use DeepSeek's fp8_ds_mla KV cache format, ..." (FLASHINFER_MLA_SPARSE: the plain 576
# bytes). 0.11-0.14's "Using custom fp8 kv-cache format for DeepSeekV3.2" is a KV dtype line
# (`parse_kv_dtype`).
_DS_MLA_ROW = regex.compile(r"Using fp8_ds_mla KV cache format for \w+ backend")
_PLAIN_FP8 = "Using standard fp8 KV cache format. To use DeepSeek's fp8_ds_mla"


def parse_layout(msg: str) -> dict[str, Any] | None:
    if msg.startswith(_CHUNKED_OFF):
        return _blank("kv_layout", hybrid_manager_off=True)
    if _DS_MLA_ROW.match(msg):
        return _blank("kv_layout", ds_mla_fp8=True)
    if msg.startswith(_PLAIN_FP8):
        return _blank("kv_layout", ds_mla_fp8=False)
    m = _PP_SPLIT.match(msg)
    if m is not None:
        return _blank("kv_layout", pp_partition=",".join(
            p.strip() for p in m.group(1).split(",") if p.strip()))
    m = _PADDING.match(msg)
    if m is not None:
        return _blank("kv_layout", padding_layers=int(m.group(1)),
                      padding_waste_pct=_f(m.group(2)))
    m = _ATTN_BLOCK.match(msg)
    if m is not None and "mamba page size" in msg:
        return _blank("kv_layout", block_size=int(m.group(1)), mamba_page_aligned=True)
    if m is not None and ("backend" in msg or "quantized primary KV page" in msg):
        return _blank("kv_layout", block_size=int(m.group(1)))
    m = _MAMBA_PAD.match(msg)
    if m is not None:
        return _blank("kv_layout", mamba_padding_pct=_f(m.group(1)), mamba_page_aligned=True)
    m = _MAMBA_MODE.match(msg)
    if m is not None:
        return _blank("kv_layout", mamba_cache_mode=m.group(1))
    return None


# -- the parallel layout ----------------------------------------------------------------------
# Each worker process logs its place in the parallel groups once they are built
# (distributed/parallel_state.py initialize_model_parallel), in one of five wordings:
#   "rank %s in world size %s is assigned as DP rank %s, PP rank %s, TP rank %s" (0.8.0 :968,
#     0.8.4 :960, 0.8.5 :1005; absent from 0.7.3);
#   "..., TP rank %s, EP rank %s" (0.9.0 :1065, 0.9.2 :1077, 0.10.1 :1135, 0.11.0 :1209,
#     0.11.2 :1395);
#   "DP rank %s, PP rank %s, PCP rank %s, TP rank %s, EP rank %s" (0.12.0 :1409, 0.16.0 :1446;
#     the EP rank "N/A" for a dense model from 0.14.0, :1435);
#   "..., TP rank %s, EP rank %s, EPLB rank %s" (0.17.0 :1716, 0.29.0 :2120);
#   "..., TP rank %s, ETP rank %s, EP rank %s, EPLB rank %s" (0.30.0 :2268, 0.33.0 :2386).
# `rank` and `world size` are the process group's: with DP the world spans every DP engine
# (init_distributed_environment "Adjusting world_size ... for DP": world_size_across_dp = TP x
# PP x DP, config/parallel.py:145 in 0.10.1). The ranks are laid out as torch.arange(world)
# reshaped to (ExternalDP, DP, PP[, PCP], TP), so DP, PP, PCP and TP are the factors of the
# world; the EP, ETP and EPLB groups are spans of those (EP = DP x [PCP x] TP) and no factor.
# A plugin's own groups (vllm-ascend's "SP rank", "SP_TP rank") are read as nothing.
_ASSIGNED = regex.compile(r"rank (\d+) in world size (\d+) is assigned as ")
_GROUP = regex.compile(r"([A-Z][A-Z_]*) rank (\d+|N/A)")
# the groups that are factors of the world, by the kind's field names
_FACTORS = {"DP": "dp_rank", "PP": "pp_rank", "PCP": "pcp_rank", "TP": "tp_rank"}
# the group lists upstream releases print, for dating (parsers/vllm/hints.py)
_WORDINGS: dict[tuple[str, ...], str] = {
    ("DP", "PP", "TP"): "dp_pp_tp",
    ("DP", "PP", "TP", "EP"): "ep",
    ("DP", "PP", "PCP", "TP", "EP"): "pcp",
    ("DP", "PP", "PCP", "TP", "EP", "EPLB"): "eplb",
    ("DP", "PP", "PCP", "TP", "ETP", "EP", "EPLB"): "etp",
}


def _groups(text: str, at: int) -> list[tuple[str, str]]:
    """The `NAME rank V` pairs from `at`, ", "-separated; whatever follows the last one (a Ray
    dedup suffix "[repeated 7x across cluster]", the next line of a collapsed paste) ends them."""
    pairs: list[tuple[str, str]] = []
    while (g := _GROUP.match(text, at)) is not None:
        pairs.append((g.group(1), g.group(2)))
        at = g.end()
        if text[at:at + 2] != ", ":
            break
        at += 2
    return pairs


def assignment_wording(text: str) -> str | None:
    """Which upstream wording a line's rank assignment has (None: a plugin's own group list)."""
    m = _ASSIGNED.search(text)
    if m is None:
        return None
    return _WORDINGS.get(tuple(name for name, _ in _groups(text, m.end())))


def parse_rank_assignment(msg: str) -> dict[str, Any] | None:
    m = _ASSIGNED.match(msg)
    if m is None:
        return None
    rank, world = int(m.group(1)), int(m.group(2))
    pairs = _groups(msg, m.end())
    if not pairs or rank >= world:
        return None
    fields = _blank("parallel_rank", global_rank=rank, world_size=world)
    for group, value in pairs:
        name = _FACTORS.get(group)
        if name is not None and value != "N/A" and fields.get(name) is None:
            fields[name] = int(value)
    return fields


# -- the release -----------------------------------------------------------------------------
# "vLLM API server version %s" (entrypoints/openai/api_server.py, 0.5-0.2x) and the start-up
# banner's "version X" (entrypoints/api_utils.py:339 in 0.25.0).
_API_VERSION = regex.compile(r"vLLM (?:API|gRPC) server version (\d+\.\d+[\w.+\-]*)")
_BANNER_VERSION = regex.compile(r"[\u2580-\u259f][\u2580-\u259f ]*\s+version (\d+\.\d+[\w.+\-]*)")


def parse_version(msg: str) -> dict[str, Any] | None:
    m = _API_VERSION.match(msg)
    if m is None:
        m = _BANNER_VERSION.search(msg, 0, 200)
    return None if m is None else {"version": m.group(1)}


# --- the catalogue: the kinds this module parses, their layouts and releases -----------------
FORMATS: tuple[Format, ...] = (
    Format("kv_pool", ("Available KV cache memory: ", "Initial free memory ",
                       "Extended KV cache to "), None, (
        # v1/worker/gpu_worker.py: "Available KV cache memory" from 0.9.2; format_gib (trailing
        # zeros dropped) from 0.14.0 (0.11.0 prints %.2f).
        Variant("avail:two_digits", since("0.9.2"), "'Available KV cache memory' (0.9.2+)",
                "v1/worker/gpu_worker.py (0.9.2, 0.11.0: %.2f GiB)",
                E + "Available KV cache memory: 69.66 GiB", ("kv_gib",)),
        Variant("avail:short", since("0.12.0"),
                "'Available KV cache memory' without '%.2f' (0.12+)",
                "v1/worker/gpu_worker.py format_gib (0.14.0)",
                E + "Available KV cache memory: 11.5 GiB (process-scoped)", ("kv_gib",)),
        Variant("kv_pool:configured", None,
                "Initial free memory X GiB, reserved Y GiB memory for KV Cache as specified by "
                "kv_cache_memory_bytes", "v1/worker/gpu_worker.py:241 (0.10.2, 0.11.0), :301 "
                "(0.14.0), :665 (0.33.0)",
                "(EngineCore pid=83) INFO 07-26 12:29:34 [gpu_worker.py:479] Initial free memory "
                "75.23 GiB, reserved 20.00 GiB memory for KV Cache as specified by "
                "kv_cache_memory_bytes config and skipped memory profiling.", ("kv_gib",)),
        Variant("kv_pool:extended", None, "Extended KV cache to N blocks (X GiB).",
                "v1/worker/extensible_kv_cache.py:537 (0.34.0)",
                "(Worker_TP0 pid=90) INFO 11-03 09:16:12 [extensible_kv_cache.py:537] Extended "
                "KV cache to 156467 blocks (42.97 GiB).", ("kv_gib",)),
    )),
    Format("kv_dtype", ("Using ",), None, (
        Variant("kv_dtype:family", None,
                "Using fp8 data type to store kv cache. (the family, its format unsaid)",
                "fixed text for any fp8* dtype, 0.5-0.19: config.py:637 (0.6.3), "
                "config/cache.py:207 (0.14.0)",
                H + "Using fp8 data type to store kv cache. It reduces the GPU memory footprint "
                "and boosts the performance. Meanwhile, it may cause accuracy drop without a "
                "proper scaling factor.", ("dtype",)),
        Variant("kv_dtype:resolved", None, "Using {kv_cache_dtype} data type to store kv cache.",
                "config/cache.py:262 (0.22.0), :485 (0.33.0)",
                H + "Using fp8_e4m3 data type to store kv cache. It reduces the GPU memory "
                "footprint and boosts the performance. Meanwhile, it may cause accuracy drop "
                "without a proper scaling factor", ("dtype",)),
        Variant("kv_dtype:override", None, "Using custom fp8 kv-cache format for DeepSeekV3.2",
                "models/config.py:422 (0.11.0)",
                H + "Using custom fp8 kv-cache format for DeepSeekV3.2", ("dtype", "reason")),
    )),
    Format("fp8_scales_missing", ("Using KV cache scaling factor 1.0 for fp8",
                                  "Defaulting to KV cache scaling factors = 1.0"), None, (
        # quantization/kv_cache.py: "This may cause accuracy issues" up to 0.11.0, "If this is
        # unintended, verify ..." in 0.14.0 and later.
        Variant("scales:may_cause", until("0.13.9"), "scale-1.0 warning, old wording (<= 0.13)",
                "model_executor/layers/quantization/kv_cache.py:71 (0.6.3), :101 (0.11.0)",
                "(Worker_TP1 pid=307) WARNING 05-01 16:27:56 [kv_cache.py:101] Using KV cache "
                "scaling factor 1.0 for fp8_e4m3. This may cause accuracy issues. Please make "
                "sure k/v_scale scaling factors are available in the fp8 checkpoint.", ("form",)),
        Variant("scales:verify", since("0.12.0"),
                "scale-1.0 warning, 'If this is unintended' (0.12+)",
                "model_executor/layers/quantization/kv_cache.py:166 (0.33.0)",
                W + "Using KV cache scaling factor 1.0 for fp8_e4m3. If this is unintended, "
                "verify that k/v_scale scaling factors are properly set in the checkpoint.",
                ("form",)),
        Variant("fp8_scales_missing:load_error", None,
                "Defaulting to KV cache scaling factors = 1.0 for all layers in TP rank N as an "
                "error occurred during loading.", "model_executor/model_loader/weight_utils.py:508 "
                "(0.6.3)",
                "WARNING 10-17 08:00:09 weight_utils.py:508] Defaulting to KV cache scaling "
                "factors = 1.0 for all layers in TP rank 3 as an error occurred during loading.",
                ("form", "tp_rank")),
    )),
    Format("fp8_scales_loaded", ("Loaded KV cache scaling factors from ",), None, (
        Variant("fp8_scales_loaded:path", None, "Loaded KV cache scaling factors from {path}",
                "worker/model_runner.py:1125 (0.6.3)",
                "INFO 10-17 08:00:09 model_runner.py:1125] Loaded KV cache scaling factors from "
                "/ckpt/kv_cache_scales.json", ("path",)),
    )),
    Format("fp8_qscale_missing", ("Checkpoint does not provide a q scaling factor",
                                  "Using uncalibrated q_scale "), None, (
        Variant("fp8_qscale_missing:q_from_k", None,
                "Checkpoint does not provide a q scaling factor. Setting it to k_scale.",
                "model_executor/layers/quantization/kv_cache.py:86 (0.8.5), :149 (0.33.0)",
                W + "Checkpoint does not provide a q scaling factor. Setting it to k_scale. "
                "This only matters for FP8 Attention backends (flash-attn or flashinfer).",
                ("form",)),
        Variant("fp8_qscale_missing:uncalibrated", None,
                "Using uncalibrated q_scale {q} and/or prob_scale {p} with fp8 attention.",
                "model_executor/layers/quantization/kv_cache.py:135 (0.11.0), :204 (0.33.0)",
                W + "Using uncalibrated q_scale 1.0 and/or prob_scale 1.0 with fp8 attention. "
                "This may cause accuracy issues. Please make sure q/prob scaling factors are "
                "available in the fp8 checkpoint.", ("form", "q_scale", "prob_scale")),
    )),
    Format("kv_layout", ("Add ", "Setting ", "Forcing ", "Padding mamba page size ",
                         "Mamba cache mode is set to ", "Hidden layers were unevenly partitioned",
                         "There is a latency regression when using chunked local attention",
                         "Using fp8_ds_mla KV cache format"), None, (
        Variant("kv_layout:padding", None,
                "Add {n} padding layers, may waste at most {pct}% KV cache memory",
                "v1/core/kv_cache_utils.py:982 (0.11.0), kv_cache_planning.py:538 (0.33.0)",
                "(EngineCore pid=7) WARNING 05-01 16:27:56 [kv_cache_utils.py:1208] Add 3 "
                "padding layers, may waste at most 6.25% KV cache memory",
                ("padding_layers", "padding_waste_pct")),
        Variant("kv_layout:block_size", None,
                "Setting attention block size to {n} tokens ... | Forcing kv cache block size to "
                "{n} for {backend} backend.", "model_executor/models/config.py:376 (0.11.0), "
                "platforms/cuda.py:167 (0.11.0), platforms/interface.py (0.33.0)",
                H + "Forcing kv cache block size to 64 for FlashMLA backend.", ("block_size",)),
        Variant("kv_layout:mamba_padding", None,
                "Padding mamba page size by {pct}% to ensure that mamba page size and attention "
                "page size are exactly equal.", "model_executor/models/config.py:397 (0.11.0), "
                "platforms/interface.py:1109 (0.33.0)",
                H + "Padding mamba page size by 0.13% to ensure that mamba page size and "
                "attention page size are exactly equal.", ("mamba_padding_pct",)),
    )),
    Format("load_weight_end", ("Loading model weights took ", "Model loading took "), None, (
        # "Loading model weights took %.4f GB" (0.6.3 model_runner.py:1071); "Model loading took
        # %.4f GiB and" (0.8.5-0.11.0 gpu_model_runner.py); "%s GiB memory and" (0.14.0+).
        Variant("weights:old", until("0.7.3"), "'Loading model weights took X GB' (<= 0.7)",
                "worker/model_runner.py:1071 (0.6.3); V1 gpu_model_runner.py (0.7)",
                "INFO 10-17 08:00:08 model_runner.py:1071] Loading model weights took 14.9888 GB",
                ("usage_gib",)),
        # V0's XPU runner (worker/xpu_model_runner.py): "%.4f GB" to 0.8.0 (:425), "%.4f GiB"
        # in 0.8.5 (:414) and 0.9.2 (:415); the runner is gone in 0.10.2.
        Variant("weights:xpu_gb", until("0.8.4"),
                "'Loading model weights took X GB' (XPU, <= 0.8.0)",
                "worker/xpu_model_runner.py:425 (0.8.0)",
                "INFO 05-01 16:27:56 [xpu_model_runner.py:425] Loading model weights took "
                "7.4800 GB", ("usage_gib",)),
        Variant("weights:xpu_gib", between("0.8.1", "0.10.1"),
                "'Loading model weights took X GiB' (XPU, 0.8.5-0.9)",
                "worker/xpu_model_runner.py:414 (0.8.5), :415 (0.9.2)",
                "INFO 05-01 16:27:56 [xpu_model_runner.py:414] Loading model weights took "
                "7.4800 GiB", ("usage_gib",)),
        # ("%.4f GB and" with the same GiB figure in 0.8.2: model_runner.py:1146,
        # gpu_model_runner.py:1186)
        Variant("weights:gib", between("0.8.0", "0.13.9"),
                "'Model loading took X GiB and' (0.8-0.13)",
                "v1/worker/gpu_model_runner.py (0.8.5-0.11.0; :1186 in 0.8.2 with 'GB')",
                E + "Model loading took 1.1201 GiB and 0.596228 seconds",
                ("usage_gib", "elapsed_s")),
        Variant("weights:memory", since("0.12.0"), "'Model loading took X GiB memory and' (0.12+)",
                "v1/worker/gpu_model_runner.py (0.14.0-0.33.0)",
                E + "Model loading took 19.75 GiB memory and 6.356814 seconds",
                ("usage_gib", "elapsed_s")),
    )),
    Format("kv_budget_reserved", ("Reserving ",), None, (
        Variant("kv_budget_reserved:multimodal", None,
                "Reserving %s GiB of GPU memory for frontend multimodal decoding (...); KV cache "
                "memory reduced to %s GiB.", "multimodal/gpu_ipc_memory.py:255-266 (0.33.0)",
                "(Worker_TP0 pid=5) INFO 05-01 10:00:31 [gpu_ipc_memory.py:255] Reserving 2.05 "
                "GiB of GPU memory for frontend multimodal decoding (2 GiB raw-frame semaphore "
                "budget, 0.05 GiB decoder+CUDA-context across 1 API server(s) @ 0.05 "
                "GiB/server); KV cache memory reduced to 67.61 GiB.",
                ("reserved_gib", "remaining_gib")),
    )),
    Format("capacity", ("GPU KV cache size: ", "# GPU blocks: ", "GPU blocks: ",
                        "Maximum concurrency for ", "Overriding num_gpu_blocks",
                        "vllm cache_config_info", "Engine "), None, (
        Variant("capacity:cpu_blocks", until("0.10.2"),
                "'# GPU blocks: N, # CPU blocks: M' (V0, <= 0.10)",
                "executor/gpu_executor.py:122 (0.6.3), :76 (0.6.6.post1); "
                "executor/executor_base.py:108 "
                "(0.7.0) ... :114 (0.10.2)",
                "INFO 08-19 07:51:08 distributed_gpu_executor.py:56] # GPU blocks: 22982, # CPU "
                "blocks: 6241", ("gpu_blocks", "cpu_blocks")),
        # executor/gpu_executor.py:76 in 0.6.6.post1 "# GPU blocks: %d, # CPU blocks: %d";
        # executor/executor_base.py:108 in 0.7.0 ... :114 in 0.10.2 "# %s blocks: ..." with the
        # platform's device_name ("cuda", "rocm", "xpu", ...).
        Variant("capacity:gpu_word", until("0.6.6"),
                "'# GPU blocks: N, # CPU blocks: M' (V0, <= 0.6)",
                "executor/gpu_executor.py:76 (0.6.6.post1)",
                "INFO 12-01 10:00:00 hpu_executor.py:76] # HPU blocks: 9000, # CPU blocks: 100",
                ("gpu_blocks", "cpu_blocks")),
        Variant("capacity:device_name", between("0.7.0", "0.10.2"),
                "'# cuda blocks: N, # CPU blocks: M' (V0, 0.7-0.10)",
                "executor/executor_base.py:108 (0.7.0) ... :114 (0.10.2)",
                "INFO 03-14 18:57:59 [executor_base.py:111] # cuda blocks: 4739, # CPU blocks: "
                "859", ("gpu_blocks", "cpu_blocks")),
        Variant("capacity:gpu_blocks", between("0.7.0", "0.7.3"),
                "'# GPU blocks: N' alone (V1 0.7)",
                "v1/core/kv_cache_utils.py (V1 0.7)",
                "INFO 01-30 05:40:02 kv_cache_utils.py:395] # GPU blocks: 2207", ("gpu_blocks",)),
        # v1/core/kv_cache_utils.py: "GPU KV cache size: %s tokens" from 0.8.0, one line with
        # the concurrency from 0.28.0 (0.25.0:2146 still two lines).
        Variant("capacity:tokens", between("0.8.0", "0.27.9"),
                "'GPU KV cache size' on its own line (0.8-0.27)",
                "v1/core/kv_cache_utils.py (0.8.0; 0.25.0 :2146)",
                H + "GPU KV cache size: 652,144 tokens", ("max_total_num_tokens",)),
        Variant("capacity:merged", since("0.28.0"),
                "KV cache size and concurrency on one line (0.28+)",
                "v1/core/kv_cache_utils.py (0.28.0)",
                H + "GPU KV cache size: 1,823,372 tokens, Maximum concurrency for 1,048,576 "
                "tokens per request: 1.74x", ("max_total_num_tokens", "max_concurrency")),
        Variant("capacity:concurrency", None,
                "Maximum concurrency for {n} tokens per request: {x}x",
                "V0 executor/gpu_executor.py (0.6.3), v1/core/kv_cache_utils.py (apart from the "
                "size 0.8-0.27)",
                H + "Maximum concurrency for 4,096 tokens per request: 159.21x",
                ("context_len", "max_concurrency")),
        Variant("capacity:override", None,
                "Overriding num_gpu_blocks={n} with num_gpu_blocks_override={m}",
                "the wording parse_capacity reads (its release and file not recorded)",
                H + "Overriding num_gpu_blocks=0 with "
                "num_gpu_blocks_override=512", ("gpu_blocks_override",)),
    ), infixes=(" KV cache size: ", " blocks: ")),
    Format("memory_profile", (
        "Memory profiling results:", "the current vLLM instance can use ", "model weights take ",
        "In v0.", "CUDA graph memory profiling is enabled", "Estimated CUDA graph memory: ",
        "Free memory on device ", "Before memory profiling run", "After memory profiling run",
        "Memory after warmup: ", "Remapping the KV cache from ", "Extensible KV cache off: ",
        "Disabling the extensible KV cache: ", "gpu_memory_utilization="), None, (
        # gpu_worker.py: the "In v0.19 ... will be enabled by default" notice (absent in 0.14.0),
        # "default since v0.21.0" (0.22.0+).
        Variant("memory:cg_soon", between("0.15.0", "0.18.9"),
                "'In v0.19, CUDA graph memory profiling ...'",
                "v1/worker/gpu_worker.py (0.15-0.18; absent in 0.14.0)",
                H + "In v0.19, CUDA graph memory profiling will be enabled by default "
                "(VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1), which more accurately accounts for "
                "CUDA graph memory during KV cache allocation. To try it now, set "
                "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 and increase "
                "--gpu-memory-utilization from 0.9000 to 0.9143 to maintain the same effective "
                "KV cache size.", ("gpu_memory_utilization", "suggested_gpu_memory_utilization")),
        Variant("memory:cg_default", since("0.21.0"),
                "'CUDA graph memory profiling ... default since v0.21.0'",
                "v1/worker/gpu_worker.py (0.22.0-0.33.0)",
                "(Worker_TP0 pid=104) INFO 05-01 16:27:56 [gpu_worker.py:436] CUDA graph memory "
                "profiling is enabled (default since v0.21.0). The current "
                "--gpu-memory-utilization=0.9200 is equivalent to --gpu-memory-utilization=0.9143 "
                "without CUDA graph memory profiling. To maintain the same effective KV cache "
                "size as before, increase --gpu-memory-utilization to 0.9257.",
                ("gpu_memory_utilization", "equivalent_gpu_memory_utilization")),
        # v1/worker/extensible_kv_cache.py (absent from the 0.33.0 wheel): "Memory after
        # warmup", "Remapping the KV cache from", "Extended KV cache to N blocks" (:526-537,
        # :693-705 in 0.34.0); v1/executor/abstract.py:176 "Disabling the extensible KV cache"
        # (0.34.0).
        Variant("memory:extensible", since("0.34.0"), "the extensible KV cache's lines (0.34+)",
                "v1/worker/extensible_kv_cache.py:526-537, :693-705 (0.34.0)",
                "(Worker_TP0 pid=90) INFO 11-03 09:16:12 [extensible_kv_cache.py:694] Memory "
                "after warmup: 8.65 GiB free, 38.0 GiB committed to the KV cache, 2.1 GiB kept "
                "for transient activations (2.1 GiB allocated at peak, 1.4 GiB of torch "
                "reservation growth); 156467 KV cache blocks (42.97 GiB) fit within the "
                "requested 79.19 GiB. Torch may reserve up to 34.12 GiB.", ()),
        Variant("memory_profile:v0_results", None,
                "Memory profiling results: duration=.., total_gpu_memory=..GiB, ...",
                "worker/worker.py:237 in builds between 0.6.4.post1 and 0.6.5 "
                "(vllm-project/vllm#10909)",
                "INFO 12-13 02:10:28 worker.py:237] Memory profiling results: duration=71.88 "
                "seconds, total_gpu_memory=79.15GiB, initial_memory_usage=19.68GiB, "
                "peak_torch_memory=34.32GiB, memory_usage_post_profile=35.32GiB, "
                "non_torch_memory=1.96GiB, kv_cache_size=33.04GiB, gpu_memory_utilization=0.90.",
                ("total_gib", "kv_gib", "gpu_memory_utilization")),
        Variant("memory_profile:instance", None,
                "the current vLLM instance can use total_gpu_memory (..GiB) x "
                "gpu_memory_utilization (..) = ..GiB",
                "worker/worker.py:225 (0.6.5), :271 (0.8.5), :274 (0.10.2)",
                "INFO 04-12 08:21:19 [worker.py:267] the current vLLM instance can use "
                "total_gpu_memory (23.58GiB) x gpu_memory_utilization (0.99) = 23.35GiB",
                ("total_gib", "gpu_memory_utilization")),
    )),
    Format("cuda_graph_end", ("Graph capturing finished", "CUDA graph pool memory: "), None, (
        Variant("cuda_graph_end:finished", None,
                "Graph capturing finished in {secs} secs, took {gib} GiB",
                "gpu_model_runner.py (0.8-0.33)",
                E + "Graph capturing finished in 20 secs, took 0.65 GiB",
                ("elapsed_s", "usage_gib")),
        Variant("cuda_graph_end:pool", None,
                "CUDA graph pool memory: X GiB (actual), Y GiB (estimated), difference: ...",
                "the 0.22+ wording parse_graph reads (its file not recorded)",
                E + "CUDA graph pool memory: 1.58 GiB (actual), 1.62 GiB (estimated), "
                "difference: -0.04 GiB (-2.5%).", ("usage_gib",)),
    )),
    Format("engine_version", ("vLLM API server version ", "vLLM gRPC server version "), None, (
        Variant("engine_version:api_server", None, "vLLM API server version %s",
                "entrypoints/openai/api_server.py (0.5-0.2x)",
                "INFO 10-17 08:00:00 api_server.py:528] vLLM API server version 0.6.3",
                ("version",)),
        Variant("engine_version:banner", None, "the start-up banner's 'version X'",
                "entrypoints/api_utils.py:339 (0.25.0)",
                H + " \u2584\u2584 \u2584\u2588 \u2588     \u2588  version 0.25.0", ("version",)),
    ), infixes=("version",)),
    Format("parallel_rank", ("rank ",), None, (
        # distributed/parallel_state.py "rank %s in world size %s is assigned as ..." (the
        # group lists quoted above): none in 0.7.3; "DP, PP, TP" 0.8.0-0.8.5; "+ EP"
        # 0.9.0-0.11.2; "+ PCP" 0.12.0-0.16.0; "+ EPLB" 0.17.0-0.29.0; "+ ETP" 0.30.0-0.33.0;
        # the EP rank "N/A" (a dense model) from 0.14.0 (0.13.0 has none).
        Variant("assign:dp_pp_tp", between("0.8.0", "0.8.9"),
                "'assigned as DP rank, PP rank, TP rank' (0.8)",
                "distributed/parallel_state.py (0.8.0-0.8.5)",
                "(VllmWorker rank=5 pid=71) INFO 05-01 16:27:56 [parallel_state.py:1005] rank 5 "
                "in world size 8 is assigned as DP rank 0, PP rank 1, TP rank 1",
                ("global_rank", "world_size", "tp_rank")),
        Variant("assign:ep", between("0.9.0", "0.11.9"),
                "'assigned as ..., TP rank, EP rank' (0.9-0.11)",
                "distributed/parallel_state.py (0.9.0-0.11.2)",
                H + "rank 1 in world size 2 is assigned as DP rank 1, PP rank 0, TP rank 0, EP "
                "rank 1", ("global_rank", "world_size", "dp_rank")),
        Variant("assign:pcp", between("0.12.0", "0.16.9"),
                "'assigned as ..., PCP rank, ...' (0.12-0.16)",
                "distributed/parallel_state.py (0.12.0-0.16.0)",
                H + "rank 0 in world size 2 is assigned as DP rank 0, PP rank 0, PCP rank 0, TP "
                "rank 0, EP rank 0", ("global_rank", "world_size", "pcp_rank")),
        Variant("assign:eplb", between("0.17.0", "0.29.9"),
                "'assigned as ..., EPLB rank' (0.17-0.29)",
                "distributed/parallel_state.py (0.17.0-0.29.0)",
                "(Worker pid=9) INFO 05-01 16:27:56 [parallel_state.py:1923] rank 3 in world "
                "size 4 is assigned as DP rank 0, PP rank 0, PCP rank 0, TP rank 3, EP rank 0, "
                "EPLB rank 0", ("global_rank", "world_size", "tp_rank")),
        Variant("assign:etp", since("0.30.0"), "'assigned as ..., ETP rank, ...' (0.30+)",
                "distributed/parallel_state.py (0.30.0-0.33.0)",
                H + "rank 0 in world size 1 is assigned as DP rank 0, PP rank 0, PCP rank 0, "
                "TP rank 0, ETP rank 0, EP rank 0, EPLB rank N/A",
                ("global_rank", "world_size")),
        Variant("assign:ep_na", since("0.14.0"), "'assigned as ..., EP rank N/A' (0.14+)",
                "distributed/parallel_state.py (0.14.0; 0.13.0 has none)",
                "(Worker pid=9) INFO 05-01 16:27:56 [parallel_state.py:1923] rank 3 in world "
                "size 4 is assigned as DP rank 0, PP rank 0, PCP rank 0, TP rank 3, EP rank N/A, "
                "EPLB rank N/A", ("global_rank", "world_size")),
    )),
)
