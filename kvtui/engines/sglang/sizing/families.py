"""Which SGLang release serves which architecture, and how its KV pool is laid out.

Why per release: the same config.json is sized differently by different SGLang releases. A
Qwen3.5 checkpoint is a GDN hybrid from 0.5.9 and unknown before; Falcon-H1 is a "GDN" model in
0.5.3 and a Mamba2 model from 0.5.4; GPT-OSS gets a sliding-window pool on 0.5.1-0.5.6 and on
0.5.8+, but not on 0.5.7. These tables are read from the wheels (release and file:line given per
entry); an architecture that is not listed is a plain transformer to SGLang.
"""

from __future__ import annotations

from kvtui.core.capacity.modelspec import ModelSpec
from kvtui.engines.sglang.sizing.archs import (
    DSA_ARCHS,
    DSA_BY_CLASS,
    GDN_ARCHS,
    KDA_ARCHS,
    MAMBA2_ARCHS,
    Version,
)


class CannotModel(ValueError):
    """kvtui cannot size this model on this release; the message says why, plainly."""


# The first release (of those read, 0.4.6 .. 0.5.23) that ships each model class, from
# `class <Arch>` in sglang/srt/models/*.py of each wheel. (0, 4, 6) means "0.4.6 or earlier".
FIRST_RELEASE: dict[str, Version] = {
    "Qwen3NextForCausalLM": (0, 5, 2),
    "Qwen3_5ForConditionalGeneration": (0, 5, 9),
    "Qwen3_5MoeForConditionalGeneration": (0, 5, 9),
    "FalconH1ForCausalLM": (0, 5, 3),
    "NemotronHForCausalLM": (0, 5, 4),
    "KimiLinearForCausalLM": (0, 5, 5),
    "GraniteMoeHybridForCausalLM": (0, 5, 9),
    "MiMoV2FlashForCausalLM": (0, 5, 7),
    "Gemma4ForCausalLM": (0, 5, 11),
    "Gemma4ForConditionalGeneration": (0, 5, 11),
    "DeepseekV32ForCausalLM": (0, 5, 3),
    "GlmMoeDsaForCausalLM": (0, 5, 9),
    "DeepseekV4ForCausalLM": (0, 5, 12),
    "GptOssForCausalLM": (0, 5, 1),
    "Glm4MoeForCausalLM": (0, 4, 10),
    "Qwen3VLMoeForConditionalGeneration": (0, 5, 3),
    "Qwen3OmniMoeForConditionalGeneration": (0, 5, 4),
}

def linear_kind(spec: ModelSpec, version: Version) -> str | None:
    """"gdn", "mamba2", "kda" when this release sizes a recurrent-state pool for the model."""
    arch = spec.arch
    if version == (0, 5, 3) and arch == "FalconH1ForCausalLM":
        return "gdn"  # 0.5.3 lists Falcon-H1 in is_hybrid_gdn (model_runner.py:1301-1306)
    for table, kind in ((GDN_ARCHS, "gdn"), (MAMBA2_ARCHS, "mamba2"), (KDA_ARCHS, "kda")):
        first = table.get(arch)
        if first is not None and version >= first:
            if arch == "GraniteMoeHybridForCausalLM" and not spec.linear_layer_ids:
                return None
            return kind
    return None


def is_dsa(spec: ModelSpec, version: Version) -> bool:
    first = DSA_ARCHS.get(spec.arch)
    return spec.is_dsa and first is not None and version >= first


def check_supported(spec: ModelSpec, version: Version) -> None:
    """Raise CannotModel, in plain words, when kvtui cannot give SGLang's number."""
    if spec.unsupported:
        raise CannotModel(spec.unsupported)
    first = FIRST_RELEASE.get(spec.arch)
    if first is not None and version < first:
        raise CannotModel(f"SGLang {'.'.join(map(str, version))} does not serve {spec.arch} "
                          f"(first in {'.'.join(map(str, first))})")
    if spec.arch == "DeepseekV4ForCausalLM":
        raise CannotModel("DeepSeek-V4 keeps a compressed KV cache (SWA ring + C4/C128 "
                          "compressed pools and compress-state pools, "
                          "mem_cache/deepseek_v4_memory_pool.py): kvtui does not size it yet")
    if spec.linear_layer_ids and spec.linear is None:
        raise CannotModel(f"{spec.name}: the config's linear-attention layers have no state "
                          "shape kvtui can read")
    # Every other architecture: its verdict from SGLang's registry (`coverage`, which reads
    # this module's tables, hence imported here and not at the top).
    from kvtui.engines.sglang import coverage

    why = coverage.for_spec(spec, version)
    if why is not None:
        raise CannotModel(why)


# -- What SGLang sets for an architecture on its own -------------------------------------------
# DeepSeek-V4: SGLang keys these on hf_config.architectures[0] alone, so they hold whenever the
# log names the model class. `auto` becomes fp8_e4m3 and page_size 256 on CUDA/ROCm (bfloat16
# and 128 on NPU): arg_groups/deepseek_v4_hook.py:16,27-28 (0.5.12, its first release), :17-22
# (0.5.14), overrides.py:900-903 (0.5.23).
DSV4_ARCH = "DeepseekV4ForCausalLM"
DSV4_AUTO_KV_DTYPE = "fp8_e4m3"
DSV4_PAGE_SIZE = 256
# max_running_requests when --max-running-requests is not given: deepseek_v4_hook.py:21-25
# (0.5.12), :138-145 (0.5.23). The hook runs before the speculative defaults
# (server_args.py:929 then :976 in 0.5.12), so their 48 never applies to this model.
DSV4_RUNNING_DEFAULT = 256


def kv_dtype_spelling(dtype: str, architecture: str | None, version: Version) -> str | None:
    """The --kv-cache-dtype value SGLang accepts for `dtype` when a model's own check spells it
    differently from the release's usual choice, else None. DeepSeek-V4 asserts the value is
    "fp8_e4m3" or "bfloat16" with no normalization of "bf16" on that path
    (deepseek_v4_hook.py:37-40 in 0.5.14, overrides.py:907-910 in 0.5.23; the DSA path does
    normalize it, overrides.py:539-540)."""
    if dtype == "bf16" and architecture == DSV4_ARCH and version >= (0, 5, 14):
        return "bfloat16"
    return None


# -- KV dtypes a model or backend refuses ------------------------------------------------------
def dtype_refusal(spec: ModelSpec | None, dtype: str, version: Version,
                  attention_backend: str | None = None,
                  architecture: str | None = None) -> str | None:
    """Why SGLang would refuse `--kv-cache-dtype` for this model/release, or None.

    `architecture`: the model class the log names (`Load weight end. type=...`) when there is
    no model spec; the rules SGLang keys on the architecture alone (DeepSeek-V4) still apply.
    """
    flag = "bf16" if dtype == "bf16" else dtype
    arch = spec.arch if spec is not None else architecture
    dsa = (is_dsa(spec, version) if spec is not None
           else arch in DSA_BY_CLASS and version >= DSA_ARCHS[arch])
    if dsa and version >= (0, 5, 5) and dtype not in ("bf16", "fp8_e4m3"):
        # server_args.py:1089-1092 (0.5.5), arg_groups/overrides.py:541-544 (0.5.23)
        return ("DeepSeek DSA only supports bf16/bfloat16 or fp8_e4m3 kv_cache_dtype "
                f"(SGLang refuses {flag})")
    if arch == "DeepseekV4ForCausalLM":
        # SGLang checks hf_config.architectures[0] only (overrides.py:896-898 in 0.5.23)
        if (0, 5, 12) <= version <= (0, 5, 13) and dtype != "fp8_e4m3":
            # arg_groups/deepseek_v4_hook.py:32-34 (0.5.13): assert kv_cache_dtype in [fp8_e4m3]
            return f"DeepSeek-V4 accepts only fp8_e4m3 on SGLang 0.5.12-0.5.13 (not {flag})"
        if version >= (0, 5, 14) and dtype not in ("fp8_e4m3", "bf16"):
            # arg_groups/overrides.py:905-909 (0.5.23)
            return f"DeepSeek-V4 accepts only fp8_e4m3 or bfloat16 (not {flag})"
    if attention_backend in ("trtllm_mla", "cutedsl_mla") and dtype not in ("bf16", "fp8_e4m3"):
        # arg_groups/overrides.py:1214-1217 and :1248-1256 (0.5.23)
        return f"the {attention_backend} attention backend accepts only fp8_e4m3 or bf16"
    return None
