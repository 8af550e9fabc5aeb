"""Every reader splits a file into the same lines with the same numbers: the block reader
behind `check` and bulk folds, and the byte splitter behind `tail` and SSH, whatever the
chunking, with NUL holes, CRLF, invalid UTF-8 and lines far longer than the bound; and the
byte scan for server starts and the line count, read in pieces, give the whole-file answer."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvtui.sources import readers
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


MARKERS = (b"server_args=", b"Setting KV cache dtype to ", b"v(")
SCAN_PIECES = [b"[2026-01-01 10:00:00] server_args=ServerArgs(model='m')\n",
               b"Setting KV cache dtype to fp8_e4m3\n", b"server_", b"args=", b"v(", b"\n",
               b"Decode batch, #running-req: 1\n", b"x" * 300, b"\r\n", b"\xff", b"v"]


def scan_whole(data: bytes, markers: tuple[bytes, ...], end: int) -> list[int]:
    """What the scan must give: the start of every line holding a marker that lies wholly in
    the first `end` bytes, searched in the whole file at once."""
    found = set()
    for m in markers:
        at = data.find(m, 0, end)
        while at >= 0:
            found.add(data.rfind(b"\n", 0, at) + 1)
            at = data.find(m, at + len(m), end)
    return sorted(found)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(SCAN_PIECES), max_size=30), st.integers(1, 64),
       st.integers(0, 10**6), st.integers(0, 10**6))
def test_the_scan_in_pieces_finds_what_a_whole_file_search_finds(tmp_path_factory, pieces,
                                                                  piece, at, end):
    """The scan for server starts and the line count read the file in pieces of at most
    SCAN_PIECE bytes (a C call holds the GIL; one over a whole big file froze the TUI's event
    loop for the scan's length): a marker cut by a piece boundary, a line longer than a piece,
    an end inside a marker or a line, all give the whole-file answer."""
    data = b"".join(pieces)
    path = tmp_path_factory.mktemp("s") / "log"
    path.write_bytes(data)
    end %= len(data) + 1
    start = min(at % (len(data) + 1), end)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(readers, "SCAN_PIECE", piece)
        assert readers.scan_lines(str(path), MARKERS, end) == scan_whole(data, MARKERS, end)
        assert readers.count_lines(str(path), start, end) == data[start:end].count(b"\n")
        got = list(readers.read_pieces(str(path), start, end))
    assert b"".join(got) == data[start:end] and all(0 < len(p) <= piece for p in got)
