"""Hybrid linear-attention models: the per-request state, the rest-memory split, the slot cap.

Why this matters: on a GDN/Mamba2 hybrid SGLang first carves the recurrent state out of the
rest memory, then gives the remainder to the KV pool. How it carves changed four times:

- 0.5.2-0.5.3: a fixed slot count (--max-mamba-cache-size, else --max-running-requests, else
  512), radix cache forced off (model_runner.py:357-375, 1291-1297 in 0.5.3).
- 0.5.4-0.5.16: with the radix cache on, slots = rest x r / (1 + r) // per_slot with
  r = --mamba-full-memory-ratio (0.9); otherwise the fixed count (model_runner.py:1433-1480 in
  0.5.4; model_runner_kv_cache_mixin.py:82-184 in 0.5.13; kv_cache_configurator.py:1703-1813 in
  0.5.16). 0.5.8 stops ignoring an explicit --max-mamba-cache-size when the radix cache is on.
- 0.5.17+: the pool's padding slot is charged: slots = (budget - per_slot) // per_slot and
  (slots + 1) x per_slot is subtracted (kv_cache_configurator.py:1816-1982 in 0.5.17).

So raising --mem-fraction-static on Qwen3.5 gives the KV pool only 1/1.9 of the extra memory,
and the state slots then cap --max-running-requests (`slots_per_request`).
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtui.core.capacity.modelspec import ModelSpec
from kvtui.engines.sglang.sizing.args import SizingArgs
from kvtui.engines.sglang.sizing.families import CannotModel, Version

GIB = 1 << 30
_BYTES = {"fp32": 4, "float32": 4, "bf16": 2, "bfloat16": 2, "fp16": 2, "float16": 2}


@dataclass(frozen=True, slots=True)
class StateSlot:
    """One request slot of recurrent state on one GPU (`mamba_cache_per_req`)."""

    conv_bytes: int  # all state layers
    ssm_bytes: int
    layers: int
    ssm_dtype: str
    lines: tuple[str, ...] = ()

    @property
    def per_slot(self) -> int:
        return self.conv_bytes + self.ssm_bytes

    def to_dict(self) -> dict[str, object]:
        return {"per_slot_bytes": self.per_slot, "per_slot_mib": round(self.per_slot / 2**20, 2),
                "conv_bytes": self.conv_bytes, "ssm_bytes": self.ssm_bytes,
                "layers": self.layers, "ssm_dtype": self.ssm_dtype, "work": list(self.lines)}


def _divide(a: int, b: int, what: str) -> int:
    # sglang.srt.distributed.utils.divide asserts exact division.
    if b <= 0 or a % b:
        raise CannotModel(f"SGLang cannot shard {what} ({a}) over attention TP {b}: "
                          "it requires an exact division")
    return a // b


def ssm_dtype(spec: ModelSpec, kind: str, args: SizingArgs, version: Version) -> tuple[str, str]:
    """(dtype, why) of the SSM (temporal) state.

    <= 0.5.8: --mamba-ssm-dtype (default float32) through SGLANG_MAMBA_SSM_DTYPE; the config is
    not read (configs/qwen3_next.py:301-306 in 0.5.2, server_args.py:381 in 0.5.4).
    >= 0.5.9: --mamba-ssm-dtype (default None) overrides the config's mamba_ssm_dtype, else
    float32 (configs/mamba_utils.py:47-105 in 0.5.10). Granite-4.0-H, Kimi-Linear and Bailing V2.5
    do not pass their config (granitemoehybrid.py:310, kimi_linear.py:182, configs/
    bailing_hybrid.py:226-236: the dtype field's default, mamba2_state_dtype(None), :112 of
    configs/mamba_utils.py, in 0.5.23).
    """
    if args.mamba_ssm_dtype:
        return args.mamba_ssm_dtype, "--mamba-ssm-dtype"
    if version >= (0, 5, 9) and spec.linear is not None and spec.linear.ssm_dtype and not (
            spec.arch in ("GraniteMoeHybridForCausalLM", "BailingMoeV2_5ForCausalLM")
            or kind == "kda"):
        return spec.linear.ssm_dtype, "the config's mamba_ssm_dtype"
    return "fp32", "SGLang's default float32"


def state_per_slot(spec: ModelSpec, attn_tp: int, args: SizingArgs, version: Version,
                   kind: str) -> StateSlot:
    """`mamba_cache_per_req` on one GPU (configs/mamba_utils.py:108-118 BaseLinearStateParams,
    0.5.10): (conv elements x conv bytes + ssm elements x ssm bytes) x state layers."""
    lin = spec.linear
    if lin is None:
        raise CannotModel(f"{spec.name}: no recurrent-state shape in the config")
    tp = max(1, attn_tp)
    dt, why = ssm_dtype(spec, kind, args, version)
    ssm_b = _BYTES.get(dt, 4)
    conv_b = _BYTES.get(lin.conv_dtype, 2)
    n = len(spec.linear_layer_ids)
    if lin.kind == "kda":
        # KimiLinearStateShape.create (configs/mamba_utils.py:322-360, 0.5.10): q, k, v convs of
        # num_heads x head_dim each, temporal (heads/tp, head_dim, head_dim).
        proj = _divide(lin.num_heads * lin.head_dim, tp, "the KDA projection")
        conv = (lin.conv_kernel - 1) * 3 * proj * conv_b
        ssm = _divide(lin.num_heads, tp, "the KDA heads") * lin.head_dim * lin.head_dim * ssm_b
        conv_line = f"conv: ({lin.conv_kernel} - 1) x 3 x {proj} x {conv_b} B = {conv:,} B"
    elif lin.kind == "short_conv":
        # LFM2 (configs/lfm2.py:84-92, 0.5.23): Mamba2StateShape.create with num_heads = the
        # attention TP (one head per rank) and state_size 0: conv (hidden // tp) x (kernel - 1),
        # no temporal state (the n_groups extension adds 2 x groups x 0)
        conv_local = _divide(lin.intermediate_size, tp, "the conv state")
        conv = conv_local * (lin.conv_kernel - 1) * conv_b
        ssm = 0
        conv_line = (f"conv: ({lin.intermediate_size} // {tp}) x ({lin.conv_kernel} - 1) x "
                     f"{conv_b} B = {conv:,} B per layer (short conv)")
    else:
        groups = lin.n_groups
        if version >= (0, 5, 4) and groups % tp:
            # Mamba2StateShape.create extends the groups so each head shard has its own
            # (extra_groups_for_head_shards, configs/mamba_utils.py:29-38 and :154-157).
            groups += tp - groups
        conv_dim = lin.intermediate_size + 2 * groups * lin.state_size
        conv_local = _divide(conv_dim, tp, "the conv state")
        conv = conv_local * (lin.conv_kernel - 1) * conv_b
        heads = _divide(lin.num_heads, tp, "the state heads")
        ssm = heads * lin.head_dim * lin.state_size * ssm_b
        conv_line = (f"conv: ({conv_dim} // {tp}) x ({lin.conv_kernel} - 1) x {conv_b} B = "
                     f"{conv:,} B per layer")
    ssm_line = (f"ssm: ({lin.num_heads} // {tp}) x {lin.head_dim} x {lin.state_size} x {ssm_b} B "
                f"({dt}, {why}) = {ssm:,} B per layer" if lin.kind != "short_conv" else
                "ssm: none (a short-conv layer keeps no temporal state)")
    per = (conv + ssm) * n
    lines = (conv_line, ssm_line,
             f"per request slot: ({conv:,} + {ssm:,}) x {n} layers = {per:,} B = "
             f"{per / 2**20:.2f} MiB")
    return StateSlot(conv_bytes=conv * n, ssm_bytes=ssm * n, layers=n, ssm_dtype=dt, lines=lines)


def radix_cache_off(args: SizingArgs, version: Version, kind: str, arch: str) -> tuple[bool, str]:
    """(radix cache disabled?, why): the flag, or SGLang forcing it off for the family."""
    if args.disable_radix_cache:
        return True, "--disable-radix-cache"
    if kind == "gdn" and version <= (0, 5, 3):
        return True, "SGLang 0.5.2-0.5.3 turns the radix cache off for GDN models " \
                     "(model_runner.py:357-359 in 0.5.3)"
    if kind == "mamba2" and (0, 5, 4) <= version <= (0, 5, 6):
        return True, "SGLang 0.5.4-0.5.6 turns the radix cache off for Mamba2 models " \
                     "(model_runner.py:402-405 in 0.5.4)"
    if arch == "KimiLinearForCausalLM" and (0, 5, 5) <= version <= (0, 5, 13):
        return True, "SGLang 0.5.5-0.5.13 turns the radix cache off for Kimi-Linear " \
                     "(server_args.py:1055-1059 in 0.5.5)"
    return False, "radix cache on"


# Architectures with the extra_buffer strategy: server_args.py:4338-4353 (0.5.14),
# arg_groups/overrides.py:982-1003 (0.5.15), :1133 (0.5.16, + KimiLinear), :403-450 (0.5.23).
_EXTRA_BUFFER: tuple[tuple[Version, frozenset[str]], ...] = (
    ((0, 5, 14), frozenset({
        "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
        "Qwen3NextForCausalLM", "FalconH1ForCausalLM", "GraniteMoeHybridForCausalLM",
        "NemotronHForCausalLM"})),
    ((0, 5, 16), frozenset({"KimiLinearForCausalLM"})),
)


def _extra_buffer_arch(arch: str, version: Version) -> bool:
    return any(version >= v and arch in archs for v, archs in _EXTRA_BUFFER)


def strategy(args: SizingArgs, version: Version, arch: str, page_size: int,
             radix_off: bool) -> tuple[str, bool, str]:
    """(mamba radix-cache strategy, overlap schedule on?, why) as the release resolves "auto".

    0.5.7-0.5.13: auto -> no_buffer (server_args.py:766-769 in 0.5.7, :1225-1228 in 0.5.13).
    0.5.14+: auto -> extra_buffer when overlap scheduling or page_size > 1 is wanted and the
    architecture supports it on the triton linear-attention backend, else no_buffer with the
    overlap schedule turned off (server_args.py:4380-4393 in 0.5.14;
    arg_groups/overrides.py:477-488 in 0.5.23).
    """
    overlap = not args.disable_overlap_schedule
    chosen = args.mamba_strategy
    if radix_off:
        return "none (radix cache off)", overlap, "no radix cache"
    if chosen != "auto":
        return chosen, overlap, f"--mamba-scheduler-strategy {chosen}"
    if version < (0, 5, 14):
        return "no_buffer", overlap, "auto is no_buffer before 0.5.14"
    wants = overlap or page_size > 1
    if wants and _extra_buffer_arch(arch, version) and args.linear_attn_backend == "triton":
        return "extra_buffer", overlap, "auto picks extra_buffer (0.5.14+, overlap scheduling on)"
    return "no_buffer", False, "auto picks no_buffer and turns overlap scheduling off"


def slots_per_request(args: SizingArgs, version: Version, arch: str, kind: str,
                      page_size: int) -> tuple[int, str]:
    """State slots one running request needs: max_running_requests <= slots // this.

    <= 0.5.3: 1 (model_runner.py:1441-1442 in 0.5.3: min(reqs, max_mamba_cache_size)).
    0.5.4-0.5.6: 1 without the radix cache, else MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO = 3
    (model_runner.py:209, 1657-1665 in 0.5.4).
    0.5.7: 3 + 2, or 3 + 1 with extra_buffer under spec decoding (mixin :289-304 in 0.5.7).
    0.5.8-0.5.9: 3 + (extra_buffer: 1 with spec, else 2) (mixin :267-281 in 0.5.8).
    0.5.10+: 3 + (extra_buffer: 2 with overlap, else 1; extra_buffer_lazy with overlap 1 from
    0.5.13) (`_calculate_mamba_ratio`, mixin :373-385 in 0.5.10, :233-252 in 0.5.13;
    kv_cache_configurator.py:3062-3088 in 0.5.23, SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK off).
    """
    off, why = radix_cache_off(args, version, kind, arch)
    if version <= (0, 5, 3):
        return 1, "one slot per request (0.5.2-0.5.3)"
    if off:
        return 1, f"one slot per request ({why})"
    strat, overlap, swhy = strategy(args, version, arch, page_size, off)
    extra = strat.startswith("extra_buffer")
    if version == (0, 5, 7):
        add = 1 if (extra and args.spec_decoding) else 2
    elif version <= (0, 5, 9):
        add = (1 if args.spec_decoding else 2) if extra else 0
    elif not extra:
        add = 0
    elif strat == "extra_buffer_lazy" and version >= (0, 5, 13) and overlap:
        add = 1
    else:
        add = 2 if overlap else 1
    return 3 + add, f"3 + {add} slots per request (radix cache on, {strat}: {swhy})"


@dataclass(frozen=True, slots=True)
class MambaSplit:
    slots: int
    state_bytes: int  # what is subtracted from the rest memory (slots, padding, spec scratch)
    rule: str

    def to_dict(self) -> dict[str, object]:
        return {"slots": self.slots, "state_bytes": self.state_bytes,
                "state_gib": round(self.state_bytes / GIB, 3), "rule": self.rule}


def split(rest_bytes: int, slot: StateSlot, args: SizingArgs, version: Version, kind: str,
          arch: str, attn_dp: int = 1, page_size: int = 1) -> MambaSplit:
    """Slots and state bytes SGLang takes from `rest_bytes` (see the module docstring)."""
    per = slot.per_slot
    if per <= 0:
        raise CannotModel("the recurrent state has no size")
    dp = max(1, attn_dp)
    off, _ = radix_cache_off(args, version, kind, arch)
    mms, mrr = args.max_mamba_cache_size, args.max_running_requests
    d = (args.speculative_num_draft_tokens or 0) if args.spec_decoding else 0
    r = args.mamba_full_memory_ratio
    ratio_text = f"rest x {r:g}/(1 + {r:g})"
    if version <= (0, 5, 3):
        # model_runner.py:360-375 and :1291-1297 (0.5.3)
        slots = (mms if mms is not None else mrr if mrr is not None else 512) // dp
        return MambaSplit(slots, slots * per, "fixed slot count (0.5.2-0.5.3): "
                          "--max-mamba-cache-size, else --max-running-requests, else 512")
    if version <= (0, 5, 6):
        # model_runner.py:1433-1480 (0.5.4); an explicit --max-mamba-cache-size only counts
        # with the radix cache off.
        if off:
            slots = mms if mms is not None else mrr if mrr is not None else 512
            how = "fixed slot count (radix cache off)"
        else:
            slots = int(rest_bytes * r / (1 + r) // per // (1 + d))
            how = f"{ratio_text} // per_slot (0.5.4-0.5.6)"
        if kind == "gdn":
            slots //= dp
        return MambaSplit(slots, slots * per * (1 + d), how)
    if version == (0, 5, 7):
        # model_runner_kv_cache_mixin.py:145-199 (0.5.7)
        if off or mms is not None:
            slots = (mms if mms is not None else mrr if mrr is not None else 512) // dp
            return MambaSplit(slots, slots * per, "fixed slot count (0.5.7)")
        reserve = per * (mrr or 0) * d
        slots = int((rest_bytes - reserve) * r / (1 + r) // per)
        return MambaSplit(slots, slots * per + reserve, f"{ratio_text} // per_slot (0.5.7)")
    if version <= (0, 5, 12):
        # model_runner_kv_cache_mixin.py:146-204 (0.5.8), :151-210 (0.5.9): the spec-decoding
        # scratch comes off the rest first, then the three cases.
        reserve = per * (mrr // dp) * d if (d and mrr is not None) else 0
        rest = rest_bytes - reserve
        if mms is not None:
            slots, how = mms // dp, "--max-mamba-cache-size"
        elif off and mrr is not None:
            slots, how = mrr // dp, "--max-running-requests (radix cache off)"
        else:
            slots = int(rest * r / (1 + r) // per)
            how = f"{ratio_text} // per_slot (0.5.8-0.5.12)"
        return MambaSplit(slots, slots * per + reserve, how)
    # 0.5.13-0.5.16: joint solve with the spec scratch (mixin :82-184 in 0.5.13,
    # kv_cache_configurator.py:1703-1813 in 0.5.16); 0.5.17+: plus the padding slot
    # (kv_cache_configurator.py:1816-1982 in 0.5.17, :3229-3409 in 0.5.23).
    pad = 1 if version >= (0, 5, 17) else 0
    ratio = slots_per_request(args, version, arch, kind, page_size)[0] if d else 1
    reserve = 0
    if mms is not None:
        slots, how = mms // dp, "--max-mamba-cache-size"
        if d and mrr is not None:
            reserve = per * (min(max(1, mrr // dp), slots // ratio) + pad) * d
    elif off and mrr is not None:
        slots, how = max(1, mrr // dp), "--max-running-requests (radix cache off)"
        if d:
            reserve = per * (slots + pad) * d
    else:
        budget = rest_bytes * r / (1 + r)
        if d and mrr is not None:
            slots = int((budget - per * (1 + d) * pad) // (per * (1 + d / ratio)))
            reserve = per * (min(max(1, mrr // dp), slots // ratio) + pad) * d
        else:
            slots = int((budget - per * pad) // per)
        how = (f"{ratio_text} // per_slot"
               + (", minus the padding slot (0.5.17+)" if pad else " (0.5.13-0.5.16)"))
    if slots <= 0:
        raise CannotModel("not enough GPU memory for the hybrid state cache "
                          f"(SGLang would compute max_mamba_cache_size={slots})")
    return MambaSplit(slots, (slots + pad) * per + reserve, how)


def max_running_requests(reqs: int, slots: int, args: SizingArgs, version: Version,
                         arch: str, kind: str, page_size: int) -> tuple[int, str]:
    ratio, why = slots_per_request(args, version, arch, kind, page_size)
    return min(reqs, slots // ratio), why


def logged_state_bytes(slots: int, per: int, version: Version, args: SizingArgs, attn_dp: int,
                       kind: str, arch: str, page_size: int = 1) -> int:
    """The bytes `split` would have subtracted for a logged max_mamba_cache_size of `slots`."""
    d = (args.speculative_num_draft_tokens or 0) if args.spec_decoding else 0
    mrr = args.max_running_requests
    dp = max(1, attn_dp)
    if version <= (0, 5, 3):
        return slots * per
    if version <= (0, 5, 6):
        return slots * per * (1 + d)
    if version == (0, 5, 7):
        off, _ = radix_cache_off(args, version, kind, arch)
        ratio_path = not off and args.max_mamba_cache_size is None
        return slots * per + (per * (mrr or 0) * d if ratio_path else 0)
    if version <= (0, 5, 12):
        return slots * per + (per * (mrr // dp) * d if (d and mrr is not None) else 0)
    pad = 1 if version >= (0, 5, 17) else 0
    reserve = 0
    if d and mrr is not None:
        ratio = slots_per_request(args, version, arch, kind, page_size)[0]
        reserve = per * (min(max(1, mrr // dp), slots // ratio) + pad) * d
    return (slots + pad) * per + reserve
