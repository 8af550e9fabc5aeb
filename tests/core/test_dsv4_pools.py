"""DeepSeek-V4's pools are in the report: SGLang prints no KV pool line for them, only its
budget line ("DSV4 memory calculation": bytes per full-attention token, the GiB it divides, the
full tokens that buys; 0.5.12 model_executor/pool_configurator.py:447-450) and the sub-pool
sizes ("DSV4 pool sizes", :421; or the pool's own init line). Before, a DeepSeek-V4 log showed
no pool at all, neither in `check` nor in the TUI's facts."""

from __future__ import annotations

from kvtui.core.render import render_text
from tests.helpers import session_of

MEMORY = ("[2026-09-11 23:46:10 TP{r} EP{r}] DSV4 memory calculation: "
          "bytes_per_full_token=176983.05, available_bytes=87.26 GB, full_token=529408")
SIZES = ("[2026-09-11 23:46:10 TP{r} EP{r}] DSV4 pool sizes: full=529408, swa=423424, "
         "c4=132352, c128=4136, c4_state=52928, c128_state=846848")
LOAD = ("[2026-09-11 23:43:15 TP{r} EP{r}] Load weight end. elapsed=541.76 s, "
        "type=DeepseekV4ForCausalLM, quant=fp8, avail mem=17.47 GB, mem usage=94.00 GB.")


def report_of(lines):
    s = session_of(lines, "dsv4.log")
    return s.report()


def test_the_budget_and_sub_pools_are_one_row_per_rank():
    lines = [t.format(r=r) for r in range(2) for t in (LOAD, MEMORY, SIZES)]
    report = report_of(lines)
    rows = [p for p in report.pools if p.kind == "subpools"]
    assert [p.rank for p in rows] == ["TP0 EP0", "TP1 EP1"]
    row = rows[0].to_json()
    assert row["tokens"] == 529408 and row["kv_gib"] == 87.26
    assert row["bytes_per_full_token"] == 176983.05
    assert row["subpools"] == {"swa": 423424, "c4": 132352, "c128": 4136, "c4_state": 52928,
                               "c128_state": 846848}
    assert row["evidence"]["line"] == 2  # the budget line of TP0
    # no measured B/token: the divisor is per full token, every sub-pool's share in it
    assert row["bytes_per_token"] is None


def test_the_check_text_shows_them_grouped():
    lines = [t.format(r=r) for r in range(2) for t in (LOAD, MEMORY, SIZES)]
    text = render_text(report_of(lines))
    pools = text.split("Pools (per rank)\n", 1)[1].splitlines()[0]
    assert pools.startswith("  TP0 EP0,TP1 EP1 (2 ranks) subpools ?: 529,408 "
                            "full-attention tokens from 87.26 GiB at 176,983.05 B per full "
                            "token; swa 423,424 tokens; c4 132,352, c128 4,136 compressed "
                            "entries; c4_state 52,928, c128_state 846,848 state rows"), pools
    # the what-if does not size a split budget, and says so instead of "no pool line"
    assert ("What-if    not modelled: this run's KV budget is split among sub-pools (swa, c4, "
            "c128, c4_state, c128_state)") in text


def test_either_line_alone_makes_the_row():
    only_sizes = report_of([LOAD.format(r=0), SIZES.format(r=0)])
    (row,) = only_sizes.pools
    assert (row.tokens, row.kv_gib, row.bytes_per_full_token) == (529408, None, None)
    assert row.subpools and row.subpools["c128"] == 4136
    only_memory = report_of([LOAD.format(r=0), MEMORY.format(r=0)])
    (row,) = only_memory.pools
    assert (row.tokens, row.kv_gib, row.subpools) == (529408, 87.26, None)
    assert "state rows" not in render_text(only_memory)
    # the what-if's reason holds without the sub-pool names too
    assert ("What-if    not modelled: this run's KV budget is split among sub-pools: kvtui "
            "does not size it yet") in render_text(only_memory)


# SGLang 0.5.12 mem_cache/deepseek_v4_memory_pool.py:389: the pool's own init line, which
# gives the sub-pool sizes but not the full-attention tokens
INIT = ("[2026-09-11 23:46:11 TP{r} EP{r}] Initialize DeepSeekV4TokenToKVPool with "
        "max_num_reqs=256 swa_size=423424 c4_size=132352 c4_logical_size=132352 c128_size=4136 "
        "c4_state_pool_size=52928 c128_state_pool_size=846848")


def test_the_pool_init_line_makes_the_row_too():
    (row,) = report_of([LOAD.format(r=0), INIT.format(r=0)]).pools
    assert row.kind == "subpools" and row.tokens is None
    assert row.subpools == {"swa": 423424, "c4": 132352, "c128": 4136, "c4_state": 52928,
                            "c128_state": 846848}
    # with the budget line, the full tokens come from it
    (row,) = report_of([LOAD.format(r=0), MEMORY.format(r=0), INIT.format(r=0)]).pools
    assert (row.tokens, row.kv_gib) == (529408, 87.26) and row.subpools
    assert row.subpools["c128_state"] == 846848


def test_whatif_from_log_says_it_is_not_modelled(tmp_path, capsys):
    from kvtui.cli import main

    log = tmp_path / "dsv4.log"
    log.write_text("\n".join(t.format(r=0) for t in (LOAD, MEMORY, SIZES)) + "\n")
    assert main(["whatif", "--from-log", str(log)]) == 2
    err = capsys.readouterr().err
    assert "not modelled: this run's KV budget is split among sub-pools" in err, err
    assert "no KV pool line" not in err


def test_the_json_says_why_there_is_no_whatif():
    report = report_of([t.format(r=0) for t in (LOAD, MEMORY, SIZES)])
    out = report.to_json()
    assert out["whatif"] is None
    assert out["whatif_unmodelled"].startswith("not modelled: this run's KV budget is split")


def test_other_logs_have_no_such_row():
    report = report_of([LOAD.format(r=0).replace("DeepseekV4", "DeepseekV3")])
    assert not report.pools
    assert "whatif_unmodelled" not in report.to_json()  # no reason where nothing is split

