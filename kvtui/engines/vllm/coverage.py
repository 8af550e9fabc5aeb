"""Which vLLM architectures kvtui sizes by a cited rule, and which it says it does not model.

Why: `sizing.layout` knows full attention, MLA, sliding windows and one recurrent state (GDN's,
`sizing.mamba_state_bytes`); a family whose layers vLLM gives another spec (a Mamba1/Mamba2,
short-conv, KDA or lightning state, KV shared between layers, cross attention) read through it
comes out as a confident wrong number (MiniMax-Text-01 as 80 full-attention layers, about 8x
its KV). Every name in vLLM's registry (`registry/vllm-0.34.0.json`, read from the 0.34.0 wheel
by tools/read_registry.py, with the models vLLM lists as previously supported) gets a verdict:
a family table below when kvtui knows the family, else the markers read from its module.

Citations are vLLM 0.34.0 unless a release is named.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kvtui.core.capacity import ModelSpec
from kvtui.core.capacity.coverage import Verdict, load_registry

RELEASE = "0.34.0"
_REGISTRY = f"vllm-{RELEASE}.json"
# the classes 0.34.0 lists as served by an earlier release are judged by this registry's
# markers (tools/read_registry.py on the 0.22.0 wheel), for runs dated before they were dropped
_OLDER = "vllm-0.22.0.json"

# -- the rules (what sizing.layout does, and where vLLM does it) --------------------------------
DENSE = ("full attention", "FullAttentionSpec per decoder layer: model_executor/layers/attention/"
         "attention.py:637-705 (page: v1/kv_cache_interface.py), sizing.layout")
SWA = ("full + sliding-window attention", "SlidingWindowSpec for the config's sliding layers: "
       "model_executor/layers/attention/attention.py:650-694, sizing.layout")
MLA = ("MLA latent", "MLAAttentionSpec: model_executor/layers/attention/mla_attention.py:1567, "
       "sizing.attn_token_bytes")
GDN = ("GDN hybrid", "MambaSpec of gated_delta_net_state_shape: model_executor/layers/mamba/"
       "mamba_utils.py:280, sizing.mamba_state_bytes")
CHUNKED = ("chunked local attention", "ChunkedLocalAttention: model_executor/layers/attention/"
           "chunked_local_attention.py:119, sizing.layout")
GEMMA4 = ("full + sliding-window attention, each with its own page, KV-shared layers without "
          "one", "per-layer head_dim / KV heads (per_layer_config, models/gemma4.py:599-602; "
          "gemma4_layer_config, transformers_utils/configs/gemma4.py:10-34 in 0.30.0; "
          "models/gemma4.py:441-460 in 0.19.0), no KV cache spec for a layer with "
          "kv_sharing_target_layer_name (:493-532; v1/worker/gpu/attn_utils.py:140-147), the "
          "smaller page's block size multiplied up to the larger page "
          "(v1/core/kv_cache_planning.py:392-452); sizing.layout, sizing.swa_token_bytes")
DSA = ("MLA + DSA indexer", "vllm/models/deepseek_v32/ (the indexer k_cache beside the latent), "
       "sizing.attn_token_bytes")

_SIZED: dict[str, tuple[str, str]] = {
    **dict.fromkeys(("Qwen3NextForCausalLM", "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM",
                     "Qwen3_5ForConditionalGeneration",
                     "Qwen3_5MoeForConditionalGeneration"), GDN),
    **dict.fromkeys(("GptOssForCausalLM", "Gemma2ForCausalLM", "Gemma3ForCausalLM",
                     "Gemma3ForConditionalGeneration"), SWA),
    **dict.fromkeys(("Llama4ForCausalLM", "Llama4ForConditionalGeneration"), CHUNKED),
    **dict.fromkeys(("Gemma4ForCausalLM", "Gemma4ForConditionalGeneration"), GEMMA4),
    **dict.fromkeys(("DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM"), DSA),
    **dict.fromkeys(("MiniMaxText01ForCausalLM", "MiniMaxM1ForCausalLM", "MiniMaxForCausalLM"), (
        "lightning-attention hybrid", "attn_type_list (models/minimax_text_01.py:509), MambaSpec "
        "of linear_attention_state_shape (:993-1009; layers/mamba/mamba_utils.py:130-137), "
        "read in 0.22.0 (vLLM 0.22.0; served until 0.23.0): states.lightning_state_bytes")),
    "JambaForCausalLM": (
        "Mamba1 hybrid", "MambaSpec of mamba1_state_shape (models/jamba.py:478, layers/mamba/"
        "mamba_utils.py:179), attention every attn_layer_period from attn_layer_offset "
        "(models/jamba.py:322), read in 0.33.0 and 0.34.0 only: states.mamba1_state_bytes"),
    "NemotronHForCausalLM": (
        "Mamba2 hybrid", "MambaSpec of mamba2_state_shape (layers/mamba/mamba_utils.py:194; "
        "models/nemotron_h.py:780-810; SSM state float32 by default, models/config.py:"
        "1143-1163), read in 0.33.0 and 0.34.0 only: states.mamba2_state_bytes"),
    "LongcatFlashForCausalLM": (
        "MLA latent, two attentions per decoder layer",
        "DeepseekV2MLAAttention x 2 per layer (models/longcat_flash.py:267-286) over num_layers "
        "decoder layers (:396; transformers_utils/model_arch_config_convertor.py:759-762): "
        "2 x num_layers MLA layers, modelspec.from_hf_config, sizing.attn_token_bytes"),
    **dict.fromkeys(("Lfm2ForCausalLM", "Lfm2MoeForCausalLM"), (
        "short-conv hybrid", "MambaSpec of short_conv_state_shape (layers/mamba/mamba_utils.py:"
        "257-266): divide(conv_dim, TP) x (conv_L_cache - 1) for Lfm2ForCausalLM (models/lfm2.py:"
        "573-577), hidden_size for Lfm2MoeForCausalLM (models/lfm2_moe.py:563-567), attention "
        "where layer_types says full_attention (models/lfm2.py:435), read in 0.33.0 and 0.34.0 "
        "only: states.short_conv_state_bytes")),
    "BailingMoeV2_5ForCausalLM": (
        "MLA + lightning-attention hybrid", "linear unless (i + 1) % layer_group_size == 0 "
        "(is_linear_layer, models/bailing_moe_linear.py:68-74, :463-470); full layers "
        "BailingMoeV25MLAAttention (:77-230, an MLA latent); MambaSpec of "
        "linear_attention_state_shape(num_attention_heads, TP, head_dim) (:768-786, layers/mamba/"
        "mamba_utils.py:162-170) in the model dtype; an MLA hybrid's block a multiple of 128 "
        "(platforms/interface.py:1095-1100); read in 0.33.0 and 0.34.0 only: "
        "states.lightning_state_bytes, sizing.layout"),
    "DeepseekForCausalLM": (DENSE[0], "DeepseekAttention (models/deepseek_v2.py:148): "
                            + DENSE[1]),
    **dict.fromkeys(("DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM",
                     "Glm4MoeLiteForCausalLM", "KimiK25ForConditionalGeneration",
                     "MistralLarge3ForCausalLM"), MLA),
}

# -- families kvtui names and does not size on vLLM, with the reason ----------------------------
_STATE = ("kvtui sizes GDN's, Nemotron-H's (Mamba2) and Jamba's (Mamba1) states on vLLM "
          "(sizing.mamba_state_bytes, states.py); this family's state is another shape")
_NOT_MODELLED: dict[str, str] = {
    "MiniMaxVL01ForConditionalGeneration": (
        "MiniMax-VL-01: kvtui has not checked it against its MiniMax-Text-01 rule "
        "(vLLM serves it until 0.23.0)"),

    **dict.fromkeys(("NemotronHPuzzleForCausalLM",
                     "NemotronH_Nano_VL_V2", "NemotronH_Nano_Omni_Reasoning_V3",
                     "NemotronH_Super_Omni_Reasoning_V3", "NemotronH_Omni_Reasoning_V3",
                     "NemotronHMTPModel", "FalconH1ForCausalLM",
                     "GraniteMoeHybridForCausalLM", "Zamba2ForCausalLM"),
                    "a Mamba2 hybrid (MambaSpec of mamba2_state_shape, layers/mamba/"
                    "mamba_utils.py:194; models/falcon_h1.py:562, granitemoehybrid.py:636): "
                    "kvtui's vLLM Mamba2 rule was read for NemotronHForCausalLM only (its "
                    "shape arguments and SSM dtype default), not for this class"),
    **dict.fromkeys(("Lfm2VlForConditionalGeneration", "Lfm3ForCausalLM",
                     "Lfm3VlForConditionalGeneration", "Lfm3AudioForConditionalGeneration"),
                    "the LFM2-VL / LFM3 classes interleave short-convolution layers (MambaSpec "
                    "of short_conv_state_shape, layers/mamba/mamba_utils.py:257) with "
                    "attention: kvtui's short-conv rule was read for Lfm2ForCausalLM and "
                    "Lfm2MoeForCausalLM only (the width each passes)"),
    "BailingMoeV25MTPModel": ("the Bailing V2.5 MTP draft: its MLA layer joins the target's "
                              "cache, which kvtui does not size with speculative decoding"),
    "Gemma4UnifiedForConditionalGeneration": (
        "Gemma-4 Unified (models/gemma4_unified.py): kvtui read the Gemma-4 rule for "
        "Gemma4ForCausalLM and Gemma4ForConditionalGeneration only"),
    **dict.fromkeys(("Gemma4MTPModel", "Gemma4DSparkModel"),
                    "a Gemma-4 draft (MTP / DSpark): its layers read the target's KV or join "
                    "its cache; kvtui sizes the target without speculative decoding"),
    **dict.fromkeys(("Gemma3nForCausalLM", "Gemma3nForConditionalGeneration"),
                    "Gemma-3n shares KV between its last layers (kv_sharing_target_layer_name, "
                    "models/gemma3n.py): kvtui read that rule for Gemma-4 only, not Gemma-3n's "
                    "config (its AltUp / Laurel layers and window)"),
    **dict.fromkeys(("LongcatFlashNgramForCausalLM", "LongCatFlashMTPModel"),
                    "the LongCat-Flash n-gram and MTP variants: kvtui has not checked them "
                    "against its LongCat rule (LongcatFlashForCausalLM only)"),
    **dict.fromkeys(("MiMoV2FlashForCausalLM", "MiMoV2ForCausalLM", "MiMoV2MTPModel"),
                    "MiMo-V2's sliding-window layers have their own KV heads and head_dim "
                    "(models/mimo_v2.py:424-425): kvtui read vLLM's pages of two shapes for "
                    "Gemma-4 only (its K and V widths differ too, which that rule was not "
                    "checked with)"),
    # the Omni model's language model is MiMoV2FlashForCausalLM (0.34.0
    # models/mimo_v2_omni.py:1293): the same sliding layers of their own shape
    **dict.fromkeys(("MiMoV2OmniForCausalLM", "MiMoV2OmniMTPModel"),
                    "MiMo-V2-Omni's language model is MiMo-V2-Flash (models/mimo_v2_omni.py:"
                    "1293), whose sliding-window layers have their own KV heads and head_dim "
                    "(models/mimo_v2.py:424-425): not modelled, as MiMo-V2-Flash"),
    "DeepseekV4ForCausalLM": ("DeepSeek-V4 keeps a compressed KV cache (vllm/models/"
                              "deepseek_v4/): kvtui does not size it yet"),
    "KimiLinearForCausalLM": "Kimi-Linear's KDA state (layers/mamba/mamba_utils.py:304): "
                             + _STATE,
}

_BY_GROUP: dict[str, str] = {
    "embedding": "a pooling model: kvtui sizes text generation",
    "late_interaction": "a pooling model: kvtui sizes text generation",
    "reward": "a pooling model: kvtui sizes text generation",
    "token_classification": "a pooling model: kvtui sizes text generation",
    "sequence_classification": "a pooling model: kvtui sizes text generation",
    "speculative_decoding": ("a speculative draft model: its layers join the target's KV "
                             "cache; kvtui sizes the target"),
    "transformers_supported": ("served by the Transformers backend: kvtui sizes its text "
                               "generators only (not a pooling, speech or layer-looping model)"),
    "transformers_backend": ("served by the Transformers backend: kvtui sizes its text "
                             "generators only (not a pooling, speech or layer-looping model)"),
}

# markers read from a module (tools/read_registry.py) -> why it is not modelled
_BY_MARKER: dict[str, str] = {
    "recurrent_state": "its layers keep a recurrent state (IsHybrid / HasInnerState): "
                       + _STATE,
    "attention_free": "an attention-free model (IsAttentionFree): a recurrent state only",
    "kv_sharing": "layers share KV (kv_sharing_target_layer_name): kvtui does not size it",
    "cross_attention": "an encoder-decoder (cross attention, CrossAttentionSpec): kvtui does "
                       "not size it",
    "static_sink": "static sink tokens (StaticSinkAttention) add KV kvtui does not size",
    "sparse_indexer": "a sparse-attention indexer cache kvtui does not size for this family",
    "chunked_local": "chunked local attention in a family kvtui has no rule for",
}


def verdict(arch: str) -> Verdict:
    """kvtui's verdict on `arch` for vLLM (the 0.34.0 registry, and the models vLLM lists as
    served by an earlier release)."""
    if arch in _SIZED:
        name, source = _SIZED[arch]
        return Verdict(arch, name, source)
    if arch in _NOT_MODELLED:
        return Verdict(arch, None, "coverage._NOT_MODELLED", _NOT_MODELLED[arch])
    doc = load_registry("kvtui.engines.vllm", _REGISTRY)
    entry = doc["architectures"].get(arch)
    last = doc["previously_supported"].get(arch)
    if entry is None and last is not None:
        # a class vLLM dropped: judged by the 0.22.0 registry, which still has most of them
        entry = load_registry("kvtui.engines.vllm", _OLDER)["architectures"].get(arch)
        if entry is not None:
            v = _by_entry(arch, entry)
            return replace(v, source=f"{v.source} (served until {last}: its module as vLLM "
                                      f"0.22.0 ships it, registry/{_OLDER})")
    if entry is None:
        why = (f"vLLM served {arch} until {last}; kvtui has no rule for it" if last else
               f"{arch} is not in vLLM {RELEASE}'s model registry: kvtui has no rule for it")
        return Verdict(arch, None, f"registry/{_REGISTRY}", why)
    return _by_entry(arch, entry)


# The Transformers backend makes one Attention per decoder layer from the config: num_kv_heads
# x head_size, a per-layer sliding window where layer_types says "sliding_attention", MLA when
# kv_lora_rank is set (model_executor/models/transformers/base.py:610-700); a layer that does
# not go through the attention interface is refused (:630-640), so no recurrent state. Sized
# for its text generators; Nanbeige (loops its layers) and the other classes are not modelled.
TRANSFORMERS = ("full / sliding-window / MLA attention per layer (the Transformers backend)",
                "model_executor/models/transformers/base.py:610-700, sizing.layout")
_TRANSFORMERS_GENERATORS = frozenset({"TransformersForCausalLM", "TransformersMoEForCausalLM",
                                      "TransformersMultiModalForCausalLM",
                                      "TransformersMultiModalMoEForCausalLM"})


def _by_entry(arch: str, entry: dict[str, Any]) -> Verdict:
    """The verdict the registry entry's group and markers give (tools/read_registry.py)."""
    where = f"{entry['module']} ({entry['group']})"
    if (entry["group"] == "transformers_supported" and arch.endswith("ForCausalLM")
            and arch != "NanbeigeForCausalLM") or arch in _TRANSFORMERS_GENERATORS:
        return Verdict(arch, TRANSFORMERS[0], TRANSFORMERS[1])
    if entry["group"] in _BY_GROUP:
        return Verdict(arch, None, where, _BY_GROUP[entry["group"]])
    found = [m for m in entry["markers"] if m in _BY_MARKER]
    if found and entry["module"].endswith("/"):
        # a vllm.models package: its modules (and those it re-exports) were read together, so
        # a marker says the package names that layout, not which class uses it
        return Verdict(arch, None, where,
                       f"its package {entry['module']} names layouts kvtui has no rule for "
                       f"({', '.join(found)})")
    if found:
        return Verdict(arch, None, where, f"{_BY_MARKER[found[0]]} ({entry['module']})")
    if "mla" in entry["markers"]:
        return Verdict(arch, MLA[0], MLA[1])
    if "sliding_window" in entry["markers"]:
        return Verdict(arch, SWA[0], SWA[1])
    return Verdict(arch, DENSE[0], DENSE[1])


def unmodelled(arch: str | None) -> str | None:
    """Why kvtui does not size `arch` on vLLM, or None when a rule does (or no name is known:
    a spec without architectures is sized as its config reads)."""
    if not arch:
        return None
    why = verdict(arch).unmodelled
    return f"{arch} on vLLM: {why}" if why else None


def registry_names() -> list[str]:
    """Every name the stored registry holds, served now or before."""
    doc = load_registry("kvtui.engines.vllm", _REGISTRY)
    return sorted({*doc["architectures"], *doc["previously_supported"]})


# families whose rule was read in one release line only: the releases allowed
_READ_IN: dict[str, tuple[tuple[int, int, int], tuple[int, int, int], str]] = {
    **dict.fromkeys(("MiniMaxText01ForCausalLM", "MiniMaxM1ForCausalLM", "MiniMaxForCausalLM"), (
        (0, 22, 0), (0, 22, 99), "its lightning-attention state was read in vLLM 0.22.0 only "
        "(0.24+ refuses the model)")),
}
# families whose rule was read in some releases only: (first, reason) when the run may be older
_READ_FROM: dict[str, tuple[tuple[int, int, int], str]] = {
    "NemotronHForCausalLM": ((0, 33, 0), "its Mamba2 state was read in vLLM 0.33.0 and 0.34.0 "
                                         "only (the SSM dtype default and the state shape)"),
    "JambaForCausalLM": ((0, 33, 0), "its Mamba1 state was read in vLLM 0.33.0 and 0.34.0 only"),
    **dict.fromkeys(("Lfm2ForCausalLM", "Lfm2MoeForCausalLM"), (
        (0, 33, 0), "its short-conv state was read in vLLM 0.33.0 and 0.34.0 only")),
    "BailingMoeV2_5ForCausalLM": ((0, 33, 0), "its MLA + lightning layout was read in vLLM "
                                              "0.33.0 and 0.34.0 only"),
}


# Gemma-4 is served from 0.19.0 (models/gemma4.py absent from the 0.18.1 wheel)
_FIRST: dict[str, tuple[int, int, int]] = dict.fromkeys(
    ("Gemma4ForCausalLM", "Gemma4ForConditionalGeneration"), (0, 19, 0))

# hybrids whose figures need the model's config: without a spec the log-only arithmetic (the
# logged pool scaled as if dense) does not apply to them
_NEEDS_SPEC = frozenset({"MiniMaxText01ForCausalLM", "MiniMaxM1ForCausalLM", "MiniMaxForCausalLM",
                         "JambaForCausalLM", "NemotronHForCausalLM", "Lfm2ForCausalLM",
                         "Lfm2MoeForCausalLM", "BailingMoeV2_5ForCausalLM"})


def for_run(spec: ModelSpec | None, logged_arch: object = None, pp: int = 1,
            lo: tuple[int, int, int] | None = None, spec_tokens: int = 0,
            hi: tuple[int, int, int] | None = None) -> str | None:
    """Why a what-if has no figures on vLLM: the spec's own reason (a preset kvtui names but
    cannot size), else its architecture's verdict, else that of the architecture vLLM's log
    printed when no spec is known (the log-only arithmetic scales a dense pool only)."""
    if spec is not None and spec.unsupported:
        return spec.unsupported
    if spec is None and isinstance(logged_arch, str) and logged_arch in _NEEDS_SPEC:
        return (f"{logged_arch} on vLLM: a hybrid whose state does not scale with the KV "
                "dtype: its figures need the model's config (pass --model)")
    line = _READ_IN.get(spec.arch) if spec is not None else None
    if spec is not None and line is not None:
        first, last, why = line
        if lo is None or hi is None or lo < first or hi > last:
            return (f"{spec.arch} on vLLM: {why}; this run is not dated to it "
                    "(pass --vllm-version)")
    dropped: str | None = (
        load_registry("kvtui.engines.vllm", _REGISTRY)["previously_supported"].get(spec.arch)
        if spec is not None and spec.arch else None)
    if spec is not None and dropped is not None and (
            lo is None or lo > tuple(int(x) for x in dropped.split("."))):
        return (f"{spec.arch} on vLLM: served until {dropped} (registry.py "
                f"_PREVIOUSLY_SUPPORTED_MODELS, {RELEASE}); this run is not dated to a release "
                "that serves it (pass --vllm-version)")
    served_from = _FIRST.get(spec.arch) if spec is not None else None
    if spec is not None and served_from is not None and hi is not None and hi < served_from:
        return (f"{spec.arch} on vLLM: served from {'.'.join(map(str, served_from))} "
                "(models/gemma4.py is not in the 0.18.1 wheel); this run is dated before it")
    if spec is not None and spec.kv_shared_layers and pp > 1:
        return (f"{spec.arch} on vLLM: KV-shared layers under pipeline parallel (a stage's "
                "shared layers read a layer of another stage): kvtui does not size it")
    gate = _READ_FROM.get(spec.arch) if spec is not None else None
    if spec is not None and gate is not None:
        if lo is None or lo < gate[0]:
            return (f"{spec.arch} on vLLM: {gate[1]}; this run is not dated to them "
                    "(pass --vllm-version)")
        if spec_tokens:
            return (f"{spec.arch} on vLLM: speculative decoding changes its state "
                    "(num_spec in the state shape) or adds draft layers, which kvtui does not "
                    "size")
    if (spec is not None and spec.arch == "Lfm2ForCausalLM" and spec.linear is not None
            and not spec.linear.conv_dim):
        # models/lfm2.py:575 reads hf_config.conv_dim, which transformers' Lfm2Config does not
        # define: only a config.json that carries it says the width
        return (f"{spec.arch} on vLLM: its conv state is conv_dim wide (models/lfm2.py:575), "
                "and this config has no conv_dim (pass the checkpoint's config.json)")
    if spec is not None and spec.arch == "LongcatFlashForCausalLM":
        if spec.index_topk is not None:
            return (f"{spec.arch} on vLLM: with index_topk its MLA layers carry a sparse "
                    "indexer kvtui does not size for this family")
        if pp > 1:
            # vLLM splits num_layers decoder layers over PP (two KV layers each); kvtui's
            # stage split counts KV layers, which differs when the split is uneven
            return (f"{spec.arch} on vLLM: pipeline parallel splits its decoder layers of two "
                    "MLA layers each, which kvtui's stage split does not follow")
    if spec is not None and spec.arch:
        return unmodelled(spec.arch)
    if not isinstance(logged_arch, str) or not logged_arch:
        return None
    # No spec: the log-only arithmetic (the logged pool scaled, with its hybrid guards) stays
    # for a class kvtui has no verdict on (an out-of-tree or an older release's class); a class
    # in the registry or kvtui's tables gets its verdict
    doc = load_registry("kvtui.engines.vllm", _REGISTRY)
    known = logged_arch in _SIZED or logged_arch in _NOT_MODELLED or \
        logged_arch in doc["architectures"]
    return unmodelled(logged_arch) if known else None
