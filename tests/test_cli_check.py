"""`kvtui check` and `kvtui events` as a user runs them: exit codes, errors, JSON shape."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_logs"
FP8 = SAMPLES / "qwen35-397b-nvfp4-tp8-fp8.log"
BF16 = SAMPLES / "qwen35-397b-nvfp4-tp8-bf16.log"


def kvtui(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kvtui", *args], cwd=ROOT, input=stdin and
                          stdin.decode(), capture_output=True, text=True, timeout=120)


def test_check_json_contract():
    out = kvtui("check", str(FP8), "--json")
    assert out.returncode == 1, out.stderr  # a critical alert, --fail-on critical by default
    r = json.loads(out.stdout)
    for key in ("engine", "model", "parallel", "kv_cache", "pools", "capacity", "weights",
                "runtime", "runs", "alerts", "whatif"):
        assert key in r, key
    assert r["engine"] == "sglang"
    assert r["model"]["path"] == "/models/nvidia/Qwen3.5-397B-A17B-NVFP4"
    assert r["parallel"]["tp"] == 8
    kv = r["kv_cache"]
    assert (kv["configured_dtype"], kv["effective_dtype"], kv["scales"]) == (
        "fp8_e4m3", "fp8_e4m3", "missing")
    pool = next(p for p in r["pools"] if p["kind"] == "mha")
    assert pool["tokens"] == 608174 and pool["k_gib"] == 2.18 and pool["v_gib"] == 2.18
    assert pool["bytes_per_token"] == round((2.18 + 2.18) * 2**30 / 608174, 1)
    assert {p["kind"] for p in r["pools"]} == {"mha", "mamba"}
    assert r["capacity"]["max_total_num_tokens"] == 608174
    assert [a["rule"] for a in r["alerts"]] == ["kv-fp8-unscaled"]


@pytest.mark.parametrize(("fail_on", "code"), [("critical", 1), ("warning", 1), ("never", 0)])
def test_fail_on_levels_with_a_critical_alert(fail_on, code):
    assert kvtui("check", str(FP8), "--fail-on", fail_on).returncode == code


def test_fail_on_warning_only_alerts():
    # The BF16 run has only a warning (low-context-concurrency).
    assert kvtui("check", str(BF16)).returncode == 0
    assert kvtui("check", str(BF16), "--fail-on", "warning").returncode == 1


def test_clean_log_exits_zero():
    assert kvtui("check", str(SAMPLES / "llama31-70b-tp8.log"), "--fail-on", "warning") \
        .returncode == 0


@pytest.mark.parametrize("bad", ["/nonexistent/x.log", "/", "CORRUPT_GZ"])
def test_bad_paths_exit_2_with_one_line(bad, tmp_path):
    if bad == "CORRUPT_GZ":
        p = tmp_path / "broken.log.gz"
        p.write_bytes(b"\x1f\x8b\x08\x00" + b"not deflate data" * 64)
        bad = str(p)
    out = kvtui("check", bad)
    assert out.returncode == 2
    assert out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "Traceback" not in out.stderr


def test_unknown_model_exits_2():
    out = kvtui("check", str(FP8), "--model", "no-such-model-xyz")
    assert out.returncode == 2 and "Traceback" not in out.stderr


def test_human_output_quotes_evidence_and_fix():
    out = kvtui("check", str(FP8))
    assert "CRITICAL kv-fp8-unscaled" in out.stdout
    assert "no scaling factors provided" in out.stdout
    assert "fix: " in out.stdout and "--kv-cache-dtype bf16" in out.stdout


def test_gz_and_stdin_give_the_same_report(tmp_path):
    gz = tmp_path / "fp8.log.gz"
    gz.write_bytes(gzip.compress(FP8.read_bytes()))
    a = json.loads(kvtui("check", str(FP8), "--json").stdout)
    b = json.loads(kvtui("check", str(gz), "--json").stdout)
    c = json.loads(kvtui("check", "-", "--json", stdin=FP8.read_bytes()).stdout)
    a, b, c = (strip_sources(r) for r in (a, b, c))
    assert a == b == c


def strip_sources(obj):
    """The same content read three ways differs only in the source names."""
    if isinstance(obj, dict):
        return {k: strip_sources(v) for k, v in obj.items() if k not in ("source", "sources")}
    if isinstance(obj, list):
        return [strip_sources(v) for v in obj]
    return obj


def test_events_jsonl(tmp_path):
    out = kvtui("events", str(FP8))
    assert out.returncode == 0
    rows = [json.loads(x) for x in out.stdout.splitlines()]
    assert rows, "no events"
    first = rows[0]
    assert list(first)[:5] == ["source", "line", "kind", "rank", "ts"]
    assert first["kind"] == "server_args" and first["line"] == 1
    kinds = {r["kind"] for r in rows}
    assert {"fp8_scales_missing", "kv_pool", "mamba_pool", "capacity", "decode_batch"} <= kinds
    lines = FP8.read_text().splitlines()
    for r in rows[:50]:
        assert lines[r["line"] - 1].startswith(f"[{r['ts']}") or r["ts"] is None


def test_events_bad_path():
    out = kvtui("events", "/nonexistent.log")
    assert out.returncode == 2 and "Traceback" not in out.stderr


def test_help_and_version_do_not_import_textual():
    code = ("import sys; from kvtui.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('textual', 'paramiko')]\n"
            "print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip().endswith("[]"), out.stdout
    assert kvtui("--version").stdout.startswith("kvtui ")
    for cmd in ("check", "events", "whatif", "replay", "tail", "demo", "ssh"):
        assert kvtui(cmd, "--help").returncode == 0, cmd


def test_check_path_does_not_import_textual_or_paramiko():
    code = ("import sys; from kvtui.cli import main\n"
            f"rc = main(['check', {str(FP8)!r}, '--json'])\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('textual', 'paramiko')]\n"
            "print('BAD', bad, file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert "BAD []" in out.stderr


def test_log_text_reaches_the_terminal_inert(tmp_path):
    """ANSI/OSC sequences and control bytes in evidence lines never reach the user's terminal."""
    nasty = tmp_path / "nasty.log"
    nasty.write_bytes(
        b"\x1b[33m[2026-05-13 02:15:17 TP0] Using FP8 KV cache but no scaling factors provided. "
        b"Defaulting to scaling factors of 1.0. This may lead to less accurate results!"
        b"\x1b]0;pwned\x07\x1b[0m\x08\n"
        b"[2026-05-13 02:15:18 TP0] Prefill batch, #new-seq: 1, #new-token: 5, #cached-token: 0, "
        b"token usage: 0.50, #running-req: 1, #queue-req: 0, [bold]\xff\xfe\n")
    out = kvtui("check", str(nasty))
    assert out.returncode == 1
    assert "kv-fp8-unscaled" in out.stdout
    assert not any(ch in out.stdout for ch in "\x1b\x07\x08")
    js = kvtui("check", str(nasty), "--json")
    assert "\x1b" not in js.stdout  # JSON escapes control characters
    assert json.loads(js.stdout)["alerts"][0]["evidence"]["line"] == 1


def test_a_model_known_only_by_its_class_is_named_once():
    from kvtui.core.pipeline import Session
    from kvtui.core.render import render_text

    s = Session()
    s.feed_lines("log", ["[2025-05-19 01:06:14] Load weight end. type=Qwen3ForCausalLM, "
                         "dtype=torch.bfloat16, avail mem=19.67 GB, mem usage=27.57 GB."])
    model = next(ln for ln in render_text(s.report()).splitlines() if ln.startswith("Model"))
    assert model.split() == ["Model", "Qwen3ForCausalLM"]
