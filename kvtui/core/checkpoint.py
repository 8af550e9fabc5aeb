"""What the checkpoint itself says about KV-cache quantization, independent of how it was read.

The log can only say "scales were not found" or "FP8 KV cache requested"; the checkpoint settles
whether per-layer `k_scale`/`v_scale` tensors exist and which KV quantization it was exported for.
The SSH layer reads the files (SFTP); this module only interprets their text, so it stays pure,
UI-free and testable without a host. Alert rules read `has_k_scale`, `kv_cache_quant_algo` and
`sglang_version`; the capacity calculator can read `model_config`.
"""

from __future__ import annotations

import json
import struct
from dataclasses import asdict, dataclass, field
from typing import Any

# config.json keys the capacity calculator cares about (copied as-is when present).
MODEL_CONFIG_KEYS: tuple[str, ...] = (
    "architectures", "model_type", "torch_dtype", "num_hidden_layers", "num_attention_heads",
    "num_key_value_heads", "head_dim", "hidden_size", "kv_lora_rank", "qk_rope_head_dim",
    "qk_nope_head_dim", "v_head_dim", "sliding_window", "max_position_embeddings",
    "layer_types", "full_attention_interval",
)


@dataclass
class CheckpointFacts:
    source: str | None = None  # where the files were read ("host:/dir")
    model_path: str | None = None  # as given in server_args
    has_config: bool = False
    quant_method: str | None = None  # weight quantization (fp8, modelopt, compressed-tensors...)
    kv_cache_quant_algo: str | None = None  # e.g. "FP8" from hf_quant_config.json
    has_k_scale: bool | None = None  # None: no tensor list could be read
    has_v_scale: bool | None = None
    scale_tensor_count: int = 0
    sglang_version: str | None = None
    model_config: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["summary"] = self.summary()
        return d

    def summary(self) -> str:
        """One sentence for alerts and the TUI: what the checkpoint says about KV scales."""
        if self.has_k_scale is None and self.has_v_scale is None:
            scales = "tensor list not readable"
        elif self.has_k_scale or self.has_v_scale:
            kinds = "/".join(n for n, v in (("k_scale", self.has_k_scale),
                                            ("v_scale", self.has_v_scale)) if v)
            scales = f"checkpoint carries per-layer {kinds} ({self.scale_tensor_count} tensors)"
        else:
            scales = "no k_scale/v_scale tensors anywhere in the checkpoint"
        algo = (f"; kv_cache_quant_algo={self.kv_cache_quant_algo}"
                if self.kv_cache_quant_algo else "")
        return scales + algo


def _loads(text: str, what: str, facts: CheckpointFacts) -> Any:
    try:
        return json.loads(text)
    except (ValueError, TypeError) as exc:
        facts.notes.append(f"{what}: not valid JSON ({exc})")
        return None


def parse_config_json(text: str, facts: CheckpointFacts) -> None:
    """config.json: model shape for the calculator and any embedded quantization_config."""
    data = _loads(text, "config.json", facts)
    if not isinstance(data, dict):
        return
    facts.has_config = True
    # Multimodal checkpoints nest the language model under text_config / llm_config.
    shape = data
    for nested in ("text_config", "llm_config", "language_config"):
        sub = data.get(nested)
        if isinstance(sub, dict) and "num_hidden_layers" in sub:
            shape = {**data, **sub}
            break
    facts.model_config = {k: shape[k] for k in MODEL_CONFIG_KEYS if k in shape}
    qc = data.get("quantization_config")
    if isinstance(qc, dict):
        method = qc.get("quant_method") or qc.get("quant_algo")
        if isinstance(method, str) and not facts.quant_method:
            facts.quant_method = method
        # compressed-tensors: "kv_cache_scheme": {"num_bits": 8, "type": "float"}
        kv = qc.get("kv_cache_scheme")
        if isinstance(kv, dict) and not facts.kv_cache_quant_algo:
            bits, typ = kv.get("num_bits"), kv.get("type")
            if bits == 8 and typ == "float":
                facts.kv_cache_quant_algo = "FP8"
            elif bits is not None:
                facts.kv_cache_quant_algo = f"{typ or 'int'}{bits}".upper()
        algo = qc.get("kv_cache_quant_algo")
        if isinstance(algo, str) and algo:
            facts.kv_cache_quant_algo = algo


def parse_hf_quant_config(text: str, facts: CheckpointFacts) -> None:
    """hf_quant_config.json (ModelOpt export): quantization.quant_algo / kv_cache_quant_algo."""
    data = _loads(text, "hf_quant_config.json", facts)
    if not isinstance(data, dict):
        return
    q = data.get("quantization", data)
    if not isinstance(q, dict):
        return
    algo = q.get("kv_cache_quant_algo")
    if isinstance(algo, str) and algo:
        facts.kv_cache_quant_algo = algo
    elif algo is None and "kv_cache_quant_algo" in q:
        facts.notes.append("hf_quant_config.json: kv_cache_quant_algo is null (no KV quantization)")
    qa = q.get("quant_algo")
    if isinstance(qa, str) and qa and not facts.quant_method:
        facts.quant_method = f"modelopt:{qa}"


def count_scale_tensors(names: list[str] | Any, facts: CheckpointFacts) -> None:
    """Count `*.k_scale` / `*.v_scale` (and the legacy single `*.kv_scale`) tensor names."""
    k = v = kv = 0
    for name in names:
        if not isinstance(name, str):
            continue
        if name.endswith(".k_scale"):
            k += 1
        elif name.endswith(".v_scale"):
            v += 1
        elif name.endswith(".kv_scale"):
            kv += 1
    facts.has_k_scale = bool(facts.has_k_scale) or k > 0 or kv > 0
    facts.has_v_scale = bool(facts.has_v_scale) or v > 0 or kv > 0
    facts.scale_tensor_count += k + v + kv
    if kv:
        facts.notes.append(f"{kv} legacy kv_scale tensors (one scale shared by K and V)")


def parse_safetensors_index(text: str, facts: CheckpointFacts) -> None:
    """model.safetensors.index.json: the weight_map keys are every tensor name."""
    data = _loads(text, "model.safetensors.index.json", facts)
    if not isinstance(data, dict) or not isinstance(data.get("weight_map"), dict):
        facts.notes.append("model.safetensors.index.json: no weight_map")
        return
    count_scale_tensors(list(data["weight_map"]), facts)


def safetensors_header_length(prefix: bytes) -> int | None:
    """The JSON header length of a .safetensors file from its first 8 bytes (None if bogus)."""
    if len(prefix) < 8:
        return None
    (n,) = struct.unpack("<Q", prefix[:8])
    return n if 0 < n <= 100 * 1024 * 1024 else None


def parse_safetensors_header(header: bytes, facts: CheckpointFacts) -> None:
    """The JSON header of a single-file checkpoint (no index): its keys are the tensor names."""
    try:
        data = json.loads(header.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        facts.notes.append(f"model.safetensors: unreadable header ({exc})")
        return
    if isinstance(data, dict):
        count_scale_tensors([k for k in data if k != "__metadata__"], facts)
