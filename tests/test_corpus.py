"""Every line of the real-log corpus parses exactly as `corpus_expectations` says.

The corpus is ground truth for what pasted SGLang and vLLM logs look like; a missed line, a
mis-typed value or a stray event on an irrelevant line all fail here. Lines are read as the
pipeline reads them: by the grammar of the engine the file's lines name. A new corpus file without
an entry fails too, so the expectations cannot silently fall behind the corpus.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from corpus_expectations import EXPECTATIONS

from kvtui.core.engine import all_engines
from kvtui.core.pipeline.fold import Fold
from parsers import KIND_FIELDS

CORPUS = Path(
    os.environ.get(
        "KVTUI_CORPUS", Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
    )
)


def _corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(CORPUS.glob("*.log"))


def _require_corpus() -> None:
    if not _corpus_files():
        pytest.skip(f"corpus directory {CORPUS} is absent or empty (set KVTUI_CORPUS)")


def test_every_corpus_file_has_expectations() -> None:
    _require_corpus()
    names = {p.name for p in _corpus_files()}
    unlisted = sorted(names - EXPECTATIONS.keys())
    assert not unlisted, f"corpus files without an entry in corpus_expectations: {unlisted}"


@pytest.mark.parametrize("name", sorted(EXPECTATIONS))
def test_corpus_file(name: str) -> None:
    _require_corpus()
    path = CORPUS / name
    if not path.exists():
        pytest.skip(f"{name} not in {CORPUS}")
    expected = EXPECTATIONS[name]
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    assert max(expected, default=0) <= len(lines), f"{name}: expectation beyond last line"
    problems: list[str] = []
    fold = Fold(all_engines())  # each line read by the engine the file's lines name
    for number, line in enumerate(lines, 1):
        event = fold.parse(line)
        want = expected.get(number)
        if want is None:
            if event is not None:
                problems.append(f"{name}:{number}: expected None, got {event.kind}")
            continue
        if event is None:
            problems.append(f"{name}:{number}: expected {want[0]}, got None")
            continue
        kind, rank, ts, fields = want
        got = {k: v for k, v in event.fields.items() if v is not None and k != "message"}
        missing_keys = set(KIND_FIELDS[event.kind]) - event.fields.keys()
        if (event.kind, event.rank, event.ts, got) != (kind, rank, ts, fields) or missing_keys:
            problems.append(
                f"{name}:{number}: expected {(kind, rank, ts, fields)}, "
                f"got {(event.kind, event.rank, event.ts, got)} missing={missing_keys}"
            )
    assert not problems, "\n".join(problems)


def test_no_corpus_line_is_copied_into_the_repo() -> None:
    """The corpus is ground truth to test against, never to copy: a fixture, a sample or a doc
    writes its own line in the style of the real one (its own stamps and figures). Checked on
    every line of the corpus long enough to be distinctive and carrying a real head (a time or
    a pid), against the text of every file git tracks outside the expectations, which only
    quote the corpus' fields."""
    import re
    import subprocess

    _require_corpus()
    root = Path(__file__).resolve().parents[1]
    head = re.compile(r"\d\d:\d\d:\d\d|pid=\d")
    lines = {ln.strip(): f.name for f in _corpus_files()
             for ln in f.read_text(errors="replace").splitlines()
             if len(ln.strip()) >= 60 and head.search(ln)}
    tracked = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True,
                             check=True).stdout.split()
    found = []
    for name in tracked:
        if name.endswith((".svg", ".png")) or name == "tests/corpus_expectations.py":
            continue
        try:
            text = (root / name).read_text(errors="replace")
        except (OSError, IsADirectoryError):
            continue
        found += [f"{name}: {src}: {ln[:80]}" for ln, src in lines.items() if ln in text]
    assert not found, "corpus lines copied verbatim:\n" + "\n".join(found)
