"""The safetensors reader on files the reference serializer wrote; the engines' name rules."""

from __future__ import annotations

import json
import math
import struct

import pytest
from checkpoint_builder import Raw, scale, weight, write_safetensors
from hypothesis import given, settings
from hypothesis import strategies as hs
from safetensors.numpy import load_file

from kvtui.core.checkpoint import kvnames
from kvtui.core.checkpoint import safetensors as st
from kvtui.engines.sglang import kvscales as sglang_scales
from kvtui.engines.vllm import kvscales as vllm_scales


def _read(path):
    data = path.read_bytes()
    n = st.header_length(data[:8])
    return data, st.parse_header(data[8:8 + n], n)


@pytest.mark.parametrize("dtype", ["F32", "F16", "BF16", "F64"])
def test_scalar_and_vector_values_in_every_float_dtype(tmp_path, dtype):
    values = [0.0234375, 0.5, 1.0, 0.015625]  # exact in bf16 and fp16
    path = tmp_path / "a.safetensors"
    write_safetensors(path, {"w": weight((4, 4)), "s": scale(0.0234375, dtype),
                             "s1": scale([0.5], dtype), "vec": scale(values, dtype)})
    data, entries = _read(path)
    assert entries["s"].shape == () and entries["s1"].shape == (1,)
    assert entries["vec"].dtype == dtype and entries["vec"].numel == 4
    for name, want in (("s", [0.0234375]), ("s1", [0.5]), ("vec", values)):
        e = entries[name]
        assert st.decode(e.dtype, data[e.start:e.end]) == tuple(want)
    if dtype != "BF16":  # numpy cannot load bf16; elsewhere the reference reader must agree
        ref = load_file(str(path))
        e = entries["vec"]
        assert list(ref["vec"]) == list(st.decode(e.dtype, data[e.start:e.end]))


def test_special_values_and_fp8():
    nan_inf = struct.pack("<3f", math.nan, math.inf, -0.0)
    vals = st.decode("F32", nan_inf)
    assert math.isnan(vals[0]) and vals[1] == math.inf and vals[2] == 0.0
    # E4M3FN: 0x38 = 1.0, 0x7f = NaN, 0x7e = 448 (its maximum); E5M2: 0x3c = 1.0, 0x7c = inf
    e4 = st.decode("F8_E4M3", bytes([0x38, 0x7e, 0x01]))
    assert e4 == (1.0, 448.0, 2.0 ** -9)
    assert math.isnan(st.decode("F8_E4M3", b"\x7f")[0])
    assert st.decode("F8_E5M2", bytes([0x3c, 0x7c])) == (1.0, math.inf)


def test_header_errors_are_format_errors(tmp_path):
    with pytest.raises(st.FormatError):
        st.header_length(b"\x00" * 4)
    with pytest.raises(st.FormatError):
        st.header_length(struct.pack("<Q", 0))
    with pytest.raises(st.FormatError):
        st.header_length(struct.pack("<Q", 10 ** 12))
    with pytest.raises(st.FormatError):
        st.parse_header(b"{not json")
    with pytest.raises(st.FormatError):  # 3 floats cannot fill 8 bytes
        st.parse_header(b'{"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}')
    with pytest.raises(st.FormatError):
        st.parse_header(b'{"a": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}}')
    with pytest.raises(st.FormatError):
        st.decode("I4", b"\x00")


def test_offsets_are_absolute_and_metadata_is_skipped(tmp_path):
    path = tmp_path / "m.safetensors"
    write_safetensors(path, {"b": Raw("F32", (2,), struct.pack("<2f", 3.0, 4.0)),
                             "a": scale(2.0)})
    data, entries = _read(path)
    assert "__metadata__" not in entries
    n = struct.unpack("<Q", data[:8])[0]
    assert min(e.start for e in entries.values()) == 8 + n
    assert st.decode("F32", data[entries["b"].start:entries["b"].end]) == (3.0, 4.0)


# -- which names the engines load (SGLang 0.5.23, vLLM 0.33.0; see kvnames for file:line) --------

L = "model.layers.7.self_attn"
NAME_TABLE = [
    # (checkpoint name, SGLang target, vLLM target (fp8 config))
    (f"{L}.k_proj.k_scale", f"{L}.attn.k_scale", f"{L}.attn.k_scale"),  # ModelOpt
    (f"{L}.v_proj.v_scale", f"{L}.attn.v_scale", f"{L}.attn.v_scale"),
    (f"{L}.k_scale", f"{L}.attn.k_scale", f"{L}.attn.k_scale"),  # llm-compressor
    (f"{L}.kv_scale", f"{L}.attn.k_scale", f"{L}.attn.k_scale"),  # legacy, shared by K and V
    (f"{L}.k_proj.output_scale", f"{L}.attn.k_scale", f"{L}.attn.k_scale"),  # Quark
    # already the parameter's name: SGLang's remap adds a second ".attn" and drops it
    (f"{L}.attn.k_scale", None, f"{L}.attn.k_scale"),
    (f"{L}.qkv_proj.k_scale", None, f"{L}.attn.k_scale"),  # fused QKV: vLLM only
    (f"{L}.k_cache.scale", None, f"{L}.attn.k_scale"),  # HYV3: vLLM only
    ("model.layers.7.mixer.k_proj.k_scale", "model.layers.7.mixer.attn.k_scale",
     "model.layers.7.mixer.attn.k_scale"),  # NemotronH
    (f"{L}.k_proj.kv_scale", None, None),
    (f"{L}.k_cache_scale", None, None),
    ("model.layers.7.k_scale", None, None),  # not under the attention module
]


@pytest.mark.parametrize("name,sglang,vllm", NAME_TABLE)
def test_engine_name_rules(name, sglang, vllm):
    assert kvnames.scale_name(name) is not None
    assert sglang_scales.target(name) == sglang
    assert vllm_scales.target(name, "fp8") == vllm


def test_output_scale_needs_an_fp8_or_quark_config_in_vllm():
    name = f"{L}.v_proj.output_scale"
    assert vllm_scales.target(name, "quark") == f"{L}.attn.v_scale"
    assert vllm_scales.target(name, "compressed-tensors") is None


def test_what_is_not_a_kv_scale():
    for name in (f"{L}.q_proj.weight_scale", f"{L}.k_proj.input_scale", f"{L}.q_scale",
                 f"{L}.attn.prob_scale", "model.layers.0.mlp.gate_proj.weight_scale_2"):
        assert kvnames.scale_name(name) is None, name
    sn = kvnames.scale_name(f"{L}.kv_scale")
    assert sn is not None and (sn.kind, sn.stack, sn.layer) == ("kv", "model.layers", 7)


def test_which_configs_create_scale_parameters():
    Q = kvnames.QuantDecl
    assert kvnames.creates_scale_params(sglang_scales.KV_SCALES, Q("fp8"))[0]
    assert not kvnames.creates_scale_params(sglang_scales.KV_SCALES, Q(None))[0]
    assert not kvnames.creates_scale_params(sglang_scales.KV_SCALES, Q("modelopt"))[0]
    assert kvnames.creates_scale_params(sglang_scales.KV_SCALES, Q("modelopt", "FP8"))[0]
    ct_head = {"type": "float", "num_bits": 8, "strategy": "attn_head", "symmetric": True}
    ct = Q("compressed-tensors", None, ct_head)
    ok, why = kvnames.creates_scale_params(sglang_scales.KV_SCALES, ct)
    assert not ok and "attn_head" in why
    assert kvnames.creates_scale_params(vllm_scales.KV_SCALES, ct)[0]
    assert vllm_scales.KV_SCALES.accepts_vector(Q("compressed-tensors", None, ct_head))
    assert not sglang_scales.KV_SCALES.accepts_vector(Q("compressed-tensors", None, ct_head))


# -- a checkpoint's bytes are untrusted: the parser is total -----------------------------------

_JSONISH = hs.recursive(hs.none() | hs.booleans() | hs.integers(-5, 2 ** 70) | hs.text(max_size=8),
                        lambda c: hs.lists(c, max_size=4) | hs.dictionaries(hs.text(max_size=8),
                                                                           c, max_size=4),
                        max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(hs.dictionaries(hs.text(max_size=12), _JSONISH, max_size=5) | hs.binary(max_size=64))
def test_header_parser_is_total(doc):
    raw = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    try:
        entries = st.parse_header(raw)
    except st.FormatError:
        return
    for e in entries.values():
        assert e.start <= e.end
        if e.dtype in st.ITEM_SIZE:
            assert e.nbytes == e.numel * st.ITEM_SIZE[e.dtype]


@settings(max_examples=200, deadline=None)
@given(hs.sampled_from(sorted(st.ITEM_SIZE)), hs.binary(max_size=32))
def test_decode_is_total(dtype, data):
    try:
        values = st.decode(dtype, data)
    except st.FormatError:
        assert len(data) % st.ITEM_SIZE[dtype]
        return
    assert len(values) == len(data) // st.ITEM_SIZE[dtype]
