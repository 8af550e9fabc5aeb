"""The accuracy checklist as the Facts pane's first section: one line per setting, coloured by
its state, so "are we doing anything that costs accuracy?" is answered before the pools.

Summaries are the core's (`kvtui.core.accuracy`), shown through `clean` (log text is inert);
the evidence line and the fix are in `kvtui check` and in the alert's detail (key 1).
"""

from __future__ import annotations

from rich.text import Text

from kvtui.core.accuracy_text import CERTAINTY_WORD, STATE_WORD
from kvtui.ui import report_view as rv
from kvtui.ui.provenance import item_sources, tag
from kvtui.ui.text import clean

STATE_STYLE = {"ok": "green", "info": "cyan", "warning": "bold yellow",
               "critical": "bold red", "unknown": "dim"}
STATE_MARK = {"ok": "✓", "info": "•", "warning": "!", "critical": "✗", "unknown": "?"}
# the pane is a third of a wide screen: the core's labels, shortened
SHORT = {"kv_cache": "KV cache", "weights": "Weights", "context": "Context", "length":
         "Length cuts", "chat_template": "Template", "parsers": "Parsers", "generation":
         "Sampling"}


def accuracy_text(t: Text, r: rv.Shown) -> None:
    """Append the checklist (nothing before an engine is known)."""
    items = rv.accuracy(r)
    if not items:
        return
    t.append("Accuracy\n", style="bold")
    for it in items:
        style = STATE_STYLE.get(it.state, "")
        t.append(f"  {STATE_MARK.get(it.state, '?')} ", style=style)
        t.append(f"{SHORT.get(it.item, it.label):<12}",
                 style="bold" if it.state in ("warning", "critical") else "")
        t.append(f"{STATE_WORD.get(it.state, it.state):<8} ", style=style)
        t.append(clean(it.summary, 160), style="dim" if it.state == "unknown" else "")
        sure = CERTAINTY_WORD.get(it.confidence or "")
        if sure and it.state != "ok":
            t.append(f" ({sure})", style="dim")
        tag(t, *item_sources(it, r))
        t.append("\n")
