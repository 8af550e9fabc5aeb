"""`kvtui check FILE...`: the analysis, headless, as a deploy gate.

Each file is its own stream and gets its own report. Exit codes (docs in the README):
0 clean; 1 an alert at the --fail-on level in any file; 2 an error (unreadable input, a bad
flag); 3 a file in which no line of any known engine was recognised (empty, binary, another
program's log), when no file has an alert.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from kvtui.core.engine import release_options
from kvtui.core.gate import exit_code, gate

if TYPE_CHECKING:
    from kvtui.core.report_types import Report
    from kvtui.sources.record import Recorded


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="log files (.gz ok; - for stdin); may be left out with --checkpoint")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--format", choices=("text", "json", "prometheus"), default=None,
                   help="text (default), json (= --json) or prometheus: kvtui_* series for "
                        "node_exporter's textfile collector (docs/fleet.md)")
    p.add_argument("--output", metavar="FILE",
                   help="with --format prometheus: write FILE atomically (tmp + rename)")
    p.add_argument("--stream", action="store_true",
                   help="JSON Lines: the start-up verdict of a big file first (\"partial\": "
                        "true), then the full report")
    p.add_argument("--quiet", action="store_true", help="no progress line on the terminal")
    p.add_argument("--fail-on", choices=("critical", "warning", "never"), default="critical",
                   help="exit 1 when an alert at or above this level exists (default critical)")
    p.add_argument("--model", metavar="M",
                   help="model preset, config.json or model directory for the calculator")
    p.add_argument("--min-context-concurrency", type=float, default=2.0, metavar="X",
                   help="warn when fewer than X full-context requests fit (default 2)")
    p.add_argument("--checkpoint", metavar="DIR",
                   help="read the served checkpoint's KV scales (a model directory, a Hugging "
                        "Face cache folder models--org--name, or org/name in the local cache): "
                        "their values refine the FP8 alerts")
    p.add_argument("--target-concurrency", type=float, default=None, metavar="X",
                   help="warn when BF16 would fit fewer than X full-context requests")
    for option in release_options():  # each engine's (`--sglang-version`, ...)
        p.add_argument(option.flag, metavar="X", help=option.help)


def render_all(reports: list[Report], *, as_json: bool, fail_on: str) -> int:
    """Print one report per file (one JSON object with `files` for several) and return the
    gate's exit code."""
    if len(reports) == 1:
        render_and_exit(reports[0], as_json=as_json, fail_on=fail_on)
        return gate(reports, fail_on)
    code = gate(reports, fail_on)
    if as_json:
        from kvtui import __version__

        doc = {"kvtui_version": __version__, "files": [r.to_json() for r in reports],
               "exit_code": code}
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n")
        return code
    from kvtui.core.render import render_gate, render_text

    for i, report in enumerate(reports, 1):
        sys.stdout.write(f"=== file {i} of {len(reports)} ===\n")
        sys.stdout.write(render_text(report) + "\n")
    sys.stdout.write(render_gate(reports, fail_on, code))
    sys.stdout.flush()
    return code


def render_and_exit(report: Report, *, as_json: bool, fail_on: str) -> int:
    """Print the report (JSON or human) and return the exit code (`kvtui ssh --check` too)."""
    if as_json:
        sys.stdout.write(json.dumps(report.to_json(), indent=2, ensure_ascii=False,
                                    default=str))
        sys.stdout.write("\n")
    else:
        from kvtui.core.render import render_text

        sys.stdout.write(render_text(report))
    sys.stdout.flush()
    return exit_code(report, fail_on)


def analyse_files(files: list[str], *, model: Any = None, alert_options: Any = None,
                  checkpoint: Any = None, releases: tuple[tuple[str, str], ...] = (),
                  stream: bool = False, quiet: bool = True) -> Any:
    """Each file analysed as its own stream (one session each, in the order given).

    `stream`: print each big file's start-up verdict as a JSON line as soon as it is known.
    `quiet`: no progress line on a terminal.
    """
    from kvtui.commands.progress import StderrProgress
    from kvtui.core.pipeline import Options, Progress, Session, analyse
    from kvtui.sources.readers import log_input

    with StderrProgress(quiet=quiet) as bar:
        def preview(session: Session) -> None:
            report = session.report()
            if stream:
                _json_line(report)
            bar.verdict(report)

        def progress(name: str, p: Progress) -> None:
            bar.update(name, p.done, p.total)

        options = Options(model=model, alert_options=alert_options, checkpoint=checkpoint,
                          releases=releases)
        if not files:  # --checkpoint alone: the checkpoint's facts, no log
            return [Session(options)]
        kept = [_recording(p) for p in files]  # a `--record DIR`: its log and scrapes
        sessions = analyse([log_input(k.log if k is not None else p)
                            for p, k in zip(files, kept, strict=True)], options,
                           preview=preview if stream or bar.enabled else None,
                           progress=progress if bar.enabled else None)
        for session, k in zip(sessions, kept, strict=True):
            if k is not None and k.metrics is not None:
                from kvtui.sources.record import feed_recorded

                feed_recorded(k.metrics, session)
        return sessions


def _recording(path: str) -> Recorded | None:
    """`path` as a `--record DIR` recording (`kvtui.sources.record.found`), imported only for a
    directory: that module brings the HTTP client (urllib, http, ssl, email), which cost a
    check of a plain file some 25 ms and 5 MB of its start."""
    if not os.path.isdir(path):
        return None
    from kvtui.sources.record import found

    return found(path)


def _json_line(report: Report) -> None:
    sys.stdout.write(json.dumps(report.to_json(), ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def run(args: argparse.Namespace) -> int:
    from kvtui.sources.readers import LogOpenError, check_readable

    checkpoint_arg = getattr(args, "checkpoint", None)
    if getattr(args, "format", None) == "json":
        args.json = True
    if not args.files and not checkpoint_arg:
        print("kvtui: give a log FILE, or --checkpoint DIR, or both", file=sys.stderr)
        return 2
    try:
        for path in args.files:
            check_readable(path)
        model = _resolve_model(args.model)
        releases = _releases(args)
        options = _alert_options(args)
        checkpoint = _inspect_checkpoint(checkpoint_arg) if checkpoint_arg else None
        sessions = analyse_files(args.files, model=model, alert_options=options, releases=releases,
                                 checkpoint=checkpoint, stream=args.stream, quiet=args.quiet)
    except (LogOpenError, ValueError) as exc:
        print(f"kvtui: {exc}", file=sys.stderr)
        return 2
    reports = [s.report() for s in sessions]
    if getattr(args, "format", None) == "prometheus":  # issue 38: kvtui.commands.exporter
        from kvtui.commands.exporter import write_check

        return write_check(reports, args)
    if not args.files:  # --checkpoint alone: nothing was meant to be recognised
        return render_and_exit(reports[0], as_json=args.json, fail_on=args.fail_on)
    if args.stream:
        for report in reports:
            _json_line(report)
        return gate(reports, args.fail_on)
    return render_all(reports, as_json=args.json, fail_on=args.fail_on)


def _inspect_checkpoint(arg: str) -> Any:
    """--checkpoint: the same reader `kvtui ssh` uses over SFTP, on a local directory.
    A directory that is not there is a one-line error (ValueError, exit 2)."""
    from kvtui.sources.checkpoint_files import inspect_local_checkpoint

    return inspect_local_checkpoint(arg)


def _resolve_model(name: str | None) -> Any:
    """Validate --model early (a one-line error, exit 2) and hand the name on to the core."""
    from kvtui.core import capacity

    if name:
        capacity.resolve_model(name)  # raises ValueError with the list of presets
    return name or None


def _releases(args: argparse.Namespace) -> tuple[tuple[str, str], ...]:
    """Each engine's release option (`--sglang-version`), checked by its engine (a one-line
    error, exit 2), as the pipeline's pinned releases: each applies to the runs of its engine."""
    from kvtui.core.engine import ENGINE_MODULES, load, release_options

    given = vars(args)
    return tuple((name, load(name).check_release(raw))
                 for name, option in zip(ENGINE_MODULES, release_options(), strict=True)
                 if (raw := given.get(option.dest)))


def _alert_options(args: argparse.Namespace) -> Any:
    from kvtui.core.alerts import AlertOptions

    return AlertOptions(min_context_concurrency=args.min_context_concurrency,
                        target_concurrency=args.target_concurrency)
