"""The interactive what-if pane: the answer on top, the inputs underneath.

Why this order: on a short terminal only the top of the pane is on screen, and the answer ("can
I afford BF16, how many requests fit and can run") is what the user came for. Every field starts
empty and shows the log's value as its placeholder, so an untouched form is the log's deployment
and anything the user typed stands out (`-changed`). The pane itself takes the focus (key 3), not
a field: pane keys (1-5, q, space) keep working until the user steps into the form on purpose
(Tab or Enter), and Escape always steps back out. A field never selects its text on focus, so a
stray key cannot silently replace a value.

Recomputes on every change (the arithmetic is microseconds); invalid input never raises: the
field is marked and the last good value is kept. The rows come from `whatif_calc.compute`; the
concurrency rows are drawn from the calculator's own numbers (requests that fit by memory, and
how many of those can run under max_running_requests).
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.console import Group, RenderableType
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import Input, Label, Select, Static

from kvtui.core.capacity.whatif import parse_fraction
from kvtui.core.units import fmt_length, parse_lengths
from kvtui.ui.text import clean
from kvtui.ui.whatif_calc import DTYPES, WhatIfInputs, WhatIfResult, compute, fmt_fit

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
LABEL_W = 15


def _preset_options() -> list[tuple[str, str]]:
    try:
        from kvtui.core.capacity.presets import load_presets

        return [(doc["hf_id"], pid) for pid, doc in load_presets().items()]
    except Exception:
        return []


def default_lengths(calc: Any) -> list[int]:
    """The lengths `kvtui whatif` and `kvtui check` use: the server's context_len first, then
    the calculator's defaults."""
    from kvtui.core.capacity.whatif import request_lengths

    first = getattr(calc, "context_len", None)
    return request_lengths(first if isinstance(first, int) and first > 0 else None, None)


def concurrency_cell(fit: float | None, cap: int | None) -> tuple[str, str]:
    """What fits by memory and what can run: at most `cap` (max_running_requests) of them."""
    if fit is None:
        return "—", ""
    run = int(fit) if cap is None else min(int(fit), cap)
    capped = cap is not None and int(fit) > cap
    return f"{fmt_fit(fit)} fit · {run:,} run", ("yellow" if capped else
                                              ("bold red" if run < 1 else ""))


class WhatIfPane(VerticalScroll, can_focus=False):
    """Target KV dtype, TP, mem_fraction_static, lengths, requests, model preset."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "edit", "Edit", show=False),
        Binding("escape", "leave", "Back to panes", show=False),
    ]

    DEFAULT_CSS = """
    WhatIfPane #wi-result { margin-bottom: 1; }
    WhatIfPane .wi-row { height: 1; }
    WhatIfPane .wi-row Label { width: auto; padding: 0 1 0 1; }
    WhatIfPane Select { width: 1fr; }
    WhatIfPane Input { width: 1fr; }
    WhatIfPane Input.-invalid { background: $error 40%; }
    WhatIfPane Input.-changed { text-style: bold; background: $accent 30%; }
    """

    class ModelChosen(Message):
        """The user picked a preset or a config.json: the app re-analyses with that model."""

        def __init__(self, model: str | None) -> None:
            super().__init__()
            self.model = model

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.inputs = WhatIfInputs()
        self.calc: Any = None
        self.unsized: str | None = None  # why there is no calculator, when the report says
        self.result: WhatIfResult | None = None
        self.lengths_typed = False  # the user typed lengths; otherwise they follow the server
        self._drawn: Any = None
        self.shown = ""  # the answer as plain text (what the pane shows)

    def compose(self) -> ComposeResult:
        result = Static("", markup=False, id="wi-result")
        result.can_focus = True
        yield result
        with Horizontal(classes="wi-row"):
            yield Label("KV dtype")
            yield Select([(d, d) for d in DTYPES], value="bf16", allow_blank=False,
                         id="wi-dtype", compact=True)
            yield Label("TP")
            yield Input(placeholder="log", id="wi-tp", type="integer", compact=True,
                        select_on_focus=False)
        with Horizontal(classes="wi-row"):
            yield Label("mem frac", id="wi-mf-label")
            yield Input(placeholder="log", id="wi-mf", compact=True, select_on_focus=False)
            yield Label("reqs")
            yield Input(placeholder="none", id="wi-conc", type="integer", compact=True,
                        select_on_focus=False)
        with Horizontal(classes="wi-row"):
            yield Label("lengths")
            yield Input(placeholder="server's", id="wi-ctx", compact=True,
                        select_on_focus=False)
        with Horizontal(classes="wi-row"):
            yield Label("model")
            yield Select(_preset_options(), prompt="preset matching the log", id="wi-preset",
                         compact=True)
        with Horizontal(classes="wi-row"):
            yield Label("config")
            yield Input(placeholder="path/to/config.json (Enter)", id="wi-config",
                        compact=True, select_on_focus=False)

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

    # -- data ------------------------------------------------------------------------------
    def show(self, calc: Any, unsized: str | None = None) -> None:
        self.calc = calc
        self.unsized = unsized
        if calc is not None:
            self._placeholders(calc)
            if not self.lengths_typed:
                self.inputs.contexts = default_lengths(calc)
        self.recompute()

    def _placeholders(self, calc: Any) -> None:
        """The log's values as the fields' placeholders: an empty field means "as logged"."""
        tp = getattr(getattr(calc, "parallel", None), "tp", None)
        # a TP the log does not state reads as in the header (`TP>=6 (sized as 8)`)
        tp_label = getattr(calc, "tp_label", None)
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
        key = (tuple(res.rows), res.flag, tuple(res.notes), res.error, res.model,
               repr(numbers))
        if key == self._drawn:
            return  # a new report with the same deployment: nothing to repaint
        self._drawn = key
        shown = self.render_result(res, numbers)
        self.shown = "\n".join(part.plain for part in getattr(shown, "renderables", [shown])
                               if isinstance(part, Text))
        self.query_one("#wi-result", Static).update(shown)

    def _numbers(self) -> dict[str, Any] | None:
        """The calculator's own figures for the concurrency rows and the flag: the same scenario
        `compute` asks for, read as numbers instead of text."""
        calc = self.calc
        if calc is None:
            return None
        try:
            cur_tp = calc.parallel.tp
            cur_mf = calc.memory_knob().value
            tp = self.inputs.tp if self.inputs.tp not in (None, cur_tp) else None
            mf = self.inputs.mem_fraction if self.inputs.mem_fraction not in (None, cur_mf) \
                else None
            target = calc.scenario(self.inputs.dtype, tp=tp, mem_fraction_static=mf,
                                   context_lengths=self.inputs.contexts)
            # what fits now is the engine's own arithmetic too: a hybrid's or a sliding
            # window's tokens are not requests x length (vLLM prints Qwen3-Next's 695,504
            # tokens as 10.58 requests of 256K, not 2.65)
            now = calc.scenario(calc.current_dtype, context_lengths=self.inputs.contexts)
            current = calc.current()
        except Exception:
            return None
        cap_now = current.max_running_requests
        return {"target": target, "now": now, "cap_now": cap_now,
                "changed_tp": tp, "changed_mf": mf}

    def render_result(self, res: WhatIfResult, numbers: dict[str, Any] | None
                      ) -> RenderableType:
        """Rows in fixed columns (cut, never wrapped, on a narrow pane), then the flag and the
        notes (wrapped, since they are sentences)."""
        if res.error:
            return Text(clean(res.error, 400), style="yellow")
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(f"{'':<{LABEL_W}}{'now (log)':<18} target\n", style="dim")
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
            if "NOT fit" in tgt or "impossible" in tgt:
                style = "bold red"
            shown = SHORT_LABELS.get(label, label)
            if self.inputs.concurrency and label.startswith(f"{self.inputs.concurrency} reqs @"):
                longest = max(self.inputs.contexts or [0])
                shown = f"{self.inputs.concurrency} × {fmt_length(longest)}"
            self._row(t, shown, cur, tgt, style)
        if numbers is not None:
            target = numbers["target"]
            cap_t = target.max_running_requests
            for key, fit_t in target.concurrency.items():
                n = int(key)
                cur_text, _ = concurrency_cell(numbers["now"].concurrency.get(key),
                                               numbers["cap_now"])
                tgt_text, style = concurrency_cell(fit_t, cap_t)
                self._row(t, f"reqs of {fmt_length(n)}", cur_text, tgt_text, style)
        t.rstrip()
        words = Text()
        self._flag(words, res, numbers)
        for note in res.notes:
            words.append("\n" + clean(note, 300), style="yellow")
        if res.model:
            words.append("\nmodel: " + clean(res.model, 200), style="dim")
        return Group(t, words)

    @staticmethod
    def _row(t: Text, label: str, cur: str, tgt: str, style: str) -> None:
        t.append(f"{clean(label, LABEL_W - 1):<{LABEL_W}}", style="bold")
        t.append(f"{clean(cur, 17):<18}")
        t.append(clean(tgt, 40) + "\n", style=style or "bold")

    @staticmethod
    def _flag(t: Text, res: WhatIfResult, numbers: dict[str, Any] | None) -> None:
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
        iid = event.input.id
        value = event.value.strip()
        ok = True
        if iid == "wi-tp":
            if not value:
                self.inputs.tp = None
            elif value.isdigit() and int(value) > 0:
                self.inputs.tp = int(value)
            else:
                ok = False
        elif iid == "wi-mf":
            if not value:
                self.inputs.mem_fraction = None
            else:  # in the knob's unit and syntax (a fraction, or vLLM's "48G" bytes)
                parse = (self.calc.memory_knob().parse if self.calc is not None
                         else parse_fraction)
                mf = parse(value)
                ok = mf is not None
                if ok:
                    self.inputs.mem_fraction = mf
        elif iid == "wi-conc":
            if not value:
                self.inputs.concurrency = None
            elif value.isdigit() and int(value) > 0:
                self.inputs.concurrency = int(value)
            else:
                ok = False
        elif iid == "wi-ctx":
            if not value:
                self.lengths_typed = False
                self.inputs.contexts = default_lengths(self.calc)
            else:
                parsed = parse_lengths(value)
                ok = parsed is not None
                if parsed is not None:
                    self.lengths_typed = True
                    self.inputs.contexts = parsed
        elif iid == "wi-config":
            event.input.set_class(bool(value), "-changed")
            return
        else:
            return
        event.input.set_class(not ok, "-invalid")
        event.input.set_class(ok and bool(value), "-changed")
        if ok:
            self.recompute()

    @on(Input.Submitted, "#wi-config")
    def _config(self, event: Input.Submitted) -> None:
        event.stop()
        self.inputs.config_path = event.value.strip() or None
        self.post_message(self.ModelChosen(self.inputs.config_path or self.inputs.preset))

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
