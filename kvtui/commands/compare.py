"""`kvtui compare A [B]`: two server runs side by side, as text, JSON, or a deploy gate.

A run is named `FILE` (its last run) or `FILE#N` (its run N, from 1). One name alone compares
that run with the one before it (`FILE`: the file's last two runs). Exit codes as `check`'s:
0 clean; 1 the later run has an alert at the --fail-on level, or its throughput dropped more
than --max-throughput-drop; 2 an error (unreadable input, a run that does not exist, a bad
flag); 3 a file in which no line of any known engine was recognised.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kvtui.core.compare import Comparison, RunRef
    from kvtui.core.pipeline import Session

from kvtui.core.gate import EXIT_ALERT, EXIT_ERROR, EXIT_UNRECOGNISED


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", metavar="RUN",
                   help="FILE (its last run) or FILE#N (its run N, from 1); one RUN alone is "
                        "compared with the run before it")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--fail-on", choices=("critical", "warning", "never"), default="critical",
                   help="exit 1 when the later run has an alert at or above this level "
                        "(default critical)")
    p.add_argument("--max-throughput-drop", type=float, default=None, metavar="PCT",
                   help="exit 1 when the later run's median generation throughput (at 1 "
                        "request, and aggregate at the highest running count both runs "
                        "share) is more than PCT %% below the earlier run's")
    p.add_argument("--model", metavar="M",
                   help="model preset, config.json or model directory for the calculator")


def split_name(name: str) -> tuple[str, int | None]:
    """`FILE#N` -> (FILE, N); `FILE` -> (FILE, None). A `#` not followed by digits only is
    part of the file name."""
    path, sep, tail = name.rpartition("#")
    if sep and path and tail.isdigit():
        return path, int(tail)
    return name, None


def _ref(name: str, session: Session, number: int) -> RunRef:
    from kvtui.core.compare import RunRef

    count = session.run_count
    if not 1 <= number <= count:
        raise ValueError(f"{name}: run {number} does not exist (the log holds {count} "
                         f"server start{'s' if count != 1 else ''})")
    run = session.state.settled().runs[number - 1]
    return RunRef(label=f"{name}#{number}", number=number,
                  report=session.run_report(number), run=run, engine=session.engine)


def resolve(names: list[str], sessions: dict[str, Session]) -> tuple[RunRef, RunRef]:
    """The two runs the names mean (see the module's docstring)."""
    if len(names) > 2:
        raise ValueError("give one or two runs")
    parsed = [split_name(n) for n in names]
    if len(parsed) == 1:
        path, n = parsed[0]
        session = sessions[path]
        later = n if n is not None else session.run_count
        b = _ref(path, session, later)  # a run that does not exist is the one named
        if n is not None and later == 1 and session.run_count > 1:
            raise ValueError(f"{path}: run 1 is the first server start: there is no run "
                             f"before it to compare with (name two runs: FILE#N FILE#M)")
        if later < 2:
            raise ValueError(f"{path} holds {session.run_count} server start(s): name a "
                             f"second run to compare with (FILE#N or another FILE)")
        return _ref(path, session, later - 1), b
    (pa, na), (pb, nb) = parsed
    sa, sb = sessions[pa], sessions[pb]
    return (_ref(pa, sa, na if na is not None else sa.run_count),
            _ref(pb, sb, nb if nb is not None else sb.run_count))


def gate(comparison: Comparison, later: RunRef, fail_on: str,
         max_drop: float | None) -> tuple[int, list[str]]:
    """(exit code, the reasons it failed)."""
    from kvtui.core import severity

    reasons = []
    if fail_on != "never":
        kept = [a for a in later.report.alerts if severity.at_least(a.severity, fail_on)]
        if kept:
            reasons.append(f"{later.label} has {len(kept)} alert(s) at {fail_on} or above: "
                           + ", ".join(a.rule for a in kept))
    if max_drop is not None:
        rt = comparison.runtime
        for what, t in (("at 1 request", rt.single), ("aggregate", rt.aggregate)):
            if t is not None and t.change is not None and t.change < -max_drop / 100:
                reasons.append(f"generation throughput {what} ({t.running} running) dropped "
                               f"{-t.change:.1%}: {t.a:,.0f} -> {t.b:,.0f} tok/s, more than "
                               f"{max_drop:g} %")
    return (EXIT_ALERT if reasons else 0), reasons


def run(args: argparse.Namespace) -> int:
    from kvtui.commands.check import _resolve_model, analyse_files
    from kvtui.core.compare import compare
    from kvtui.sources.readers import LogOpenError, check_readable

    paths = list(dict.fromkeys(split_name(n)[0] for n in args.runs))
    try:
        for path in paths:
            check_readable(path)
        model = _resolve_model(args.model)
        sessions = dict(zip(paths, analyse_files(paths, model=model), strict=True))
        unknown = [p for p, s in sessions.items() if s.engine is None]
        if unknown:
            print(f"kvtui: no line of any known engine was recognised in "
                  f"{', '.join(unknown)}", file=sys.stderr)
            return EXIT_UNRECOGNISED
        a, b = resolve(args.runs, sessions)
    except (LogOpenError, ValueError) as exc:
        print(f"kvtui: {exc}", file=sys.stderr)
        return EXIT_ERROR
    comparison = compare(a, b, model=model)
    code, reasons = gate(comparison, b, args.fail_on, args.max_throughput_drop)
    if args.json:
        doc: dict[str, Any] = comparison.to_json()
        doc["gate"] = {"fail_on": args.fail_on, "max_throughput_drop": args.max_throughput_drop,
                       "reasons": reasons, "exit_code": code}
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n")
    else:
        from kvtui.core.compare_render import render_comparison

        sys.stdout.write(render_comparison(comparison))
        sys.stdout.write("\n" + (f"FAIL (exit {code}): " + "; ".join(reasons) if reasons
                                 else "PASS (exit 0)") + "\n")
    sys.stdout.flush()
    return code
