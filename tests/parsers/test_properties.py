"""Property tests: `parse_line` never raises, events are well-formed, numbers round-trip.

`parse_unchecked` (no try/except net) is what is exercised, so a bug cannot hide behind the
never-raise wrapper of `parse_line`.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parsers import KIND_FIELDS, KINDS, OPTIONAL_FIELDS, RESERVED_KEYS, Event
from parsers.sglang import parse_line
from parsers.sglang.line import parse_unchecked

ALLOWED = (type(None), bool, int, float, str)

FRAGMENTS = [
    "[2026-03-01 12:00:00 TP0] ", "[16:43:29 DP1 TP1 EP1] ", "2025-09-13 09:09:15 TP0] ",
    "2026-02-27 10:00:01 INFO 1 [TP0 x.py:1] ", "[", "]", "] ", "[gpu=0] ",
    "Decode batch", "Decode batch, ", "Decode batch. ", "Prefill batch, ", "Prefill batch. ",
    "Prefill batch(mixed #running-req: 3). ", "#running-req: ", "#token: ", "token usage: ",
    "full=", "swa=", "#full token: ", "mamba usage: ", "cuda graph: ", "True", "False",
    "gen throughput (token/s): ", "#queue-req: ", "accept len: ", "cache hit rate: ", "%",
    "#new-seq: ", "#new-token: ", "#cached-token: ", "input throughput (token/s): ",
    "server_args=ServerArgs(", "server_args={", "tp_size=", "'tp_size': ", "kv_cache_dtype=",
    "'", '"', ")", "}", "None", "Load weight end. ", "Load weight begin. ", "elapsed=",
    "type=X, ", "dtype=torch.bfloat16, ", "quant=fp8, ", "avail mem=", "mem usage=", " GB",
    "GB", "KV Cache is allocated. ", "Full ", "dtype: ", "#tokens: ", "K size: ", "V size: ",
    "KV size: ", "Mamba Cache is allocated. ", "conv_state size: ", "ssm_state size: ",
    "Use sliding window memory pool. ", "full_layer_tokens=", "swa_layer_tokens=",
    "Memory pool end. ", "Capture cuda graph end. ", "Time elapsed: ", " s. ",
    "max_total_num_tokens=", "max_total_tokens=", " is larger than the profiled value ",
    "The memory capacity is unbalanced. ", "Using KV cache dtype: ", "Setting KV cache dtype to ",
    "Using FP8 KV cache but no scaling factors provided", "Loaded KV cache scaling factors from ",
    "Defaulting to KV cache scaling factors = 1.0", "KV cache pool is full. Retract requests. ",
    "#retracted_reqs: ", "#new_token_ratio: ", " -> ", "Decode out of memory happened. ",
    "out of memory", "OutOfMemoryError", "new fill batch. ", "#seq: ", "INFO:     ",
    "WARNING x.py:1: ", ", ", ",", ".", ": ", "=", " ", "\x1b[31m", "\x1b[0m", "\r", "\n", "\t",
    "\x00", "\ufffd", "-", "1", "0.5", "-3", "1e9", "12345678901234567890", "nan", "inf",
]

fragment_lines = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.integers(-10**6, 10**12).map(str),
              st.floats(allow_nan=True, allow_infinity=True).map(str), st.text(max_size=8)),
    max_size=40,
).map("".join)


def _check_event(event: Event | None) -> None:
    if event is None:
        return
    assert event.kind in KINDS
    assert event.rank is None or isinstance(event.rank, str)
    assert event.ts is None or isinstance(event.ts, str)
    required = set(KIND_FIELDS[event.kind])
    assert required <= event.fields.keys()
    assert event.fields.keys() <= required | set(OPTIONAL_FIELDS[event.kind])
    assert not event.fields.keys() & RESERVED_KEYS
    for name, value in event.fields.items():
        assert isinstance(value, ALLOWED), (name, value)


@pytest.mark.full
@settings(max_examples=1500, deadline=None)
@given(st.text(max_size=300))
def test_arbitrary_text(text: str) -> None:
    _check_event(parse_unchecked(text))


@pytest.mark.full
@settings(max_examples=3000, deadline=None)
@given(fragment_lines)
def test_fragments_of_real_formats(text: str) -> None:
    _check_event(parse_unchecked(text))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_decoded_bytes(data: bytes) -> None:
    _check_event(parse_unchecked(data.decode("utf-8", errors="replace")))


def test_non_str_input_does_not_raise() -> None:
    assert parse_line(None) is None  # type: ignore[arg-type]
    assert parse_line(b"Decode batch") is None  # type: ignore[arg-type]


counts = st.integers(0, 10**9)
usage = st.integers(0, 100).map(lambda n: n / 100)
rate = st.floats(0, 1e7, allow_nan=False).map(lambda f: round(f, 2))
prefixes = st.sampled_from(
    ["", "[2026-03-01 12:00:00] ", "[2026-03-01 12:00:00 DP1 TP1] ", "[16:43:29 TP0] "]
)
graphs = st.sampled_from([None, "cuda", "npu", "cpu"])


@settings(max_examples=400, deadline=None)
@given(prefixes, counts, counts, usage, graphs, st.booleans(), rate, counts,
       st.sampled_from([".", ","]), st.sampled_from(["", ", "]))
def test_decode_round_trip(prefix, running, token, use, graph, flag, gen, queue, sep, tail):
    graph_part = "" if graph is None else f"{graph} graph: {flag}, "
    line = (f"{prefix}Decode batch{sep} #running-req: {running}, #token: {token}, "
            f"token usage: {use:.2f}, {graph_part}gen throughput (token/s): {gen:.2f}, "
            f"#queue-req: {queue}{tail}")
    event = parse_unchecked(line)
    assert event is not None and event.kind == "decode_batch"
    f = event.fields
    assert (f["running_req"], f["token"], f["queue_req"]) == (running, token, queue)
    assert f["token_usage"] == float(f"{use:.2f}")
    assert f["gen_throughput"] == float(f"{gen:.2f}")
    assert f["cuda_graph"] == (None if graph is None else flag)


@settings(max_examples=300, deadline=None)
@given(counts, counts, usage, usage, counts, counts, rate,
       st.sampled_from(["", "#pending-token: 5, "]))
def test_decode_hybrid_and_prefill_round_trip(n1, n2, u1, u2, running, queue, tput, pending):
    dline = (f"Decode batch, #running-req: {running}, #full token: {n1}, "
             f"full token usage: {u1:.2f}, #swa token: {n2}, swa token usage: {u2:.2f}, "
             f"cuda graph: True, gen throughput (token/s): {tput:.2f}, #queue-req: {queue}")
    d = parse_unchecked(dline)
    assert d is not None and d.kind == "decode_batch"
    assert (d.fields["full_token"], d.fields["swa_token"]) == (n1, n2)
    assert (d.fields["full_token_usage"], d.fields["swa_token_usage"]) == (
        float(f"{u1:.2f}"), float(f"{u2:.2f}"))
    pline = (f"[2026-03-01 12:00:00 TP0] Prefill batch, #new-seq: {running}, #new-token: {n1}, "
             f"#cached-token: {n2}, token usage: {u1:.2f}, #running-req: {running}, "
             f"#queue-req: {queue}, {pending}cuda graph: False, "
             f"input throughput (token/s): {tput:.2f}")
    p = parse_unchecked(pline)
    assert p is not None and p.kind == "prefill_batch"
    assert (p.fields["new_seq"], p.fields["new_token"], p.fields["cached_token"]) == (
        running, n1, n2)
    assert p.fields["token_usage"] == float(f"{u1:.2f}")
    assert p.fields["input_throughput"] == float(f"{tput:.2f}")
    assert p.fields["queue_req"] == queue and p.fields["cuda_graph"] is False


gib = st.floats(0, 10_000, allow_nan=False).map(lambda f: round(f, 2))


@settings(max_examples=300, deadline=None)
@given(counts, gib, gib, gib, st.integers(1, 10**6), st.integers(-1, 10**6))
def test_startup_round_trip(tokens, a, b, c, ctx, chunk):
    pool = parse_unchecked(
        f"[2026-03-01 12:00:00 TP3] KV Cache is allocated. dtype: torch.float8_e4m3fn, "
        f"#tokens: {tokens}, K size: {a:.2f} GB, V size: {b:.2f} GB"
    )
    assert pool is not None and pool.kind == "kv_pool" and pool.rank == "TP3"
    assert (pool.fields["tokens"], pool.fields["k_gib"], pool.fields["v_gib"]) == (
        tokens, float(f"{a:.2f}"), float(f"{b:.2f}"))
    load = parse_unchecked(
        f"Load weight end. elapsed={c:.2f} s, type=M, quant=fp8, fmt=e4m3, avail mem={a:.2f} GB, "
        f"mem usage={b:.2f} GB."
    )
    assert load is not None
    assert (load.fields["elapsed_s"], load.fields["avail_gib"], load.fields["usage_gib"]) == (
        float(f"{c:.2f}"), float(f"{a:.2f}"), float(f"{b:.2f}"))
    cap = parse_unchecked(
        f"max_total_num_tokens={tokens}, chunked_prefill_size={chunk}, max_prefill_tokens=16384, "
        f"max_running_requests={ctx}, context_len={ctx}, available_gpu_mem={c:.2f} GB"
    )
    assert cap is not None
    assert (cap.fields["max_total_num_tokens"], cap.fields["chunked_prefill_size"],
            cap.fields["context_len"], cap.fields["available_gpu_mem_gib"]) == (
        tokens, chunk, ctx, float(f"{c:.2f}"))
    graph = parse_unchecked(
        f"Capture cuda graph end. Time elapsed: {c:.2f} s. mem usage={a:.2f} GB. "
        f"avail mem={b:.2f} GB."
    )
    assert graph is not None
    assert (graph.fields["elapsed_s"], graph.fields["usage_gib"], graph.fields["avail_gib"]) == (
        float(f"{c:.2f}"), float(f"{a:.2f}"), float(f"{b:.2f}"))


scalar = st.one_of(st.none(), st.booleans(), st.integers(-10**9, 10**9),
                   st.floats(0, 1, allow_nan=False, exclude_min=True),
                   st.text(st.characters(whitelist_categories=("L", "N", "Zs", "P", "S"),
                                         blacklist_characters="'\"\\"), max_size=20))


@settings(max_examples=300, deadline=None)
@given(scalar, scalar, st.booleans())
def test_server_args_round_trip(tp: Any, kv: Any, dict_form: bool):
    if dict_form:
        line = (f"server_args={{'moe_dense_tp_size': 7, 'model_path': 'm', "
                f"'tp_size': {tp!r}, 'kv_cache_dtype': {kv!r}, 'pp_size': 1}}")
    else:
        line = (f"server_args=ServerArgs(moe_dense_tp_size=7, model_path='m', tp_size={tp!r}, "
                f"kv_cache_dtype={kv!r}, pp_size=1)")
    event = parse_unchecked(line)
    assert event is not None and event.kind == "server_args"
    for got, want in ((event.fields["tp_size"], tp), (event.fields["kv_cache_dtype"], kv)):
        if isinstance(want, str):
            want = repr(want)[1:-1]  # strings are kept as printed, escapes included
        assert got == want and type(got) is type(want)


def test_no_kind_names_a_field_as_an_envelope_key() -> None:
    """`kvtui events` writes {"source": FILE, "line": N, ...} then the event's fields: a
    chat_template field named "source" replaced the file with "model" (issue 40's kinds)."""
    for kind in KINDS:
        names = set(KIND_FIELDS[kind]) | set(OPTIONAL_FIELDS[kind])
        assert not names & RESERVED_KEYS, (kind, names & RESERVED_KEYS)


def test_events_keep_the_file_as_every_lines_source() -> None:
    from pathlib import Path

    from kvtui.core.pipeline import events
    from kvtui.sources.readers import log_input

    path = str(Path(__file__).resolve().parents[2] / "sample_logs"
               / "qwen35-397b-nvfp4-tp8-fp8-then-bf16.log")
    import json
    rows = [json.loads(t) for block in events(log_input(path)) for t in block.splitlines()]
    assert any(r["kind"] == "chat_template" for r in rows)
    assert {r["source"] for r in rows} == {path}
