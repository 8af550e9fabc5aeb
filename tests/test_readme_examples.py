"""The README's example outputs are what the commands print today (it is the user's first page:
an example that drifted, such as a release range the dating has since narrowed, misleads)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from kvtui.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def example(intro: re.Pattern[str]) -> tuple[list[str], list[str]]:
    """(the command's arguments, its output block's lines) of the first example whose intro
    line matches: "`kvtui ARGS`:" or "... `kvtui ARGS` (abridged):", then a fenced block."""
    m = intro.search(README)
    assert m, f"no README example matches {intro.pattern}"
    block = README[m.end():].split("```\n", 2)[1]
    return shlex.split(m.group("cmd"))[1:], block.rstrip("\n").splitlines()


def run(capsys: pytest.CaptureFixture[str], argv: list[str], monkeypatch: pytest.MonkeyPatch
        ) -> list[str]:
    monkeypatch.chdir(ROOT)
    main(argv)
    return capsys.readouterr().out.rstrip("\n").splitlines()


def test_the_whatif_example_is_printed_verbatim(capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch):
    argv, shown = example(re.compile(r"^`(?P<cmd>kvtui whatif [^`]+)`:\n\n", re.M))
    assert run(capsys, argv, monkeypatch) == shown


def test_the_check_example_abridges_but_never_differs(capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch):
    """Abridged: a line ending in "..." stands for a longer one, and "  ..." for lines left
    out; every other line is printed as shown, in that order."""
    argv, shown = example(re.compile(r"`(?P<cmd>kvtui check [^`]+)` \(abridged\):\n\n"))
    out = run(capsys, argv, monkeypatch)
    at = 0
    for line in shown:
        if line.strip() == "...":
            continue
        head = line[:-3].rstrip() if line.endswith("...") else line
        while at < len(out) and not (out[at].startswith(head) if line.endswith("...")
                                     else out[at] == line):
            at += 1
        assert at < len(out), f"README line not printed (in order): {line!r}"
        at += 1


def test_catalogue_counts_are_the_catalogues():
    """The README's "N kinds, M layouts" is what parsers/sglang/catalog.py holds (it drifted
    by one kind and one layout before this test)."""
    from parsers.sglang.catalog import CATALOG, VARIANTS

    m = re.search(r"catalog\.py`: (\d+)\s+kinds, (\d+) layouts", README)
    assert m is not None
    assert (int(m.group(1)), int(m.group(2))) == (len(CATALOG), len(VARIANTS))
