"""`parsers.bulk` recognizes only lines that `parse_line` reads, and reads them the same way."""

from __future__ import annotations

import itertools
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvtui.core.runtime import batch_usage
from parsers.sglang import parse_line
from parsers.sglang.bulk import (
    _HYBRID_ROWS,
    GEN,
    HEAD,
    OTHER,
    QUEUE,
    RUNNING,
    RUNTIME_ROWS,
    TPUT,
    USAGE,
    head_facts,
    runtime_rows,
)
from tests.conftest import ROOT, SAMPLES, corpus_dir

DECODE_USAGES = [
    "#token: 9071, token usage: 0.01",
    "#full token: 52311, full token usage: 0.05, mamba num: 8, mamba usage: 0.02",
    "#full token: 350592, full token usage: 0.74, #swa token: 280473, swa token usage: 0.61",
]
PREFILL_USAGES = ["token usage: 0.96", "full token usage: 0.28, mamba usage: 0.20",
                  "full token usage: 1.00, swa token usage: 0.31"]
HEADS = ["[2026-07-04 05:01:33 TP0] ", "[2026-07-04 05:01:33.123 DP1 TP3 EP3] ",
         "[05:01:33] ", "[2026-07-04T05:01:33,5 PP1 TP7] ",
         "[2026-07-04 05:01:33 TP0 TP1 TP2 TP3 TP4] ",
         "[2026-07-04 05:01:33 INFO 4711 [TP0 scheduler.py:1234] "]
GRAPHS = ["", "cuda graph: True, ", "npu graph: False, "]


def decode_lines() -> list[str]:
    return [f"{head}Decode batch{sep} #running-req: 040, {usage}, {graph}gen throughput "
            f"(token/s): 1083.18, #queue-req: 2349{tail}"
            for head, sep, usage, graph, tail in itertools.product(HEADS, ",.", DECODE_USAGES,
                                                                   GRAPHS, ["", ", "])]


def prefill_lines() -> list[str]:
    return [f"{head}Prefill batch{sep} #new-seq: 1, #new-token: 5, #cached-token: 0, {hit}{usage}, "
            f"#running-req: 7, #queue-req: 3{pending}{graph}{tput}"
            for head, sep, hit, usage, pending, graph, tput in itertools.product(
                HEADS[:2], ",.", ["", "cache hit rate: 12.50%, "], PREFILL_USAGES,
                ["", ", #pending-token: 9"], ["", ", cuda graph: False"],
                ["", ", input throughput (token/s): 7740.92"])]


def recognized(row: tuple[str, ...]) -> bool:
    """What the analyzer folds column-wise: a matched row whose head is a timestamp prefix."""
    return bool(row[USAGE]) and head_facts(row[HEAD])[0] is not None


def assert_agrees(line: str, row: tuple[str, ...]) -> None:
    """A recognized row says what parse_line says; an unmatched one is the line itself."""
    if not row[USAGE]:
        assert row[OTHER] == line
        return
    if not recognized(row):
        return
    # The formats the core compares as text (kvtui.core.bulk relies on them).
    assert re.fullmatch(r"[0-9]\.[0-9]{2}", row[USAGE]), line
    assert row[GEN] == "" or re.fullmatch(r"[0-9]{1,9}\.[0-9]{2}", row[GEN]), line
    ev = parse_line(line)
    assert ev is not None, line
    assert ev.kind == ("decode_batch" if row[GEN] else "prefill_batch"), line
    assert (ev.ts, ev.rank) == head_facts(row[HEAD]), line
    f = ev.fields
    # A hybrid row carries the fuller pool's usage, as the fold reads the event.
    assert batch_usage(f) == float(row[USAGE]), line
    assert f["running_req"] == int(row[RUNNING]) and f["queue_req"] == int(row[QUEUE]), line
    if row[GEN]:
        g = f["gen_throughput"]
        assert g == float(row[GEN]), line
        assert int(g * 100 + 0.5) == int(row[GEN].replace(".", "")), line
        assert row[TPUT] == "", line
    else:
        # The input throughput column is the prefill line's, rounded alike by both routes.
        t = f.get("input_throughput")
        assert (row[TPUT] == "") == (t is None), line
        if t is not None:
            assert t == float(row[TPUT]), line


def check_block(lines: list[str]) -> int:
    rows = runtime_rows(lines)
    assert rows is not None
    assert len(rows) == len(lines)
    for line, row in zip(lines, rows, strict=True):
        assert_agrees(line, row)
    return sum(map(recognized, rows))


def test_columns_are_in_the_documented_order():
    index = RUNTIME_ROWS.groupindex
    assert [index[name] - 1 for name in ("head", "running", "usage", "gen", "queue", "tput",
                                          "other")] == [HEAD, RUNNING, USAGE, GEN, QUEUE, TPUT,
                                                        OTHER]


def test_hybrid_columns_are_in_the_documented_order():
    index = _HYBRID_ROWS.groupindex
    assert [index[name] - 1 for name in ("head", "running", "usage", "second", "gen", "queue",
                                          "tput", "other")] == [HEAD, RUNNING, USAGE, 3, 4, 5, 6,
                                                                7]


def test_every_dominant_layout_is_recognized_and_agrees():
    lines = decode_lines() + prefill_lines()
    assert check_block(lines) == len(lines)


@pytest.mark.parametrize("line", [
    # Layouts and values the bulk patterns leave to the line-by-line parser.
    "[2026-07-04 05:01:33 TP0] Decode batch: #running-req: 40, #token: 9071, token usage: 0.01, "
    "gen throughput (token/s): 1083.18, #queue-req: 2349",
    "[2026-07-04 05:01:33 TP0] Decode batch, #running-req: 40, #token: 9071, token usage: 0.01, "
    "accept len: 3.13, gen throughput (token/s): 1083.18, #queue-req: 2349",
    "[2026-07-04 05:01:33 TP0] Decode batch, #running-req: 40, #token: 9071, token usage: 10.01, "
    "gen throughput (token/s): 1083.18, #queue-req: 2349",
    "[2026-07-04 05:01:33 TP0] Decode batch, #running-req: 40, #token: 9071, token usage: 0.1, "
    "gen throughput (token/s): 1083.18, #queue-req: 2349",
    "[2026-07-04 05:01:33 TP0] Decode batch, #running-req: 40, #token: 9071, token usage: 0.01, "
    "gen throughput (token/s): 1234567890.18, #queue-req: 2349",
    "[2026-07-04 05:01:33 TP0] Decode batch, #running-req: ٤٠, #token: 9071, token usage: 0.01, "
    "gen throughput (token/s): 1083.18, #queue-req: 2349",
    "[2026-07-04 05:01:33 TP0] Decode batch, #running-req: 40, #token: 9071, token usage: 0.01, "
    "gen throughput (token/s): 1083.18, #queue-req: 2349\r",
    " [2026-07-04 05:01:33 TP0] Decode batch, #running-req: 40, #token: 9071, token usage: 0.01, "
    "gen throughput (token/s): 1083.18, #queue-req: 2349",
    "[gpu=0] Decode batch, #running-req: 40, #token: 9071, "
    "token usage: 0.01, gen throughput (token/s): 1083.18, #queue-req: 2349",
    "[2026-07-04 05:01:33\tTP0] Decode batch, #running-req: 40, #token: 9071, "
    "token usage: 0.01, gen throughput (token/s): 1083.18, #queue-req: 2349",
    "[\x1b[32m2026-07-04 05:01:33 TP0] Decode batch, #running-req: 40, #token: 9071, "
    "token usage: 0.01, gen throughput (token/s): 1083.18, #queue-req: 2349",
    # the colour as `cat -v` shows it (parsers/text.py CARET_SGR)
    "[^[[32m2026-07-04 05:01:33 TP0] Decode batch, #running-req: 40, #token: 9071, "
    "token usage: 0.01, gen throughput (token/s): 1083.18, #queue-req: 2349",
    "^[[32m[2026-07-04 05:01:33 TP0] Decode batch, #running-req: 40, #token: 9071, "
    "token usage: 0.01, gen throughput (token/s): 1083.18, #queue-req: 2349^[[0m",
    # A head so long that parse_line does not find its end: both leave the line alone.
    f"[2026-07-04 05:01:33 INFO 1 [TP0 {'x' * 130}.py:1] Decode batch, #running-req: 40, "
    "#token: 9071, token usage: 0.01, gen throughput (token/s): 1083.18, #queue-req: 2349",
    "[2026-07-04 05:01:33 TP0] Decode batch, #running-req: 40, #token: 9071, token usage: 0.01, "
    "gen throughput (token/s): 1083.18, #queue-req: 2349, #retracted-req: 1",
    "2026-07-04 05:01:33 TP0] Decode batch, #running-req: 40, #token: 9071, token usage: 0.01, "
    "gen throughput (token/s): 1083.18, #queue-req: 2349",
    "[2026-07-04 05:01:33 TP0] Prefill batch; #new-seq: 1, #new-token: 5, #cached-token: 0, "
    "token usage: 0.96, #running-req: 7, #queue-req: 3",
    '[2026-07-04 05:01:33] INFO:     127.0.0.1:53152 - "POST /generate HTTP/1.1" 200 OK',
    "",
])
def test_other_lines_go_line_by_line(line):
    rows = runtime_rows([line, line])
    assert rows is not None
    assert not any(map(recognized, rows))
    for row in rows:
        assert_agrees(line, row)


def test_a_line_with_a_newline_of_its_own_is_refused():
    assert runtime_rows(["a", "b\nc"]) is None


# SGLang's column grammar; the vLLM samples (vllm-*) have no SGLang runtime rows.
@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.glob("*.log")
                                        if not p.name.startswith("vllm-")))
def test_sample_logs(name):
    lines = (SAMPLES / name).read_text().splitlines()
    assert check_block(lines) > 0


def test_corpus():
    corpus = corpus_dir()
    if not corpus.is_dir():
        pytest.skip(f"corpus not found at {corpus}")
    recognized = 0
    for path in sorted(corpus.glob("*.log")):
        recognized += check_block(path.read_text(encoding="utf-8", errors="replace")
                                  .splitlines())
    assert recognized > 0


def test_the_benchmark_log_is_all_recognized(tmp_path: Path):
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from biglog import write_big_log
    finally:
        sys.path.pop(0)
    path = write_big_log(tmp_path / "big.log", 5000, seed=3)
    lines = path.read_text().splitlines()
    runtime = sum(1 for ln in lines if " batch, #" in ln)
    assert check_block(lines) == runtime


_digits = st.text("0123456789", min_size=1, max_size=4)
_noise = st.text(st.sampled_from(list("0123456789.,: -#x\r\t٣")), max_size=3)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(decode_lines() + prefill_lines()), st.integers(0, 400), _noise,
       st.lists(_digits, min_size=1, max_size=6))
def test_mangled_lines_are_read_like_parse_line_or_left_alone(line, at, noise, digits):
    """Cut, noised and renumbered variants: whatever is recognized agrees with parse_line."""
    at = min(at, len(line))
    mangled = line[:at] + noise + line[at:]
    renumbered = "".join(
        part + (digits[i % len(digits)] if i < len(line.split("9")) - 1 else "")
        for i, part in enumerate(line.split("9")))
    for text in (mangled, line[:at], renumbered):
        check_block([text])
