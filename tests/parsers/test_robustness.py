"""Hostile input: huge lines, colour codes anywhere, replacement characters, NUL bytes."""

from __future__ import annotations

import time

import pytest

from parsers.sglang import parse_line

DECODE = (
    "[2026-03-01 12:00:00 TP0] Decode batch, #running-req: 28, #token: 22920, "
    "token usage: 0.13, cuda graph: True, gen throughput (token/s): 1086.59, #queue-req: 0"
)
POOL = "[2025-10-16 10:12:40 TP1] KV Cache is allocated. #tokens: 2795199, K size: 53.30 GB, V size: 53.30 GB"  # noqa: E501


def _timed(line: str) -> object:
    t0 = time.perf_counter()
    event = parse_line(line)
    assert time.perf_counter() - t0 < 2.0, "pathological backtracking"
    return event


@pytest.mark.parametrize(
    "line",
    [
        "x" * 1_000_000,
        "[2026-03-01 12:00:00 TP0] " + "Decode batch, " + "#running-req: 1, " * 60_000,
        "[2026-03-01 12:00:00 TP0] Prefill batch, " + ", " * 500_000,
        "server_args=ServerArgs(" + "a=1, " * 200_000,
        "server_args={" + "'k': '" * 150_000,
        "KV Cache is allocated. " + "dtype: " * 150_000,
        "Full " * 200_000 + "KV Cache is allocated. #tokens: 1",
        "Capture " + "x" * 1_000_000 + " end.",
        "\x1b[" * 300_000,
        "] " * 500_000,
        "[" + "2026-03-01 12:00:00 " * 50_000 + "] Decode batch",
        "emory" * 200_000,
        "Load weight end. quant=" + "a, " * 300_000,
        "max_total_num_tokens=" + "1" * 1_000_000,
        "new fill batch. " + "#seq: 1. " * 100_000,
    ],
    ids=lambda s: repr(s[:30]),
)
def test_megabyte_lines_are_fast_and_safe(line: str) -> None:
    _timed(line)


def test_big_server_args_keeps_fields() -> None:
    filler = ", ".join(f"field_{i}='{'v' * 20}'" for i in range(2000))
    line = f"server_args=ServerArgs(model_path='m', {filler}, tp_size=8, kv_cache_dtype='fp8_e4m3')"
    event = _timed(line)
    assert event is not None
    assert event.fields["tp_size"] == 8  # type: ignore[attr-defined]
    assert event.fields["kv_cache_dtype"] == "fp8_e4m3"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "colour",
    ["\x1b[32m", "\x1b[0m", "\x1b[1;31m", "\x1b[38;5;208m", "\x1b[2K", "\x1b[?25l", "\x1b]0;t\x07"],
)
def test_ansi_codes_anywhere(colour: str) -> None:
    for at in (0, 1, 10, 25, 26, 40, 80, len(DECODE)):
        line = DECODE[:at] + colour + DECODE[at:]
        event = parse_line(line)
        assert event is not None, repr(line)
        assert event.kind == "decode_batch"
        assert event.rank == "TP0" and event.ts == "2026-03-01 12:00:00"
        assert event.fields["gen_throughput"] == 1086.59


def test_coloured_everywhere() -> None:
    line = "".join(f"\x1b[3{i % 8}m{ch}" for i, ch in enumerate(POOL)) + "\x1b[0m"
    event = parse_line(line)
    assert event is not None and event.fields["tokens"] == 2795199


def test_replacement_characters_and_nul() -> None:
    assert parse_line("\ufffd" * 1000) is None
    assert parse_line("\x00" * 1000) is None
    bad = DECODE.replace("28", "2\ufffd")
    event = parse_line(bad)
    assert event is None or event.fields["running_req"] is None
    nul = POOL.replace("53.30 GB, V", "53.30 GB,\x00 V")
    event = parse_line(nul)
    assert event is None or event.kind == "kv_pool"


def test_progress_bar_redraw_and_line_endings() -> None:
    bar = "Capturing batches (bs=1 avail_mem=6.91 GB):  50%|##  | 1/2\r"
    event = parse_line(bar + POOL + "\r\n")
    assert event is not None and event.rank == "TP1"
    assert parse_line(DECODE + "\n") is not None
    assert parse_line("\t" + DECODE) is not None
