"""Which checkpoint tensors SGLang loads as an attention layer's KV-cache scales (read from
the sglang 0.5.23 wheel; file:line below), behind `kvtui.core.engine.KVScaleRules`."""

from __future__ import annotations

from collections.abc import Mapping

from kvtui.core.checkpoint.kvnames import QuantDecl, is_parameter, scheme_text


def target(name: str) -> str | None:
    """The parameter SGLang loads `name` into, or None when it skips it.

    sglang 0.5.23 model_loader/weight_utils.py:1779-1857 `maybe_remap_kv_scale_name`, which the
    model classes in SGLANG_REMAP_ARCHITECTURES call for every name containing "scale"
    (e.g. models/llama.py:746-750). `str.replace` replaces every occurrence, as there.
    """
    if name.endswith(".kv_scale"):  # :1796-1814, deprecated, duplicated to v (kv_cache.py:64-71)
        target = name.replace(".kv_scale", ".attn.k_scale")
    elif name.endswith((".k_scale", ".v_scale")):  # :1816-1844
        suffix = name[-8:]
        for prefix in (".self_attn.", ".mixer."):  # `.mixer.` since 0.5.9
            modelopt = f"{prefix}{suffix[1]}_proj{suffix}"
            if modelopt in name:
                target = name.replace(modelopt, f"{prefix}attn{suffix}")
                break
        else:
            target = name.replace(suffix, f".attn{suffix}")
    elif name.endswith(".k_proj.output_scale"):  # :1846-1854, Quark / old compressed-tensors
        target = name.replace(".k_proj.output_scale", ".attn.k_scale")
    elif name.endswith(".v_proj.output_scale"):
        target = name.replace(".v_proj.output_scale", ".attn.v_scale")
    else:
        target = name  # :1856-1857 untouched: loaded only if it is the parameter's own name
    return target if is_parameter(target) else None


# Model classes whose SGLang 0.5.23 loader calls maybe_remap_kv_scale_name (grep of models/*.py;
# the EntryClass of each file). Other classes have loaders of their own (e.g. qwen2.py:238-256
# loads only names that already are parameters), so for them the name rule is less certain.
SGLANG_REMAP_ARCHITECTURES = frozenset({
    "ApertusForCausalLM", "ArceeForCausalLM", "CohereForCausalLM", "Cohere2ForCausalLM",
    "DbrxForCausalLM", "Exaone4ForCausalLM", "Gemma2ForCausalLM", "Gemma3ForCausalLM",
    "EmbeddingGemmaModel", "Gemma3ForConditionalGeneration", "Gemma3nForCausalLM",
    "Gemma3nForConditionalGeneration", "Gemma4ForCausalLM", "DiffusionGemmaForBlockDiffusion",
    "Gemma4ForConditionalGeneration", "GPTJForCausalLM", "HunYuanMoEV1ForCausalLM",
    "HunYuanDenseV1ForCausalLM", "KimiK3ForConditionalGeneration", "KimiK3LinearForCausalLM",
    "KimiLinearForCausalLM", "KimiVLForConditionalGeneration", "LlamaForCausalLM",
    "Phi3ForCausalLM", "InternLM3ForCausalLM", "IQuestCoderForCausalLM", "MiniMaxM2ForCausalLM",
    "MiniMaxM3SparseForCausalLM", "MiniMaxM3SparseForConditionalGeneration",
    "Llama4ForConditionalGeneration", "MuseGlimmerForCausalLM",
    "MuseGlimmerForConditionalGeneration", "NemotronHForCausalLM", "NemotronHPuzzleForCausalLM",
    "DeciLMForCausalLM", "PhiMoEForCausalLM", "Qwen3ForCausalLM", "Qwen3Model",
    "SDARForCausalLM", "SDARMoeForCausalLM",
    "MistralForCausalLM",  # models/mistral.py:63 hands its renamed weights to Llama's loader
})


class SGLangKVScales:
    def target(self, name: str, family: str | None) -> str | None:
        return target(name)

    def compressed_tensors_creates(self, scheme: Mapping[str, object] | None
                                   ) -> tuple[bool, str]:
        # sglang compressed_tensors.py:212-225 with is_supported_scheme at :1276-1285
        if scheme is None:
            return False, ("compressed-tensors without kv_cache_scheme gets no KV-scale "
                           "parameters")
        ok = (scheme.get("type") == "float" and scheme.get("num_bits") == 8
              and scheme.get("strategy") == "tensor" and scheme.get("symmetric", True)
              and not scheme.get("dynamic", False))
        if not ok:
            return False, (f"SGLang ignores kv_cache_scheme {scheme_text(scheme)}: only "
                           "static symmetric per-tensor FP8 is supported "
                           "(compressed_tensors.py:215-224)")
        return True, "compressed-tensors kv_cache_scheme (static per-tensor FP8)"

    def accepts_vector(self, decl: QuantDecl) -> bool:
        # a scalar parameter refuses a vector: sglang weight_utils.py:1576-1586 asserts equal
        # sizes
        return False

    def remaps(self, architecture: str) -> bool:
        return architecture in SGLANG_REMAP_ARCHITECTURES


KV_SCALES = SGLangKVScales()
