"""Reading `key=value` and `key: value` columns by name, whatever their order.

SGLang's start-up and warning lines are f-strings whose columns move between releases (0.5.9
put `elapsed=` before `type=`, 0.5.10 dropped `dtype=` for a `quant=` string, 0.5.13 put
`dtype:` before `#tokens:`) and gain columns in new ones. A format here is therefore a table of
the columns it knows, each read by name wherever it stands; a column the table does not know is
skipped, and one a paste cut in half is dropped instead of being misread:

- a value with a unit (`12.50 GB`, `3.10 s`) counts only with its unit, so `avail mem=12.5` at
  the end of a cut line is no value;
- a bare number at the very end of the line counts only when the table says that column may
  end a line (`Column.last`), or when the line ends with the format's own closing punctuation.

One pass of one compiled pattern per table (the alternation of its key names, longest first, so
`KV size` is not read as `V size`) finds every column.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import regex

# The value forms a column can take. A number keeps its sign (a negative profiled capacity is
# exactly what some lines report).
_NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?"


@dataclass(frozen=True, slots=True)
class Column:
    """One named column: its printed key, the field it fills and how its text converts.

    `conv`: "i" int, "f" float, "g" GiB float that needs its `GB` unit, "s" seconds that need
    `s`, "p" percent, "b" True/False, "w" a word (dtype names, class names, labels), "r" the rest
    up to the next `, `. `last`: this column may end a line, so its bare value at the end of the
    text was printed whole.
    """

    key: str
    field: str
    conv: str
    last: bool = False


_VALUE = {
    "i": rf"(?P<v>{_NUMBER})",
    "f": rf"(?P<v>{_NUMBER}|nan|inf)",
    "p": rf"(?P<v>{_NUMBER})%?",
    "g": rf"(?P<v>{_NUMBER})(?P<u> ?GB)?",
    "s": rf"(?P<v>{_NUMBER})(?P<u> ?s\b)?",
    "b": r"(?P<v>True|False)",
    "w": r"(?P<v>[\w.\-/+]+)",
    "r": r"(?P<v>[^,]+?)(?=, |,?$|\)|\s*$)",
}


def finite(x: float) -> float | None:
    """inf/nan (a 400-digit number, a literal "nan") carry no meaning and poison arithmetic."""
    return x if math.isfinite(x) else None


class Table:
    """The columns of one format; `read` fills a dict of fields from a message."""

    def __init__(self, columns: Iterable[Column], *, sep: str = r"(?:=|: ?)") -> None:
        self.columns = tuple(columns)
        self.by_key = {c.key: c for c in self.columns}
        self.convs = tuple(sorted({c.conv for c in self.columns}))
        keys = sorted(self.by_key, key=len, reverse=True)
        alternatives = []
        for conv in self.convs:
            names = "|".join(regex.escape(k) for k in keys if self.by_key[k].conv == conv)
            value = _VALUE[conv].replace("(?P<", f"(?P<{conv}")
            alternatives.append(rf"(?P<k{conv}>{names}){sep}{value}")
        # A key starts a column: at the start of the text or after a separator or a bracket,
        # so `dtype` is never read inside `kv_cache_dtype` nor `V size` inside `KV size`.
        self.pattern = regex.compile(r"(?<=^|[\s,.(\[{])(?:" + "|".join(alternatives) + ")")

    def read(self, text: str, fields: dict[str, Any], *, closed: bool | None = None,
             start: int = 0) -> set[str]:
        """Fill `fields` (the first occurrence of each column wins); returns the keys seen.

        `closed`: the line ends as the format ends it, so a bare value at the end is whole;
        None decides from the last character (a full stop, a bracket, a comma).
        """
        end = len(text.rstrip())
        if closed is None:
            closed = text[end - 1 : end] in (".", ")", "]", "}", ",")
        seen: set[str] = set()
        for m in self.pattern.finditer(text, start):
            conv = next(c for c in self.convs if m.group(f"k{c}") is not None)
            key = m.group(f"k{conv}")
            if key in seen:
                continue
            column = self.by_key[key]
            if conv in ("g", "s"):
                if m.group(f"{conv}u") is None:
                    continue  # a sized value without its unit: the paste cut it
            elif m.end() >= end and not closed and not column.last and conv != "b":
                continue  # the paste may have stopped inside this value
            value = convert(conv, m.group(f"{conv}v"))
            if value is None:
                continue
            seen.add(key)
            fields[column.field] = value
        return seen


def convert(conv: str, raw: str) -> Any:
    """A typed value, or None for text that is not one (never raises): the parsers' one value
    converter (the tables here and the runtime lines' `key: value` pairs, `parsers.sglang.runtime`).
    A trailing "," is a line's closing ", " with its space trimmed (editors and issue trackers
    trim it); only a percent ("p") may carry its "%"."""
    raw = raw.strip().rstrip(",")
    try:
        if conv == "i":
            return int(raw)
        if conv in ("f", "g", "s"):
            return finite(float(raw))
        if conv == "p":
            return finite(float(raw.rstrip("%")))
    except (ValueError, OverflowError):
        return None
    if conv == "b":
        return raw == "True" if raw in ("True", "False") else None
    return raw or None


def cols(*specs: tuple[str, str, str] | tuple[str, str, str, bool]) -> Table:
    """A table from (key, field, conv[, last]) tuples."""
    return Table(Column(*s) for s in specs)
