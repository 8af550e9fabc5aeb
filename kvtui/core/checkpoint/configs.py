"""The checkpoint's small JSON files: config.json, hf_quant_config.json, the safetensors index.

The log can only say "scales were not found" or "FP8 KV cache requested"; the config files say
which KV quantization the checkpoint was exported for, and the index names every tensor. Text in,
facts out: reading the bytes is the caller's business (kvtui.core.checkpoint.inspect).
"""

from __future__ import annotations

import json
from typing import Any

from kvtui.core.checkpoint.facts import CheckpointFacts
from kvtui.core.checkpoint.kvnames import scale_name

# config.json keys the capacity calculator cares about (copied as-is when present).
MODEL_CONFIG_KEYS: tuple[str, ...] = (
    "architectures", "model_type", "torch_dtype", "num_hidden_layers", "num_attention_heads",
    "num_key_value_heads", "head_dim", "hidden_size", "kv_lora_rank", "qk_rope_head_dim",
    "qk_nope_head_dim", "v_head_dim", "sliding_window", "max_position_embeddings",
    "layer_types", "full_attention_interval",
    # the model's own window's scaling (kvtui.core.accuracy states it beside the context)
    "rope_scaling", "rope_parameters",
)


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
        if isinstance(kv, dict):
            facts.kv_cache_scheme = kv
            facts.kv_declarations.append(f"config.json: kv_cache_scheme={_compact(kv)}")
        if isinstance(kv, dict) and not facts.kv_cache_quant_algo:
            bits, typ = kv.get("num_bits"), kv.get("type")
            if bits == 8 and typ == "float":
                facts.kv_cache_quant_algo = "FP8"
            elif bits is not None:
                facts.kv_cache_quant_algo = f"{typ or 'int'}{bits}".upper()
        algo = qc.get("kv_cache_quant_algo")
        if isinstance(algo, str) and algo:
            facts.kv_cache_quant_algo = algo
            facts.kv_declarations.append(f"config.json: kv_cache_quant_algo={algo}")


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
        facts.kv_declarations.append(f"hf_quant_config.json: kv_cache_quant_algo={algo}")
    elif algo is None and "kv_cache_quant_algo" in q:
        facts.notes.append("hf_quant_config.json: kv_cache_quant_algo is null (no KV quantization)")
        facts.kv_declarations.append("hf_quant_config.json: kv_cache_quant_algo=null")
    qa = q.get("quant_algo")
    if isinstance(qa, str) and qa and not facts.quant_method:
        facts.quant_method = f"modelopt:{qa}"


def count_scale_tensors(names: list[str] | Any, facts: CheckpointFacts) -> None:
    """Which KV-scale tensors exist under a name some engine loads (`Engine.kv_scales`, at an
    FP8 config), before any value is read: `has_k_scale` / `has_v_scale` say "present", not
    "loaded by this config" nor "calibrated" (the verdicts say that)."""
    from kvtui.core.engine import all_engines

    rules = [e.kv_scales for e in all_engines()]
    k = v = kv = 0
    for name in names:
        sn = scale_name(name) if isinstance(name, str) else None
        if sn is None or not any(r.target(name, "fp8") for r in rules):
            continue
        if sn.kind == "kv":
            kv += 1
        elif sn.kind == "k":
            k += 1
        else:
            v += 1
    facts.has_k_scale = bool(facts.has_k_scale) or k > 0 or kv > 0
    facts.has_v_scale = bool(facts.has_v_scale) or v > 0 or kv > 0
    facts.scale_tensor_count += k + v + kv
    if kv:
        facts.notes.append(f"{kv} legacy kv_scale tensors (one scale shared by K and V)")


def parse_safetensors_index(text: str, facts: CheckpointFacts) -> dict[str, str] | None:
    """model.safetensors.index.json: its weight_map (tensor name -> shard file), names counted."""
    data = _loads(text, "model.safetensors.index.json", facts)
    if not isinstance(data, dict) or not isinstance(data.get("weight_map"), dict):
        facts.notes.append("model.safetensors.index.json: no weight_map")
        return None
    weight_map = {str(k): str(v) for k, v in data["weight_map"].items()}
    count_scale_tensors(list(weight_map), facts)
    return weight_map


def _compact(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))[:300]
