"""The runtime fold is one definition: for Streak, Growth, Peak and the whole Runtime, folding
row by row, building from a whole column, and joining the summaries of two halves give the same
summary (kvtui/core/runtime.py)."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from kvtui.core.runtime import Columns, Growth, Peak, Runtime, Streak, Witness

flags = st.lists(st.booleans(), max_size=60)
values = st.lists(st.integers(0, 6), max_size=60)


def streak_of(seq: list[bool]) -> Streak:
    s = Streak()
    for f in seq:
        s.add(f)
    return s


def growth_of(seq: list[int]) -> Growth:
    g = Growth()
    for v in seq:
        g.add(v)
    return g


@given(flags, flags)
def test_streak_rows_columns_and_join_agree(a, b):
    whole = streak_of(a + b)
    joined = streak_of(a)
    joined.join(streak_of(b))
    assert joined == whole
    if a:
        assert Streak.of_flags(bytes(a)) == streak_of(a)
    # the fact itself, computed the obvious way
    best = run = 0
    for f in a + b:
        run = run + 1 if f else 0
        best = max(best, run)
    assert whole.longest == best


@given(values, values)
def test_growth_rows_columns_and_join_agree(a, b):
    whole = growth_of(a + b)
    joined = growth_of(a)
    joined.join(growth_of(b))
    assert joined == whole
    assert Growth.of_values(a) == growth_of(a)
    best = rises = 0
    for x, y in zip(a + b, (a + b)[1:], strict=False):
        rises = rises + 1 if y > x else (0 if y < x else rises)
        best = max(best, rises)
    assert whole.longest == best


@given(values, values)
def test_peak_keeps_the_first_line_of_the_maximum(a, b):
    def peak_of(seq: list[int], base: int) -> Peak:
        p = Peak()
        for i, v in enumerate(seq):
            if p.beats(v):
                p.value, p.evidence = v, base + i
        return p

    joined = peak_of(a, 0)
    joined.join(peak_of(b, len(a)))
    assert joined == peak_of(a + b, 0)


rows = st.lists(st.tuples(st.booleans(), st.sampled_from(["0.10", "0.94", "0.95", "1.00"]),
                          st.integers(0, 40), st.integers(0, 9),
                          st.sampled_from(["12.50", "0.00", "3.33"]),
                          # a prefill row's input throughput: none, zero, rounding edges
                          st.sampled_from(["", "0.00", "0.49", "0.50", "12.50", "9133.05"])),
                 max_size=40)


def line_route(rows_: list[tuple], first: int) -> Runtime:
    rt = Runtime()
    for k, (decode, usage, running, queue, gen, tput) in enumerate(rows_):
        fields = {"token_usage": float(usage), "running_req": running, "queue_req": queue,
                  "gen_throughput": float(gen) if decode else None,
                  "input_throughput": float(tput) if tput and not decode else None}
        ts = f"2026-01-01 10:00:{(first + k) % 60:02d}"
        witness = Witness("x", first + k, "TP0", ts, f"l{first + k}")
        rt.add_batch(decode, fields, ts, first + k, witness)
    return rt


def columns(rows_: list[tuple], first: int) -> Columns:
    heads = [f"2026-01-01 10:00:{(first + k) % 60:02d} TP0" for k in range(len(rows_))]
    facts = {h: (h[:19], "TP0") for h in heads}
    cols = Columns(source="x", first_line=first, lines=[f"l{first + k}" for k in range(len(rows_))],
                   at=list(range(len(rows_))), heads=heads, facts=facts,
                   usage=[r[1] for r in rows_], running=[str(r[2]) for r in rows_],
                   queue=[str(r[3]) for r in rows_], gen=[r[4] if r[0] else "" for r in rows_],
                   tput=["" if r[0] else r[5] for r in rows_])
    return cols


def column_route(rows_: list[tuple], first: int) -> Runtime:
    return Runtime.of_columns(columns(rows_, first))


def facts(rt: Runtime) -> dict:
    rt.gen_by_running  # noqa: B018 - the column route's pending rows sorted in (`gen_rows`)
    out = dataclasses.asdict(rt)
    out["timeline"] = list(rt.timeline)
    return out


@settings(max_examples=200)
@given(rows, rows)
def test_runtime_line_route_column_route_and_join_agree(a, b):
    whole = line_route(a + b, 1)
    joined = line_route(a, 1)
    joined.join(line_route(b, 1 + len(a)))
    assert facts(joined) == facts(whole)
    if a:
        assert facts(column_route(a, 1)) == facts(line_route(a, 1))
    mixed = line_route(a, 1)
    if b:
        mixed.join(column_route(b, 1 + len(a)))
    assert facts(mixed) == facts(whole)
    added = line_route(a, 1)  # the fold's way: the rows counted into the run's own histogram
    if b:
        added.add_columns(columns(b, 1 + len(a)))
    assert facts(added) == facts(whole)


@settings(max_examples=100)
@given(rows, rows)
def test_prefill_throughput_is_the_median_of_the_non_zero_figures_in_every_route(a, b):
    """The prefill throughput summary, whichever route folded it, is the plain median of the
    prefill rows' non-zero figures rounded to a whole tok/s (computed here the obvious way)."""
    figures = sorted(int(float(r[5]) + 0.5) for r in a + b if not r[0] and r[5])
    figures = [x for x in figures if x > 0]
    mixed = line_route(a, 1)
    mixed.join(column_route(b, 1 + len(a)))
    if not figures:
        assert mixed.prefill_median() is None
        return
    n = len(figures)
    assert mixed.prefill_median() == (figures[(n - 1) // 2] + figures[n // 2]) / 2
    assert mixed.prefill_tput_lines == n
    assert line_route(a + b, 1).prefill_median() == mixed.prefill_median()


@given(st.lists(st.sampled_from([0.0, 0.4, 1200.0, 980.5, None]), max_size=30),
       st.integers(0, 30))
def test_vllm_prompt_throughput_folds_row_by_row_and_joined_alike(prompts, cut):
    """vLLM's stats line (a decode row, line route only) carries `prompt_throughput`: folded
    row by row or as two joined halves, the summary is the same."""
    def fold(ps: list[float | None], first: int) -> Runtime:
        rt = Runtime()
        for k, p in enumerate(ps):
            fields = {"token_usage": 0.5, "running_req": 4, "queue_req": 0,
                      "gen_throughput": 100.0, "prompt_throughput": p}
            rt.add_batch(True, fields, None, first + k, Witness("x", first + k, None, None, ""))
        return rt

    cut = min(cut, len(prompts))
    joined = fold(prompts[:cut], 1)
    joined.join(fold(prompts[cut:], 1 + cut))
    assert facts(joined) == facts(fold(prompts, 1))
    kept = sorted(int(p + 0.5) for p in prompts if p is not None and int(p + 0.5) > 0)
    assert joined.prefill_tput_lines == len(kept)
    if kept:
        assert joined.prefill_median() == (kept[(len(kept) - 1) // 2] + kept[len(kept) // 2]) / 2
