"""One model-spec lookup for every engine's what-if (`kvtui.core.capacity.spec_for_run`).

Why it is the core's: the order (the checkpoint's own config.json, then the model given, then a
preset the log's arguments name) is no engine's rule; SGLang's and vLLM's calculators each kept a
copy of it, which could drift apart. Only what an engine says when nothing matches is its own.
"""

from __future__ import annotations

from kvtui.core.capacity import preset_spec, spec_for_run
from kvtui.core.checkpoint import CheckpointFacts
from kvtui.core.pipeline import Session

LLAMA_8B = preset_spec("llama-3.1-8b")
CONFIG = {"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 2,
          "num_attention_heads": 8, "num_key_value_heads": 2, "hidden_size": 512,
          "torch_dtype": "bfloat16"}


def test_the_order_is_checkpoint_then_given_model_then_the_logs_names():
    args = {"model_path": "/models/meta-llama/Llama-3.1-8B-Instruct"}
    ckpt = CheckpointFacts(source="/ckpt", model_path="/ckpt", has_config=True,
                           model_config=CONFIG)
    notes: list[str] = []
    spec, why = spec_for_run(None, ckpt, args, notes, args_name="server_args")
    assert spec.num_layers == 2 and why.startswith("read from the checkpoint's config.json")
    # a model given wins over the checkpoint and the log
    spec, why = spec_for_run("llama-3.1-70b", ckpt, args, notes, args_name="server_args")
    assert spec.num_layers == 80
    # the log's model path, then its served name, with whose arguments they are
    spec, why = spec_for_run(None, None, args, notes, args_name="server_args")
    assert spec == LLAMA_8B and why.endswith("(server_args model_path)")
    spec, why = spec_for_run(None, None, {"model_path": "/m/x", "served_model_name":
                                          "Llama-3.1-8B"}, notes, args_name="vLLM's")
    assert spec == LLAMA_8B and why.endswith("(vLLM's served_model_name)")
    assert spec_for_run(None, None, {"model_path": "/m/x"}, notes, args_name="x") is None
    assert notes == []


def test_both_engines_find_the_spec_the_same_way():
    sglang = Session()
    sglang.feed_lines("s", [
        "[2025-07-28 11:00:00] server_args=ServerArgs(model_path='/m/other', "
        "served_model_name='Llama-3.1-8B', tp_size=1, kv_cache_dtype='auto', page_size=1)",
        "[2025-07-28 11:00:06 TP0] KV Cache is allocated. #tokens: 423698, K size: 25.86 GB, "
        "V size: 25.86 GB"])
    vllm = Session()
    vllm.feed_lines("v", [
        "INFO 05-01 10:00:00 [api_server.py:1] vLLM API server version 0.10.1",
        "INFO 05-01 10:00:00 [utils.py:326] non-default args: {'model': '/m/other', "
        "'served_model_name': ['Llama-3.1-8B']}",
        "(EngineCore_0 pid=9) INFO 05-01 10:00:42 [kv_cache_utils.py:849] "
        "GPU KV cache size: 423,696 tokens"])
    for s, whose in ((sglang, "server_args"), (vllm, "vLLM's")):
        wi = s.report().whatif
        assert wi is not None
        assert wi.model["hf_id"] == LLAMA_8B.hf_id
        assert wi.model_reason.endswith(f"({whose} served_model_name)")
