"""The split-based decode fast path agrees with the general pair walk on every layout it takes."""

from __future__ import annotations

import itertools

import pytest

from parsers.sglang import parse_line
from parsers.sglang.runtime import _DECODE_HEAD, DECODE_BASE, DECODE_KEYS, decode_split, fill_pairs

USAGES = [
    "#token: 9071, token usage: 0.01",
    "#full token: 52311, full token usage: 0.05, mamba num: 8, mamba usage: 0.02",
    "#full token: 350592, full token usage: 0.74, #swa token: 280473, swa token usage: 0.61",
]
SPEC = ["", "accept len: 3.13, ", "accept len: 3.13, accept rate: 0.71, "]
GRAPH = ["", "cuda graph: True, ", "npu graph: False, "]
HEADS = ["Decode batch, #running-req: 40, ", "Decode batch. #running-req: 40, "]
TAILS = ["", ", "]


def general(msg: str) -> dict:
    h = _DECODE_HEAD.match(msg)
    fields = dict.fromkeys(DECODE_BASE)
    fill_pairs(msg[h.end():], DECODE_KEYS, fields)
    return fields


@pytest.mark.parametrize(("head", "usage", "spec", "graph", "tail"),
                         list(itertools.product(HEADS, USAGES, SPEC, GRAPH, TAILS)))
def test_fast_path_equals_general_path(head, usage, spec, graph, tail):
    msg = (f"{head}{usage}, {spec}{graph}gen throughput (token/s): 1083.18, "
           f"#queue-req: 2349{tail}")
    fast = decode_split(msg, 0)
    assert fast is not None, msg
    assert fast == general(msg)
    ev = parse_line(f"[2026-07-04 05:01:33 TP0] {msg}")
    assert ev is not None and ev.fields == fast and ev.rank == "TP0"


@pytest.mark.parametrize("msg", [
    "Decode batch, #running-req: 40, #full token: 35, full token usage: 0.74, gen throughput "
    "(token/s): 1.00, #queue-req: 3",  # hybrid head without its pair: general path
    "Decode batch, #running-req: 40, #token: 9071, token usage: 0.01, cuda graph: True, "
    "gen throughput (token/s): 1083.18, #queue-req: 2349, est. decode TFLOPS/s (per GPU): 1.0",
    "Decode batch, #running-req: 4x, #token: 9071, token usage: 0.01, cuda graph: True, "
    "gen throughput (token/s): 1083.18, #queue-req: 2349",
])
def test_other_layouts_fall_back(msg):
    assert decode_split(msg, 0) is None
    ev = parse_line(msg)
    # The general path still reads what it can (or nothing for a mangled count).
    assert ev is None or ev.kind == "decode_batch"


PREFILL_USAGES = ["token usage: 0.06", "full token usage: 0.28, mamba usage: 0.20",
                  "full token usage: 0.28, swa token usage: 0.31"]


@pytest.mark.parametrize(("usage", "pending", "graph_first"),
                         list(itertools.product(PREFILL_USAGES, [True, False], [True, False])))
def test_prefill_fast_regex_equals_pair_walk(usage, pending, graph_first):
    from parsers.sglang.runtime import _PREFILL_FAST, _parse_prefill_pairs, parse_prefill

    cols = ["#new-seq: 1", "#new-token: 128", "#cached-token: 70016", usage, "#running-req: 1",
            "#queue-req: 0"]
    if pending:
        cols.append("#pending-token: 0")
    tail = ["cuda graph: False", "input throughput (token/s): 9406.12"]
    cols += tail if graph_first else tail[::-1]
    msg = "Prefill batch, " + ", ".join(cols)
    assert _PREFILL_FAST.match(msg) is not None
    assert parse_prefill(msg) == _parse_prefill_pairs(msg)
