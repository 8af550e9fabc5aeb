"""Read an engine wheel's model registry into the JSON kvtui's coverage check keeps.

Why a script and stored data: which architectures an engine serves, and which of them build a
KV cache other than one full-attention page per layer, is read from the released source, not
guessed; the JSON under kvtui/engines/<engine>/registry/ is its output, with the release, so a
test can walk every name and a reviewer can rerun it:

    python tools/read_registry.py vllm /work/wheels/vllm-0.34.0-*.whl > \
        kvtui/engines/vllm/registry/vllm-0.34.0.json
    python tools/read_registry.py sglang /work/wheels/sglang-0.5.23-*.whl > \
        kvtui/engines/sglang/registry/sglang-0.5.23.json
    python tools/read_registry.py vllm /work/wheels/vllm-0.22.0-*.whl > \
        kvtui/engines/vllm/registry/vllm-0.22.0.json   (the classes 0.34.0 dropped)

Per architecture it stores the module that defines it and the "markers" found in that module's
text: the names of the engine's own non-standard KV layouts (a recurrent state, MLA, sliding
windows, chunked local or cross attention, KV shared between layers). kvtui's coverage modules
(`kvtui.engines.<engine>.coverage`) decide from those, and from kvtui's own family tables,
whether a cited rule sizes the architecture or it is not modelled.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import zipfile

# marker -> regex over a model module's text
MARKERS: dict[str, dict[str, str]] = {
    "vllm": {
        "recurrent_state": r"\bIsHybrid\b|\bHasInnerState\b|\bMambaBase\b|get_mamba_state_shape",
        "attention_free": r"\bIsAttentionFree\b",
        "mla": r"\bMLAAttention\b|\bMultiHeadLatentAttention\b|kv_lora_rank",
        "sparse_indexer": r"\bindex_topk\b|\bIndexer\b|SparseMLA",
        "sliding_window": r"sliding_window",
        "chunked_local": r"\bChunkedLocalAttention\b|attention_chunk_size",
        "cross_attention": r"\bCrossAttention\b|ENCODER_DECODER",
        "encoder_only": r"\bEncoderOnlyAttention\b|ENCODER_ONLY",
        "kv_sharing": r"kv_sharing_target_layer_name",
        "static_sink": r"\bStaticSinkAttention\b",
    },
    "sglang": {
        "recurrent_state": r"\bMamba2Mixer\b|\bMambaMixer\b|HybridLinearAttnBackend|"
                           r"linear_attn|\bLightning|\bShortConv|mamba2_cache_params|"
                           r"\bKimiDeltaAttention\b|GatedDeltaNet",
        "mla": r"kv_lora_rank",
        "sparse_indexer": r"\bindex_topk\b|\bIndexer\b",
        "sliding_window": r"sliding_window|is_hybrid_swa",
        "cross_attention": r"cross_attention|CrossAttention|ENCODER_DECODER",
        "encoder_only": r"ENCODER_ONLY",
        "kv_sharing": r"kv_shared|num_kv_shared_layers|kv_sharing",
    },
}


def _dict_literal(tree: ast.Module, name: str) -> dict[str, ast.expr]:
    for node in tree.body:
        if isinstance(node, ast.Assign):
            target: ast.expr | None = node.targets[0]
        elif isinstance(node, ast.AnnAssign):
            target = node.target
        else:
            continue
        value = node.value
        if isinstance(target, ast.Name) and target.id == name and isinstance(value, ast.Dict):
            return {k.value: v for k, v in zip(value.keys, value.values, strict=True)
                    if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    return {}


def _markers(engine: str, text: str) -> list[str]:
    return sorted(m for m, rx in MARKERS[engine].items() if re.search(rx, text))


def read_vllm(whl: str) -> dict[str, object]:
    z = zipfile.ZipFile(whl)
    names = set(z.namelist())
    reg_path = "vllm/model_executor/models/registry.py"
    tree = ast.parse(z.read(reg_path).decode())
    groups = ["_TEXT_GENERATION_MODELS", "_EMBEDDING_MODELS", "_LATE_INTERACTION_MODELS",
              "_REWARD_MODELS", "_TOKEN_CLASSIFICATION_MODELS",
              "_SEQUENCE_CLASSIFICATION_MODELS", "_MULTIMODAL_MODELS",
              "_SPECULATIVE_DECODING_MODELS", "_TRANSFORMERS_SUPPORTED_MODELS",
              "_TRANSFORMERS_BACKEND_MODELS"]
    archs: dict[str, dict[str, object]] = {}
    for group in groups:
        for arch, value in _dict_literal(tree, group).items():
            if arch in archs or not isinstance(value, ast.Tuple):
                continue  # _VLLM_MODELS merges in this order: the first group wins
            mod = value.elts[0].value if isinstance(value.elts[0], ast.Constant) else ""
            cls = value.elts[1].value if isinstance(value.elts[1], ast.Constant) else ""
            mod = str(mod)
            path = (mod.replace(".", "/") + ".py" if mod.startswith("vllm.")
                    else f"vllm/model_executor/models/{mod}.py")
            if path not in names and mod.startswith("vllm."):
                # a package (vllm/models/<name>/): every module in it, and the
                # model_executor modules it re-exports its classes from
                pkg = mod.replace(".", "/") + "/"
                text = "\n".join(z.read(n).decode(errors="replace") for n in sorted(names)
                                  if n.startswith(pkg) and n.endswith(".py"))
                for dep in sorted(set(re.findall(r"vllm\.model_executor\.models\.(\w+)",
                                                 text))):
                    dep_path = f"vllm/model_executor/models/{dep}.py"
                    if dep_path in names:
                        text += "\n" + z.read(dep_path).decode(errors="replace")
                path = pkg
            else:
                text = z.read(path).decode(errors="replace") if path in names else ""
            archs[arch] = {"group": group.strip("_").lower().removesuffix("_models"),
                           "module": path, "class": cls, "markers": _markers("vllm", text)}
    prev = {k: v.value for k, v in _dict_literal(tree, "_PREVIOUSLY_SUPPORTED_MODELS").items()
            if isinstance(v, ast.Constant)}
    return {"engine": "vllm", "release": _release(whl),
            "source": f"{reg_path} of the wheel: the keys of _VLLM_MODELS (by group) and "
                      "_PREVIOUSLY_SUPPORTED_MODELS (the last release that served each); "
                      "markers read from each architecture's module",
            "architectures": dict(sorted(archs.items())),
            "previously_supported": dict(sorted(prev.items()))}


def read_sglang(whl: str) -> dict[str, object]:
    z = zipfile.ZipFile(whl)
    archs: dict[str, dict[str, object]] = {}
    for path in sorted(z.namelist()):
        if not (path.startswith("sglang/srt/models/") and path.endswith(".py")) or \
                path.count("/") != 3:
            continue
        text = z.read(path).decode(errors="replace")
        tree = ast.parse(text)
        entry: list[str] = []
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "EntryClass" for t in node.targets):
                val = node.value
                elts = val.elts if isinstance(val, (ast.List, ast.Tuple)) else [val]
                entry = [e.id for e in elts if isinstance(e, ast.Name)]
        markers = _markers("sglang", text)
        for cls in entry:
            # import_model_classes keys the registry on the class's __name__
            archs.setdefault(cls, {"module": path, "markers": markers})
    return {"engine": "sglang", "release": _release(whl),
            "source": "sglang/srt/models/*.py of the wheel: every class in a module's "
                      "EntryClass (models/registry.py import_model_classes); markers read "
                      "from that module",
            "architectures": dict(sorted(archs.items()))}


def _release(whl: str) -> str:
    m = re.search(r"-(\d+\.\d+\.\d+[^-]*)-", whl.rsplit("/", 1)[-1])
    return m.group(1) if m else "?"


def main(argv: list[str]) -> int:
    engine, whl = argv[1], argv[2]
    doc = read_vllm(whl) if engine == "vllm" else read_sglang(whl)
    json.dump(doc, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
