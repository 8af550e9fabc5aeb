"""The accuracy checklist as text and Markdown (`kvtui check`, its Markdown export).

Apart from `render.py` so the checklist's layout lives with nothing else; `render.py` calls it
where the checklist goes (after the alerts). Log text reaches the output only through `inert`.
"""

from __future__ import annotations

import textwrap

from kvtui.core.report_types import AccuracyItem
from kvtui.core.text import inert

# the state as a reader sees it, fixed width; the alert severities keep their own words
STATE_WORD = {"ok": "ok", "info": "stated", "warning": "WARNING", "critical": "CRITICAL",
              "unknown": "unknown"}
# an alert's confidence in the words the TUI's help uses
CERTAINTY_WORD = {"high": "sure", "medium": "likely", "low": "possible"}


def _where(item: AccuracyItem) -> str:
    ev = item.evidence
    return f" [line {ev.line}]" if ev is not None and ev.line else ""


def checklist_text(items: tuple[AccuracyItem, ...]) -> list[str]:
    """One line per item: label, state, what the log says (and how sure), the evidence line,
    and the alert that gives the fix where the item costs accuracy (its fix is there)."""
    if not items:
        return []
    out = ["Accuracy checklist"]
    for it in items:
        sure = CERTAINTY_WORD.get(it.confidence or "", "")
        tail = f" ({sure})" if sure and it.state in ("warning", "critical", "info") else ""
        alert = f" -> alert {it.rule}" if it.rule and it.state in ("warning", "critical") \
            else ""
        out.append(f"  {it.label:<25} {STATE_WORD.get(it.state, it.state):<8} "
                   f"{inert(it.summary, 300)}{tail}{_where(it)}{alert}")
        if it.fix and it.state == "info":  # a stated trade-off's check (no alert says it)
            out.extend(textwrap.wrap(f"fix: {inert(it.fix, 600)}", 100,
                                     initial_indent=" " * 37, subsequent_indent=" " * 42))
    return out


def checklist_markdown(items: tuple[AccuracyItem, ...]) -> list[str]:
    if not items:
        return []
    md = ["## Accuracy checklist", "", "| setting | state | what the log says | line | fix |",
          "|---|---|---|---|---|"]
    for it in items:
        ev = it.evidence
        line = str(ev.line) if ev is not None and ev.line else ""
        fix = inert(it.fix, 600) if it.fix and it.state in ("warning", "critical") else ""
        cells = (it.label, STATE_WORD.get(it.state, it.state), inert(it.summary, 300), line, fix)
        md.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    md.append("")
    return md


def _cell(text: str) -> str:
    for ch in ("<", ">"):
        text = text.replace(ch, "\\" + ch)
    return text.replace("|", "\\|").replace("\n", " ")
