"""Turning untrusted log text into inert, bounded display text, and the app's colour vocabulary.

Why one module: every widget that shows log-derived text (log lines, alert evidence, model names
from server_args) must go through the same sanitizer, or one of them will eventually render a
prompt containing `[@click=app.quit]` as markup. Nothing here builds markup strings: callers get
`rich.text.Text` objects whose content is never parsed.
"""

from __future__ import annotations

import re

from rich.text import Text

# CSI / OSC / other ESC sequences, then any C0/C1 control except tab.
_ANSI_RE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_CTRL_RE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")

# How much of one line the log pane draws. The full line stays in memory for copy and detail.
DISPLAY_MAX = 2000

SEVERITY_STYLE = {
    "critical": "bold red",
    "warning": "bold yellow",
    "info": "cyan",
    "ok": "bold green",
}
SEVERITY_ORDER = {"critical": 0, "warning": 1, "info": 2}

# Log-pane colour per recognized kind (parsers.kinds). Unknown kinds get the default.
KIND_STYLE = {
    "fp8_scales_missing": "bold red",
    "oom": "bold red",
    "retraction": "yellow",
    "mem_unbalanced": "yellow",
    "max_total_tokens_capped": "yellow",
    "kv_dtype": "bold magenta",
    "kv_pool": "magenta",
    "mamba_pool": "magenta",
    "swa_split": "magenta",
    "capacity": "bold cyan",
    "server_args": "blue",
    "load_weight_begin": "green",
    "load_weight_end": "green",
    "memory_pool_end": "green",
    "cuda_graph_end": "green",
    "fp8_scales_loaded": "bold green",
    "decode_batch": "dim",
    "prefill_batch": "dim cyan",
}
RECOGNIZED_STYLE = "white"


def clean(text: str, limit: int | None = DISPLAY_MAX) -> str:
    """Strip ANSI sequences and control characters, expand tabs, bound the length."""
    if limit is not None and len(text) > limit * 2:
        text = text[: limit * 2]  # cut before the regexes so a 1 MB line costs nothing
    if "\x1b" in text:
        text = _ANSI_RE.sub("", text)
    text = _CTRL_RE.sub("\ufffd", text.replace("\t", "    "))
    if limit is not None and len(text) > limit:
        text = text[:limit]
    return text


def plain(text: str, limit: int | None = DISPLAY_MAX, style: str = "") -> Text:
    """Untrusted text as a Text object: never parsed as markup, controls made inert."""
    return Text(clean(text, limit), style=style, no_wrap=False)


def severity_style(severity: str | None) -> str:
    return SEVERITY_STYLE.get(severity or "", "")


def fmt_int(v: object) -> str:
    return fmt_num(v, 0)


def fmt_gib(v: object) -> str:
    if isinstance(v, int | float) and not isinstance(v, bool):
        return f"{v:.2f} GiB"
    return "—"


def fmt_num(v: object, digits: int = 2) -> str:
    if isinstance(v, bool) or v is None:
        return "—"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:,.{digits}f}"
    return str(v)
