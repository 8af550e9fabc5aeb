"""Issue 37 point 1: which port `kvtui ssh` scrapes /metrics on when no --metrics-port is
given: the one the server's logged arguments name, read by the engine's own parser and said by
the engine behind the seam (`Engine.metrics_endpoint`), or none when the server runs without
/metrics (SGLang without --enable-metrics)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import session_of

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
V = "(APIServer pid=1) INFO 11-03 09:14:05 [api_utils.py:281] non-default args: "


def endpoint(lines: list[str]) -> tuple[int | None, str]:
    session = session_of(lines)
    assert session.engine is not None, "the lines name no engine"
    return session.engine.metrics_endpoint(session.state.current.server_args)


def test_sglang_sample_without_enable_metrics_serves_none():
    """The bundled samples' dumps print `enable_metrics=False` (SGLang's default, 0.5.23
    arg_groups/fields/observability.py:70): no port, and the reason names the flag."""
    lines = (SAMPLES / "llama31-70b-tp8.log").read_text().splitlines()
    port, why = endpoint(lines)
    assert port is None and "--enable-metrics" in why


@pytest.mark.parametrize("dump, want", [
    ("server_args=ServerArgs(model_path='m', host='h', port=31000, nccl_port=5, tp_size=2, "
     "enable_metrics=True, kv_cache_dtype='auto')", 31000),
    ("server_args={'model_path': 'm', 'port': 31001, 'tp_size': 2, 'enable_metrics': True}",
     31001),
    # a dump cut before the names: the engine's default, not "not served"
    ("server_args=ServerArgs(model_path='m', nccl_port=5, tp_size=2, x=1)", 30000),
])
def test_sglang_port_from_the_dump(dump: str, want: int):
    port, why = endpoint([f"[2026-03-01 12:00:00] {dump}"])
    assert port == want
    assert ("default" in why) == (want == 30000)


def test_sglang_nccl_port_is_not_the_http_port():
    port, _ = endpoint(["[2026-03-01 12:00:00] server_args=ServerArgs(model_path='m', "
                        "nccl_port=5123, tp_size=2, enable_metrics=True, x=1)"])
    assert port == 30000


def test_vllm_port_from_non_default_args_else_8000():
    given = endpoint([V + "{'model_tag': 'm', 'model': 'm', 'port': 8123}"])
    assert given == (8123, "the server's --port in the log")
    port, why = endpoint([V + "{'model_tag': 'm', 'model': 'm', 'tensor_parallel_size': 2}"])
    assert port == 8000 and "default" in why


def test_vllm_sample_uses_the_default_port():
    lines = (SAMPLES / "vllm-llama31-70b-tp8-bf16.log").read_text().splitlines()
    assert endpoint(lines)[0] == 8000
