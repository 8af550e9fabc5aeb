"""Which SGLang releases a log could come from, and which flag selects a KV dtype there.

Why infer a range instead of asking: logs rarely print the version, but almost every line format
changed at some release (sglang-log-lines.md sections 1-7). Each format feature the state records
in `Run.hints` narrows the range; advice that depends on the version (`--kv-cache-dtype bf16` only
exists from 0.5.4) is then given for the whole range the log allows, not for a guess.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Version = tuple[int, int, int]

OLDEST: Version = (0, 2, 15)
NEWEST: Version = (0, 5, 23)


def parse_version(text: str) -> Version:
    parts = [int(p) for p in text.strip().lstrip("v").split(".")[:3]]
    while len(parts) < 3:
        parts.append(0)
    return (parts[0], parts[1], parts[2])


def fmt(v: Version) -> str:
    return ".".join(str(p) for p in v)


@dataclass(frozen=True, slots=True)
class VersionRange:
    """Inclusive range of SGLang releases, plus the clues that set each bound."""

    lo: Version = OLDEST
    hi: Version = NEWEST
    reasons: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return self.lo > self.hi

    def contains(self, v: Version) -> bool:
        return self.lo <= v <= self.hi

    def narrow(self, lo: Version | None, hi: Version | None, reason: str) -> VersionRange:
        new_lo = max(self.lo, lo) if lo else self.lo
        new_hi = min(self.hi, hi) if hi else self.hi
        if (new_lo, new_hi) == (self.lo, self.hi):
            return self
        if new_lo > new_hi:
            # Contradicting clues (a patched build, a copy-pasted mix): keep the earlier range.
            return VersionRange(self.lo, self.hi, (*self.reasons, f"ignored: {reason}"))
        return VersionRange(new_lo, new_hi, (*self.reasons, reason))

    def label(self) -> str:
        if self.lo == OLDEST and self.hi == NEWEST:
            return "any (no dating clue)"
        if self.lo == self.hi:
            return fmt(self.lo)
        if self.hi == NEWEST:
            return f">= {fmt(self.lo)}"
        if self.lo == OLDEST:
            return f"<= {fmt(self.hi)}"
        return f"{fmt(self.lo)} - {fmt(self.hi)}"

    def to_dict(self) -> dict[str, Any]:
        return {"min": fmt(self.lo), "max": fmt(self.hi), "label": self.label(),
                "reasons": list(self.reasons)}


# hint -> (lowest release that prints it, highest release that prints it, why)
_HINTS: dict[str, tuple[Version | None, Version | None, str]] = {
    "server_args:dict": ((0, 5, 19), None, "server_args printed as a dict (0.5.19+)"),
    "server_args:repr": (None, (0, 5, 18), "server_args printed as ServerArgs(...) (<= 0.5.18)"),
    "server_args:attn_dp_size": ((0, 5, 22), None, "server_args has attn_dp_size (0.5.22+)"),
    "server_args:page_size": ((0, 4, 4), None, "server_args has page_size (0.4.4+)"),
    "kv_dtype:resolved": ((0, 5, 3), (0, 5, 12), "'Using KV cache dtype' line (0.5.3-0.5.12)"),
    "kv_dtype:override": ((0, 5, 3), None, "'Setting KV cache dtype to ...' override (0.5.3+)"),
    "kv_pool:dtype": ((0, 5, 13), None, "KV pool line prints dtype (0.5.13+)"),
    "kv_pool:label": ((0, 5, 17), None, "labelled 'Full/SWA KV Cache' pool line (0.5.17+)"),
    "kv_pool:no_tokens": ((0, 4, 2), (0, 4, 3), "KV pool line without #tokens (0.4.2-0.4.3)"),
    "load_weight_end:elapsed": ((0, 5, 9), None, "'Load weight end. elapsed=' (0.5.9+)"),
    "load_weight_end:no_dtype": ((0, 5, 10), None, "'Load weight end' without dtype (0.5.10+)"),
    "load_weight_end:no_usage": (None, (0, 4, 3), "'Load weight end' without mem usage (<= 0.4.3)"),
    "capacity:avail": ((0, 4, 7), None, "capacity line has available_gpu_mem (0.4.7+)"),
    "capacity:no_avail": (None, (0, 4, 6), "capacity line without available_gpu_mem (<= 0.4.6)"),
    "capacity:no_chunked": (None, (0, 4, 1),
                            "capacity line without chunked_prefill_size (<= 0.4.1)"),
    "decode:comma": ((0, 5, 4), None, "'Decode batch,' comma format (0.5.4+)"),
    "decode:period": (None, (0, 5, 3), "'Decode batch.' period format (<= 0.5.3)"),
    "decode:cuda_graph": ((0, 4, 7), None, "decode line has 'cuda graph' (0.4.7+)"),
    "prefill:comma": ((0, 5, 4), None, "'Prefill batch,' comma format (0.5.4+)"),
    "prefill:period": (None, (0, 5, 3), "'Prefill batch.' period format (<= 0.5.3)"),
    "retraction:gained": ((0, 5, 7), None, "retraction line has #new_tokens_gained (0.5.7+)"),
    "retraction:old": (None, (0, 4, 6), "'Decode out of memory happened' retraction (<= 0.4.6)"),
    "retraction:pool_full": ((0, 4, 7), (0, 5, 6),
                             "'KV cache pool is full' without gained (0.4.7-0.5.6)"),
    "ts:time_only": (None, (0, 3, 2), "time-only timestamps (<= 0.3.2)"),
    "ts:date": ((0, 3, 4), None, "dated timestamps (0.3.4+)"),
    "ts:ms": ((0, 5, 6), None, "millisecond timestamps (0.5.6+)"),
    "mamba_pool:slots": ((0, 5, 4), None, "Mamba pool line prints max_mamba_cache_size (0.5.4+)"),
    "mamba_pool:no_slots": ((0, 5, 2), None, "Mamba pool line (0.5.2+)"),
}


# Every release the reference was read from, oldest first.
RELEASES: tuple[Version, ...] = (
    (0, 2, 15), *((0, 3, p) for p in range(7)), *((0, 4, p) for p in range(11)),
    *((0, 5, p) for p in range(24)),
)

# Clues from a feature that is *missing* from a line are weaker than clues from a feature that is
# present: pasted and excerpted logs often cut a line short.
_WEAK = ("no_", "period")


def _clues(run: Any) -> list[tuple[Version | None, Version | None, str, float]]:
    out: list[tuple[Version | None, Version | None, str, float]] = []
    for hint in sorted(set(getattr(run, "hints", ()) or ())):
        rule = _HINTS.get(hint)
        if rule:
            weak = any(w in hint.split(":", 1)[-1] for w in _WEAK)
            out.append((rule[0], rule[1], rule[2], 0.5 if weak else 1.0))
    pools = getattr(run, "pools", None)
    for p in (pools.values() if isinstance(pools, dict) else ()):
        if p.kind == "mla":
            out.append(((0, 4, 6), None, "MLA 'KV size' pool line (0.4.6+)", 1.0))
        if p.kind != "mamba" and p.tokens is not None:
            out.append(((0, 4, 4), None, "pool line prints #tokens (0.4.4+)", 1.0))
            if p.dtype_raw is None:
                out.append((None, (0, 5, 12), "pool line without dtype (<= 0.5.12)", 0.5))
        break
    for w in (getattr(run, "weights", None) or {}).values():
        if w.get("dtype") and w.get("elapsed_s") is None:
            out.append((None, (0, 5, 8), "'Load weight end' with dtype, no elapsed (<= 0.5.8)",
                        0.5))
        elif w.get("dtype"):
            out.append((None, (0, 5, 9), "'Load weight end' with dtype= (<= 0.5.9)", 1.0))
        break
    return out


def infer_version(run: Any, known: str | None = None) -> VersionRange:
    """The SGLang release range consistent with a run's line formats.

    Reads `run.hints` (format features recorded by `kvtui.core.state`), the pool lines and the
    weight lines. Each release is scored by the weight of the clues it contradicts and the
    releases with the lowest score are kept, so one odd line (a benchmark script's bare
    `max_total_num_tokens=` print, a line cut by the paste) cannot empty or skew the range; the
    clues that lost are listed as ignored. `known` (e.g. from the checkpoint host's installed
    sglang) pins the range.
    """
    if known:
        v = parse_version(known)
        return VersionRange(v, v, (f"sglang {known} reported by the host",))
    clues = _clues(run)
    if not clues:
        return VersionRange()

    def violated(v: Version) -> float:
        return sum(w for lo, hi, _, w in clues if (lo and v < lo) or (hi and v > hi))

    scores = {v: violated(v) for v in RELEASES}
    best = min(scores.values())
    keep = [v for v in RELEASES if scores[v] == best]
    lo, hi = keep[0], keep[-1]
    reasons = []
    for c_lo, c_hi, why, _ in clues:
        ok = not ((c_lo and lo < c_lo) or (c_hi and hi > c_hi))
        fits_some = any(not ((c_lo and v < c_lo) or (c_hi and v > c_hi)) for v in keep)
        reasons.append(why if ok or fits_some else f"ignored (contradicts the rest): {why}")
    return VersionRange(lo, hi, tuple(reasons))


# --kv-cache-dtype values each release accepts, read from the argparse choices of each wheel:
# server_args.py "--kv-cache-dtype" choices=["auto", "fp8_e5m2", "fp8_e4m3"] in 0.4.6-0.5.3
# (0.2.15-0.4.1 had no fp8_e4m3, sglang-log-lines.md 2.2); + "bf16", "bfloat16" in 0.5.4;
# + "fp4_e2m1" in 0.5.5-0.5.15; 0.5.16 adds "mxfp8", "nvfp4", "fp4_mx_block16"
# (server_args.py:616-628) and keeps fp4_e2m1 in the choices until 0.5.20 only to refuse it at
# start-up ("--kv-cache-dtype=fp4_e2m1 is deprecated", mem_cache/kv_cache_dtype.py:57-61), so
# it counts as rejected from 0.5.16; 0.5.21 drops it (arg_groups/fields/model.py:201-211).
_CHOICES: tuple[tuple[Version, Version, frozenset[str]], ...] = (
    ((0, 2, 15), (0, 4, 1), frozenset({"auto", "fp8_e5m2"})),
    ((0, 4, 2), (0, 5, 3), frozenset({"auto", "fp8_e5m2", "fp8_e4m3"})),
    ((0, 5, 4), (0, 5, 4), frozenset({"auto", "fp8_e5m2", "fp8_e4m3", "bf16", "bfloat16"})),
    ((0, 5, 5), (0, 5, 15), frozenset({"auto", "fp8_e5m2", "fp8_e4m3", "bf16", "bfloat16",
                                       "fp4_e2m1"})),
    ((0, 5, 16), (0, 5, 23), frozenset({"auto", "fp8_e5m2", "fp8_e4m3", "mxfp8", "bf16",
                                        "bfloat16", "nvfp4", "fp4_mx_block16"})),
)


def check_release(text: str) -> Version:
    """The release named by `--sglang-version` (ValueError, one line, when kvtui cannot model it).

    Only releases whose sizing code was read are accepted: 0.2.15 .. the newest in RELEASES,
    a `.postN` suffix ignored (post releases do not change the sizing code)."""
    raw = str(text).strip()
    core = raw.lstrip("v").split(".post")[0].split("+")[0]
    parts = core.split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise ValueError(f"--sglang-version {raw!r}: not a release number such as 0.5.23")
    v = parse_version(core)
    if v not in RELEASES:
        raise ValueError(f"--sglang-version {raw!r}: kvtui knows SGLang {fmt(OLDEST)} .. "
                         f"{fmt(NEWEST)}")
    return v


_FLAG_VALUE = {"bf16": "bf16", "fp16": "auto", "fp8_e4m3": "fp8_e4m3", "fp8_e5m2": "fp8_e5m2",
               "mxfp8": "mxfp8", "nvfp4": "nvfp4", "fp4_mx_block16": "fp4_mx_block16",
               "fp4_e2m1": "fp4_e2m1"}


def first_version_with(value: str) -> Version | None:
    for lo, _hi, choices in _CHOICES:
        if value in choices:
            return lo
    return None


def _support(value: str, vr: VersionRange) -> tuple[bool, bool]:
    """(supported somewhere in the range, supported everywhere in the range)."""
    some = every = False
    every = True
    for lo, hi, choices in _CHOICES:
        if hi < vr.lo or lo > vr.hi:
            continue
        if value in choices:
            some = True
        else:
            every = False
    return some, every and some


def kv_dtype_flag(target_dtype: str, version_range: VersionRange | None = None,
                  *, checkpoint_kv_fp8: bool | None = None,
                  model_dtype: str = "bf16") -> tuple[str | None, str]:
    """(flag or None, advice) that selects `target_dtype` for the KV cache on these releases.

    `target_dtype` is a canonical name (kvtui.core.dtypes). `checkpoint_kv_fp8` says whether the
    checkpoint declares kv_cache_quant_algo FP8 (None = unknown): from 0.5.3, `auto` then means
    FP8, so BF16 needs the explicit `bf16` choice that only exists from 0.5.4. The flag is None
    when no release in the range can do it; the advice then says what to do instead.
    """
    vr = version_range or VersionRange()
    where = f"SGLang {vr.label()}" if vr.label() != "any (no dating clue)" else "SGLang"
    if target_dtype == "fp16" and model_dtype != "fp16":
        return None, "SGLang has no fp16 KV choice; `auto` gives the model dtype."
    if target_dtype in ("bf16", "fp16") and target_dtype == model_dtype:
        some, every = _support("bf16", vr)
        auto_safe_hi = (0, 5, 2)
        if checkpoint_kv_fp8 is False or vr.hi <= auto_safe_hi:
            note = ("`auto` is the model dtype on these releases"
                    if vr.hi <= auto_safe_hi else
                    "`auto` is the model dtype because the checkpoint declares no FP8 KV")
            return "--kv-cache-dtype auto", f"{note} ({where})."
        if every:
            return "--kv-cache-dtype bf16", f"explicit bf16 is accepted on {where} (0.5.4+)."
        older = ("On 0.5.3 a checkpoint whose hf_quant_config.json / quantization_config "
                 "says kv_cache_quant_algo FP8 turns `auto` into FP8 and there is no bf16 choice: "
                 "upgrade to >= 0.5.4 and pass --kv-cache-dtype bf16, or serve a local copy of "
                 "the checkpoint with kv_cache_quant_algo removed. Before 0.5.3 `auto` is always "
                 "the model dtype.")
        if some:
            return "--kv-cache-dtype bf16", (f"accepted from SGLang 0.5.4; {_range_caveat(vr)}. "
                                             f"{older}")
        if checkpoint_kv_fp8:
            return None, f"{where} has no bf16 choice. {older}"
        return "--kv-cache-dtype auto", (f"{where} has no bf16 choice; `auto` gives the model "
                                         f"dtype unless the checkpoint declares FP8 KV. {older}")
    value = _FLAG_VALUE.get(target_dtype, target_dtype)
    if target_dtype in ("nvfp4", "fp4_mx_block16", "fp4_e2m1"):
        # The FP4 spelling changed at 0.5.16; pick the one the range accepts.
        if vr.hi < (0, 5, 16):
            value = "fp4_e2m1"
        elif vr.lo >= (0, 5, 16) and value == "fp4_e2m1":
            value = "fp4_mx_block16"
    some, every = _support(value, vr)
    first = first_version_with(value)
    extra = ""
    if value in ("nvfp4", "fp4_mx_block16", "fp4_e2m1"):
        extra = " Needs CUDA 12.8+ and PyTorch 2.8+; accuracy drops at long context (aime25)."
    elif value == "mxfp8":
        extra = " Supported by the FA4 attention backend."
    if every:
        return f"--kv-cache-dtype {value}", f"accepted on {where}.{extra}"
    if first is None:
        return None, f"`{target_dtype}` is not a --kv-cache-dtype choice in any release."
    if some:
        return f"--kv-cache-dtype {value}", (f"accepted from SGLang {fmt(first)}; "
                                             f"{_range_caveat(vr)}.{extra}")
    return None, (f"not available on {where}: `{value}` is accepted from {fmt(first)}; upgrade "
                  f"SGLang to use it.{extra}")


def _range_caveat(vr: VersionRange) -> str:
    if vr.lo == OLDEST and vr.hi == NEWEST:
        return ("the log does not date the SGLang version, so check it "
                "(python -c 'import sglang; print(sglang.__version__)')")
    return f"the log implies {vr.label()}, which includes older releases, so check the version"
