"""How kvtui writes and reads token lengths (context lengths), in one place.

Why one function: the same length used to be printed three ways (`@256K` by `check`, `x262144`
by `whatif`, and 256,000 as `250K` in the TUI). Model cards and SGLang's `context_len` count
context windows in binary thousands (32K = 32,768, 128K = 131,072, 256K = 262,144), so `K` means
x1024 here and is used only when it is exact. A length that is round in decimal (256,000 or
128,000) is printed in full, because `250K` for 256,000 is exact but reads as a different number;
anything else is printed in full too. So the printed text always names exactly one number.
"""

from __future__ import annotations

import re

_LENGTH_RE = re.compile(r"(\d+(?:\.\d+)?)([kKmM]?)")
_GROUPED_RE = re.compile(r"\d{1,3}(?:,\d{3})+")


def fmt_length(n: int) -> str:
    """A token length for tables and labels: "32K", "256K", "256,000", "4,000", "1,500"."""
    n = int(n)
    if n > 0 and n % 1000 != 0 and n % 1024 == 0:
        return f"{n // 1024}K"
    return f"{n:,}"


def parse_length(text: str) -> int | None:
    """Read a length as a user types it: "262144", "262,144", "256K" / "256k" (x1024), "1M"
    (x1024x1024). None when it is not a positive whole number of tokens."""
    m = _LENGTH_RE.fullmatch(text.strip().replace(",", "").replace("_", ""))
    if m is None:
        return None
    mult = {"": 1, "k": 1024, "m": 1024 * 1024}[m.group(2).lower()]
    value = float(m.group(1)) * mult
    if value < 1 or value != int(value):
        return None
    return int(value)


def split_lengths(text: str) -> list[str]:
    """The items of a list of lengths separated by spaces or commas; a comma between groups of
    three digits is a thousands separator ("256,000, 32K" is two items)."""
    out: list[str] = []
    for word in text.split():
        items = [word.rstrip(",")] if _GROUPED_RE.fullmatch(word.rstrip(",")) else \
            word.split(",")
        out.extend(item for item in items if item)
    return out


def parse_lengths(text: str) -> list[int] | None:
    """A list of lengths ("256K 32K", "8k,32k,128k": `split_lengths`). None when any item is
    not a length or the list is empty."""
    out: list[int] = []
    for item in split_lengths(text):
        value = parse_length(item)
        if value is None:
            return None
        out.append(value)
    return out or None


def fmt_bytes_gib(n: float) -> str:
    """A byte count as GiB for text ("40.00 GiB"): a KV budget set in bytes (vLLM's
    --kv-cache-memory-bytes) is shown in GiB beside the bytes the flag takes."""
    return f"{n / (1 << 30):,.2f} GiB"
