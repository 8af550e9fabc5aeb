"""Lines NVIDIA Dynamo's logging wrapped (issue 36.10).

Dynamo replaces the engine's head with its own (parsers/envelope.py cites its source):
`configure_sglang_logging` gives SGLang's loggers the format `%(message)s` and a handler that
passes each record to the Rust runtime with the target `{module}.{funcName}`
(components/src/dynamo/runtime/logging.py `LogHandler.emit`), which prints tracing-subscriber's
compact format with `TimeFormatter` (`%Y-%m-%dT%H:%M:%S%.6fZ`, or `%:z` under
DYN_LOG_USE_LOCAL_TZ) and the level right-aligned in 5 (lib/runtime/src/logging.rs
`setup_logging`); vLLM's loggers print through `VllmColorFormatter`, `{ts} {level:>5}
{target}: {msg}` with Python's level names. Coloured unless ANSI is disabled: the escapes
below are the ones `VllmColorFormatter` writes "to match Rust tracing's compact colored output".
Messages are the engines' own wordings; figures made up.
"""

from __future__ import annotations

import pytest

from parsers.envelope import dynamo_head, payload_start
from parsers.prefix import line_timestamp
from parsers.sglang.line import parse_line as sglang_line
from parsers.vllm.line import parse_line as vllm_line
from tests.helpers import session_of

DIM, RESET, GREEN = "\x1b[2m", "\x1b[0m", "\x1b[32m"
TS = "2025-11-04T05:31:43.123456Z"


def plain(msg: str, target: str = "scheduler.event_loop_normal", level: str = "INFO",
          ts: str = TS) -> str:
    return f"{ts} {level:>5} {target}: {msg}"


def coloured(msg: str, target: str = "scheduler.event_loop_normal", level: str = "INFO",
             ts: str = TS) -> str:
    return (f"{DIM}{ts}{RESET} {GREEN}{level:>5}{RESET} {DIM}{target}{RESET}{DIM}:{RESET} "
            f"{msg}")


SGLANG = [
    ("Decode batch, #running-req: 7, #token: 7040, token usage: 0.01, cuda graph: True, "
     "gen throughput (token/s): 6.73, #queue-req: 0", "decode_batch", "gen_throughput", 6.73),
    ("Prefill batch, #new-seq: 18, #new-token: 16384, #cached-token: 0, token usage: 0.02, "
     "#running-req: 0, #queue-req: 0", "prefill_batch", "new_token", 16384),
    ("KV Cache is allocated. #tokens: 413540, K size: 25.24 GB, V size: 25.24 GB", "kv_pool",
     "tokens", 413540),
    ("server_args=ServerArgs(model_path='/models/m', tp_size=4, kv_cache_dtype='auto')",
     "server_args", "tp_size", 4),
]


@pytest.mark.parametrize("wrap", [plain, coloured])
@pytest.mark.parametrize(("msg", "kind", "field", "value"), SGLANG)
def test_sglang_messages_behind_dynamos_head(wrap, msg, kind, field, value):
    ev = sglang_line(wrap(msg))
    assert ev is not None and ev.kind == kind and ev.get(field) == value
    assert ev.ts == "2025-11-04 05:31:43.123456" and ev.rank is None
    native = sglang_line(f"[2025-11-04 05:31:43] {msg}")
    assert native is not None and ev.fields == native.fields


@pytest.mark.parametrize("ts", ["2025-11-04T05:31:43.123456+08:00", "2025-11-04T05:31:43Z"])
@pytest.mark.parametrize("level", ["WARN", "ERROR", "DEBUG"])
def test_every_level_and_zone(ts, level):
    ev = sglang_line(plain(SGLANG[2][0], "model_runner.init_memory_pool", level, ts))
    assert ev is not None and ev.kind == "kv_pool"


def test_behind_dockers_timestamps():
    line = "2026-05-21T02:05:31.000000001Z " + plain(SGLANG[0][0])
    ev = sglang_line(line)
    assert ev is not None and ev.kind == "decode_batch" and ev.get("gen_throughput") == 6.73
    assert dynamo_head(line) is not None and payload_start(line) == line.index("Decode")


VLLM = [
    ("Available KV cache memory: 30.12 GiB", "gpu_worker.determine_available_memory", "kv_pool",
     "kv_gib", 30.12),
    ("GPU KV cache size: 246,720 tokens", "kv_cache_utils._report_kv_cache_config",
     "capacity", "max_total_num_tokens", 246720),
]


@pytest.mark.parametrize("wrap", [plain, coloured])
@pytest.mark.parametrize(("msg", "target", "kind", "field", "value"), VLLM)
def test_vllm_messages_behind_dynamos_formatter(wrap, msg, target, kind, field, value):
    ev = vllm_line(wrap(msg, target))
    assert ev is not None and ev.kind == kind and ev.get(field) == value
    assert ev.ts == "2025-11-04 05:31:43.123456"
    assert vllm_line(wrap(msg, target, "WARNING")) is not None  # Python's level name


def test_a_dynamo_log_reports_as_sglangs(tmp_path):
    lines = [plain(SGLANG[3][0], "engine._launch_subprocesses"),
             plain(SGLANG[2][0], "model_runner.init_memory_pool"),
             *(plain(SGLANG[0][0].replace("6.73", f"{100 + i}.00"),
                     ts=f"2025-11-04T05:32:{i:02d}.000001Z") for i in range(10))]
    s = session_of(lines, "dynamo.log")
    r = s.report().to_json()
    assert r["engine"] == "sglang"
    assert r["parallel"]["tp"] == 4  # the dump's
    assert r["runtime"]["decode_batches"] == 10 and r["runtime"]["last_gen_throughput"] == 109.0
    assert [p["tokens"] for p in r["pools"]] == [413540]
    # Dynamo's stamp is no SGLang release's (microseconds), and its head has no rank tags: no
    # release is dated by it, and no TP is inferred from the missing tags
    s2 = session_of(lines[1:], "dynamo.log")
    assert s2.report().to_json()["parallel"]["tp"] is None


def test_the_replay_times_dynamo_lines():
    assert line_timestamp(plain(SGLANG[0][0])) == "2025-11-04 05:31:43.123456"
    assert line_timestamp(coloured(SGLANG[0][0])) is not None


@pytest.mark.parametrize("line", [
    "2025-11-04T05:31:43.123456Z some other program's line: with a colon",
    "2025-11-04T05:31:43Z [2025-11-04 05:31:43 TP0] Decode batch, #running-req: 1",  # docker
])
def test_other_lines_are_no_dynamo_head(line):
    assert dynamo_head(line) is None
