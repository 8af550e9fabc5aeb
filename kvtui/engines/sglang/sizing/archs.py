"""The architectures SGLang sizes with a pool of their own kind (hybrid linear attention, DSA),
by the first release that does, read from the wheels.

Why apart from `families`: the registry coverage (`kvtui.engines.sglang.coverage`) names these
tables, and the family rules ask the coverage for every other architecture's verdict; with the
tables here, below both, neither imports the other in a circle.
"""

from __future__ import annotations

Version = tuple[int, int, int]

# -- hybrid linear-attention families -------------------------------------------------------
# GDN: model_runner.py:1301-1306 (0.5.3, `is_hybrid_gdn`: Qwen3Next + FalconH1),
# model_runner.py:1483-1487 (0.5.4, Qwen3NextConfig), model_runner.py:1578-1589 (0.5.9, + Qwen3.5).
# Mamba2: model_runner.py:1490-1494 (0.5.4, FalconH1 | NemotronH), model_runner.py:1600-1615
# (0.5.9, + GraniteMoeHybrid when it has a mamba layer). KDA: model_runner.py:1389-1393 (0.5.5).
GDN_ARCHS: dict[str, Version] = {
    "Qwen3NextForCausalLM": (0, 5, 2), "Qwen3NextForCausalLMMTP": (0, 5, 2),
    "Qwen3_5ForConditionalGeneration": (0, 5, 9),
    "Qwen3_5MoeForConditionalGeneration": (0, 5, 9),
}
MAMBA2_ARCHS: dict[str, Version] = {
    "FalconH1ForCausalLM": (0, 5, 3), "NemotronHForCausalLM": (0, 5, 4),
    "GraniteMoeHybridForCausalLM": (0, 5, 9),
    # LFM2: Lfm2Config in mamba2_config (configs/hybrid_arch.py:78-90), its short-conv state
    # from configs/lfm2.py:59-96. Read in 0.5.23 only: older releases are not modelled
    # (`coverage.for_spec`).
    "Lfm2ForCausalLM": (0, 5, 23), "Lfm2MoeForCausalLM": (0, 5, 23),  # configs/lfm2_moe.py
    # Bailing V2.5 (Ling/Ring 2.5, Ling-2.6; model_type bailing_hybrid without
    # short_conv_kernel_size): hybrid_lightning_config joins mambaish_config (configs/
    # hybrid_arch.py:46-52, :145-155), its state a Mamba2StateShape of no conv and a
    # (heads, head_dim, head_dim) temporal state (configs/bailing_hybrid.py:214-236). Read in
    # 0.5.23 only.
    "BailingMoeV2_5ForCausalLM": (0, 5, 23),
}
KDA_ARCHS: dict[str, Version] = {"KimiLinearForCausalLM": (0, 5, 5)}

# -- DSA (DeepSeek sparse attention): `is_deepseek_nsa` / `is_deepseek_dsa` -------------------
# configs/model_config.py:52-58 (0.5.3, the first: DeepseekV3/V32, NSATokenToKVPool at
# model_runner.py:1586-1600), :52-62 (0.5.4: + V3NextN), :54-67 (0.5.9: + GlmMoeDsa,
# MistralLarge3, Pixtral), :191-207 (0.5.23: + GlmMoeDsaNextN, LongcatFlash, Dots3). All need
# index_topk in the config. The budget adds the indexer from 0.5.4 (model_runner.py:1396-1420;
# 0.5.3 budgets the latent alone, :1274-1279, and prints the latent buffers alone, :1096-1102).
DSA_ARCHS: dict[str, Version] = {
    "DeepseekV3ForCausalLM": (0, 5, 3), "DeepseekV32ForCausalLM": (0, 5, 3),
    "DeepseekV3ForCausalLMNextN": (0, 5, 4), "GlmMoeDsaForCausalLM": (0, 5, 9),
    "MistralLarge3ForCausalLM": (0, 5, 9), "GlmMoeDsaForCausalLMNextN": (0, 5, 16),
}

# The classes that are DSA by the class alone (the others in DSA_ARCHS are DSA only with
# index_topk, which a log without the model's config does not show), with the family each
# names: only V3.2's checkpoints name DeepseekV32ForCausalLM, only GLM-5's (`glm_moe_dsa`)
# name GlmMoeDsaForCausalLM (0.5.9 server_args.py:1205 "DeepSeek 3.2, GlmMoeDsaForCausalLM";
# a GLM-5-FP8 run logged a pool of 61,463 B/token, 78 layers x (656 + 132), the NSA FP8 layout).
DSA_BY_CLASS: dict[str, str] = {"DeepseekV32ForCausalLM": "DeepSeek V3.2 DSA",
                                "GlmMoeDsaForCausalLM": "GLM-5 DSA"}
