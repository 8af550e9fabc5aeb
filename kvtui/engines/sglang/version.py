"""Which SGLang releases a log could come from, and which flag selects a KV dtype there.

Why infer a range instead of asking: logs rarely print the version, but almost every line format
changed at some release (sglang-log-lines.md sections 1-7). Each format feature the state records
in `Run.hints` narrows the range; advice that depends on the version (`--kv-cache-dtype bf16` only
exists from 0.5.4) is then given for the whole range the log allows, not for a guess. The range
itself is the engine-neutral `kvtui.core.releases.VersionRange` over `SGLANG_LINE`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtui.core.releases import ReleaseLine, Version, parse_version

# the engine-neutral range and its format, which this engine's modules import from here
from kvtui.core.releases import VersionRange as VersionRange
from kvtui.core.releases import fmt as fmt
from parsers.sglang import catalog

if TYPE_CHECKING:
    from kvtui.core.engine import Run

OLDEST: Version = (0, 2, 15)
NEWEST: Version = (0, 5, 23)
SGLANG_LINE = ReleaseLine("sglang", OLDEST, NEWEST)


# hint -> (spans of releases that print it, why, weak). The line formats' ranges are declared
# once, next to each format's text, in SGLang's line catalogue (`parsers.sglang.catalog`; an
# event's hint is the id of the variant its line showed); the timestamp forms are the prefix's.
Span = tuple[Version, Version | None]
_HINTS: dict[str, tuple[tuple[Span, ...], str, bool]] = {
    **catalog.dating(),
    "ts:time_only": ((((0, 2, 15), (0, 3, 2)),), "time-only timestamps (<= 0.3.2)", False),
    "ts:date": ((((0, 3, 4), None),), "dated timestamps (0.3.4+)", False),
    "ts:ms": ((((0, 5, 6), None),), "millisecond timestamps (0.5.6+)", False),
}


# Every release the reference was read from, oldest first.
RELEASES: tuple[Version, ...] = (
    (0, 2, 15), *((0, 3, p) for p in range(7)), *((0, 4, p) for p in range(11)),
    *((0, 5, p) for p in range(24)),
)


def _in(spans: tuple[Span, ...], v: Version) -> bool:
    return any(lo <= v and (hi is None or v <= hi) for lo, hi in spans)


def _label(spans: tuple[Span, ...]) -> str:
    parts = []
    for lo, hi in spans:
        if hi is None:
            parts.append(f"{fmt(lo)}+")
        elif lo == OLDEST:
            parts.append(f"<= {fmt(hi)}")
        elif lo == hi:
            parts.append(fmt(lo))
        else:
            parts.append(f"{fmt(lo)}-{fmt(hi)}")
    return ", ".join(parts)


def _clues(run: Run) -> list[tuple[tuple[Span, ...], str, float]]:
    out: list[tuple[tuple[Span, ...], str, float]] = []
    for hint in sorted(run.hints):
        rule = _HINTS.get(hint)
        if rule:
            spans, text, weak = rule
            why = text if hint.startswith("ts:") else f"{hint} ({_label(spans)})"
            out.append((spans, why, 0.5 if weak else 1.0))
    return out


def infer_version(run: Run, known: str | None = None) -> VersionRange:
    """The SGLang release range consistent with a run's line formats.

    Reads `run.hints` (the variants of the run's lines, recorded by `kvtui.core.state`). Each
    release is scored by the weight of the clues it contradicts and the releases with the lowest
    score are kept, so one odd line (a benchmark script's bare `max_total_num_tokens=` print, a
    line cut by the paste) cannot empty or skew the range; the clues that lost are listed as
    ignored. `known` (e.g. from the checkpoint host's installed sglang) pins the range; a
    text that names no release (a remote host's odd metadata) pins nothing.
    """
    pinned = parse_version(known) if known else None
    if pinned is not None:
        return SGLANG_LINE.between(pinned, pinned, (f"sglang {known} reported by the host",))
    clues = _clues(run)
    if not clues:
        return SGLANG_LINE.any()

    def violated(v: Version) -> float:
        return sum(w for spans, _, w in clues if not _in(spans, v))

    scores = {v: violated(v) for v in RELEASES}
    best = min(scores.values())
    keep = [v for v in RELEASES if scores[v] == best]
    lo, hi = keep[0], keep[-1]
    reasons = []
    for spans, why, _ in clues:
        fits_some = any(_in(spans, v) for v in keep)
        reasons.append(why if fits_some else f"ignored (contradicts the rest): {why}")
    return SGLANG_LINE.between(lo, hi, tuple(reasons))


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
    if v is None or v not in RELEASES:
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
    vr = version_range or SGLANG_LINE.any()
    where = "SGLang" if vr.undated else f"SGLang {vr.label()}"
    if target_dtype == "fp16" and model_dtype != "fp16":
        return None, "SGLang has no fp16 KV choice; `auto` gives the model dtype."
    if target_dtype == "fp16":
        return _fp16_flag(vr, where, checkpoint_kv_fp8)
    if target_dtype in ("bf16", "fp16") and target_dtype == model_dtype:
        some, every = _support("bf16", vr)
        auto_safe_hi = (0, 5, 2)
        if checkpoint_kv_fp8 is False or vr.hi <= auto_safe_hi:
            note = ("`auto` is the model dtype on these releases"
                    if vr.hi <= auto_safe_hi else
                    "`auto` is the model dtype because the checkpoint declares no FP8 KV")
            return "--kv-cache-dtype auto", f"{note} ({where})."
        if every:
            return "--kv-cache-dtype bf16", (f"{where} accepts an explicit bf16 (a choice "
                                             "since 0.5.4).")
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


def _fp16_flag(vr: VersionRange, where: str,
               checkpoint_kv_fp8: bool | None) -> tuple[str | None, str]:
    """An fp16 model's own fp16 KV: only `auto` gives it. `bf16` / `bfloat16` select
    torch.bfloat16 (0.5.8 model_executor/model_runner.py:1569-1570, 0.5.23
    mem_cache/kv_cache_dtype.py:74-75), and from 0.5.3 `auto` is FP8 when the checkpoint declares
    kv_cache_quant_algo FP8 (0.5.8 model_runner.py:1546-1558): then no choice gives fp16.
    (sgl-project/sglang#14254: a float16 Llava model, where kvtui offered `bf16` for fp16.)"""
    auto_safe_hi = (0, 5, 2)
    if checkpoint_kv_fp8 is False or vr.hi <= auto_safe_hi:
        note = ("`auto` is the model dtype on these releases" if vr.hi <= auto_safe_hi else
                "`auto` is the model dtype because the checkpoint declares no FP8 KV")
        bf16 = "; `bf16` would store bfloat16" if _support("bf16", vr)[0] else ""
        return "--kv-cache-dtype auto", f"{note} ({where}){bf16}."
    fp8_auto = ("a checkpoint whose hf_quant_config.json / quantization_config says "
                "kv_cache_quant_algo FP8 turns `auto` into FP8 from SGLang 0.5.3, and no "
                "--kv-cache-dtype choice is fp16 (`bf16` stores bfloat16)")
    if checkpoint_kv_fp8 and vr.lo > auto_safe_hi:
        return None, (f"{where} has no fp16 KV choice for this checkpoint: {fp8_auto}; serve "
                      "a local copy with kv_cache_quant_algo removed to keep fp16.")
    return "--kv-cache-dtype auto", (f"`auto` gives the model dtype (fp16) unless {fp8_auto}.")


def _range_caveat(vr: VersionRange) -> str:
    if vr.undated:
        return ("the log does not date the SGLang version, so check it "
                "(python -c 'import sglang; print(sglang.__version__)')")
    return f"the log implies {vr.label()}, which includes older releases, so check the version"
