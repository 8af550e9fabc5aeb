"""`kvtui replay FILE...`: saved logs in the TUI, timed by their own timestamps."""

from __future__ import annotations

import argparse
import math
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kvtui.core.pipeline import Session
    from kvtui.sources.metrics import MetricsPoller
    from kvtui.sources.record import Recorder


def positive_int(text: str) -> int:
    """argparse type for counts such as --log-window: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def positive_float(text: str) -> float:
    """argparse type for --speed: a number above 0 (finite)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a number above 0, not {text}")
    return value


def non_negative_float(text: str) -> float:
    """argparse type for --max-gap: 0 (no cap) or more seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (value >= 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds, not {text}")
    return value


def add_tui_options(p: argparse.ArgumentParser) -> None:
    """Options every TUI command shares (replay, tail, demo)."""
    p.add_argument("--log-window", type=positive_int, default=20000, metavar="N",
                   help="lines kept in the log pane (default 20000)")
    p.add_argument("--export-dir", metavar="DIR", default=None,
                   help="where e/E write the analysis (default: the log's directory; else "
                        "$XDG_DATA_HOME/kvtui/exports)")


def add_speed_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--speed", type=positive_float, default=None, metavar="X",
                   help="replay speed relative to the log's clock, above 0 (default 50)")
    p.add_argument("--instant", action="store_true", help="ingest as fast as possible")


def add_metrics_options(p: argparse.ArgumentParser) -> None:
    """--metrics URL: scrape a server's Prometheus endpoint reachable from here beside its log
    (the scrapes enter the session as typed events: `Session.feed_scrape`)."""
    p.add_argument("--metrics", metavar="URL",
                   help="also scrape this server's /metrics (used as given, any path) every "
                        "--metrics-interval seconds")
    p.add_argument("--metrics-interval", type=positive_float, default=2.0, metavar="S",
                   help="seconds between scrapes (1-5, default 2; doubled after a failure)")
    p.add_argument("--no-metrics", action="store_true", help="do not scrape /metrics")


def add_record_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--record", metavar="DIR",
                   help="keep the log lines and the /metrics scrapes in DIR (log.txt, "
                        "metrics.jsonl): `kvtui replay DIR` and `kvtui check DIR` read them")


def start_metrics(args: argparse.Namespace, session: Session,
                  recorder: Recorder | None = None) -> MetricsPoller | None:
    """The poller --metrics asks for, feeding `session` on a thread of its own (None: none
    asked). Scrape times are wall-clock seconds, so a recording keeps their spacing. The
    caller closes it when the view ends."""
    import time

    url = getattr(args, "metrics", None)
    if not url or getattr(args, "no_metrics", False):
        return None
    from kvtui.sources.metrics import MetricsPoller, Scraper

    return MetricsPoller(Scraper(url, args.metrics_interval, clock=time.time), session,
                         record=recorder.scrape if recorder is not None else None).start()


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="log files (.gz ok); several are merged by timestamp")
    add_speed_options(p)
    p.add_argument("--max-gap", type=non_negative_float, default=None, metavar="S",
                   help="longest pause between two lines, in seconds (default 0.2; 0: no cap)")
    p.add_argument("--paused", action="store_true", help="start paused (space plays)")
    p.add_argument("--model", metavar="M",
                   help="model preset, config.json or model directory for the calculator")
    add_metrics_options(p)
    p.add_argument("--metrics-record", metavar="DIR",
                   help="the /metrics scrapes a `--record DIR` kept (metrics.jsonl), fed "
                        "beside the log (implied when FILE is a recording directory)")
    add_tui_options(p)


def _is_recordings_log(files: list[str], metrics_record: str | None) -> bool:
    import os

    from kvtui.sources.record import found

    if metrics_record is None or len(files) != 1:
        return False
    directory = metrics_record if os.path.isdir(metrics_record) else \
        os.path.dirname(metrics_record) or "."
    kept = found(directory)
    return kept is not None and os.path.abspath(kept.log) == os.path.abspath(files[0])


def run(args: argparse.Namespace) -> int:
    from kvtui.sources.readers import LogOpenError, check_readable
    from kvtui.sources.record import found

    for i, path in enumerate(args.files):
        kept = found(path)  # a recording directory: its log, and its scrapes beside it
        if kept is not None:
            args.files[i] = kept.log
            if kept.metrics is not None and not args.metrics_record:
                args.metrics_record = kept.metrics
    # the recording's own log alone: its scrapes are fed where they were taken (`open_tui`)
    args.recording_log = _is_recordings_log(args.files, args.metrics_record)
    try:
        for path in args.files:
            if path == "-":
                raise LogOpenError("replay needs files, not stdin")
            check_readable(path)
    except LogOpenError as exc:
        print(f"kvtui: {exc}", file=sys.stderr)
        return 2
    from kvtui.sources import replay

    source = replay.ReplaySource(
        args.files,
        speed=args.speed if args.speed else replay.DEFAULT_SPEED,
        instant=args.instant,
        max_gap=args.max_gap if args.max_gap is not None else replay.DEFAULT_MAX_GAP,
        start_paused=args.paused,
    )
    return open_tui(source, source.name, args)


def open_tui(source: object, title: str, args: argparse.Namespace, *,
             metrics_offset: float | None = None) -> int:
    """Shared by replay, tail and demo: build the session from --model, then run the app.
    `metrics_offset`: seconds from the scrapes' clock to the log's, where the caller knows it
    (`KvApp.metrics_offset`)."""
    from kvtui.core.pipeline import Options, Session

    model = None
    name = getattr(args, "model", None)
    if name:
        from kvtui.core.capacity import resolve_model

        try:
            model = resolve_model(name)[0]
        except (ValueError, OSError) as exc:
            print(f"kvtui: {exc}", file=sys.stderr)
            return 2
    from kvtui.ui.app import run_app

    session = Session(Options(model=model))
    kept = getattr(args, "metrics_record", None)
    paced = None
    if kept:
        from kvtui.sources.record import feed_recorded, paced_scrapes

        try:
            # a replay of the recording's own log: each scrape where it was taken
            paced = paced_scrapes(kept) if getattr(args, "recording_log", False) else None
            if paced is None:
                feed_recorded(kept, session)
        except OSError as exc:
            print(f"kvtui: {exc}", file=sys.stderr)
            return 2
    recorder = None
    if getattr(args, "record", None):
        from kvtui.sources.record import Recorder, recording

        try:
            recorder = Recorder(args.record)
        except OSError as exc:
            print(f"kvtui: --record: {exc}", file=sys.stderr)
            return 2
        source = recording(source, recorder)  # type: ignore[arg-type]
    poller = start_metrics(args, session, recorder)
    try:
        return run_app(source, title, session=session,  # type: ignore[arg-type]
                       log_window=getattr(args, "log_window", 20000),
                       export_dir=getattr(args, "export_dir", None),
                       metrics_offset=metrics_offset, paced_scrapes=paced)
    finally:
        if poller is not None:
            poller.close()
        if recorder is not None:
            recorder.close()
