"""The dominant runtime lines of a block, recognized in one `regex` pass instead of line by line.

A busy log is almost all "Decode batch" and "Prefill batch" lines in a handful of layouts.
Calling `parse_line` on each costs about 4 µs of interpreted Python per line; one `findall` over
the joined block does the recognition in C, and the core folds the captured columns a block at a
time (`kvtui.core.bulk`). The patterns here are a strict subset of what `parse_line` accepts:
ASCII digits only, usage printed as `d.dd`, gen throughput as `d.dd` with at most nine integer
digits, no spec-decoding columns. A line they match gives exactly the event `parse_line` gives
(tests hold the two together on every sample, the corpus and generated variants); any other line
comes back unrecognized and takes the line-by-line route.
"""

from __future__ import annotations

import regex

from parsers.prefix import parse_prefix

# The bracketed head of a line, `[ts ranks] `, taken loosely here and validated once per distinct
# head by `parsers.prefix.parse_prefix` (`head_facts`), the function `parse_line` uses. Bounded so
# that its "] " falls inside `MAX_PREFIX`, where `parse_line` looks for it.
_HEAD = r"\[(?P<head>[^\]\n]{1,120})\] "
# Usage as SGLang prints it (`:.2f` of a fraction): one integer digit, so text order is numeric
# order and the core can compare and take maxima on the text itself.
_U = r"[0-9]\.[0-9]{2}"
_GRAPH = r"(?:cuda|npu|cpu|musa) graph: (?:True|False)"


def _layouts(second: str) -> tuple[str, str]:
    """The decode and prefill layouts; `second` is the pattern of a hybrid line's second pool
    usage (its SWA or mamba pool's)."""
    decode = (
        r"Decode batch[.,] #running-req: (?P<running>[0-9]+), "
        rf"(?:#token: [0-9]+, token usage: (?P<usage>{_U})"
        rf"|#full token: [0-9]+, full token usage: (?P<usage>{_U}), "
        rf"(?:mamba num: [0-9]+, mamba usage: {second}"
        rf"|#swa token: [0-9]+, swa token usage: {second})), "
        rf"(?:{_GRAPH}, )?gen throughput \(token/s\): (?P<gen>[0-9]{{1,9}}\.[0-9]{{2}}), "
        r"#queue-req: (?P<queue>[0-9]+)(?:, )?"
    )
    prefill = (
        r"Prefill batch[.,] #new-seq: [0-9]+, #new-token: [0-9]+, #cached-token: [0-9]+, "
        r"(?:cache hit rate: [0-9]+\.[0-9]+%, )?"
        rf"(?:token usage: (?P<usage>{_U})|full token usage: (?P<usage>{_U}), "
        rf"(?:mamba usage: {second}|swa token usage: {second})), "
        r"#running-req: (?P<running>[0-9]+), #queue-req: (?P<queue>[0-9]+)"
        rf"(?:, #pending-token: [0-9]+)?(?:, {_GRAPH})?"
        rf"(?:, input throughput \(token/s\): (?P<tput>[0-9]+\.[0-9]+))?(?:, {_GRAPH})?(?:, ?)?"
    )
    return decode, prefill


_DECODE, _PREFILL = _layouts(r"[0-9]+\.[0-9]+")

# One match per line: the block is joined with a newline before every line and after the last,
# and a line of any other shape is taken whole by the last alternative, so match i is line i.
# Same-named groups share one column (a `regex` feature), whichever layout matched.
RUNTIME_ROWS = regex.compile(
    rf"\n(?:{_HEAD}(?:{_DECODE}|{_PREFILL})|(?P<other>[^\n]*))(?=\n)", regex.ASCII
)
# The same rows with a hybrid line's second pool usage as a column of its own (`second`, right
# after `usage`), for a block that holds hybrid lines: the usage a row carries is the fuller of
# the two pools', as `parse_line`'s event is folded (`kvtui.core.runtime.batch_usage`). Both
# print `d.dd`, so the text comparison is the numeric one.
_HYBRID_ROWS = regex.compile(
    rf"\n(?:{_HEAD}(?:{'|'.join(_layouts(rf'(?P<second>{_U})'))})|(?P<other>[^\n]*))(?=\n)",
    regex.ASCII,
)
_HYBRID_NEEDLES = ("mamba usage: ", "swa token usage: ")

# Column order of a row (`RUNTIME_ROWS.groupindex`, checked by a test).
HEAD, RUNNING, USAGE, GEN, QUEUE, TPUT, OTHER = range(7)


def head_facts(head: str) -> tuple[str | None, str | None]:
    """(ts, rank) that `parse_line` gives a line starting `[head] ` (ts None: not a prefix)."""
    return parse_prefix(f"[{head}] ", len(head) + 3)


def runtime_rows(lines: list[str]) -> list[tuple[str, str, str, str, str, str, str]] | None:
    """One row per line, in order: (head, running, usage, gen, queue, tput, other).

    A recognized decode line has every column but `tput` and `other`; a prefill line has `gen`
    empty and `tput` its input throughput (0.5.9+; empty when it prints none); any
    other line has only `other` (its text; empty for an empty line). A row is only recognized
    for good once `head_facts(head)` gives a timestamp. None when a line holds a newline of its
    own, which would shift the rows.
    """
    block = "\n" + "\n".join(lines) + "\n"
    if any(needle in block for needle in _HYBRID_NEEDLES):
        rows = [(h, r, s if s > u else u, g, q, t, o)
                for h, r, u, s, g, q, t, o in _HYBRID_ROWS.findall(block)]
    else:
        rows = RUNTIME_ROWS.findall(block)
    if len(rows) != len(lines):
        return None
    return rows
