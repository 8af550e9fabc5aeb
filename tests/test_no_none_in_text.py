"""No `None` or `nan` ever reaches a reader: every sample and corpus log, rendered as the check's
text and Markdown and as the what-if text, shows a dash or says why instead; and no label is
left with nothing after it."""

from __future__ import annotations

import regex

from kvtui.commands.check import analyse_files
from kvtui.core.capacity.render import render_whatif_text
from kvtui.core.render import render_markdown, render_text
from tests.conftest import SAMPLES, corpus_dir

BAD = regex.compile(r"\b(?:None|nan|NaN|inf)\b")
EMPTY_LABEL = regex.compile(r"^[A-Z][a-z\-]+ {2,}$")  # "Parallel   " with nothing after it


def logs() -> list[str]:
    paths = sorted(SAMPLES.glob("*.log"))
    corpus = corpus_dir()
    if corpus.is_dir():
        paths += sorted(corpus.glob("*.log"))
    return [str(p) for p in paths]


def test_rendered_reports_never_show_none_or_nan():
    problems = []
    for path in logs():
        report = analyse_files([path])[0].report()
        texts = {"text": render_text(report), "markdown": render_markdown(report)}
        if report.whatif is not None:
            texts["whatif"] = render_whatif_text(report.whatif)
        for what, text in texts.items():
            quoted = False
            for line in text.splitlines():
                if line.startswith("```"):
                    quoted = not quoted  # a quoted evidence line is the log's own text
                    continue
                if quoted and what == "markdown" and not line.startswith(" "):
                    continue  # a quoted evidence line: the log's own text
                if (BAD.search(line) and "evidence:" not in line) or EMPTY_LABEL.match(line):
                    problems.append(f"{path} ({what}): {line.strip()[:160]}")
    assert not problems, "\n".join(problems[:40])
