"""A session kept on disk: the log lines and the /metrics scrapes side by side, so that
`kvtui replay DIR` (or `kvtui check DIR`) replays it with its metrics later.

The layout of a recording directory:
- `log.txt`: the log's lines as they arrived (the history a consumer folded in bulk first);
- `metrics.jsonl`: one JSON object a scrape, in the order taken: `at` (wall-clock seconds),
  `source`, `state` (the states of `kvtui.sources.metrics`), `detail`, `body` (the
  exposition text as served, null when the scrape failed) and `lines` (how many lines
  log.txt held when it was taken: where a replay of the recording feeds it, `paced_scrapes`).
  The raw text is kept, not a parsed form, so a later kvtui reads it with its own catalogue.

Why wrappers: the recorder sits between a source and its consumer (`RecordingSource`,
`RecordingBlockSource`) and between the metrics poller and the session (`MetricsPoller`'s
`record`), so neither the sources nor the pipeline know a recording is made.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kvtui.sources.base import Emit, History, Item, LineSource, SourceLine, local_files
from kvtui.sources.metrics import ScrapeResult, ScrapeSink, deliver
from kvtui.sources.ssh.blocks import BlockSource, Deliver, Delivered, LineBlock, block_source

LOG_NAME = "log.txt"
METRICS_NAME = "metrics.jsonl"
COPY_BYTES = 1 << 20


class Recorder:
    """Appends lines to `DIR/log.txt` and scrapes to `DIR/metrics.jsonl` (thread-safe: the
    source's thread writes lines, the poller's writes scrapes)."""

    def __init__(self, directory: str) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self._log = open(self.dir / LOG_NAME, "ab")  # noqa: SIM115 - closed by close()
        self._metrics = open(self.dir / METRICS_NAME, "a", encoding="utf-8")  # noqa: SIM115
        self._lock = threading.Lock()
        self.line_count = _count_lines(self.dir / LOG_NAME)  # lines log.txt holds

    def lines(self, texts: list[str]) -> None:
        if texts:
            data = ("\n".join(texts) + "\n").encode("utf-8", "surrogateescape")
            with self._lock:
                self._log.write(data)
                self._log.flush()
                self.line_count += len(texts)

    def raw(self, data: bytes) -> None:
        with self._lock:
            self._log.write(data)
            self._log.flush()
            self.line_count += data.count(b"\n")

    def copy(self, path: str, end: int) -> None:
        """The first `end` bytes of `path` (a history a consumer folded in bulk)."""
        with open(path, "rb") as f, self._lock:
            left = end
            while left > 0:
                chunk = f.read(min(COPY_BYTES, left))
                if not chunk:
                    break
                self._log.write(chunk)
                self.line_count += chunk.count(b"\n")
                left -= len(chunk)
            self._log.flush()

    def scrape(self, result: ScrapeResult, source: str) -> None:
        with self._lock:
            row = {"at": result.at, "source": source, "state": result.state,
                   "detail": result.detail, "body": result.body, "lines": self.line_count}
            self._metrics.write(json.dumps(row, ensure_ascii=False) + "\n")
            self._metrics.flush()

    def close(self) -> None:
        with self._lock:
            self._log.close()
            self._metrics.close()


class RecordingSource:
    """A `LineSource` that writes every line its inner source emits (and the history the
    consumer took in bulk) to the recorder."""

    def __init__(self, inner: LineSource, recorder: Recorder) -> None:
        self.inner = inner
        self.recorder = recorder
        self.name = inner.name
        self._history: History | None = None

    def run(self, emit: Emit, stop: threading.Event) -> None:
        def tee(items: list[Item]) -> None:
            self.recorder.lines([i.text for i in items if isinstance(i, SourceLine)])
            emit(items)

        self.inner.run(tee, stop)

    def local_paths(self) -> tuple[str, ...]:
        """The inner source's local files (the TUI's export goes next to them, as without a
        recording)."""
        return local_files(self.inner)

    def history(self) -> History | None:
        self._history = self.inner.history()
        return self._history

    def skip_to(self, offset: int, lines: int) -> None:
        if self._history is not None:
            self.recorder.copy(self._history.file.path, offset)
        self.inner.skip_to(offset, lines)


class RecordingBlockSource(RecordingSource):
    """The same for a source that delivers blocks (the SSH follower): the read-ahead block is
    left out (its lines come again in their place)."""

    def __init__(self, inner: BlockSource, recorder: Recorder) -> None:
        super().__init__(inner, recorder)  # type: ignore[arg-type]
        self.blocks = inner

    @property
    def expected_bytes(self) -> int | None:
        return self.blocks.expected_bytes

    def run_blocks(self, deliver_: Deliver, stop: threading.Event) -> None:
        def tee(batch: list[Delivered]) -> None:
            for item in batch:
                if isinstance(item, LineBlock) and not item.prelude:
                    if item.raw is not None:
                        self.recorder.raw(bytes(item.raw))
                    else:
                        self.recorder.lines(list(item.texts))
            deliver_(batch)

        self.blocks.run_blocks(tee, stop)


def recording(source: LineSource, recorder: Recorder) -> RecordingSource:
    blocks = block_source(source)
    if blocks is not None:
        return RecordingBlockSource(blocks, recorder)
    return RecordingSource(source, recorder)


@dataclass(frozen=True, slots=True)
class Recorded:
    """A recording directory's parts (`found`: None when `path` is not one)."""

    log: str
    metrics: str | None


def found(path: str) -> Recorded | None:
    """`path` as a recording: a directory holding log.txt (and maybe metrics.jsonl)."""
    if not os.path.isdir(path):
        return None
    log = os.path.join(path, LOG_NAME)
    if not os.path.isfile(log):
        return None
    metrics = os.path.join(path, METRICS_NAME)
    return Recorded(log, metrics if os.path.isfile(metrics) else None)


@dataclass(frozen=True, slots=True)
class RecordedScrape:
    result: ScrapeResult
    source: str
    lines: int | None  # lines log.txt held when it was taken (None: a recording without it)


def recorded_scrapes(path: str) -> Iterator[RecordedScrape]:
    """The scrapes of a recording's metrics.jsonl (or of the directory holding it), in order;
    a line that is not a scrape's record is skipped (a write cut by a crash)."""
    if os.path.isdir(path):
        path = os.path.join(path, METRICS_NAME)
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                row = json.loads(line)
                result = ScrapeResult(str(row["state"]), row.get("body"),
                                      str(row.get("detail") or ""), float(row["at"]))
                source = str(row.get("source") or "recording")
                lines = row.get("lines")
                at_line = int(lines) if isinstance(lines, int) and lines >= 0 else None
            except (ValueError, KeyError, TypeError):
                continue
            yield RecordedScrape(result, source, at_line)


def feed_recorded(path: str, sink: ScrapeSink) -> int:
    """Every recorded scrape into `sink` (a Session), in order; how many."""
    n = 0
    for kept in recorded_scrapes(path):
        deliver(kept.result, sink, kept.source)
        n += 1
    return n


def paced_scrapes(path: str) -> tuple[RecordedScrape, ...] | None:
    """The recorded scrapes for a replay that feeds each where it was taken (after the line
    count it carries: `kvtui.ui.ingest.Ingest`), so the metrics pane and the Timeline move as
    the replayed log does; None when any lacks its place (a recording made before kvtui kept
    it): those are fed before the replay starts, as `check DIR` feeds them all."""
    kept = tuple(recorded_scrapes(path))
    if any(k.lines is None for k in kept):
        return None
    return kept


def _count_lines(path: Path) -> int:
    """Lines a recording's log.txt already holds (a recording continued)."""
    n = 0
    with contextlib.suppress(OSError), open(path, "rb") as f:
        while chunk := f.read(COPY_BYTES):
            n += chunk.count(b"\n")
    return n
