"""Which SGLang architectures kvtui sizes by a cited rule, and which it says it does not model.

Why: SGLang builds one plain KV pool per GPU (MHA or MLA rows over every attention layer)
unless the model is on one of its own lists or config classes (a recurrent-state hybrid, a
sliding-window or compressed pool, DSA, KV shared between layers); kvtui's `sizing` package
knows some of those (`sizing.families`, `sizing.swa`). A model SGLang sizes another way read
through the plain rule is a confident wrong number, so every name in SGLang's registry
(`registry/sglang-0.5.23.json`, every EntryClass of srt/models/*.py read from the 0.5.23 wheel
by tools/read_registry.py) gets a verdict: a family table below when kvtui knows the family,
else the markers read from its module (a recurrent state, KV sharing, cross attention).

Citations are SGLang 0.5.23 unless a release is named.
"""

from __future__ import annotations

from kvtui.core.capacity.coverage import Verdict, load_registry
from kvtui.core.capacity.modelspec import MLA_ARCHS, ModelSpec
from kvtui.engines.sglang.sizing.archs import (
    DSA_ARCHS,
    GDN_ARCHS,
    KDA_ARCHS,
    MAMBA2_ARCHS,
)

RELEASE = "0.5.23"
_REGISTRY = f"sglang-{RELEASE}.json"

DENSE = ("plain KV pool", "MHATokenToKVPool over every attention layer: mem_cache/"
         "kv_cache_configurator.py:1779-1804 (_build_token_to_kv_pool), sglang.cell")
MLA = ("MLA latent pool", "MLATokenToKVPool: mem_cache/kv_cache_configurator.py:1806-1808, "
       "configs/model_config.py:1367-1395 (the MLA architectures), sglang.cell")
SWA = ("plain or hybrid sliding-window pool", "is_hybrid_swa_model (configs/model_config.py:"
       "2651-2697): the listed architectures get an SWA pool, the others a plain one; "
       "sizing.swa")
GDN = ("GDN hybrid", "hybrid_gdn_config (configs/hybrid_arch.py:55-67), sizing.mamba")
MAMBA2 = ("Mamba2 hybrid", "mamba2_config (configs/hybrid_arch.py:70-108), sizing.mamba")
KDA = ("KDA hybrid", "kimi_linear_config (configs/hybrid_arch.py:111-123), sizing.mamba")
DSA = ("MLA latent pool, + DSA indexer when the config sets index_topk",
       "is_deepseek_dsa (configs/model_config.py:191-207), "
       "DSATokenToKVPool (mem_cache/kv_cache_configurator.py:1809-1811), sizing.cells")
LONGCAT = ("MLA latent pool, two attentions per layer",
           "num_attention_layers = num_hidden_layers x 2 for LongcatFlashForCausalLM "
           "(configs/model_config.py:1583-1584), modelspec.from_hf_config")

LFM2 = ("short-conv hybrid (a Mamba2 state of the conv alone)",
        "mamba2_config (configs/hybrid_arch.py:78-90) with Lfm2Config.mamba2_cache_params "
        "(configs/lfm2.py:59-96), sizing.mamba")
BAILING = ("MLA + lightning hybrid (a Mamba2 state of no conv)",
           "hybrid_lightning_config in mambaish_config (configs/hybrid_arch.py:46-52, "
           ":145-155), layers_block_type and the state of configs/bailing_hybrid.py:172-236 "
           "(linear unless (i + 1) % layer_group_size == 0; (heads // attn TP) x head_dim x "
           "head_dim in the SSM dtype), MLA by architecture (configs/model_config.py:1476-1489), "
           "sizing.mamba")
GEMMA4 = ("hybrid sliding-window pool, the SWA sub-pool of its own head geometry, KV-shared "
          "layers counted",
          "Gemma-4 on the hybrid-SWA allow-list (configs/model_config.py:2651-2697; 0.5.11+): "
          "HybridSWAPoolConfigurator F per full layer from head_dim / num_key_value_heads, S per "
          "SWA layer from swa_head_dim / swa_num_key_value_heads "
          "(model_executor/pool_configurator.py:656-801), which the gemma4 wrapper's config is "
          "mapped to (utils/hf_transformers/config.py:115-148, :311-312; 0.5.11 :176-199); "
          "full_attention_layer_ids / swa_attention_layer_ids count every layer_types entry, "
          "the KV-shared ones too (get_hybrid_layer_ids, configs/model_config.py:2752-2771; "
          ":1607-1616 in 0.5.11; model_executor/model_runner_components/layer_setup.py:"
          "188-198); sizing.swa, sglang.cell")
# The top-level model_types SGLang maps Gemma-4's per-layer-type shapes for: "gemma4" only
# (config.model_type == "gemma4", utils/hf_transformers/config.py:176 in 0.5.11; in
# _GEMMA4_MODEL_TYPES, :66-73 and :311-312 in 0.5.23, whose other entries are other classes)
GEMMA4_WRAPPERS = frozenset({"gemma4"})
# families whose rule kvtui read in one release only
_READ_FROM: dict[str, tuple[int, int, int]] = {"BailingMoeV2_5ForCausalLM": (0, 5, 23),
                                               "Lfm2ForCausalLM": (0, 5, 23),
                                               "Lfm2MoeForCausalLM": (0, 5, 23),
                                               "LongcatFlashForCausalLM": (0, 5, 23)}

_SIZED: dict[str, tuple[str, str]] = {
    **dict.fromkeys(MLA_ARCHS, MLA),
    **dict.fromkeys(GDN_ARCHS, GDN), **dict.fromkeys(MAMBA2_ARCHS, MAMBA2),
    **dict.fromkeys(KDA_ARCHS, KDA), **dict.fromkeys(DSA_ARCHS, DSA),
    **dict.fromkeys(("GptOssForCausalLM", "Llama4ForConditionalGeneration",
                     "MiMoV2FlashForCausalLM", "MiMoV2ForCausalLM", "Gemma2ForCausalLM",
                     "Gemma3ForCausalLM", "Gemma3ForConditionalGeneration"), SWA),
    # the marker is HF's add_cross_attention, which these modules assert is off
    # (models/gpt2.py:190, models/gpt_bigcode.py:201): plain decoders
    **dict.fromkeys(("GPT2LMHeadModel", "GPTBigCodeForCausalLM"), DENSE),
    "LongcatFlashForCausalLM": LONGCAT,
    "Lfm2ForCausalLM": LFM2,
    "BailingMoeV2_5ForCausalLM": BAILING,
    # the same state (configs/lfm2_moe.py:34-90, layer_types required there)
    "Lfm2MoeForCausalLM": LFM2,
    **dict.fromkeys(("Gemma4ForCausalLM", "Gemma4ForConditionalGeneration"), GEMMA4),
}

_STATE = ("kvtui's SGLang rules size the GDN, Mamba2 (Falcon-H1, NemotronH, Granite-4.0-H) and "
          "KDA (Kimi-Linear) states only (sizing.families)")
_NOT_MODELLED: dict[str, str] = {
    **dict.fromkeys(("Lfm2VlForConditionalGeneration",
                     "Lfm2BidirectionalModel", "Lfm2DSparkDraftModel"),
                    "the LFM2 VL / bidirectional / draft variants keep short-conv states "
                    "(configs/hybrid_arch.py:78-90) kvtui has not checked against its LFM2 "
                    "rule (Lfm2ForCausalLM and Lfm2MoeForCausalLM only)"),
    "BailingMoeV3ForCausalLM": ("Bailing V3 (Ling 3.0) keeps a KDA state (use_kda, "
                                "configs/hybrid_arch.py:115-119) in a family kvtui has not "
                                "checked against its Kimi-Linear KDA rule: " + _STATE),
    "Gemma4UnifiedForConditionalGeneration": (
        "Gemma-4 Unified (gemma4_unified): kvtui read the Gemma-4 rule for Gemma4ForCausalLM "
        "and Gemma4ForConditionalGeneration only (models/gemma4_unified.py is another "
        "module; on the allow-list from 0.5.13)"),
    **dict.fromkeys(("Gemma4AssistantForCausalLM", "Gemma4UnifiedAssistantForCausalLM"),
                    "Gemma-4's MTP drafter reads the target's KV (models/gemma4_mtp.py:59, "
                    ":400): a draft, which kvtui sizes as the target's"),
    "DeepseekV4ForCausalLM": ("DeepSeek-V4 keeps a compressed KV cache (SWA ring + C4/C128 "
                              "compressed pools and compress-state pools, mem_cache/"
                              "deepseek_v4_memory_pool.py): kvtui does not size it yet"),
}

_BY_MARKER: dict[str, str] = {
    "recurrent_state": "its layers keep a recurrent state in SGLang's hybrid pool "
                       "(configs/hybrid_arch.py mambaish_config): " + _STATE,
    "kv_sharing": "layers share KV: kvtui does not size it",
    "cross_attention": "an encoder-decoder or wrapped model (cross attention): kvtui does not "
                       "size its pool",
    "encoder_only": "an encoder-only model: no decode KV pool kvtui sizes",
    "sparse_indexer": "a sparse-attention indexer kvtui does not size for this family",
}


def verdict(arch: str) -> Verdict:
    """kvtui's verdict on `arch` for SGLang (its 0.5.23 registry)."""
    if arch in _SIZED:
        name, source = _SIZED[arch]
        return Verdict(arch, name, source)
    if arch in _NOT_MODELLED:
        return Verdict(arch, None, "coverage._NOT_MODELLED", _NOT_MODELLED[arch])
    entry = load_registry("kvtui.engines.sglang", _REGISTRY)["architectures"].get(arch)
    if entry is None:
        return Verdict(arch, None, f"registry/{_REGISTRY}",
                       f"{arch} is not in SGLang {RELEASE}'s model registry: kvtui has no "
                       "rule for it")
    for marker in entry["markers"]:
        if marker in _BY_MARKER:
            return Verdict(arch, None, entry["module"],
                           f"{_BY_MARKER[marker]} ({entry['module']})")
    if arch in MLA_ARCHS or "mla" in entry["markers"]:
        return Verdict(arch, MLA[0], MLA[1])
    if "sliding_window" in entry["markers"]:
        return Verdict(arch, SWA[0], SWA[1])
    return Verdict(arch, DENSE[0], DENSE[1])


def unmodelled(arch: str | None) -> str | None:
    """Why kvtui does not size `arch` on SGLang, or None when a rule does (or no name is
    known: a spec without architectures is sized as its config reads)."""
    if not arch:
        return None
    why = verdict(arch).unmodelled
    return f"{arch} on SGLang: {why}" if why else None


def for_logged_class(arch: str | None) -> str | None:
    """The verdict for the model class a log names when no spec is known (SGLang's weight line,
    `type=...`): the log-only arithmetic scales a plain pool, so a class SGLang sizes another
    way gets no figure. A class in no registry kvtui read keeps the log-only arithmetic (an
    older release's class sized by the plain pool, most likely), as before."""
    if not arch or (arch not in _SIZED and arch not in _NOT_MODELLED
                    and arch not in registry_names()):
        return None
    return unmodelled(arch)


def for_spec(spec: ModelSpec, version: tuple[int, int, int] = (0, 5, 23)) -> str | None:
    """The verdict for a spec on a release: its architecture's, and what only the config or
    the release tells (a LongCat checkpoint with an indexer is DSA to SGLang,
    configs/model_config.py:191-207, which kvtui's DSA rules do not cover; a family whose rule
    was read in one release only is not modelled before it)."""
    first = _READ_FROM.get(spec.arch)
    if first is not None and version < first:
        return (f"{spec.arch} on SGLang {'.'.join(map(str, version))}: kvtui read its sizing in "
                f"{'.'.join(map(str, first))} only")
    if spec.arch in ("Gemma4ForCausalLM", "Gemma4ForConditionalGeneration") and \
            spec.wrapper_model_type not in GEMMA4_WRAPPERS:
        return (f"{spec.arch} on SGLang: a {spec.model_type or '?'} config outside the gemma4 "
                "wrapper is not mapped to SGLang's full/sliding shapes (utils/hf_transformers/"
                "config.py:311-312 in 0.5.23, :176 in 0.5.11): SGLang reads one head_dim for "
                "every layer (0.5.11) or cannot read it (0.5.23, transformers 5.19's "
                "per-layer head_dim)")
    if spec.arch.startswith("LongcatFlash") and spec.index_topk is not None:
        return (f"{spec.arch} on SGLang: with index_topk SGLang sizes it as DSA "
                "(configs/model_config.py:191-207), which kvtui's DSA rules do not cover")
    return unmodelled(spec.arch)


def registry_names() -> list[str]:
    return sorted(load_registry("kvtui.engines.sglang", _REGISTRY)["architectures"])
