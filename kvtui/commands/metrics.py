"""`kvtui metrics URL`: one or two scrapes of a server's Prometheus endpoint, as a report.

Exit codes are `kvtui check`'s: 0 clean; 1 an alert at the --fail-on level; 2 an error (the
scrape failed: refused, not enabled, timeout, stale, not the exposition format); 3 a scrape
with no metric of a known engine.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from kvtui.core.gate import EXIT_ALERT, EXIT_ERROR, EXIT_UNRECOGNISED


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("url", help="the Prometheus endpoint, used as given (e.g. "
                               "http://127.0.0.1:30000/metrics)")
    p.add_argument("--once", action="store_true",
                   help="one scrape: no rates; percentiles over the server's whole life")
    p.add_argument("--interval", type=float, default=3.0, metavar="S",
                   help="seconds between the two scrapes (1-5, default 3)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--model", metavar="M",
                   help="SGLang: compare the measured KV bytes per token with this model's cell "
                        "per dtype (a preset, HF id, config.json or model directory; default: "
                        "the served model name when it names a preset)")
    p.add_argument("--fail-on", choices=("critical", "warning", "never"), default="critical",
                   help="exit 1 when an alert at or above this level exists (default critical)")


def _gate(alerts: list[dict[str, str]], fail_on: str) -> int:
    """`check`'s gate over this report's alerts (one severity vocabulary)."""
    if fail_on == "never":
        return 0
    from kvtui.core import severity

    return EXIT_ALERT if any(severity.at_least(a["severity"], fail_on) for a in alerts) else 0


def _failed(state: str, detail: str, as_json: bool, url: str) -> int:
    if as_json:
        print(json.dumps({"url": url, "state": state, "error": detail}, indent=2))
    print(f"kvtui metrics: {state}: {detail}", file=sys.stderr)
    return EXIT_ERROR


def _model(given: str | None, served: str | None) -> Any:
    """The model spec: --model (an error if it names nothing), else the served model name when
    it names a preset (silently none otherwise: a served name is often an alias)."""
    from kvtui.core.capacity.presets import match_preset, preset_spec, resolve_model

    if given:
        return resolve_model(given)[0]
    hit = match_preset(served)
    return preset_spec(hit[0]) if hit else None


def run(args: argparse.Namespace) -> int:
    from kvtui.core.metrics import alerts, catalogue, report, window
    from kvtui.core.metrics.exposition import parse
    from kvtui.sources import metrics as source

    scraper = source.Scraper(args.url, args.interval)
    if args.interval != scraper.interval:
        print(f"kvtui metrics: --interval {args.interval:g} is outside 1-5 s; using "
              f"{scraper.interval:g}", file=sys.stderr)
    results = [scraper.scrape()]
    if results[0].state == "ok" and not args.once:
        time.sleep(scraper.interval)
        results.append(scraper.scrape())
    for r in results:
        if r.state != "ok":
            return _failed(r.state, r.detail, args.json, args.url)
    try:
        scrapes = [parse(r.body or "", r.at) for r in results]
    except ValueError as exc:
        return _failed("bad_response", f"{args.url}: {exc}", args.json, args.url)
    engine = catalogue.detect(scrapes[-1])
    if engine is None:
        from kvtui.core.engine import ENGINE_MODULES

        known = ", ".join(f"{catalogue.load(name).prefix}:*" for name in ENGINE_MODULES)
        print(f"kvtui metrics: {args.url} answered, but with no metric of a known engine "
              f"({known})", file=sys.stderr)
        return EXIT_UNRECOGNISED
    snaps = [engine.snapshot(s) for s in scrapes]
    new, old = snaps[-1], (snaps[0] if len(snaps) > 1 else None)
    win = window.window(new, old)
    found = engine.alerts(new, old) + alerts.general(new, old, win)
    version = None
    base = source.origin(args.url)
    for path in engine.version_paths:
        payload = source.get_json(base + path)
        if payload is not None and (version := engine.version(payload)):
            break
    try:
        spec = _model(args.model, new.model)
    except ValueError as exc:
        print(f"kvtui metrics: {exc}", file=sys.stderr)
        return EXIT_ERROR
    cell = engine.kv_cell(new, spec, version)
    rep = report.build(args.url, new, old, win, found, version, cell)
    code = _gate(rep["alerts"], args.fail_on)
    if args.json:
        print(json.dumps(rep, indent=2))
    else:
        sys.stdout.write(report.text(rep))
    return code
