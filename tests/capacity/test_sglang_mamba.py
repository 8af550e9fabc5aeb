"""Hybrid linear-attention sizing, release by release, against values worked out by hand.

Every expected number below is computed from the SGLang source named in the comment, with the
Qwen3.5-397B-A17B shape at attention TP 8 unless said otherwise:
per-request state = (conv (12288 // 8) x 3 x 2 B + ssm (64 // 8) x 128 x 128 x 4 B) x 45 layers
                  = (9,216 + 524,288) x 45 = 24,007,680 B.
"""

from __future__ import annotations

import pytest

from kvtui.core.capacity import preset_spec
from kvtui.core.capacity.modelspec import from_hf_config
from kvtui.engines.sglang.sizing import mamba
from kvtui.engines.sglang.sizing.args import SizingArgs
from kvtui.engines.sglang.sizing.families import CannotModel, linear_kind

PER = 24_007_680
REST = 608_174 * 7680 + 174 * PER  # 8,848,112,640 B: the sample log's KV bytes + its 174 slots


def _slot(version=(0, 5, 23), args=None, tp=8):
    spec = preset_spec("qwen3.5-397b-a17b")
    return mamba.state_per_slot(spec, tp, args or SizingArgs(), version, "gdn")


def test_state_per_slot_qwen35_tp8():
    assert _slot().per_slot == PER
    assert _slot().layers == 45


def test_ssm_dtype_rule_changes_at_0_5_9():
    """<= 0.5.8 the config's mamba_ssm_dtype is ignored (configs/qwen3_next.py:301-306 in 0.5.2,
    --mamba-ssm-dtype default float32 in server_args.py:381 of 0.5.4); from 0.5.9 it is read
    (configs/mamba_utils.py:47-105 in 0.5.10)."""
    cfg = {"architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next",
           "num_hidden_layers": 4, "hidden_size": 256, "num_attention_heads": 4,
           "num_key_value_heads": 2, "head_dim": 64, "linear_num_key_heads": 2,
           "linear_num_value_heads": 4, "linear_key_head_dim": 8, "linear_value_head_dim": 8,
           "linear_conv_kernel_dim": 4, "mamba_ssm_dtype": "bfloat16"}
    spec = from_hf_config(cfg)
    # conv_dim = 8 x 4 + 2 x 2 x 8 = 64 -> 64 x 3 x 2 B = 384; ssm 4 x 8 x 8 = 256 values
    old = mamba.state_per_slot(spec, 1, SizingArgs(), (0, 5, 8), "gdn")
    new = mamba.state_per_slot(spec, 1, SizingArgs(), (0, 5, 9), "gdn")
    assert old.per_slot == (384 + 256 * 4) * 3  # fp32 SSM, 3 linear layers
    assert new.per_slot == (384 + 256 * 2) * 3  # the config's bf16
    flag = mamba.state_per_slot(spec, 1, SizingArgs(mamba_ssm_dtype="float32"), (0, 5, 9), "gdn")
    assert flag.per_slot == old.per_slot  # --mamba-ssm-dtype wins over the config


def test_groups_extend_when_tp_exceeds_them():
    """Mamba2StateShape.create adds tp - n_groups groups when n_groups % tp != 0
    (configs/mamba_utils.py:29-38, :154-157 in 0.5.10): 16 key heads at TP 32 become 32 groups,
    conv_dim = 128 x 64 + 2 x 32 x 128 = 16,384 -> 16,384 // 32 x 3 x 2 B = 3,072 B."""
    spec = preset_spec("qwen3.5-397b-a17b")
    st = mamba.state_per_slot(spec, 32, SizingArgs(), (0, 5, 23), "gdn")
    assert st.conv_bytes == 3072 * 45
    assert st.ssm_bytes == (64 // 32) * 128 * 128 * 4 * 45
    with pytest.raises(CannotModel):
        mamba.state_per_slot(spec, 3, SizingArgs(), (0, 5, 23), "gdn")  # 64 heads / 3


@pytest.mark.parametrize(("version", "args", "slots", "state"), [
    # 0.5.2-0.5.3: fixed 512 slots (model_runner.py:360-375, 0.5.3)
    ((0, 5, 3), SizingArgs(), 512, 512 * PER),
    ((0, 5, 3), SizingArgs(max_running_requests=64), 64, 64 * PER),
    # 0.5.4-0.5.6, radix on: int(rest x 0.9 / 1.9 // per) = int(4,191,211,250.5 // PER) = 174
    # (model_runner.py:1433-1480, 0.5.4); an explicit --max-mamba-cache-size is overwritten.
    ((0, 5, 4), SizingArgs(), 174, 174 * PER),
    ((0, 5, 4), SizingArgs(max_mamba_cache_size=100), 174, 174 * PER),
    ((0, 5, 6), SizingArgs(disable_radix_cache=True), 512, 512 * PER),
    # 0.5.7: an explicit size or radix off -> fixed (mixin :145-199)
    ((0, 5, 7), SizingArgs(max_mamba_cache_size=100), 100, 100 * PER),
    ((0, 5, 7), SizingArgs(), 174, 174 * PER),
    # 0.5.8-0.5.12: explicit size honoured with the radix cache on (mixin :146-204, 0.5.8)
    ((0, 5, 8), SizingArgs(max_mamba_cache_size=100), 100, 100 * PER),
    ((0, 5, 12), SizingArgs(disable_radix_cache=True), 174, 174 * PER),  # no mrr: ratio
    ((0, 5, 12), SizingArgs(disable_radix_cache=True, max_running_requests=40), 40, 40 * PER),
    ((0, 5, 16), SizingArgs(), 174, 174 * PER),
    # 0.5.17+: padding slot: (4,191,211,250.5 - PER) // PER = 173, state (173 + 1) x PER
    # (kv_cache_configurator.py:1816-1982, 0.5.17)
    ((0, 5, 17), SizingArgs(), 173, 174 * PER),
    ((0, 5, 23), SizingArgs(max_mamba_cache_size=100), 100, 101 * PER),
])
def test_split_by_release(version, args, slots, state):
    split = mamba.split(REST, _slot(version, args), args, version, "gdn",
                        "Qwen3_5MoeForConditionalGeneration")
    assert (split.slots, split.state_bytes) == (slots, state)


def test_split_with_speculative_decoding():
    """0.5.13-0.5.16 joint solve (mixin :137-160 in 0.5.13), D = 4 draft tokens, ratio 3
    (no_buffer): slots = int(budget // (PER x (1 + 4/3))) = int(4,191,211,250.5 // 56,017,920)
    = 74; scratch = PER x min(48, 74 // 3) x 4 = PER x 24 x 4."""
    args = SizingArgs(speculative_algorithm="EAGLE", speculative_num_draft_tokens=4,
                      max_running_requests=48)
    split = mamba.split(REST, _slot((0, 5, 13), args), args, (0, 5, 13), "gdn",
                        "Qwen3NextForCausalLM")
    assert split.slots == 74
    assert split.state_bytes == 74 * PER + PER * 24 * 4
    # 0.5.8-0.5.12: the scratch mrr x D x per comes off the rest first (mixin :156-171, 0.5.9)
    old = mamba.split(REST, _slot((0, 5, 9), args), args, (0, 5, 9), "gdn",
                      "Qwen3NextForCausalLM")
    assert old.slots == int((REST - PER * 48 * 4) * 0.9 / 1.9 // PER) == 83


@pytest.mark.parametrize(("version", "args", "page", "ratio"), [
    ((0, 5, 3), SizingArgs(), 1, 1),
    ((0, 5, 4), SizingArgs(), 1, 3),
    ((0, 5, 4), SizingArgs(disable_radix_cache=True), 1, 1),
    ((0, 5, 7), SizingArgs(), 1, 5),  # 0.5.7 adds 2 even without extra_buffer (mixin :289-301)
    ((0, 5, 8), SizingArgs(), 1, 3),  # auto -> no_buffer
    ((0, 5, 9), SizingArgs(mamba_strategy="extra_buffer"), 1, 5),
    ((0, 5, 9), SizingArgs(mamba_strategy="extra_buffer", speculative_algorithm="EAGLE"), 1, 4),
    ((0, 5, 12), SizingArgs(mamba_strategy="extra_buffer", disable_overlap_schedule=True), 1, 4),
    ((0, 5, 13), SizingArgs(), 1, 3),  # auto still no_buffer
    ((0, 5, 13), SizingArgs(mamba_strategy="extra_buffer_lazy"), 1, 4),
    ((0, 5, 14), SizingArgs(), 1, 5),  # auto -> extra_buffer with overlap (server_args :4385)
    ((0, 5, 14), SizingArgs(disable_overlap_schedule=True), 1, 3),  # no overlap, page 1
    ((0, 5, 14), SizingArgs(disable_overlap_schedule=True), 64, 4),  # page > 1 wants it
    ((0, 5, 23), SizingArgs(linear_attn_backend="flashinfer"), 1, 3),
])
def test_slots_per_request(version, args, page, ratio):
    got, _ = mamba.slots_per_request(args, version, "Qwen3NextForCausalLM", "gdn", page)
    assert got == ratio


def test_mamba2_family_forced_radix_off_0_5_4_to_0_5_6():
    """model_runner.py:402-405 (0.5.4): Mamba2 configs disable the radix cache."""
    assert mamba.radix_cache_off(SizingArgs(), (0, 5, 5), "mamba2", "NemotronHForCausalLM")[0]
    assert not mamba.radix_cache_off(SizingArgs(), (0, 5, 7), "mamba2",
                                     "NemotronHForCausalLM")[0]


def test_family_by_release():
    """Qwen3.5 is a GDN hybrid from 0.5.9 (model_runner.py:1578-1589); Falcon-H1 is listed as
    GDN in 0.5.3 and as Mamba2 from 0.5.4 (model_runner.py:1301-1306 / :1490-1494)."""
    q35 = preset_spec("qwen3.5-397b-a17b")
    assert linear_kind(q35, (0, 5, 8)) is None
    assert linear_kind(q35, (0, 5, 9)) == "gdn"
    falcon = from_hf_config({"architectures": ["FalconH1ForCausalLM"], "model_type": "falcon_h1",
                             "num_hidden_layers": 2, "hidden_size": 64,
                             "num_attention_heads": 2, "num_key_value_heads": 1,
                             "head_dim": 32, "mamba_n_heads": 4, "mamba_d_head": 32,
                             "mamba_d_ssm": 128, "mamba_n_groups": 1, "mamba_d_state": 16,
                             "mamba_d_conv": 4})
    assert linear_kind(falcon, (0, 5, 3)) == "gdn"
    assert linear_kind(falcon, (0, 5, 4)) == "mamba2"
    assert falcon.full_layer_ids == (0, 1) and falcon.linear_layer_ids == (0, 1)
    # conv_dim = 128 + 2 x 1 x 16 = 160 -> 160 x 3 x 2 B; ssm 4 x 32 x 16 x 4 B; 2 layers
    st = mamba.state_per_slot(falcon, 1, SizingArgs(), (0, 5, 23), "mamba2")
    assert st.per_slot == (160 * 3 * 2 + 4 * 32 * 16 * 4) * 2


def test_nemotron_h_layers_from_the_pattern():
    spec = preset_spec("nemotron-h-8b-base-8k")
    assert len(spec.full_layer_ids) == 4 and len(spec.linear_layer_ids) == 24
    # conv_dim = 128 x 64 + 2 x 8 x 128 = 10,240; at TP 2: 5,120 x 3 x 2 B + 64 x 64 x 128 x 4 B
    st = mamba.state_per_slot(spec, 2, SizingArgs(), (0, 5, 23), "mamba2")
    assert st.per_slot == (5120 * 3 * 2 + 64 * 64 * 128 * 4) * 24


@pytest.mark.parametrize(("version", "user", "cap", "expected"), [
    # 4,000 tokens at context_len 131,072: estimate clamp(15, 2048, 4096) = 2048, tokens // 2 =
    # 2,000. <= 0.5.9: min(tokens // 2 or user // dp, pool size = user or estimate, capped)
    # (tp_worker.py:137-145 in 0.5.2, model_runner.py:593-600 in 0.5.9)
    ((0, 5, 9), None, None, 2000), ((0, 5, 9), 3000, None, 3000), ((0, 5, 9), 3000, 10, 10),
    # 0.5.10-0.5.13: min(user // dp, estimate) (model_runner_kv_cache_mixin.py:846-851, 0.5.10)
    ((0, 5, 10), 3000, None, 2048), ((0, 5, 13), None, None, 2000),
    # 0.5.14+: min(user // dp, tokens // 2) (mixin :988-991 in 0.5.14;
    # kv_cache_configurator.py:3125-3131 in 0.5.23), then the Mamba cap
    ((0, 5, 14), 3000, None, 2000), ((0, 5, 23), 3000, 7, 7),
])
def test_max_running_requests_by_release(version, user, cap, expected):
    from kvtui.engines.sglang.sizing.budget import max_running_requests

    assert max_running_requests(4000, 131072, version, user=user, mamba_cap=cap) == expected
