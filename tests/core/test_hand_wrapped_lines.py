"""A line a paste broke after a ", " (once or many times) is read as one line; lines that are
really two stay two.

The join (`Fold.joined`, `Fold.unwrap`, `Fold.pending`) happens where every route reads lines,
so a wrapped line gives the same facts whether it comes in one block, split between blocks,
line by line, or cut between two chunks of a parallel fold.
"""

from __future__ import annotations

from kvtui.core.engine import all_engines
from kvtui.core.pipeline import Input, Session, analyse
from kvtui.core.pipeline.fold import Fold
from kvtui.core.pipeline.stream import StreamFold
from tests.core.test_merge import check_cuts, line_offsets
from tests.helpers import session_of

ARGS_HEAD = ("[2025-06-01 10:00:05] server_args=ServerArgs(model_path='Qwen/Qwen3-14B', "
             "tokenizer_path='Qwen/Qwen3-14B', kv_cache_dtype='auto',")
ARGS_REST = "tp_size=2, page_size=1, mem_fraction_static=0.88)"
KV_HEAD = "[2025-06-01 10:00:41 TP0] KV Cache is allocated. #tokens: 91749, K size: 7.00 GB,"
KV_REST = "V size: 7.00 GB"
WRAPPED = [ARGS_HEAD, ARGS_REST, KV_HEAD, KV_REST,
           "[2025-06-01 10:00:41 TP0] Memory pool end. avail mem=5.27 GB"]


def folded(lines: list[str], block: int | None = None) -> Session:
    s = Session()
    if block is None:
        s.feed_lines("paste", lines)
    else:
        n = 1
        for i in range(0, len(lines), block):
            n = s.feed_lines("paste", lines[i:i + block], n)
    s.end()
    return s


def facts(s: Session) -> tuple:
    run = s.state.current
    pool = run.primary_kv_pool()
    return (len(s.state.runs), run.server_args.get("tp_size"), run.server_args.get("page_size"),
            pool.tokens if pool else None, pool.k_gib if pool else None,
            pool.v_gib if pool else None, pool.evidence.line if pool and pool.evidence else None,
            run.server_args_evidence.line if run.server_args_evidence else None,
            s.state.kinds, s.lines)


def test_a_dump_and_a_kv_line_wrapped_after_a_comma_are_read_whole():
    s = folded(WRAPPED)
    run = s.state.current
    assert run.server_args["model_path"] == "Qwen/Qwen3-14B"
    assert run.server_args["tp_size"] == 2 and run.server_args["mem_fraction_static"] == 0.88
    pool = run.primary_kv_pool()
    assert (pool.tokens, pool.k_gib, pool.v_gib) == (91749, 7.0, 7.0)
    assert pool.evidence.line == 3 and KV_REST in pool.evidence.text  # the first line's number
    assert s.lines == 5 and s.state.kinds == {"server_args": 1, "kv_pool": 1,
                                              "memory_pool_end": 1}
    report = s.report()
    assert report.parallel.tp == 2


def test_every_way_of_feeding_a_wrapped_paste_gives_the_same_facts(tmp_path):
    want = facts(folded(WRAPPED))
    for block in range(1, len(WRAPPED) + 1):
        assert facts(folded(WRAPPED, block)) == want, block
    line_by_line = Session()
    for n, text in enumerate(WRAPPED, 1):
        line_by_line.feed_line("paste", n, text)
    line_by_line.end()
    assert facts(line_by_line) == want
    path = tmp_path / "wrapped.log"
    path.write_text("\n".join(WRAPPED * 3) + "\n")
    for off in line_offsets(path)[:-1]:
        check_cuts(path, [0, off])  # joined exactly, or declined
    for cut in range(1, len(WRAPPED)):  # a stream whose pieces go to a worker each
        streamed = Session()
        feed = StreamFold(streamed.fold, 2, piece_bytes=1, start_after=1)
        feed.feed("paste", WRAPPED[:cut], 1)
        for i in range(cut, len(WRAPPED)):
            feed.feed("paste", [WRAPPED[i]], i + 1)
        feed.close()
        assert facts(streamed) == want, cut


# The same two lines wrapped over more lines: a dump piece holds only arguments kvtui does not
# read (it goes on because the dump's bracket is still open), the KV line's pieces each add a
# size.
ARGS_PIECES = ["[2025-06-01 10:00:05] server_args=ServerArgs(model_path='Qwen/Qwen3-14B',",
               "tokenizer_path='Qwen/Qwen3-14B', trust_remote_code=False,",
               "kv_cache_dtype='auto', tp_size=2,",
               "  page_size=1, mem_fraction_static=0.88)"]
KV_PIECES = ["[2025-06-01 10:00:41 TP0] KV Cache is allocated. #tokens: 91749,", "K size: 7.00 GB,",
             "V size: 7.00 GB"]
LONG_WRAPS = [*ARGS_PIECES, *KV_PIECES,
              "[2025-06-01 10:00:41 TP0] Memory pool end. avail mem=5.27 GB"]


def test_a_line_wrapped_over_more_than_two_lines_is_read_whole():
    s = folded(LONG_WRAPS)
    run = s.state.current
    assert run.server_args["model_path"] == "Qwen/Qwen3-14B"
    assert (run.server_args["tp_size"], run.server_args["page_size"],
            run.server_args["mem_fraction_static"]) == (2, 1, 0.88)
    assert run.server_args_evidence.line == 1 and "0.88)" in run.server_args_evidence.text
    pool = run.primary_kv_pool()
    assert (pool.tokens, pool.k_gib, pool.v_gib) == (91749, 7.0, 7.0)
    assert pool.evidence.line == 5
    assert s.lines == 8 and s.state.kinds == {"server_args": 1, "kv_pool": 1,
                                              "memory_pool_end": 1}
    assert facts(s)[1:8] == (2, 1, 91749, 7.0, 7.0, 5, 1)


def test_every_way_of_feeding_a_long_wrap_gives_the_same_facts(tmp_path):
    """In one block, in blocks of every size (a wrap cut between blocks at every place,
    its first lines held at a block's end), line by line, in chunks cut at every line, and as
    a stream of pieces folded by workers."""
    want = facts(folded(LONG_WRAPS))
    for block in range(1, len(LONG_WRAPS) + 1):
        assert facts(folded(LONG_WRAPS, block)) == want, block
    for a in range(1, len(LONG_WRAPS)):  # one cut or two, at every place
        for b in range(a, len(LONG_WRAPS)):
            s = session_of(LONG_WRAPS[:a], "paste")
            s.feed_lines("paste", LONG_WRAPS[a:b], a + 1)
            s.feed_lines("paste", LONG_WRAPS[b:], b + 1)
            s.end()
            assert facts(s) == want, (a, b)
    line_by_line = Session()
    for n, text in enumerate(LONG_WRAPS, 1):
        line_by_line.feed_line("paste", n, text)
    line_by_line.end()
    assert facts(line_by_line) == want
    path = tmp_path / "long-wraps.log"
    path.write_text("\n".join(LONG_WRAPS * 3) + "\n")
    for off in line_offsets(path)[:-1]:
        check_cuts(path, [0, off])  # joined exactly, or declined
    for cut in range(1, len(LONG_WRAPS)):
        streamed = Session()
        feed = StreamFold(streamed.fold, 2, piece_bytes=1, start_after=1)
        feed.feed("paste", LONG_WRAPS[:cut], 1)
        for i in range(cut, len(LONG_WRAPS)):
            feed.feed("paste", [LONG_WRAPS[i]], i + 1)
        feed.close()
        assert facts(streamed) == want, cut


def test_a_long_wrap_stops_where_a_piece_says_nothing_outside_a_bracket():
    # a KV line says nothing more with "see above," and no bracket is open: two lines, and the
    # size after them is a line of its own (which reads as nothing)
    s = folded([KV_PIECES[0], "see above,", KV_PIECES[2]])
    pool = s.state.current.primary_kv_pool()
    assert (pool.tokens, pool.k_gib, pool.v_gib) == (91749, None, None)
    # a dump's pieces stop at a line of its own
    s = folded([*ARGS_PIECES[:3], KV_PIECES[0].split("] ", 1)[1], *KV_PIECES[1:]])
    run = s.state.current
    assert run.server_args["tp_size"] == 2 and run.server_args.get("page_size") is None
    assert run.primary_kv_pool().k_gib == 7.0


def test_a_wrap_takes_at_most_wrap_pieces_lines():
    from kvtui.core.pipeline.fold import WRAP_PIECES

    pieces = [ARGS_PIECES[0], *(f"arg_{i}={i}," for i in range(2 * WRAP_PIECES)), "tp_size=2)"]
    out = Fold(all_engines()).unwrap(pieces)
    assert out[0].count("arg_") == WRAP_PIECES - 1
    assert out[1:WRAP_PIECES] == [""] * (WRAP_PIECES - 1) and out[WRAP_PIECES] == "arg_255=255,"
    s = folded(pieces)
    assert s.state.current.server_args.get("tp_size") is None  # the rest is no line of its own
    assert s.lines == len(pieces)


def test_analyse_folds_a_last_line_that_ends_in_a_comma():
    lines = [*WRAPPED[:2], KV_HEAD]  # the paste ends at the comma
    s = analyse([Input("paste", lambda: iter([lines]))])[0]
    pool = s.state.current.primary_kv_pool()
    assert pool is not None and (pool.tokens, pool.k_gib, pool.v_gib) == (91749, 7.0, None)
    assert s.state.current.server_args["tp_size"] == 2


def test_lines_that_are_really_two_stay_two():
    fold = Fold(all_engines())
    decode = ("Decode batch. #running-req: 46, #token: 34901, token usage: 0.17, cuda graph: "
              "True, gen throughput (token/s): 1523.40, #queue-req: 0, ")
    # a prefix-stripped paste of decode lines that end in ", " (some releases print them so)
    assert fold.joined(decode, decode) is None
    # the next line has a log head: a line of its own
    assert fold.joined(KV_HEAD, "[2025-06-01 10:00:41 TP1] " + KV_REST) is None
    # the next line reads as a line of its own (a stripped KV line after a cut dump)
    assert fold.joined(ARGS_HEAD, KV_HEAD.split("] ", 1)[1]) is None
    # a line that does not end in a comma
    assert fold.joined(ARGS_HEAD.rstrip(","), ARGS_REST) is None
    # a traceback line ending in a comma, and prose below it: together they read as nothing
    assert fold.joined('  File "/sgl/scheduler.py", line 12, in run,', "see above") is None
    s = folded([decode, decode, decode])
    assert s.state.kinds == {"decode_batch": 3}


async def test_the_tui_folds_a_held_last_line_when_the_input_ends(tmp_path):
    """A replay whose last line ends in a comma: the line waits for a rest that never comes,
    and the end of the input folds it alone (the TUI never called Session.end)."""
    from tests.ui.ui_helpers import replay_app, settle

    log = tmp_path / "cut.log"
    log.write_text(KV_HEAD + "\n" + ARGS_HEAD + "\n")
    app = replay_app(log)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        run = app.ingest.session.state.current
        assert run.server_args.get("model_path") == "Qwen/Qwen3-14B"
        await pilot.press("q")
