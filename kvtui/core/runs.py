"""Every server start of a log as a run of its own: its facts, its alerts, and the restart that
resolved an earlier run's alert.

Why here and not in the report builder: a deploy session is a loop (an alert, a restart with
the fix, the alert gone), and what closes it is a comparison of two runs: the arguments that
changed between them (`arg_changes`, also the first part of `kvtui compare`) and the alerts one
raised that the next no longer does (`summaries`). Each run's alerts and what-if come from the
same code as the last run's: the report of run N is the report of the state as it stood when
run N was the last (`State.upto`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from kvtui.core.report_types import (
    AccuracyItem,
    Alert,
    ArgChange,
    Resolution,
    RunAlert,
    RunSummary,
    WhatIf,
    snapshot,
)
from kvtui.core.state import Run, State
from kvtui.core.values import as_int

if TYPE_CHECKING:
    from kvtui.core.engine import Engine, Flags

# Arguments the engine draws by itself at each start when the operator sets none, so two starts
# differ in them with nothing changed: SGLang's random_seed (0.5.10 srt/server_args.py:954-955:
# `random.randint(0, 1 << 30)` when None).
DRAWN_AT_START = frozenset({"random_seed"})

# (whatif, alerts) of one run, as `analysis` returns them.
Analysis = tuple[WhatIf | None, Sequence[Alert]]


# The dumped arguments whose name the parsers share across engines (a vLLM dump's
# tensor_parallel_size and max_model_len are read as tp_size and context_length), by the
# engine's `Flags` field that spells them on its command line.
SHARED_NAMES: dict[str, Callable[[Flags], str | None]] = {
    "kv_cache_dtype": lambda f: f.kv_cache_dtype, "tp_size": lambda f: f.tensor_parallel,
    "context_length": lambda f: f.context_length,
    "max_running_requests": lambda f: f.max_running_requests}


def flag_of(arg: str, engine: Engine | None = None) -> str:
    """The command-line spelling of a dumped argument: the engine's own for the names the
    parsers share (`Engine.flags`: vLLM's `-tp`, `--max-model-len`), else `--field-name`, as
    both engines' CLIs spell a field (SGLang's argparse in srt/server_args.py `add_cli_args`,
    vLLM's `EngineArgs.add_cli_args`)."""
    shared = SHARED_NAMES.get(arg)
    if engine is not None and shared is not None:
        return str(shared(engine.flags))
    return "--" + arg.replace("_", "-")


def arg_changes(before: Run, after: Run, engine: Engine | None = None) -> tuple[ArgChange, ...]:
    """The server arguments that differ between two runs' dumps, in the later dump's order,
    spelled as `engine`'s command line spells them.

    A dump that lists every argument (SGLang's ServerArgs) states each one; a dump of the
    non-default arguments only (vLLM's, `Run.args_complete`) leaves a default out, which is
    shown as unset. Nothing when either run printed no dump: there is nothing to compare."""
    a, b = before.server_args, after.server_args
    if not a or not b:
        return ()
    out = []
    for key in [*b, *(k for k in a if k not in b)]:
        if key in DRAWN_AT_START:
            continue
        va, vb = a.get(key), b.get(key)
        if va != vb:
            out.append(ArgChange(arg=key, flag=flag_of(key, engine), before=va, after=vb))
    return tuple(out)


def no_dump_note(before: Run, after: Run, later: int) -> str | None:
    """Why a resolution names no argument: a run that printed no argument dump."""
    if after.server_args and before.server_args:
        return None
    which = f"run {later}" if not after.server_args else f"run {later - 1}"
    return f"{which} printed no argument dump, so the arguments cannot be compared"


def memo_key(run: Run) -> tuple[int, int, int, int]:
    """What a run's analysis depends on in the fold: the run object, how many lines it took,
    and its runtime batches (the column route folds those without counting lines)."""
    return (id(run), run.lines_seen, run.runtime.decode_batches, run.runtime.prefill_batches)


def analyses(state: State, last: Analysis, analyse: Callable[[State], Analysis],
             memo: dict[int, tuple[tuple[int, int, int, int], Analysis]] | None) -> list[Analysis]:
    """Every run's (whatif, alerts), the last one's given; an earlier run's is read from
    `memo` while its run has not changed (a live view asks for the report many times a
    second, and an earlier run no longer changes)."""
    out: list[Analysis] = []
    for n in range(1, len(state.runs)):
        run = state.runs[n - 1]
        key = memo_key(run)
        held = memo.get(n) if memo is not None else None
        if held is not None and held[0] == key:
            out.append(held[1])
            continue
        found = analyse(state.upto(n))
        if memo is not None:
            memo[n] = (key, found)
        out.append(found)
    out.append(last)
    return out


def _resolution(state: State, found: list[Analysis], i: int, rule: str,
                engine: Engine | None = None) -> Resolution | None:
    """The first later run that got going (`Run.started_up`) and no longer raises `rule`;
    None while every later run that got going still raises it (or none got going yet: a
    restart still loading has said nothing about the alert)."""
    runs = state.runs
    for j in range(i + 1, len(runs)):
        later = runs[j]
        if not later.started_up:
            continue
        if any(a.rule == rule for a in found[j][1]):
            return None
        start = later.start
        return Resolution(run=j + 1, line=start.line if start else later.first_line,
                          ts=(start.ts if start else later.opened_ts),
                          cause=arg_changes(runs[i], later, engine),
                          note=no_dump_note(runs[i], later, j + 1))
    return None


def summaries(state: State, found: list[Analysis], tp_of: Callable[[Run], int | None],
              engine: Engine | None = None,
              checklist: Callable[[Run, Sequence[Alert]], tuple[AccuracyItem, ...]] | None = None,
              ) -> tuple[RunSummary, ...]:
    """One summary per run, numbered from 1, each with its own alerts and accuracy checklist;
    an earlier run's alert that a later run resolved says which restart did and what changed."""
    out = []
    for i, run in enumerate(state.runs):
        whatif, alerts = found[i]
        eff, _, _ = run.effective
        pool = run.primary_kv_pool()
        cap = run.primary_capacity() or {}
        bpt = pool.bytes_per_token if pool is not None else None
        version = run.engine_version or (whatif.version.get("label") if whatif else None)
        out.append(RunSummary(
            index=i + 1,
            start=snapshot(run.start),
            model_path=run.server_args.get("model_path"),
            configured_dtype=run.configured_kv_dtype,
            effective_dtype=eff,
            scales=run.scales,
            pool_tokens=pool.tokens if pool else None,
            max_total_num_tokens=cap.get("max_total_num_tokens"),
            decode_batches=run.runtime.decode_batches,
            # The first run's opener depends on the route that folded its first rows (a batch
            # row read column-wise opens nothing): only a start is said of it.
            opened_by=run.opener if i or run.opener == "start" else None,
            engine_version=version,
            tp=tp_of(run),
            bytes_per_token=round(bpt, 1) if bpt is not None else None,
            max_running_requests=as_int(cap.get("max_running_requests")),
            alerts=tuple(RunAlert(rule=a.rule, severity=a.severity, title=a.title,
                                  evidence=snapshot(a.evidence),
                                  resolved_by=(_resolution(state, found, i, a.rule, engine)
                                               if i < len(state.runs) - 1 else None))
                         for a in alerts),
            accuracy=checklist(run, alerts) if checklist is not None else (),
            opened_line=run.first_line if run.start is None and i else None,
            opened_ts=run.opened_ts if run.start is None and i else None))
    return tuple(out)
