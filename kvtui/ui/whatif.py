"""The interactive what-if pane: inputs on top, current vs target side by side underneath.

Recomputes on every change (the arithmetic is microseconds), so "can I afford BF16?" is answered
while the user types. Invalid input never raises: the field is marked and the last good value
is kept.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import Input, Label, Select, Static

from kvtui.ui.text import clean
from kvtui.ui.whatif_calc import DTYPES, WhatIfInputs, WhatIfResult, compute


def _preset_options() -> list[tuple[str, str]]:
    try:
        from kvtui.core.capacity.presets import load_presets

        return [(doc["hf_id"], pid) for pid, doc in load_presets().items()]
    except Exception:
        return []


def _parse_int_list(text: str) -> list[int] | None:
    out = []
    for part in text.replace(" ", ",").split(","):
        part = part.strip().lower()
        if not part:
            continue
        mult = 1
        if part.endswith("k"):
            mult, part = 1024, part[:-1]
        try:
            value = int(float(part) * mult)
        except ValueError:
            return None
        if value <= 0:
            return None
        out.append(value)
    return out or None


class WhatIfPane(VerticalScroll):
    """Target KV dtype, TP, mem_fraction_static, context lengths, concurrency, model preset."""

    DEFAULT_CSS = """
    WhatIfPane .wi-row { height: 1; margin-bottom: 0; }
    WhatIfPane .wi-row Label { width: 10; padding: 0 0 0 1; }
    WhatIfPane Select { width: 1fr; }
    WhatIfPane Input { width: 1fr; }
    WhatIfPane Input.-invalid { background: $error 40%; }
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
        self.result: WhatIfResult | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(classes="wi-row"):
            yield Label("KV dtype")
            yield Select([(d, d) for d in DTYPES], value="bf16", allow_blank=False,
                         id="wi-dtype", compact=True)
            yield Label("TP")
            yield Input(placeholder="log", id="wi-tp", type="integer", compact=True)
        with Horizontal(classes="wi-row"):
            yield Label("mem frac")
            yield Input(placeholder="log", id="wi-mf", compact=True)
            yield Label("reqs")
            yield Input(placeholder="target", id="wi-conc", type="integer", compact=True)
        with Horizontal(classes="wi-row"):
            yield Label("contexts")
            yield Input(value="8k,32k,128k", id="wi-ctx", compact=True)
        with Horizontal(classes="wi-row"):
            yield Label("model")
            yield Select(_preset_options(), prompt="preset matching the log", id="wi-preset",
                         compact=True)
        with Horizontal(classes="wi-row"):
            yield Label("config")
            yield Input(placeholder="path/to/config.json (Enter)", id="wi-config",
                        compact=True)
        yield Static("", markup=False, id="wi-result")

    # -- data ------------------------------------------------------------------------------
    def show(self, calc: Any) -> None:
        self.calc = calc
        self.recompute()

    def recompute(self) -> None:
        self.result = compute(self.calc, self.inputs)
        self.query_one("#wi-result", Static).update(self.render_result(self.result))

    def render_result(self, res: WhatIfResult) -> Any:
        if res.error:
            return Text(clean(res.error, 400), style="yellow")
        table = Table(box=None, expand=False, padding=(0, 1), show_edge=False)
        table.add_column("", style="bold", no_wrap=True)
        table.add_column("current (log)", justify="right", no_wrap=True)
        table.add_column("target", justify="right", style="bold", no_wrap=True)
        cur_tokens, tgt_tokens = res.current_tokens or 0, res.target_tokens or 0
        for label, cur, tgt in res.rows:
            style = ""
            if label == "tokens" or label.startswith("concurrent"):
                style = "green" if tgt_tokens >= cur_tokens else "yellow"
            if "NOT fit" in tgt or "impossible" in tgt:
                style = "bold red"
            table.add_row(Text(label), Text(clean(cur, 60)), Text(clean(tgt, 60), style=style))
        out = Table.grid()
        out.add_row(table)
        flag = Text("flag: ", style="dim")
        flag.append(clean(res.flag, 200), style="bold green")
        out.add_row(flag)
        if res.model:
            out.add_row(Text("model: " + clean(res.model, 200), style="dim"))
        for n in res.notes:
            out.add_row(Text("note: " + clean(n, 300), style="yellow"))
        return out

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
            else:
                try:
                    mf = float(value)
                    ok = 0.05 <= mf < 1.0
                    if ok:
                        self.inputs.mem_fraction = mf
                except ValueError:
                    ok = False
        elif iid == "wi-conc":
            if not value:
                self.inputs.concurrency = None
            elif value.isdigit() and int(value) > 0:
                self.inputs.concurrency = int(value)
            else:
                ok = False
        elif iid == "wi-ctx":
            parsed = _parse_int_list(value)
            if parsed is None:
                ok = False
            else:
                self.inputs.contexts = parsed
        else:
            return
        event.input.set_class(not ok, "-invalid")
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
