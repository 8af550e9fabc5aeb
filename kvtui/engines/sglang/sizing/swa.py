"""Sliding-window hybrids: which models get a separate SWA pool, and how the tokens are split.

Why it matters: with an SWA pool the sliding-window layers hold only `swa_full_tokens_ratio` x
the full pool's tokens, so the same memory holds more full-context tokens; without it every layer
is sized like a full one. Which architectures get the pool changed three times (runtime
detection, a two-model rule, an allow-list), and the token split changed with it.
"""

from __future__ import annotations

from kvtui.core.capacity.modelspec import ModelSpec
from kvtui.engines.sglang.sizing.args import SizingArgs
from kvtui.engines.sglang.sizing.families import Version

# 0.4.10-0.5.6: model_runner.py:282-290 (0.4.10) marks a model hybrid when it has
# get_attention_sliding_window_size() > 0 and is not Llama-4. The classes with that method:
# gemma2, gemma3_causal, gemma3_mm, gemma3n_causal, gemma3n_mm (0.4.10); + gpt_oss (0.5.1);
# + olmo2 (0.5.5) -- grep of models/*.py in each wheel.
_RUNTIME: tuple[tuple[Version, frozenset[str]], ...] = (
    ((0, 4, 10), frozenset({"Gemma2ForCausalLM", "Gemma3ForCausalLM",
                            "Gemma3ForConditionalGeneration", "Gemma3nForCausalLM",
                            "Gemma3nForConditionalGeneration"})),
    ((0, 5, 1), frozenset({"GptOssForCausalLM"})),
    ((0, 5, 5), frozenset({"Olmo2ForCausalLM"})),
)

# 0.5.8+: is_hybrid_swa_model (configs/model_config.py:1220-1228 in 0.5.8, :1320-1330 in 0.5.9,
# :1546-1558 in 0.5.11, :1660-1675 in 0.5.12, :1679-1705 in 0.5.13, :1903-1941 in 0.5.16,
# :2115-2155 in 0.5.19, :2651-2697 in 0.5.23), gated by --disable-hybrid-swa-memory
# (model_config.py:316-319 in 0.5.8). Gemma-2/3 are never on it.
_ALLOW: tuple[tuple[Version, frozenset[str]], ...] = (
    ((0, 5, 8), frozenset({"Llama4ForConditionalGeneration", "GptOssForCausalLM",
                           "MiMoV2FlashForCausalLM", "MiMoV2MTP"})),
    ((0, 5, 9), frozenset({"Step3p5ForCausalLM", "Step3p5MTP"})),
    ((0, 5, 11), frozenset({"Gemma4ForCausalLM", "Gemma4ForConditionalGeneration",
                            "MiMoV2ForCausalLM"})),
    ((0, 5, 12), frozenset({"DeepseekV4ForCausalLM", "DeepseekV4ForCausalLMNextN",
                            "LagunaForCausalLM"})),
    ((0, 5, 13), frozenset({"Step3p7ForConditionalGeneration",
                            "Gemma4UnifiedForConditionalGeneration"})),
    ((0, 5, 15), frozenset({"UnlimitedOCRForCausalLM"})),
    ((0, 5, 16), frozenset({"DeepseekV4ForCausalLMDSpark", "MellumForCausalLM",
                            "InklingForConditionalGeneration",
                            "InklingForConditionalGenerationMTP"})),
    ((0, 5, 18), frozenset({"MuseGlimmerForCausalLM", "MuseGlimmerForConditionalGeneration"})),
    ((0, 5, 19), frozenset({"GraniteSWAForCausalLM", "GraniteMoeSWAForCausalLM"})),
    ((0, 5, 21), frozenset({"DiffusionGemmaForBlockDiffusion", "IQuestQ1ForCausalLM",
                            "IQuestQ1MTP"})),
    ((0, 5, 22), frozenset({"EmbeddingGemma2Model"})),
    ((0, 5, 23), frozenset({"BeamForCausalLM"})),
)
# The MiMo flash class was listed by name until 0.5.10 and through MIMO_V2_MODEL_ARCHS after.


def _listed(table: tuple[tuple[Version, frozenset[str]], ...], arch: str,
            version: Version) -> bool:
    return any(version >= v and arch in archs for v, archs in table)


def pool_applies(spec: ModelSpec, version: Version, args: SizingArgs) -> tuple[bool, str]:
    """(does this release give the model a separate SWA pool?, why)."""
    arch = spec.arch
    if not spec.has_swa:
        return False, "no sliding-window layers"
    v = ".".join(map(str, version))
    if arch.startswith("Llama4"):
        if version >= (0, 5, 8):
            if args.disable_hybrid_swa_memory:
                return False, "--disable-hybrid-swa-memory"
            return True, f"Llama-4 is on SGLang {v}'s hybrid-SWA list (0.5.8+)"
        if version >= (0, 4, 9) and args.hybrid_kvcache_ratio:
            return True, "--hybrid-kvcache-ratio (Llama-4, 0.4.9-0.5.7)"
        return False, f"SGLang {v} gives Llama-4 one pool unless --hybrid-kvcache-ratio is set"
    if version >= (0, 5, 8):
        if args.disable_hybrid_swa_memory:
            return False, "--disable-hybrid-swa-memory"
        if _listed(_ALLOW, arch, version):
            return True, f"{arch} is on SGLang {v}'s hybrid-SWA allow-list"
        return False, f"{arch} is not on SGLang {v}'s hybrid-SWA allow-list (every layer " \
                      "is sized like a full one)"
    if version == (0, 5, 7):
        # configs/model_config.py:1147-1167 (0.5.7): only MiMo-V2 (and Llama-4 by ratio).
        if arch in ("MiMoV2FlashForCausalLM", "MiMoV2MTP"):
            return True, "MiMo-V2 is always hybrid on SGLang 0.5.7"
        return False, "SGLang 0.5.7 gives only MiMo-V2 (and Llama-4 by ratio) an SWA pool"
    if version >= (0, 4, 10):
        if args.disable_hybrid_swa_memory:
            return False, "--disable-hybrid-swa-memory"
        if _listed(_RUNTIME, arch, version) and (spec.sliding_window or 0) > 0:
            return True, f"SGLang {v} detects the sliding window at load (0.4.10-0.5.6)"
        return False, f"SGLang {v} does not detect a sliding window for {arch}"
    return False, f"SGLang {v} has no hybrid-SWA pool"


def _align(x: int, page: int) -> int:
    page = max(1, page)
    return x // page * page


def split_tokens(avail_bytes: int, f_bytes: int, s_bytes: int, n_full: int, n_swa: int,
                 n_layers: int, ratio: float, page: int, version: Version, *,
                 all_layer_cell: int | None = None,
                 chunk: tuple[int, int] | None = None) -> tuple[int, int, str]:
    """(full tokens, swa tokens, rule) from the bytes left for the KV pools.

    `f_bytes`/`s_bytes`: one full / one SWA layer's bytes per token. `all_layer_cell`: the cell
    the 0.4.10-0.5.8 releases divide by (every layer at the full size, plus MiMo's SWA part).
    """
    if n_full == 0:
        # all-SWA: the pool is the SWA pool, no ratio (pool_configurator.py:237-252, 0.5.11)
        swa = _align(avail_bytes // (s_bytes * n_swa), page)
        return 0, swa, "all layers sliding-window: one SWA pool"
    if chunk is not None and version <= (0, 5, 7):
        # Llama-4 with --hybrid-kvcache-ratio: set_num_token_hybrid (model_runner.py:986-1014,
        # 0.4.10); `chunk` = (attention_chunk_size, context_len), ratio = the flag's value.
        n = avail_bytes // (all_layer_cell or f_bytes * n_layers)
        t = (1 - ratio) + ratio * chunk[0] / chunk[1]
        swa = int(4 * n * t // (3 * t + 1))
        full = int(4 * n - 12 * n * t // (3 * t + 1))
        return _align(full, page), _align(swa, page), "Llama-4 chunk formula (0.4.9-0.5.7)"
    if version >= (0, 5, 11):
        # HybridSWAPoolConfigurator (pool_configurator.py:184-284 in 0.5.11, :656-921 in 0.5.23)
        cell = f_bytes * n_full + ratio * s_bytes * n_swa
        full = _align(int(avail_bytes // cell), page)
        return full, _align(int(full * ratio), page), "full = avail // (F + r S), swa = full x r"
    if version >= (0, 5, 9):
        # set_num_tokens_hybrid_swa (mixin :251-337 in 0.5.9) / _resolve_hybrid_swa_tokens
        # (mixin :287-372 in 0.5.10): memory-based with F and S.
        n = avail_bytes // (f_bytes * n_full + s_bytes * n_swa)
        total = n * (f_bytes * n_full + s_bytes * n_swa)
        full = int(total / (f_bytes * n_full + ratio * s_bytes * n_swa))
        if version == (0, 5, 9):
            return _align(full, page), _align(int(full * ratio), page), \
                "memory-based F/S solve (0.5.9)"
        full = _align(full, page)
        return full, _align(int(full * ratio), page), "memory-based F/S solve (0.5.10)"
    # 0.4.10-0.5.8: tokens of an all-full pool x layers, re-split assuming F == S
    # (model_runner.py:1016-1066 in 0.4.10; mixin :206-250 in 0.5.8). Page-aligned from 0.5.7.
    cell = all_layer_cell or f_bytes * n_layers
    n = _align(avail_bytes // cell, page)
    full = int(n * n_layers / (ratio * n_swa + n_full))
    swa = int(full * ratio)
    if version >= (0, 5, 7):
        return _align(full, page), _align(swa, page), "layer-count split (0.5.7-0.5.8)"
    return full, swa, "layer-count split (0.4.10-0.5.6)"
