"""The interactive what-if pane: the inputs and the answer on screen together.

Why this layout (issue 39): the answer "updates as you type", so it must stay on screen while the
user types. A wide pane (90 columns and up: 120x40, or the what-if widened at 200x50) puts the
form on the left and the answer on the right; a narrow one puts the compact form (two fields a
row) above the answer, and the app gives the what-if the log's rows while it is shown
(`KvApp._apply_layout`), so at 80x24 the changed rows are under the fields, not scrolled away.

Every field starts empty and shows the log's value as its placeholder, so an untouched form is
the log's deployment and anything the user typed stands out (`-changed`). The pane itself takes
the focus (key 3), not a field: pane keys (1-5, q, space) keep working until the user steps into
the form on purpose (Enter: the KV dtype; Tab moves on), and Escape always steps back out. A field
selects its content on entry, so typing replaces it (`TP 8`, Tab away and back, `16` is 16).

Each field is checked by the same code and message as `kvtui whatif` (`core.capacity.options`);
a refused value is said under its field and the last good value is kept. Recomputes on every
change (the arithmetic is microseconds). The rows come from `whatif_calc.compute`; the
concurrency rows are drawn from the calculator's own numbers (requests that fit by memory, and
how many of those can run under max_running_requests).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from rich.console import Group, RenderableType
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Input, Label, Select, Static

from kvtui.core.capacity import options
from kvtui.core.capacity.calculator import Calculator
from kvtui.core.engine import all_engines, load
from kvtui.core.units import fmt_length
from kvtui.ui.text import clean
from kvtui.ui.whatif_calc import WhatIfInputs, WhatIfResult, compute, fmt_fit

# Labels as the pane shows them (the rows' own labels name the engine's fields).
SHORT_LABELS = {
    "mem_fraction_static": "mem fraction",
    "gpu_memory_utilization": "gpu mem util",
    "gpu_memory_utilization needed": "util needed",
    "bytes/token/GPU": "bytes/token",
    "tokens": "KV tokens",
    "max_running_requests": "max running",
    "missing per GPU": "missing/GPU",
    "mem_fraction_static needed": "mem frac needed",
    "kv_cache_memory_bytes": "kv bytes",
    "kv_cache_memory_bytes needed": "kv bytes needed",
}
SIDE_MIN_WIDTH = 90  # the pane's width from which form and answer sit side by side
GAP = 2  # spaces between the answer's columns
_BIG = re.compile(r"\d{1,3}(?:,\d{3})+")


def _preset_options() -> list[tuple[str, str]]:
    try:
        from kvtui.core.capacity.presets import load_presets

        return [(doc["hf_id"], pid) for pid, doc in load_presets().items()]
    except Exception:
        return []


def default_lengths(calc: Calculator | None) -> list[int]:
    """The lengths `kvtui whatif` and `kvtui check` use: the server's context_len first, then
    the calculator's defaults."""
    from kvtui.core.capacity.whatif import request_lengths

    first = calc.context_len if calc is not None else None
    return request_lengths(first if isinstance(first, int) and first > 0 else None, None)


def kv_dtypes(calc: Calculator | None) -> tuple[str, ...]:
    """The KV dtypes the dtype field offers: the run's engine's own (`Engine.kv_dtypes`), every
    engine's before a run is sized (the field exists before the report does)."""
    if calc is not None:
        return load(calc.engine).kv_dtypes
    out: list[str] = []
    for engine in all_engines():
        out.extend(d for d in engine.kv_dtypes if d not in out)
    return tuple(out)


def concurrency_cell(fit: float | None, cap: int | None) -> tuple[str, str]:
    """What fits by memory and what can run: at most `cap` (max_running_requests) of them."""
    if fit is None:
        return "—", ""
    run = int(fit) if cap is None else min(int(fit), cap)
    capped = cap is not None and int(fit) > cap
    return f"{fmt_fit(fit)} fit · {run:,} run", ("yellow" if capped else
                                              ("bold red" if run < 1 else ""))


def abbreviate(cell: str) -> str:
    """A cell made shorter by rule, never by cutting: every grouped number of 7 digits and more
    in millions (M = 10^6), of 5-6 digits in thousands (k = 10^3), to 3 significant figures
    (`5,242,880` -> `5.24M`, `608,174` -> `608k`). A lowercase k, since a length's K is 1024
    (`128K`); labels keep their lengths as `fmt_length` writes them. Used only when the whole
    table does not fit the pane's width."""
    def three(x: float) -> str:
        return f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}"

    def short(m: re.Match[str]) -> str:
        v = int(m.group(0).replace(",", ""))
        if v >= 1_000_000:
            return three(v / 1e6) + "M"
        if v >= 10_000:
            return three(v / 1e3) + "k"
        return m.group(0)
    return _BIG.sub(short, cell)


def table_lines(rows: list[tuple[str, str, str, str]], width: int) -> list[tuple[str, ...]]:
    """The answer's rows (label, now, target, style) in columns as wide as their widest cell;
    when that is wider than `width`, numbers are abbreviated (`abbreviate`), never cut."""
    def widths(rs: list[tuple[str, str, str, str]]) -> tuple[int, int]:
        return (max((len(r[0]) for r in rs), default=0), max((len(r[1]) for r in rs), default=0))

    def total(rs: list[tuple[str, str, str, str]]) -> int:
        lw, cw = widths(rs)
        return lw + cw + 2 * GAP + max((len(r[2]) for r in rs), default=0)

    if total(rows) > width:
        rows = [(r[0], abbreviate(r[1]), abbreviate(r[2]), r[3]) for r in rows]
    lw, cw = widths(rows)
    gap = " " * GAP
    return [(f"{r[0]:<{lw}}{gap}", f"{r[1]:<{cw}}{gap}", r[2], r[3]) for r in rows]


def _field(label: str, widget: Any, *, label_id: str | None = None) -> ComposeResult:
    """A label and its field, on one row."""
    with Horizontal(classes="wi-cell"):
        yield Label(label, id=label_id, classes="wi-label")
        yield widget


def _says(*fields: str) -> Static:
    """The line under a row of fields that says why a value is refused (the message names its
    field). One per row, not per field: fewer widgets to lay out when the pane is shown."""
    return Static("", markup=False, id=f"{fields[0]}-msg", classes="wi-msg")


# which message line speaks for each field (its row's)
MSG_OF = {"wi-tp": "wi-tp-msg", "wi-mf": "wi-mf-msg", "wi-conc": "wi-mf-msg",
          "wi-ctx": "wi-ctx-msg", "wi-config": "wi-ctx-msg"}


class WhatIfPane(Vertical, can_focus=False):
    """Target KV dtype, TP, mem_fraction_static, lengths, requests, model preset."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "edit", "Edit", show=False),
        Binding("escape", "leave", "Back to panes", show=False),
    ]

    DEFAULT_CSS = """
    WhatIfPane #wi-body { height: 1fr; layout: vertical; }
    WhatIfPane.-side #wi-body { layout: horizontal; }
    WhatIfPane #wi-form { height: auto; width: 1fr; }
    WhatIfPane.-side #wi-form { width: 40; height: 1fr; padding-right: 1; }
    WhatIfPane .wi-row { height: auto; layout: horizontal; }
    WhatIfPane.-side .wi-row { layout: vertical; }
    WhatIfPane .wi-cell { height: 1; width: 1fr; }
    WhatIfPane .wi-label { width: 10; padding: 0 1 0 1; }
    WhatIfPane .wi-msg { display: none; height: auto; color: $text-error; padding-left: 1; }
    WhatIfPane .wi-msg.-shown { display: block; }
    WhatIfPane #wi-answer { height: 1fr; width: 1fr; padding-left: 1; }
    WhatIfPane Select { width: 1fr; }
    WhatIfPane Input { width: 1fr; }
    WhatIfPane Input.-invalid { background: $error 40%; }
    WhatIfPane Input.-changed { text-style: bold; background: $accent 30%; }
    WhatIfPane Input:focus { background: $accent 70%; color: $text; }
    WhatIfPane Select:focus > SelectCurrent { background: $accent 70%; color: $text; }
    """

    class ModelChosen(Message):
        """The user picked a preset or a config.json: the app re-analyses with that model."""

        def __init__(self, model: str | None) -> None:
            super().__init__()
            self.model = model

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.inputs = WhatIfInputs()
        self.calc: Calculator | None = None
        self.unsized: str | None = None  # why there is no calculator, when the report says
        self.result: WhatIfResult | None = None
        self.lengths_typed = False  # the user typed lengths; otherwise they follow the server
        self._drawn: Any = None
        self.shown = ""  # the answer as plain text (what the pane shows)
        self._refused: dict[str, str] = {}  # field id -> why its value is refused
        self._dtypes = kv_dtypes(None)  # what the dtype field offers

    def compose(self) -> ComposeResult:
        with Vertical(id="wi-body"):
            with Vertical(id="wi-form"):
                with Horizontal(classes="wi-row"):
                    dtypes = [(d, d) for d in self._dtypes]
                    yield from _field("KV dtype", Select(dtypes, value="bf16",
                                                         allow_blank=False, id="wi-dtype",
                                                         compact=True))
                    yield from _field("TP", Input(placeholder="log", id="wi-tp",
                                                  compact=True))
                yield _says("wi-tp")
                with Horizontal(classes="wi-row"):
                    yield from _field("mem frac", Input(placeholder="log", id="wi-mf",
                                                        compact=True), label_id="wi-mf-label")
                    yield from _field("reqs", Input(placeholder="none", id="wi-conc",
                                                    compact=True))
                yield _says("wi-mf", "wi-conc")
                with Horizontal(classes="wi-row"):
                    yield from _field("lengths", Input(placeholder="server's", id="wi-ctx",
                                                       compact=True))
                yield _says("wi-ctx")
                with Horizontal(classes="wi-row"):
                    yield from _field("model", Select(_preset_options(),
                                                      prompt="preset matching the log",
                                                      id="wi-preset", compact=True))
                    yield from _field("config", Input(placeholder="config.json (Enter)",
                                                      id="wi-config", compact=True))
            with VerticalScroll(id="wi-answer", can_focus=False):
                result = Static("", markup=False, id="wi-result")
                result.can_focus = True
                yield result

    def on_resize(self, event: events.Resize) -> None:
        side = event.size.width >= SIDE_MIN_WIDTH
        if side != self.has_class("-side"):
            self.set_class(side, "-side")
        self.recompute()  # the table's columns follow the width (a part of its key)

    # -- focus -----------------------------------------------------------------------------
    def focus_target(self) -> Static:
        """What takes the focus when the pane is shown: the answer, a leaf. Focusing the pane
        itself would make Textual restyle the whole form on every pane switch."""
        return self.query_one("#wi-result", Static)

    def action_edit(self) -> None:
        """Step into the form (explicitly): the first field takes the keys."""
        self.query_one("#wi-dtype", Select).focus()

    def action_leave(self) -> None:
        self.focus_target().focus()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """Say on the border what the keys do where the focus is (ctrl+u was never said)."""
        editing = event.widget is not self.focus_target()
        hint = ("Tab next field · typing replaces · Esc back" if editing
                else "Enter: edit the inputs")
        if self.border_subtitle != hint:
            self.border_subtitle = hint

    # -- data ------------------------------------------------------------------------------
    def show(self, calc: Calculator | None, unsized: str | None = None) -> None:
        self.calc = calc
        self.unsized = unsized
        if calc is not None:
            self._offer_dtypes(calc)
            self._placeholders(calc)
            if not self.lengths_typed:
                self.inputs.contexts = default_lengths(calc)
        self.recompute()

    def _offer_dtypes(self, calc: Calculator) -> None:
        """The dtype field's options: the run's engine's KV dtypes (kept while they are the
        same; a dtype the engine does not have falls back to bf16)."""
        wanted = kv_dtypes(calc)
        if wanted == self._dtypes:
            return
        self._dtypes = wanted
        select = self.query_one("#wi-dtype", Select)
        keep = self.inputs.dtype if self.inputs.dtype in wanted else "bf16"
        with select.prevent(Select.Changed):
            select.set_options([(d, d) for d in wanted])
            select.value = keep
        self.inputs.dtype = keep

    def _placeholders(self, calc: Calculator) -> None:
        """The log's values as the fields' placeholders: an empty field means "as logged"."""
        tp = calc.parallel.tp
        # a TP the log does not state reads as in the header (`TP>=6 (sized as 8)`)
        tp_label = calc.tp_label
        knob = calc.memory_knob()
        mf = knob.value
        label = self.query_one("#wi-mf-label", Label)
        if str(label.render()) != knob.short:
            label.update(knob.short)
        want = {
            "#wi-tp": tp_label or (f"{tp} (log)" if tp else "log"),
            "#wi-mf": f"{knob.show(mf)} (log)" if isinstance(mf, float) else "log",
            "#wi-ctx": " ".join(fmt_length(c) for c in default_lengths(calc)),
        }
        for sel, text in want.items():
            field = self.query_one(sel, Input)
            if field.placeholder != text:
                field.placeholder = text

    def recompute(self) -> None:
        self.result = res = compute(self.calc, self.inputs, self.unsized)
        numbers = self._numbers()
        width = self._answer_width()
        key = (tuple(res.rows), res.flag, tuple(res.notes), res.error, res.model,
               res.does_not_fit, repr(numbers), width)
        if key == self._drawn:
            return  # a new report with the same deployment: nothing to repaint
        self._drawn = key
        shown = self.render_result(res, numbers, width)
        parts = shown.renderables if isinstance(shown, Group) else [shown]
        self.shown = "\n".join(part.plain for part in parts if isinstance(part, Text))
        self.query_one("#wi-result", Static).update(shown)

    def _answer_width(self) -> int:
        """The columns the answer has (before the first layout: room enough for any row)."""
        width = self.query_one("#wi-answer").scrollable_content_region.width
        return width - 1 if width > 1 else 200  # a vertical scrollbar may come

    def _numbers(self) -> dict[str, Any] | None:
        """The calculator's own figures for the concurrency rows and the flag: the scenarios
        `compute` asked for (what fits now is the engine's own arithmetic too: a hybrid's or a
        sliding window's tokens are not requests x length; vLLM prints Qwen3-Next's 695,504
        tokens as 10.58 requests of 256K, not 2.65), read as numbers instead of text, never
        asked again."""
        res = self.result
        if res is None or res.error or res.target is None or res.now is None \
                or res.current is None:
            return None
        return {"target": res.target, "now": res.now,
                "cap_now": res.current.max_running_requests,
                "changed_tp": res.changed_tp, "changed_mf": res.changed_mf}

    def render_result(self, res: WhatIfResult, numbers: dict[str, Any] | None,
                      width: int = 200) -> RenderableType:
        """Rows in columns sized to their cells (abbreviated by rule when the pane is narrow,
        never cut), then the flag, or why the target does not fit, and the notes (wrapped,
        since they are sentences)."""
        if res.error:
            return Text(clean(res.error, 400), style="yellow")
        rows: list[tuple[str, str, str, str]] = [("", "now (log)", "target", "dim")]
        cur_tokens, tgt_tokens = res.current_tokens or 0, res.target_tokens or 0
        skip_tp = numbers is not None and numbers["changed_tp"] is None
        skip_mf = numbers is not None and numbers["changed_mf"] is None
        for label, cur, tgt in res.rows:
            if label.startswith("concurrent @"):
                continue  # drawn below from the calculator's numbers
            if (label == "TP" and skip_tp) or (label == res.knob and skip_mf):
                continue  # unchanged: the form's placeholder already says it
            style = ""
            if label == "tokens":
                style = "green" if tgt_tokens >= cur_tokens else "yellow"
            if "NOT fit" in tgt or "impossible" in tgt or "does not fit" in tgt:
                style = "bold red"
            shown = SHORT_LABELS.get(label, label)
            if self.inputs.concurrency and label.startswith(f"{self.inputs.concurrency} reqs @"):
                longest = max(self.inputs.contexts or [0])
                shown = f"{self.inputs.concurrency} × {fmt_length(longest)}"
            rows.append((clean(shown, 40), clean(cur, 40), clean(tgt, 60), style))
        if numbers is not None and res.does_not_fit is None:
            target = numbers["target"]
            cap_t = target.max_running_requests
            for key, fit_t in target.concurrency.items():
                n = int(key)
                cur_text, _ = concurrency_cell(numbers["now"].concurrency.get(key),
                                               numbers["cap_now"])
                tgt_text, style = concurrency_cell(fit_t, cap_t)
                rows.append((f"reqs of {fmt_length(n)}", cur_text, tgt_text, style))
        t = Text(no_wrap=True, overflow="ignore")
        for i, (label, cur, tgt, style) in enumerate(table_lines(rows, width)):
            if i:
                t.append("\n")
            if i == 0:
                t.append(label + cur + tgt, style="dim")
                continue
            t.append(label, style="bold")
            t.append(cur)
            t.append(tgt, style=style or "bold")
        words = Text()
        self._flag(words, res, numbers)
        for note in res.notes:
            words.append("\n" + clean(note, 300), style="yellow")
        if res.model:
            words.append("\nmodel: " + clean(res.model, 200), style="dim")
        return Group(t, words)

    @staticmethod
    def _flag(t: Text, res: WhatIfResult, numbers: dict[str, Any] | None) -> None:
        """The flag to start the target with; none for a target that does not fit, which says
        why instead (the one place "does not fit" is explained)."""
        if res.does_not_fit is not None:
            t.append("because ", style="dim")
            t.append(clean(res.does_not_fit, 300), style="bold red")
            t.append(" (so no flag is offered)", style="dim")
            return
        available = numbers is None or numbers["target"].flag is not None
        t.append("flag: ", style="dim")
        if available:
            t.append(clean(res.flag, 200), style="bold green")
        else:
            t.append(f"none: this {res.engine} does not offer it", style="bold red")

    # -- inputs ----------------------------------------------------------------------------
    @on(Select.Changed, "#wi-dtype")
    def _dtype(self, event: Select.Changed) -> None:
        if isinstance(event.value, str):
            self.inputs.dtype = event.value
            self.recompute()

    @on(Select.Changed, "#wi-preset")
    def _preset(self, event: Select.Changed) -> None:
        self.inputs.preset = event.value if isinstance(event.value, str) else None
        self.post_message(self.ModelChosen(self.inputs.preset))

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        event.stop()
        field = event.input
        iid = field.id
        value = event.value.strip()
        if iid == "wi-config":
            field.set_class(bool(value), "-changed")
            return
        try:
            self._take(iid, value)
        except ValueError as exc:  # the CLI's own message, said under the field
            self._say(field, str(exc))
            return
        self._say(field, None)
        field.set_class(bool(value), "-changed")
        self.recompute()

    def _take(self, iid: str | None, value: str) -> None:
        """Read a field into the inputs with `kvtui whatif`'s checks (ValueError: refused, the
        inputs unchanged). An empty field means "as logged"."""
        if iid == "wi-tp":
            self.inputs.tp = options.positive_int("TP", value) if value else None
        elif iid == "wi-mf":
            knob = self.calc.memory_knob() if self.calc is not None else None
            if not value:
                self.inputs.mem_fraction = None
            elif knob is None:
                self.inputs.mem_fraction = options.positive_float(
                    "mem fraction", value, below_one=True)
            else:  # in the knob's unit and syntax (a fraction, or vLLM's "48G" bytes)
                self.inputs.mem_fraction = options.memory_value(knob, knob.flag, value)
        elif iid == "wi-conc":
            self.inputs.concurrency = options.positive_int("reqs", value) if value else None
        elif iid == "wi-ctx":
            if value:
                self.inputs.contexts = options.lengths("lengths", value)
                self.lengths_typed = True
            else:
                self.lengths_typed = False
                self.inputs.contexts = default_lengths(self.calc)

    def _say(self, field: Input, message: str | None) -> None:
        """Mark a refused field and say why on the line under its row (or clear both)."""
        field.set_class(message is not None, "-invalid")
        if message is not None:
            field.remove_class("-changed")
        if message is None:
            self._refused.pop(str(field.id), None)
        else:
            self._refused[str(field.id)] = clean(message, 200)
        msg_id = MSG_OF.get(str(field.id), "wi-tp-msg")
        said = [m for f, m in self._refused.items() if MSG_OF.get(f) == msg_id]
        msg = self.query_one(f"#{msg_id}", Static)
        msg.update("\n".join(said))
        msg.set_class(bool(said), "-shown")

    @on(Input.Submitted, "#wi-config")
    def _config(self, event: Input.Submitted) -> None:
        event.stop()
        self.inputs.config_path = event.value.strip() or None
        self.post_message(self.ModelChosen(self.inputs.config_path or self.inputs.preset))

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
