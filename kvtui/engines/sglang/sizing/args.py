"""The server arguments SGLang's pool sizing reads, with each release's defaults.

Why not pass the raw server_args dict around: the dump spells some of these differently by
release (`mamba_scheduler_strategy` until 0.5.13, `mamba_radix_cache_strategy` from 0.5.14),
prints None for "use the default", and a what-if without a log has no dump at all. One typed
object with the defaults applied keeps every rule reading the same value.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from kvtui.core.values import as_float as _float
from kvtui.core.values import as_int as _int

# server_args.py defaults (0.5.23 arg_groups/fields; the same values in every release that has
# the argument): --mamba-full-memory-ratio 0.9 (from 0.5.4, server_args.py:382 in 0.5.4),
# --swa-full-tokens-ratio 0.8 (from 0.4.10; fields/schedule.py:150-161 in 0.5.23 keeps 0.8 as
# the fallback), --linear-attn-backend triton (from 0.5.14, server_args.py:1750 in 0.5.14).
DEFAULT_MAMBA_FULL_MEMORY_RATIO = 0.9
DEFAULT_SWA_FULL_TOKENS_RATIO = 0.8


def _bool(v: Any) -> bool:
    return v in (True, "True", "true", 1)


def _str(v: Any) -> str | None:
    return str(v) if isinstance(v, str) and v not in ("", "None") else None


@dataclass(frozen=True, slots=True)
class SizingArgs:
    """What SGLang's memory-pool code reads from ServerArgs (None = the release's default)."""

    mem_fraction_static: float | None = None
    disable_radix_cache: bool = False
    max_running_requests: int | None = None
    max_mamba_cache_size: int | None = None
    max_total_tokens: int | None = None
    mamba_full_memory_ratio: float = DEFAULT_MAMBA_FULL_MEMORY_RATIO
    mamba_strategy: str = "auto"  # no_buffer | extra_buffer | extra_buffer_lazy | auto
    disable_overlap_schedule: bool = False
    mamba_ssm_dtype: str | None = None  # --mamba-ssm-dtype as given (None: not given)
    swa_full_tokens_ratio: float = DEFAULT_SWA_FULL_TOKENS_RATIO
    disable_hybrid_swa_memory: bool = False
    hybrid_kvcache_ratio: float | None = None
    speculative_algorithm: str | None = None
    speculative_draft_model_path: str | None = None
    speculative_num_draft_tokens: int | None = None
    attention_backend: str | None = None
    prefill_attention_backend: str | None = None
    decode_attention_backend: str | None = None
    dsa_prefill_backend: str | None = None
    dsa_decode_backend: str | None = None
    linear_attn_backend: str = "triton"
    # The FP8 DSA latent layout a logged pool line's size shows, where no DSA backends are
    # named (True: raw, False: scaled; `sizing.cells.dsa_fp8_layout`): not a server argument.
    dsa_layout_raw: bool | None = None
    context_length: int | None = None
    given: frozenset[str] = frozenset()  # the fields the dump (or the user) actually set

    @classmethod
    def from_server_args(cls, sa: dict[str, Any] | None) -> SizingArgs:
        sa = sa or {}
        strategy = _str(sa.get("mamba_radix_cache_strategy")) or _str(
            sa.get("mamba_scheduler_strategy")) or "auto"
        fields: dict[str, Any] = {
            "mem_fraction_static": _float(sa.get("mem_fraction_static")),
            "disable_radix_cache": _bool(sa.get("disable_radix_cache")),
            "max_running_requests": _int(sa.get("max_running_requests")),
            "max_mamba_cache_size": _int(sa.get("max_mamba_cache_size")),
            "max_total_tokens": _int(sa.get("max_total_tokens")),
            "mamba_strategy": strategy,
            "disable_overlap_schedule": _bool(sa.get("disable_overlap_schedule")),
            "mamba_ssm_dtype": _str(sa.get("mamba_ssm_dtype")),
            "disable_hybrid_swa_memory": _bool(sa.get("disable_hybrid_swa_memory")),
            "hybrid_kvcache_ratio": _float(sa.get("hybrid_kvcache_ratio")),
            "speculative_algorithm": _str(sa.get("speculative_algorithm")),
            "speculative_draft_model_path": _str(sa.get("speculative_draft_model_path")),
            "speculative_num_draft_tokens": _int(sa.get("speculative_num_draft_tokens")),
            "attention_backend": _str(sa.get("attention_backend")),
            "prefill_attention_backend": _str(sa.get("prefill_attention_backend")),
            "decode_attention_backend": _str(sa.get("decode_attention_backend")),
            "dsa_prefill_backend": _str(sa.get("dsa_prefill_backend"))
            or _str(sa.get("nsa_prefill_backend")),
            "dsa_decode_backend": _str(sa.get("dsa_decode_backend"))
            or _str(sa.get("nsa_decode_backend")),
            "context_length": _int(sa.get("context_length")),
        }
        # A value SGLang itself would refuse (or divide by zero with) keeps the default: a
        # log's text must never make the calculator crash.
        ratio = _float(sa.get("mamba_full_memory_ratio"))
        if ratio is not None and 0 < ratio < 1e6:
            fields["mamba_full_memory_ratio"] = ratio
        swa = _float(sa.get("swa_full_tokens_ratio"))
        if swa is not None and 0 < swa <= 1:
            fields["swa_full_tokens_ratio"] = swa
        for key in ("max_running_requests", "max_mamba_cache_size", "max_total_tokens",
                    "speculative_num_draft_tokens", "context_length"):
            if fields[key] is not None and fields[key] <= 0:
                fields[key] = None
        lab = _str(sa.get("linear_attn_backend"))
        if lab:
            fields["linear_attn_backend"] = lab
        given = frozenset(k for k, v in sa.items() if v is not None)
        return cls(**fields, given=given)

    def with_changes(self, **changes: Any) -> SizingArgs:
        return replace(self, **changes)

    @property
    def spec_decoding(self) -> bool:
        return self.speculative_algorithm is not None

    @property
    def prefill_backend(self) -> str | None:
        return self.prefill_attention_backend or self.attention_backend

    @property
    def decode_backend(self) -> str | None:
        return self.decode_attention_backend or self.attention_backend

    def to_dict(self) -> dict[str, Any]:
        return {
            "mem_fraction_static": self.mem_fraction_static,
            "disable_radix_cache": self.disable_radix_cache,
            "max_running_requests": self.max_running_requests,
            "max_mamba_cache_size": self.max_mamba_cache_size,
            "mamba_full_memory_ratio": self.mamba_full_memory_ratio,
            "mamba_strategy": self.mamba_strategy,
            "disable_overlap_schedule": self.disable_overlap_schedule,
            "mamba_ssm_dtype": self.mamba_ssm_dtype,
            "swa_full_tokens_ratio": self.swa_full_tokens_ratio,
            "disable_hybrid_swa_memory": self.disable_hybrid_swa_memory,
            "speculative_algorithm": self.speculative_algorithm,
            "speculative_num_draft_tokens": self.speculative_num_draft_tokens,
            "attention_backend": self.attention_backend,
            "prefill_attention_backend": self.prefill_attention_backend,
            "decode_attention_backend": self.decode_attention_backend,
        }
