"""`kvtui check FILE...`: the analysis, headless.

Exit 0 when clean, 1 when an alert at the --fail-on level exists, 2 on errors.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

SEVERITY_RANK = {"critical": 3, "warning": 2, "info": 1}


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="log files (.gz ok; - for stdin); may be left out with --checkpoint")
    p.add_argument("--json", action="store_true", help="print one JSON object")
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


def exit_code(report: dict[str, Any], fail_on: str) -> int:
    if fail_on == "never":
        return 0
    threshold = SEVERITY_RANK[fail_on]
    for alert in report.get("alerts") or []:
        if SEVERITY_RANK.get(alert.get("severity", ""), 0) >= threshold:
            return 1
    return 0


def render_and_exit(report: dict[str, Any], *, as_json: bool, fail_on: str) -> int:
    """Print the report (JSON or human) and return the exit code (`kvtui ssh --check` too)."""
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2, ensure_ascii=False, default=str))
        sys.stdout.write("\n")
    else:
        from kvtui.core.render import render_text

        sys.stdout.write(render_text(report))
    sys.stdout.flush()
    return exit_code(report, fail_on)


def analyse_files(files: list[str], *, model: Any = None, alert_options: Any = None) -> Any:
    """Feed every file through one Analyzer (a later file continues the same deployment)."""
    from kvtui.core.analyzer import Analyzer
    from kvtui.sources.readers import iter_batches

    if len(files) == 1:
        from kvtui.parallel import analyse_parallel

        fast = analyse_parallel(files[0], model=model, alert_options=alert_options)
        if fast is not None:
            return fast
    analyzer = Analyzer(model=model, alert_options=alert_options)
    for path in files:
        analyzer.feed_batches("<stdin>" if path == "-" else path, iter_batches(path))
    return analyzer


def run(args: argparse.Namespace) -> int:
    from kvtui.sources.readers import LogOpenError, check_readable

    checkpoint_arg = getattr(args, "checkpoint", None)
    if not args.files and not checkpoint_arg:
        print("kvtui: give a log FILE, or --checkpoint DIR, or both", file=sys.stderr)
        return 2
    try:
        for path in args.files:
            check_readable(path)
        model = _resolve_model(args.model)
        options = _alert_options(args)
        checkpoint = _inspect_checkpoint(checkpoint_arg) if checkpoint_arg else None
        analyzer = analyse_files(args.files, model=model, alert_options=options)
        analyzer.checkpoint = checkpoint
    except LogOpenError as exc:
        print(f"kvtui: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"kvtui: {exc}", file=sys.stderr)
        return 2
    return render_and_exit(analyzer.report(), as_json=args.json, fail_on=args.fail_on)


def _inspect_checkpoint(arg: str) -> Any:
    """--checkpoint: the same reader `kvtui ssh` uses over SFTP, on a local directory.
    A directory that is not there is a one-line error (ValueError, exit 2)."""
    from kvtui.sources.checkpoint_files import inspect_local_checkpoint

    return inspect_local_checkpoint(arg)


def _resolve_model(name: str | None) -> Any:
    """Validate --model early (a one-line error, exit 2) and hand the name on to the core."""
    if not name:
        return None
    from kvtui.core import capacity

    capacity.resolve_model(name)  # raises ValueError with the list of presets
    return name


def _alert_options(args: argparse.Namespace) -> Any:
    from kvtui.core import alerts

    opts_cls = getattr(alerts, "AlertOptions", None)
    if opts_cls is None:
        return None
    return opts_cls(min_context_concurrency=args.min_context_concurrency,
                    target_concurrency=args.target_concurrency)
