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
    p.add_argument("files", nargs="+", metavar="FILE", help="log files (.gz ok; - for stdin)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--fail-on", choices=("critical", "warning", "never"), default="critical",
                   help="exit 1 when an alert at or above this level exists (default critical)")
    p.add_argument("--model", metavar="M",
                   help="model preset, config.json or model directory for the calculator")
    p.add_argument("--min-context-concurrency", type=float, default=2.0, metavar="X",
                   help="warn when fewer than X full-context requests fit (default 2)")
    p.add_argument("--target-concurrency", type=float, default=None, metavar="X",
                   help="warn when BF16 would fit fewer than X full-context requests")
    p.add_argument("--sglang-version", metavar="X",
                   help="the SGLang release whose sizing rules the what-if applies (default: "
                        "the newest the log allows)")


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

    try:
        for path in args.files:
            check_readable(path)
        model = _resolve_model(args.model, getattr(args, "sglang_version", None))
        options = _alert_options(args)
        analyzer = analyse_files(args.files, model=model, alert_options=options)
    except LogOpenError as exc:
        print(f"kvtui: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"kvtui: {exc}", file=sys.stderr)
        return 2
    return render_and_exit(analyzer.report(), as_json=args.json, fail_on=args.fail_on)


def _resolve_model(name: str | None, sglang_version: str | None = None) -> Any:
    """Validate --model / --sglang-version early (one-line errors, exit 2) and hand them on to
    the core; a pinned release travels with the model choice (`capacity.Pinned`)."""
    from kvtui.core import capacity

    if name:
        capacity.resolve_model(name)  # raises ValueError with the list of presets
    if sglang_version:
        from kvtui.core.version import check_release, fmt

        return capacity.Pinned(model=name or None, sglang_version=fmt(check_release(
            sglang_version)))
    return name or None


def _alert_options(args: argparse.Namespace) -> Any:
    from kvtui.core import alerts

    opts_cls = getattr(alerts, "AlertOptions", None)
    if opts_cls is None:
        return None
    return opts_cls(min_context_concurrency=args.min_context_concurrency,
                    target_concurrency=args.target_concurrency)
