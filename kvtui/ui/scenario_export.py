"""The what-if scenario the user built in the pane, as the export carries it (`e` / `E`).

Why: the export is what goes into a deploy ticket. The report says what the log's deployment
is; the scenario says what the user is about to change it to (the KV dtype, TP, memory
setting, context lengths and concurrency typed in the pane), the flag to pass and the figures
the engine's calculator predicts for it, exactly as the pane shows them. No Textual import:
it reads the pane's inputs and result (`kvtui.ui.whatif_calc`).
"""

from __future__ import annotations

from typing import Any

from kvtui.core.text import inert
from kvtui.ui.whatif_calc import WhatIfInputs, WhatIfResult


def scenario_doc(inputs: WhatIfInputs, result: WhatIfResult | None) -> dict[str, Any]:
    """The scenario as JSON: the target settings, then the calculator's answer."""
    target = {"kv_dtype": inputs.dtype, "tp": inputs.tp, "memory": inputs.mem_fraction,
              "context_lengths": list(inputs.contexts), "concurrency": inputs.concurrency,
              "model_preset": inputs.preset, "model_config": inputs.config_path}
    if result is None:
        return {"target": target, "error": "the what-if pane has not computed yet"}
    doc: dict[str, Any] = {
        "target": target,
        "engine": result.engine,
        "memory_setting": result.knob,
        "model": result.model or None,
        "flag": result.flag or None,
        "current_tokens": result.current_tokens,
        "predicted_tokens": result.target_tokens,
        "rows": [{"figure": label, "now": now, "target": tgt}
                 for label, now, tgt in result.rows],
        "notes": list(result.notes),
    }
    if result.error:
        doc["error"] = result.error
    return doc


def scenario_markdown(doc: dict[str, Any]) -> str:
    """The scenario as a Markdown section appended to the report's."""
    t = doc["target"]
    out = ["", "## What-if scenario (built in the kvtui pane)", ""]
    setting = [f"KV dtype `{t['kv_dtype']}`"]
    if t.get("tp"):
        setting.append(f"TP {t['tp']}")
    if t.get("memory") is not None:
        setting.append(f"{doc.get('memory_setting', 'memory')} {t['memory']}")
    if t.get("concurrency"):
        setting.append(f"{t['concurrency']} concurrent requests")
    out.append("Target: " + ", ".join(setting) + " (unset: as the log)")
    if doc.get("error"):
        out += ["", f"Not computed: {inert(str(doc['error']), 400)}"]
        return "\n".join(out) + "\n"
    if doc.get("flag"):
        out += ["", "```", inert(str(doc["flag"]), 400), "```"]
    if doc.get("rows"):
        out += ["", "| figure | now (log) | target |", "|---|---|---|"]
        out += [f"| {_cell(r['figure'])} | {_cell(r['now'])} | {_cell(r['target'])} |"
                for r in doc["rows"]]
    for note in doc.get("notes") or []:
        out.append(f"- {inert(str(note), 400)}")
    if doc.get("model"):
        out += ["", f"Model: {inert(str(doc['model']), 300)}"]
    return "\n".join(out) + "\n"


def _cell(value: Any) -> str:
    return inert(str(value), 200).replace("|", "\\|")
