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
_DECODE = (
    r"Decode batch[.,] #running-req: (?P<running>[0-9]+), "
    rf"(?:#token: [0-9]+, token usage: (?P<usage>{_U})"
    rf"|#full token: [0-9]+, full token usage: (?P<usage>{_U}), "
    r"(?:mamba num: [0-9]+, mamba usage: [0-9]+\.[0-9]+"
    r"|#swa token: [0-9]+, swa token usage: [0-9]+\.[0-9]+)), "
    rf"(?:{_GRAPH}, )?gen throughput \(token/s\): (?P<gen>[0-9]{{1,9}}\.[0-9]{{2}}), "
    r"#queue-req: (?P<queue>[0-9]+)(?:, )?"
)
_PREFILL = (
    r"Prefill batch[.,] #new-seq: [0-9]+, #new-token: [0-9]+, #cached-token: [0-9]+, "
    r"(?:cache hit rate: [0-9]+\.[0-9]+%, )?"
    rf"(?:token usage: (?P<usage>{_U})|full token usage: (?P<usage>{_U}), "
    r"(?:mamba usage: [0-9]+\.[0-9]+|swa token usage: [0-9]+\.[0-9]+)), "
    r"#running-req: (?P<running>[0-9]+), #queue-req: (?P<queue>[0-9]+)"
    rf"(?:, #pending-token: [0-9]+)?(?:, {_GRAPH})?"
    rf"(?:, input throughput \(token/s\): [0-9]+\.[0-9]+)?(?:, {_GRAPH})?(?:, ?)?"
)
# One match per line: the block is joined with a newline before every line and after the last,
# and a line of any other shape is taken whole by the last alternative, so match i is line i.
# Same-named groups share one column (a `regex` feature), whichever layout matched.
RUNTIME_ROWS = regex.compile(
    rf"\n(?:{_HEAD}(?:{_DECODE}|{_PREFILL})|(?P<other>[^\n]*))(?=\n)", regex.ASCII
)

# Column order of a row (`RUNTIME_ROWS.groupindex`, checked by a test).
HEAD, RUNNING, USAGE, GEN, QUEUE, OTHER = range(6)


def head_facts(head: str) -> tuple[str | None, str | None]:
    """(ts, rank) that `parse_line` gives a line starting `[head] ` (ts None: not a prefix)."""
    return parse_prefix(f"[{head}] ", len(head) + 3)


def runtime_rows(lines: list[str]) -> list[tuple[str, str, str, str, str, str]] | None:
    """One row per line, in order: (head, running, usage, gen, queue, other).

    A recognized decode line has every column but `other`; a prefill line has `gen` empty; any
    other line has only `other` (its text; empty for an empty line). A row is only recognized
    for good once `head_facts(head)` gives a timestamp. None when a line holds a newline of its
    own, which would shift the rows.
    """
    block = "\n" + "\n".join(lines) + "\n"
    rows = RUNTIME_ROWS.findall(block)
    if len(rows) != len(lines):
        return None
    return rows
