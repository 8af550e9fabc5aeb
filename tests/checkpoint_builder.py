"""Small checkpoints in the real safetensors format, written by the `safetensors` package.

Values of any dtype go through `safetensors.serialize_file` with a TensorSpec over raw bytes, so
BF16 and FP8 (which numpy cannot hold) are written by the reference serializer too. Weights are
filled with 0x7f bytes: a reader that touched them would decode them, and the read log of
`RecordingFiles` shows it never does.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from pathlib import Path

import numpy as np
from safetensors import TensorSpec, serialize_file

# checkpoint name of layer i's K and V scale, per exporter style
STYLES = {
    "modelopt": ("model.layers.{i}.self_attn.k_proj.k_scale",
                 "model.layers.{i}.self_attn.v_proj.v_scale"),
    "plain": ("model.layers.{i}.self_attn.k_scale", "model.layers.{i}.self_attn.v_scale"),
    "attn": ("model.layers.{i}.self_attn.attn.k_scale", "model.layers.{i}.self_attn.attn.v_scale"),
    "output": ("model.layers.{i}.self_attn.k_proj.output_scale",
               "model.layers.{i}.self_attn.v_proj.output_scale"),
    "qkv": ("model.layers.{i}.self_attn.qkv_proj.k_scale",
            "model.layers.{i}.self_attn.qkv_proj.v_scale"),
    "kv": ("model.layers.{i}.self_attn.kv_scale", None),
    "odd": ("model.layers.{i}.self_attn.k_cache_scale", "model.layers.{i}.self_attn.v_cache_scale"),
}
_NP = {"F32": np.float32, "F16": np.float16, "F64": np.float64}
_SPEC = {"F32": "float32", "F16": "float16", "F64": "float64", "BF16": "bfloat16"}


class Raw:
    """A tensor as (safetensors dtype, shape, little-endian bytes)."""

    def __init__(self, dtype: str, shape: tuple[int, ...], data: bytes) -> None:
        self.dtype, self.shape, self.data = dtype, shape, data


def scale(values: float | list[float], dtype: str = "F32", shape: tuple[int, ...] | None = None
          ) -> Raw:
    vals = [values] if isinstance(values, (int, float)) else list(values)
    if shape is None:
        shape = () if isinstance(values, (int, float)) else (len(vals),)
    if dtype == "BF16":  # the top 16 bits of the float32 (the values used are exact in bf16)
        words = struct.unpack(f"<{len(vals)}I", struct.pack(f"<{len(vals)}f", *vals))
        return Raw(dtype, shape, struct.pack(f"<{len(vals)}H", *(w >> 16 for w in words)))
    return Raw(dtype, shape, np.asarray(vals, dtype=_NP[dtype]).tobytes())


def weight(shape: tuple[int, ...] = (64, 64)) -> Raw:
    return Raw("F32", shape, b"\x7f" * (4 * int(np.prod(shape))))


def write_safetensors(path: Path, tensors: dict[str, Raw]) -> None:
    keep = []
    specs = {}
    for name, t in tensors.items():
        buf = np.frombuffer(t.data, dtype=np.uint8).copy() if t.data else np.zeros(1, np.uint8)
        keep.append(buf)
        dtype = {"F8_E4M3": "float8_e4m3fn"}.get(t.dtype, _SPEC.get(t.dtype, t.dtype))
        specs[name] = TensorSpec(dtype=dtype, shape=t.shape, data_ptr=buf.ctypes.data,
                                 data_len=len(t.data))
    serialize_file(specs, str(path), metadata={"format": "pt"})


def llama_tensors(layers: int, *, k: list | None = None, v: list | None = None,
                  style: str = "modelopt", dtype: str = "F32") -> dict[str, Raw]:
    """Per-layer attention weights, plus K/V scales where k[i] / v[i] is not None (a list value
    is a per-head vector)."""
    out: dict[str, Raw] = {"model.embed_tokens.weight": weight((32, 64))}
    k_name, v_name = STYLES[style]
    for i in range(layers):
        for proj in ("q_proj", "k_proj", "v_proj", "o_proj"):
            out[f"model.layers.{i}.self_attn.{proj}.weight"] = weight()
        out[f"model.layers.{i}.mlp.down_proj.weight"] = weight()
        if k is not None and k[i] is not None:
            out[k_name.format(i=i)] = scale(k[i], dtype)
        if v is not None and v_name is not None and v[i] is not None:
            out[v_name.format(i=i)] = scale(v[i], dtype)
    out["lm_head.weight"] = weight((32, 64))
    return out


def config(layers: int, quant: dict | None = None, arch: str = "LlamaForCausalLM") -> dict:
    cfg: dict = {"architectures": [arch], "model_type": "llama", "num_hidden_layers": layers,
                 "num_attention_heads": 8, "num_key_value_heads": 2, "hidden_size": 64,
                 "head_dim": 8, "torch_dtype": "bfloat16"}
    if quant is not None:
        cfg["quantization_config"] = quant
    return cfg


FP8 = {"quant_method": "fp8", "activation_scheme": "static"}
CT_FP8_KV = {"quant_method": "compressed-tensors",
             "kv_cache_scheme": {"num_bits": 8, "type": "float", "strategy": "tensor",
                                 "symmetric": True, "dynamic": False}}


def write_checkpoint(d: Path, tensors: dict[str, Raw], cfg: dict | None, *, shards: int = 1,
                     hf_quant: dict | None = None) -> Path:
    """A model directory: config.json, optional hf_quant_config.json, one file or `shards`
    files with an index (tensors split in order, like a real export)."""
    d.mkdir(parents=True, exist_ok=True)
    if cfg is not None:
        (d / "config.json").write_text(json.dumps(cfg))
    if hf_quant is not None:
        (d / "hf_quant_config.json").write_text(json.dumps(hf_quant))
    if shards == 1:
        write_safetensors(d / "model.safetensors", tensors)
        return d
    names = list(tensors)
    per = -(-len(names) // shards)
    weight_map = {}
    for j in range(shards):
        fname = f"model-{j + 1:05d}-of-{shards:05d}.safetensors"
        part = {n: tensors[n] for n in names[j * per:(j + 1) * per]}
        write_safetensors(d / fname, part)
        weight_map.update(dict.fromkeys(part, fname))
    total = sum(len(t.data) for t in tensors.values())
    (d / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {"total_size": total}, "weight_map": weight_map}))
    return d


def into_hf_cache(model_dir: Path, hub_root: Path, hub_id: str, rev: str = "0123abcd") -> Path:
    """Move a model directory into the hub cache layout: blobs/<sha256> and
    snapshots/<rev>/<file> -> ../../blobs/<sha256> symlinks, refs/main = rev."""
    repo = hub_root / ("models--" + hub_id.replace("/", "--"))
    snap = repo / "snapshots" / rev
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    snap.mkdir(parents=True, exist_ok=True)
    for f in sorted(model_dir.iterdir()):
        data = f.read_bytes()
        blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
        blob.write_bytes(data)
        os.symlink(os.path.relpath(blob, snap), snap / f.name)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(rev)
    return snap


def weight_ranges(path: Path) -> list[tuple[int, int]]:
    """Absolute byte ranges of every tensor that is not a KV scale, read with plain json."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    return [(8 + n + e["data_offsets"][0], 8 + n + e["data_offsets"][1])
            for name, e in header.items() if name != "__metadata__"
            and not name.endswith(("_scale", ".scale"))]
