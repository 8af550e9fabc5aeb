"""KV-scale verdicts from checkpoints on disk (the local reader), their cost, and their alerts."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from checkpoint_builder import (
    CT_FP8_KV,
    FP8,
    config,
    into_hf_cache,
    llama_tensors,
    scale,
    weight_ranges,
    write_checkpoint,
)

from kvtui.core.checkpoint import ReadBudget, read_checkpoint
from kvtui.sources.checkpoint_files import (
    CheckpointNotFound,
    LocalCheckpointFiles,
    inspect_local_checkpoint,
)
from tests.helpers import session_of

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs"
CALIBRATED_K = [0.0234375, 0.03125, 0.046875, 0.0625]
CALIBRATED_V = [0.015625, 0.0078125, 0.01171875, 0.02734375]


class RecordingFiles(LocalCheckpointFiles):
    """The local reader, logging every (file, offset, size) it reads."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.reads: list[tuple[str, int, int]] = []

    def open(self, name):
        f = super().open(name)
        if f is None:
            return None
        real = f.read_at

        def read_at(offset, size):
            self.reads.append((name, offset, size))
            return real(offset, size)

        f.read_at = read_at  # type: ignore[method-assign]
        return f


def verdict(d: Path, engine: str = "sglang", **kw):
    facts = inspect_local_checkpoint(str(d), **kw)
    v = facts.kv_scale_verdict(engine)
    assert v is not None, facts.notes
    return facts, v


def codes(v) -> set[str]:
    return {f.code for f in v.findings}


# -- the verdicts ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["F32", "BF16", "F16"])
def test_calibrated_scales_are_read_per_layer(tmp_path, dtype):
    d = write_checkpoint(tmp_path / "m", llama_tensors(4, k=CALIBRATED_K, v=CALIBRATED_V,
                                                       dtype=dtype), config(4, FP8))
    facts, v = verdict(d)
    assert v.verdict == "calibrated" and v.usable and v.confidence == "high"
    assert (v.scaled_layers, v.expected_layers, v.loaded_tensors) == (4, 4, 8)
    assert v.k_range == (0.0234375, 0.0625) and v.v_range == (0.0078125, 0.02734375)
    kv = facts.kv_scales
    assert [t.values for t in kv.tensors if t.kind == "k"] == [(x,) for x in CALIBRATED_K]
    assert {t.dtype for t in kv.tensors} == {dtype}
    assert kv.attention_layers == {"model.layers": [0, 1, 2, 3]}
    assert facts.to_dict()["kv_scale_verdict"] == "calibrated"
    again = inspect_local_checkpoint(str(d))
    assert json.dumps(again.to_dict()) == json.dumps(facts.to_dict())  # deterministic
    assert "calibrated" in facts.summary() and "4/4 attention layers" in facts.summary()


def test_all_ones_is_trivial(tmp_path):
    d = write_checkpoint(tmp_path / "m", llama_tensors(4, k=[1.0] * 4, v=[1.0] * 4),
                         config(4, FP8))
    _, v = verdict(d)
    assert v.verdict == "trivial" and not v.usable
    assert "exactly 1.0" in v.findings[0].message


def test_one_value_everywhere_is_uniform(tmp_path):
    d = write_checkpoint(tmp_path / "m", llama_tensors(4, k=[0.5] * 4, v=[0.5] * 4),
                         config(4, FP8))
    _, v = verdict(d)
    assert v.verdict == "uniform" and v.usable
    d = write_checkpoint(tmp_path / "kv", llama_tensors(4, k=[0.5] * 4, v=[0.25] * 4),
                         config(4, FP8))
    _, v = verdict(d)
    assert v.verdict == "uniform" and "0.25, 0.5" in v.findings[0].message


@pytest.mark.parametrize("bad", [0.0, -0.5, math.nan, math.inf])
def test_zero_negative_nan_inf_are_broken(tmp_path, bad):
    k = [*CALIBRATED_K[:3], bad]
    d = write_checkpoint(tmp_path / "m", llama_tensors(4, k=k, v=CALIBRATED_V), config(4, FP8))
    facts, v = verdict(d)
    assert v.verdict == "broken" and (v.scaled_layers, v.expected_layers) == (3, 4)
    (f,) = [f for f in v.findings if f.code == "broken"]
    assert f.message.startswith("1 scale tensor holds")
    assert f.evidence == ("model.layers.3.self_attn.k_proj.k_scale",)
    json.dumps(facts.to_dict(), allow_nan=False)  # NaN / inf reach the report as strings


def test_missing_layers_are_partial(tmp_path):
    k = [0.02, None, 0.03, None]
    v = [0.01, None, 0.02, 0.04]
    d = write_checkpoint(tmp_path / "m", llama_tensors(4, k=k, v=v), config(4, FP8))
    _, out = verdict(d)
    assert out.verdict == "partial" and (out.scaled_layers, out.expected_layers) == (2, 4)
    text = " ".join(f.message for f in out.findings)
    assert "(layer 1): it runs with scale 1.0" in text
    assert "layer 3 has a v_scale but no k_scale" in text


@pytest.mark.parametrize("style,sglang,vllm", [
    ("attn", "unloadable", "calibrated"),  # already the parameter's name: vLLM only
    ("qkv", "unloadable", "calibrated"),
    ("odd", "unloadable", "unloadable"),
    ("plain", "calibrated", "calibrated"),
    ("output", "calibrated", "calibrated"),
])
def test_names_the_engine_ignores_are_unloadable(tmp_path, style, sglang, vllm):
    d = write_checkpoint(tmp_path / "m", llama_tensors(4, k=CALIBRATED_K, v=CALIBRATED_V,
                                                       style=style), config(4, FP8))
    facts = inspect_local_checkpoint(str(d))
    assert facts.kv_scale_verdict("sglang").verdict == sglang
    assert facts.kv_scale_verdict("vllm").verdict == vllm
    if sglang == "unloadable":
        assert "8 of 8 KV-scale tensors are not loaded" in \
            facts.kv_scale_verdict("sglang").findings[0].message


def test_legacy_kv_scale_covers_k_and_v(tmp_path):
    d = write_checkpoint(tmp_path / "m", llama_tensors(4, k=CALIBRATED_K, style="kv"),
                         config(4, FP8))
    _, v = verdict(d)
    assert v.verdict == "calibrated" and v.scaled_layers == 4
    assert v.k_range == v.v_range


def test_scales_without_a_config_that_loads_them_are_unloadable(tmp_path):
    tensors = llama_tensors(4, k=CALIBRATED_K, v=CALIBRATED_V)
    d = write_checkpoint(tmp_path / "none", tensors, config(4))
    _, v = verdict(d)
    assert v.verdict == "unloadable" and "no quantization config" in v.findings[0].message
    # ModelOpt without kv_cache_quant_algo: no KV-scale parameters, and a config mismatch
    d = write_checkpoint(tmp_path / "mo", tensors, config(4), hf_quant={
        "producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4"}})
    _, v = verdict(d)
    assert v.verdict == "unloadable" and v.config_mismatch
    d = write_checkpoint(tmp_path / "mo8", tensors, config(4), hf_quant={
        "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8"}})
    assert verdict(d)[1].verdict == "calibrated"


def test_declared_fp8_without_scales_is_a_config_mismatch(tmp_path):
    d = write_checkpoint(tmp_path / "m", llama_tensors(4), config(4, CT_FP8_KV))
    facts, v = verdict(d)
    assert v.verdict == "absent" and v.config_mismatch
    assert "declares an FP8 KV cache" in v.findings[0].message
    assert facts.has_k_scale is False
    # and two config files that disagree
    d = write_checkpoint(tmp_path / "two", llama_tensors(4, k=CALIBRATED_K, v=CALIBRATED_V),
                         config(4, {"quant_method": "modelopt", "kv_cache_quant_algo": "FP8"}),
                         hf_quant={"quantization": {"kv_cache_quant_algo": "NVFP4"}})
    _, v = verdict(d)
    assert any(f.code == "config-mismatch" and "disagree" in f.message for f in v.findings)


def test_per_head_vectors(tmp_path):
    heads = [[0.02, 0.03]] * 4
    ct = {"quant_method": "compressed-tensors",
          "kv_cache_scheme": {"num_bits": 8, "type": "float", "strategy": "attn_head",
                              "symmetric": True}}
    d = write_checkpoint(tmp_path / "ct", llama_tensors(4, k=heads, v=heads, style="plain"),
                         config(4, ct))
    facts = inspect_local_checkpoint(str(d))
    assert facts.kv_scale_verdict("vllm").verdict == "calibrated"
    assert facts.kv_scale_verdict("sglang").verdict == "unloadable"  # ignores attn_head
    assert facts.kv_scales.tensors[0].shape == (2,)
    d = write_checkpoint(tmp_path / "fp8", llama_tensors(4, k=heads, v=heads), config(4, FP8))
    facts = inspect_local_checkpoint(str(d))
    for engine in ("sglang", "vllm"):
        v = facts.kv_scale_verdict(engine)
        assert v.verdict == "unloadable" and "per-head vectors" in v.findings[0].message
        assert v.scaled_layers == 0 and v.loaded_tensors == 0


def test_unverified_model_class_lowers_confidence(tmp_path):
    d = write_checkpoint(tmp_path / "m", llama_tensors(4, k=CALIBRATED_K, v=CALIBRATED_V),
                         config(4, FP8, arch="Qwen2ForCausalLM"))
    facts = inspect_local_checkpoint(str(d))
    assert facts.kv_scale_verdict("sglang").confidence == "medium"
    assert facts.kv_scale_verdict("vllm").confidence == "high"


# -- shards, the HF cache, the cost ---------------------------------------------------------------

def test_sharded_checkpoint_with_a_missing_shard(tmp_path):
    d = write_checkpoint(tmp_path / "m", llama_tensors(6, k=[0.02 + i / 100 for i in range(6)],
                                                       v=[0.01 + i / 100 for i in range(6)]),
                         config(6, FP8), shards=3)
    facts, v = verdict(d)
    assert v.verdict == "calibrated" and v.scaled_layers == 6
    assert facts.kv_scales.files_listed == 3
    (d / "model-00002-of-00003.safetensors").unlink()
    facts, v = verdict(d)
    assert v.verdict == "incomplete"
    assert facts.kv_scales.missing_files == ["model-00002-of-00003.safetensors"]
    unread = [t for t in facts.kv_scales.tensors if t.values is None]
    assert unread and all(t.file == "model-00002-of-00003.safetensors" for t in unread)
    assert any("missing" in n for n in facts.notes)
    # the layers in the shards that are there were still read
    assert any(t.values for t in facts.kv_scales.tensors if t.layer == 0)


def test_hf_cache_layout(tmp_path, monkeypatch):
    model = write_checkpoint(tmp_path / "src", llama_tensors(4, k=CALIBRATED_K,
                                                             v=CALIBRATED_V),
                             config(4, FP8), shards=2)
    hub = tmp_path / "hub"
    snap = into_hf_cache(model, hub, "org/tiny-fp8")
    for arg in (str(hub / "models--org--tiny-fp8"), str(snap)):
        facts = inspect_local_checkpoint(arg)
        assert facts.source == str(snap)
        assert facts.kv_scale_verdict().verdict == "calibrated"
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    assert inspect_local_checkpoint("org/tiny-fp8").source == str(snap)
    with pytest.raises(CheckpointNotFound, match="not in the local Hugging Face cache"):
        inspect_local_checkpoint("org/absent")
    # a half-downloaded snapshot: the shard's symlink points at a blob that is not there
    target = (snap / "model-00002-of-00002.safetensors").resolve()
    target.unlink()
    facts = inspect_local_checkpoint(str(snap))
    assert facts.kv_scales.missing_files == ["model-00002-of-00002.safetensors"]


def test_only_headers_and_scales_are_read(tmp_path):
    d = write_checkpoint(tmp_path / "m", llama_tensors(6, k=[0.02 + i / 100 for i in range(6)],
                                                       v=[0.01 + i / 100 for i in range(6)]),
                         config(6, FP8), shards=2)
    files = RecordingFiles(d)
    facts = read_checkpoint(files)
    assert facts.kv_scale_verdict().verdict == "calibrated"
    for shard in ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"):
        weights = weight_ranges(d / shard)
        for name, off, size in files.reads:
            if name == shard:
                assert not any(off < end and start < off + size for start, end in weights), \
                    (name, off, size)
    total = sum(size for _, _, size in files.reads)
    assert facts.kv_scales.bytes_read == total
    weights_bytes = sum(e - s for f in d.glob("*.safetensors") for s, e in weight_ranges(f))
    assert total < weights_bytes / 10


def test_a_scale_sized_like_a_weight_is_never_read(tmp_path):
    tensors = llama_tensors(2, k=[0.02, 0.03], v=[0.01, 0.02])
    tensors["model.layers.1.self_attn.k_proj.k_scale"] = scale([0.5] * 40_000)
    d = write_checkpoint(tmp_path / "m", tensors, config(2, FP8))
    facts = inspect_local_checkpoint(str(d))
    big = next(t for t in facts.kv_scales.tensors if t.layer == 1 and t.kind == "k")
    assert big.values is None and "too large to be a KV scale" in (big.problem or "")
    assert facts.kv_scales.bytes_read < 40_000


def test_time_limit_stops_reading_with_a_clear_message(tmp_path):
    d = write_checkpoint(tmp_path / "m", llama_tensors(6, k=[0.02] * 6, v=[0.01] * 6),
                         config(6, FP8), shards=3)
    ticks = iter(range(10_000))
    facts = read_checkpoint(LocalCheckpointFiles(d), budget=ReadBudget(seconds=6.5),
                            clock=lambda: float(next(ticks)))  # one second per look at the clock
    kv = facts.kv_scales
    assert kv.stopped is not None and "time limit 6.5 s" in kv.stopped
    assert any("slow" in n for n in facts.notes)
    assert facts.kv_scale_verdict().verdict == "incomplete"
    assert kv.unread_files


def test_byte_limit_names_a_huge_checkpoint(tmp_path):
    d = write_checkpoint(tmp_path / "m", llama_tensors(40, k=[0.02] * 40, v=[0.01] * 40),
                         config(40, FP8))
    facts = inspect_local_checkpoint(str(d), budget=ReadBudget(max_bytes=2_000))
    kv = facts.kv_scales
    assert kv.stopped is not None and "huge" in kv.stopped and kv.bytes_read <= 2_000
    assert facts.kv_scale_verdict().verdict == "incomplete"


def test_damaged_files_are_notes_not_errors(tmp_path):
    d = write_checkpoint(tmp_path / "m", llama_tensors(4, k=CALIBRATED_K, v=CALIBRATED_V),
                         config(4, FP8), shards=2)
    (d / "model-00001-of-00002.safetensors").write_bytes(b"\xff" * 16)
    (d / "config.json").write_text("{oops")
    facts = inspect_local_checkpoint(str(d))
    assert not facts.has_config and any("not valid JSON" in n for n in facts.notes)
    assert any("header length" in n for n in facts.notes)
    v = facts.kv_scale_verdict()
    # the unreadable shard held layers 0-1; config.json unreadable: the config is a guess
    assert v.verdict == "incomplete" and v.confidence == "medium"
    assert {t.layer for t in facts.kv_scales.tensors if t.values is None} == {0, 1}
    empty = tmp_path / "empty"
    empty.mkdir()
    facts = inspect_local_checkpoint(str(empty))
    assert facts.kv_scales is None and any("tensor names unknown" in n for n in facts.notes)


# -- the alerts and `kvtui check --checkpoint` ---------------------------------------------

def _check(*argv: str) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "kvtui", "check", *argv], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    return proc.returncode, proc.stdout, proc.stderr


def _alert(report: dict, rule: str) -> dict:
    return next(a for a in report["alerts"] if a["rule"] == rule)


def test_check_refines_fp8_unscaled_by_the_values(tmp_path):
    log = str(SAMPLES / "qwen35-397b-nvfp4-tp8-fp8.log")
    kv_fp8 = {"quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8"}}
    good = write_checkpoint(tmp_path / "good", llama_tensors(4, k=CALIBRATED_K, v=CALIBRATED_V),
                            config(4), hf_quant=kv_fp8)
    ones = write_checkpoint(tmp_path / "ones", llama_tensors(4, k=[1.0] * 4, v=[1.0] * 4),
                            config(4), hf_quant=kv_fp8)
    weights_only = write_checkpoint(tmp_path / "w8", llama_tensors(4, k=[1.0] * 4,
                                                                   v=[1.0] * 4), config(4, FP8))
    assert _check("--checkpoint", str(weights_only))[0] == 0  # no FP8 KV declared
    rc, out, _ = _check(log, "--checkpoint", str(good), "--json", "--fail-on", "critical")
    report = json.loads(out)
    a = _alert(report, "kv-fp8-unscaled")
    assert a["severity"] == "warning" and "calibrated" in a["title"]
    assert "KV scales calibrated" in a["detail"]
    assert report["checkpoint"]["kv_scale_verdict"] == "calibrated"
    rc2, out, _ = _check(log, "--checkpoint", str(ones), "--json", "--fail-on", "critical")
    a = _alert(json.loads(out), "kv-fp8-unscaled")
    assert a["severity"] == "critical" and a["confidence"] == "high"
    assert "trivial" in a["title"] and "exactly 1.0" in a["detail"]
    assert (rc, rc2) == (0, 1)


def test_check_refines_auto_fp8_and_kv_fp8(tmp_path):
    from kvtui.sources.readers import iter_lines

    good = inspect_local_checkpoint(str(write_checkpoint(
        tmp_path / "good", llama_tensors(4, k=CALIBRATED_K, v=CALIBRATED_V), config(4, FP8))))
    bad = inspect_local_checkpoint(str(write_checkpoint(
        tmp_path / "bad", llama_tensors(4, k=CALIBRATED_K, v=CALIBRATED_V, style="odd"),
        config(4, FP8))))
    lines = list(iter_lines(str(SAMPLES / "qwen35-397b-nvfp4-tp8-auto-fp8.log")))
    results = {}
    for label, ck in (("none", None), ("good", good), ("bad", bad)):
        for mode, feed in (("auto", lines), ("mid", [x for x in lines if "server_args" not in x])):
            a = session_of(feed, "log", checkpoint=ck)
            rule = "kv-auto-fp8" if mode == "auto" else "kv-fp8"
            results[(label, mode)] = _alert(a.report().to_json(), rule)
    assert results[("none", "auto")]["severity"] == "critical"
    assert results[("good", "auto")]["severity"] == "warning"
    assert results[("bad", "auto")]["severity"] == "critical"
    assert "unloadable" in results[("bad", "auto")]["detail"]
    assert (results[("none", "mid")]["severity"], results[("none", "mid")]["confidence"]) == \
        ("warning", "medium")
    assert results[("good", "mid")]["severity"] == "info"
    assert (results[("bad", "mid")]["severity"], results[("bad", "mid")]["confidence"]) == \
        ("critical", "high")


def test_check_checkpoint_alone_and_its_errors(tmp_path):
    d = write_checkpoint(tmp_path / "m", llama_tensors(4, k=[0.02, None, 0.03, 0.04],
                                                       v=[0.01, None, 0.02, 0.03]),
                         config(4, FP8))
    rc, out, err = _check("--checkpoint", str(d))
    assert rc == 0, err  # FP8 weights, no FP8 KV declared: `auto` keeps a BF16 cache
    assert "Checkpoint " + str(d) in out and "sglang: partial" in out
    assert "weights not read" in out
    rc, _, err = _check("--checkpoint", str(tmp_path / "nowhere"))
    assert rc == 2 and "no such directory" in err and "Traceback" not in err
    rc, _, err = _check()
    assert rc == 2 and "--checkpoint" in err


def test_checkpoint_names_are_inert_in_text_output(tmp_path):
    tensors = llama_tensors(2, k=[0.02, 0.03], v=[0.01, 0.02], style="odd")
    tensors["model.layers.0.self_attn.\x1b[31mred\x1b[0m.k_cache_scale"] = scale(0.5)
    d = write_checkpoint(tmp_path / "m", tensors, config(2, FP8))
    rc, out, _ = _check("--checkpoint", str(d))
    assert rc == 0 and "\x1b" not in out



def test_checkpoint_alone_gates_a_deploy_by_its_scales(tmp_path):
    """With no log yet, a checkpoint that declares FP8 KV fails the gate unless its scales are
    usable; once a log shows the cache, the FP8 rules speak instead (no second alert)."""
    kv_fp8 = {"quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8"}}
    good = write_checkpoint(tmp_path / "good", llama_tensors(4, k=CALIBRATED_K, v=CALIBRATED_V),
                            config(4), hf_quant=kv_fp8)
    ones = write_checkpoint(tmp_path / "ones", llama_tensors(4, k=[1.0] * 4, v=[1.0] * 4),
                            config(4), hf_quant=kv_fp8)
    weights_only = write_checkpoint(tmp_path / "w8", llama_tensors(4, k=[1.0] * 4,
                                                                   v=[1.0] * 4), config(4, FP8))
    assert _check("--checkpoint", str(weights_only))[0] == 0  # no FP8 KV declared
    rc_good, out_good, _ = _check("--checkpoint", str(good))
    rc_ones, out_ones, _ = _check("--checkpoint", str(ones), "--json")
    assert (rc_good, rc_ones) == (0, 1)
    assert "checkpoint-kv-scales" not in out_good
    assert [a["rule"] for a in json.loads(out_ones)["alerts"]] == ["checkpoint-kv-scales"]
    log = SAMPLES / "qwen35-397b-nvfp4-tp8-fp8.log"
    _, out, _ = _check(str(log), "--checkpoint", str(ones), "--json")
    rules = [a["rule"] for a in json.loads(out)["alerts"]]
    assert "kv-fp8-unscaled" in rules and "checkpoint-kv-scales" not in rules
