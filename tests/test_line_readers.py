"""Every reader splits a file into the same lines with the same numbers: the block reader
behind `check` and bulk folds, and the byte splitter behind `tail` and SSH, whatever the
chunking, with NUL holes, CRLF, invalid UTF-8 and lines far longer than the bound."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from kvtui.sources.lines import MAX_LINE_CHARS, LineSplitter, lines_of
from kvtui.sources.readers import iter_byte_range

PIECES = [b"[2026-01-01 10:00:00 TP0] Decode batch, #running-req: 1\n", b"\n", b"\r\n",
          b"\x00" * 300, b"\xff\xfe", "caf\u00e9 \u4e2d\u6587".encode(), b"x" * 70000,
          b"y" * (MAX_LINE_CHARS * 5), b"plain line\n", b"no newline at all "]


def split_bytes(data: bytes, cuts: list[int]) -> list[tuple[int, str]]:
    sp = LineSplitter()
    out = []
    prev = 0
    for c in [*sorted(cuts), len(data)]:
        out += sp.feed(data[prev:c])
        prev = c
    return out + sp.flush()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12), st.lists(st.integers(0, 10**6),
                                                                 max_size=8))
def test_block_reader_and_byte_splitter_agree(tmp_path_factory, pieces, cuts):
    data = b"".join(pieces)
    path = tmp_path_factory.mktemp("r") / "log"
    path.write_bytes(data)
    blocks = [ln for b in iter_byte_range(str(path), 0, None, chunk_bytes=4096) for ln in b]
    lines = split_bytes(data, [c % (len(data) + 1) for c in cuts])
    assert [t for _, t in lines] == blocks
    assert all(len(t) <= MAX_LINE_CHARS and "\x00" not in t for t in blocks)
    # Offsets are exact: each line starts where the file says.
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == 0x0A]
    assert [o for o, _ in lines] == starts[: len(lines)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12), st.lists(st.integers(0, 10**6),
                                                                 max_size=8))
def test_raw_lines_decoded_elsewhere_are_the_splitters_lines(pieces, cuts):
    """`feed_raw` (what the SSH follower hands a stream fold, decoded by a worker with
    `lines_of`) gives the lines `feed` gives, chunk by chunk, in the same numbers."""
    data = b"".join(pieces)
    bounds = [*sorted(c % (len(data) + 1) for c in cuts), len(data)]
    by_line, raw = LineSplitter(), LineSplitter()
    prev = 0
    for c in bounds:
        want = [t for _, t in by_line.feed(data[prev:c])]
        got = raw.feed_raw(data[prev:c])
        if isinstance(got, bytes):
            assert got.count(b"\n") == len(want)  # the count a block says without decoding
            got = lines_of(got)
        assert got == want
        assert raw.consumed == by_line.consumed
        prev = c
    assert raw.flush() == by_line.flush()


def test_line_after_a_nul_hole_survives():
    """Copy-truncate with a writer that kept its offset: a hole of zeros, then the next line."""
    data = b"\x00" * (3 * 1024 * 1024) + b"after rotation\nnext\n"
    lines = split_bytes(data, list(range(0, len(data), 1 << 20)))
    assert [t for _, t in lines] == ["after rotation", "next"]
    assert lines[1][0] == len(data) - len(b"next\n")


def test_an_endless_line_costs_bounded_memory_and_counts_once():
    sp = LineSplitter()
    rng = random.Random(1)
    for _ in range(64):
        sp.feed(b"z" * rng.randint(1 << 18, 1 << 20))
        assert len(sp._carry) <= LineSplitter.CARRY_MAX
    out = sp.feed(b"zz\nnext\n")
    assert len(out) == 2 and out[1][1] == "next"
    assert len(out[0][1]) == MAX_LINE_CHARS
