"""Tolerant by construction: what wraps a recognised line, or cuts it, changes nothing it says.

- A recognised line stays recognised, with the same kind, fields and variant (and its own
  timestamp and ranks), whatever the log's route put in front of it: a docker/kubectl
  timestamp, `kubectl --prefix`, a journal head, a Ray actor prefix (and Ray's
  `[repeated Nx across cluster]` suffix), ANSI colour, Python's `INFO:root:` head, or model
  output streamed without a newline (in front of a line that carries SGLang's own head).
- Every runtime layout of every release reads the same under every prefix form SGLang (or a
  paste) gives it: dated, with milliseconds, time-only, none, bracket-less, logging-config.
- A line cut after any column never reports a value the whole line does not: whichever column
  ends up last, what is read is what was printed.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from parsers.prefix import message_start
from parsers.sglang import parse_line
from parsers.sglang.catalog import CATALOG
from tests.parsers.test_samples import SAMPLES

LINES = sorted({v.sample for f in CATALOG for v in f.variants} | {s for s, _, _ in SAMPLES})
RUNTIME = [v.sample for f in CATALOG if f.kind in ("decode_batch", "prefill_batch")
           for v in f.variants]

ENVELOPES = [
    "", "2026-11-24T09:14:20.123456789Z ", "2026-11-24T09:14:20Z ",
    "[pod/sglang-0/server] ", "[pod/sglang-0/server] 2026-11-24T09:14:20.1Z ",
    "Nov 24 09:14:20 gpu-node sglang[4242]: ", "2026-11-24T09:14:20+0000 gpu-node sglang[1]: ",
    "Tue 2026-11-24 09:14:20 UTC gpu-node sglang[1]: ",
]
ACTORS = ["", "(SchedulerActor pid=123, ip=10.0.0.1) ", "(pid=45601) ",
          "\x1b[2m\x1b[36m(SchedulerActor pid=7)\x1b[0m ",
          "^[[2m^[[36m(SchedulerActor pid=7)^[[0m "]  # as `cat -v` shows the colours
# Output that starts with a digit puts the line's first "] " inside its own head, found by the
# message-start search as if the digits were a bare timestamp head.
STREAMED = ["", "The answer is 42.", "data: {\"text\": \"Hello\"}", "...", "42 is the answer: "]
SUFFIXES = ["", " [repeated 3x across cluster]"]


def _own_head(line: str) -> bool:
    """The line starts with SGLang's own `[ts ranks] ` head (what marks it inside a longer
    line; a bare message glued to other text cannot be told from that text)."""
    ev = parse_line(line)
    return line.startswith("[") and ev is not None and ev.ts is not None


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(LINES), st.sampled_from(ENVELOPES), st.sampled_from(ACTORS),
       st.sampled_from(STREAMED), st.sampled_from(SUFFIXES), st.booleans(), st.booleans())
def test_a_recognised_line_survives_any_wrapping(line: str, envelope: str, actor: str,
                                                 streamed: str, suffix: str, colour: bool,
                                                 logger_head: bool) -> None:
    want = parse_line(line)
    assert want is not None, line
    inner = line
    if colour:
        inner = "\x1b[32m" + inner + "\x1b[0m"
    if logger_head and want.ts is None and message_start(line) == 0:
        # Python's default format replaces SGLang's own head: only a bare message gets it
        inner = "INFO:root:" + inner
    if streamed and _own_head(line):
        inner = streamed + inner
    wrapped = envelope + actor + inner + (suffix if actor else "")
    got = parse_line(wrapped)
    assert got is not None, wrapped
    assert (got.kind, got.fields, got.variant) == (want.kind, want.fields, want.variant), wrapped
    assert (got.ts, got.rank) == (want.ts, want.rank), wrapped


PREFIX_FORMS = [
    ("", None, None),
    ("[2026-03-01 12:00:00 TP0] ", "2026-03-01 12:00:00", "TP0"),
    ("[2026-03-01 12:00:00.123 DP1 TP3 EP3] ", "2026-03-01 12:00:00.123", "DP1 TP3 EP3"),
    ("[16:43:29 TP0] ", "16:43:29", "TP0"),
    ("[16:43:29] ", "16:43:29", None),
    ("2025-09-13 09:09:15 TP0] ", "2025-09-13 09:09:15", "TP0"),
    ("2026-02-27 10:00:01 INFO 12345 [DP0 TP0 EP0 scheduler.py:412] ", "2026-02-27 10:00:01",
     "DP0 TP0 EP0"),
]


def _message(line: str) -> str:
    return line[message_start(line):]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(RUNTIME), st.sampled_from(PREFIX_FORMS), st.booleans())
def test_every_runtime_layout_under_every_prefix_form(line: str, form: tuple[str, str | None,
                                                      str | None], newline: bool) -> None:
    msg = _message(line)
    want = parse_line(msg)
    assert want is not None, msg
    head, ts, rank = form
    got = parse_line(head + msg + ("\n" if newline else ""))
    assert got is not None
    assert (got.kind, got.fields, got.variant, got.ts, got.rank) == (
        want.kind, want.fields, want.variant, ts, rank)


def _cuts(line: str) -> list[str]:
    out = []
    at = line.find(", ")
    while at >= 0:
        out.append(line[:at])  # cut before a column
        out.append(line[: at + 1])  # cut after a column's comma
        out.append(line[: at + 4])  # cut inside the next column
        at = line.find(", ", at + 1)
    return out


def test_a_cut_line_never_invents_a_value() -> None:
    checked = 0
    for line in LINES:
        whole = parse_line(line)
        assert whole is not None
        for cut in _cuts(line):
            ev = parse_line(cut)
            if ev is None or ev.kind != whole.kind:
                continue
            checked += 1
            for name, value in ev.fields.items():
                if value is None or name in ("message",):
                    continue
                if name in ("label", "graph", "mode", "path", "process", "pool"):
                    continue  # free-text columns: a cut shortens them, it does not misread
                assert whole.fields.get(name) == value, (cut, name, value, whole.fields)
    assert checked > 300
