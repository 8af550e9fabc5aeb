"""A vLLM log in the TUI: the header names the engine's facts, the CRITICAL scale alert is on
top with its evidence, and the what-if pane answers with vLLM's arithmetic and flags."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Select

from kvtui.ui.panes import AlertsPane, HeaderBar
from kvtui.ui.whatif import WhatIfPane
from tests.ui.ui_helpers import replay_app, settle

FP8 = Path(__file__).resolve().parents[2] / "sample_logs" / "vllm-llama31-8b-tp2-fp8-unscaled.log"


async def test_vllm_log_shows_the_critical_alert_and_a_working_what_if() -> None:
    app = replay_app(FP8)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        header = app.query_one(HeaderBar).build().plain
        assert "TP=2" in header and "fp8_e4m3" in header
        alerts = app.query_one(AlertsPane).alerts
        assert alerts[0].severity == "critical" and alerts[0].rule == "kv-fp8-unscaled"
        ev = alerts[0].evidence
        assert ev is not None and "Using KV cache scaling factor 1.0" in ev.text
        assert ev.line == 8
        pane = app.query_one(WhatIfPane)
        rows = {label: (cur, tgt) for label, cur, tgt in pane.result.rows}
        # BF16 (the default target) halves the FP8 pool: the same 61,950 blocks of pages twice
        # the size, 991,200 -> 495,600 tokens.
        assert rows["tokens"] == ("991,200", "495,600 (-50%)")
        assert pane.result.flag.startswith("--kv-cache-dtype bfloat16")
        app.query_one("#wi-dtype", Select).value = "nvfp4"
        await pilot.pause()
        rows = {label: (cur, tgt) for label, cur, tgt in pane.result.rows}
        assert rows["tokens"][1].startswith("1,762,128")
        assert "--kv-cache-dtype nvfp4" in pane.result.flag
        await pilot.press("q")
    assert app.return_value == 0


async def test_a_run_sized_by_kv_cache_memory_bytes_moves_kv_bytes_in_the_pane(tmp_path) -> None:
    """The memory field is vLLM's --kv-cache-memory-bytes on such a run: labelled "kv bytes",
    its placeholder the run's 40 GiB, read in vLLM's syntax ("48G" = 48 x 2^30), and the flag
    line names it with the bytes."""
    from textual.widgets import Input, Label

    from tests.ui.ui_helpers import wait_for
    from tests.vllm.test_vllm_kv_cache_memory_bytes import GIB, run, vllm_tokens

    log = tmp_path / "vllm-kv-bytes.log"
    log.write_text("\n".join(run(2, 40 * GIB)) + "\n")
    app = replay_app(log)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        pane = app.query_one(WhatIfPane)
        assert str(app.query_one("#wi-mf-label", Label).render()) == "kv bytes"
        assert app.query_one("#wi-mf", Input).placeholder == "40.00 GiB (log)"
        app.query_one("#wi-mf", Input).value = "48G"
        await wait_for(pilot, lambda: "48.00 GiB" in pane.shown, "the typed budget")
        assert f"--kv-cache-memory-bytes {48 * GIB}" in pane.shown
        assert "kv bytes" in pane.shown and "gpu mem util" not in pane.shown
        rows = {label: (cur, tgt) for label, cur, tgt in pane.result.rows}
        assert rows["tokens"][1].startswith(f"{vllm_tokens(48 * GIB, 2, 2):,}")
        app.query_one("#wi-mf", Input).value = "0.95"  # a fraction means nothing here
        await pilot.pause()
        assert app.query_one("#wi-mf", Input).has_class("-invalid")
        await pilot.press("q")


async def test_the_tp_field_says_what_the_header_says_when_only_worker_tags_imply_tp(
        tmp_path) -> None:
    """Six TP workers and no startup lines: the header says TP>=6, the what-if's TP field
    'TP>=6 (sized as 8)' (the layout's size), not a count of its own."""
    from textual.widgets import Input

    from tests.vllm.test_vllm_parallel_layout import BF16_70B, excerpt

    log = tmp_path / "vllm-excerpt.log"
    log.write_text("\n".join(excerpt(BF16_70B, drop_workers=("Worker_TP6", "Worker_TP7")))
                   + "\n")
    app = replay_app(log)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        header = app.query_one(HeaderBar).build().plain
        assert "TP>=6" in header
        assert app.query_one("#wi-tp", Input).placeholder == "TP>=6 (sized as 8)"
        await pilot.press("q")
    assert app.return_value == 0


HYBRID = FP8.parent / "vllm-qwen3-next-80b-tp4-hybrid.log"


async def test_hybrid_what_fits_now_is_the_engines_concurrency_not_tokens_over_length() -> None:
    """Qwen3-Next's 695,504 tokens hold 10.58 requests of 256K by vLLM's own count (its log's
    "Maximum concurrency", and the check's what-if table), not 695,504 / 262,144 = 2.65: the
    pane's "now" column used to divide, its target column (same dtype) said 10.58."""
    app = replay_app(HYBRID)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        pane = app.query_one(WhatIfPane)
        line = next(ln for ln in pane.shown.splitlines() if ln.startswith("reqs of 256K"))
        assert line.split()[3:] == ["10.5", "fit", "·", "10", "run", "10.5", "fit", "·", "10",
                                    "run"], line
        rows = {label: (cur, tgt) for label, cur, tgt in pane.result.rows}
        assert rows["concurrent @ 256K"] == ("10.5", "10.5")
        await pilot.press("q")


async def test_pools_of_equal_size_on_ranks_with_a_gap_are_not_a_range() -> None:
    """TP0 and TP2 logged 31.87 GiB, TP1 31.85: the facts pane says TP0,TP2, never TP0+1 (read
    as TP0 and TP1) or a range TP0..TP2 that includes TP1."""
    from kvtui.ui.panes import FactsPane

    app = replay_app(HYBRID)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        text = app.query_one(FactsPane)._last.plain
        rows = [ln.split()[0] for ln in text.splitlines() if " kv bf16 " in ln]
        assert rows == ["TP0,TP2", "TP1", "TP3"], text
        await pilot.press("q")


UNSTATED = ["(EngineCore pid=7476) INFO 07-25 13:42:38 [kv_cache_utils.py:2146] GPU KV cache "
            "size: 1,823,372 tokens",
            "(EngineCore pid=7476) INFO 07-25 13:42:38 [kv_cache_utils.py:2147] Maximum "
            "concurrency for 1,048,576 tokens per request: 1.74x"]


async def test_an_unlogged_kv_dtype_is_marked_assumed_and_tp_uses_vllms_flag(tmp_path) -> None:
    """vllm-project/vllm#49011's excerpt names no KV dtype: the pane's "now (log)" column must
    not show bf16 as if logged; a TP what-if names vLLM's -tp (SGLang's --tp-size is no vLLM
    flag)."""
    from textual.widgets import Input

    log = tmp_path / "vllm.log"
    log.write_text("\n".join(UNSTATED) + "\n")
    app = replay_app(log)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        pane = app.query_one(WhatIfPane)
        rows = {label: (cur, tgt) for label, cur, tgt in pane.result.rows}
        assert rows["KV dtype"][0] == "bf16?"
        assert any("not in the log" in n and "assumed" in n for n in pane.result.notes)
        tp = app.query_one("#wi-tp", Input)
        tp.focus()
        await pilot.press("2")
        await pilot.pause()
        assert "-tp 2" in pane.result.flag and "--tp-size" not in pane.result.flag
        await pilot.press("escape", "q")
