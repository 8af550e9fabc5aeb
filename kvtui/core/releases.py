"""The range of an engine's releases a log could come from: one class for every engine.

Why a range and not a guess: logs rarely print the release, but line formats change at known
releases, so each clue narrows a range, and advice that depends on the release is given for the
whole range the log allows. Narrowing, labelling and the JSON of a range are the same for every
engine; what differs is data: the engine's name and the oldest and newest release kvtui read
(a `ReleaseLine`). The clues themselves (which format dates which release) stay with each engine
(`kvtui.engines.sglang.version` for SGLang, `kvtui.engines.vllm.version`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Version = tuple[int, int, int]

# What `label()` says of a range no clue narrowed.
UNDATED = "any (no dating clue)"


def parse_version(text: str) -> Version | None:
    """(major, minor, patch) of a printed release, or None when it names none.

    Total, since the text comes from logs and from remote hosts: a suffix is dropped
    ("0.10.2.dev378+g4d7fe40fc" -> (0, 10, 2), "0.5.0rc2" -> (0, 5, 0), "v0.5.4.post1" ->
    (0, 5, 4)), a missing patch is 0 ("0.5" -> (0, 5, 0)), and a text without a major and a
    minor number gives None."""
    parts: list[int] = []
    for piece in str(text).strip().lstrip("v").split(".")[:3]:
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        parts.append(int(digits))
    if len(parts) < 2:
        return None
    while len(parts) < 3:
        parts.append(0)
    return (parts[0], parts[1], parts[2])


def fmt(v: Version) -> str:
    return ".".join(str(p) for p in v)


@dataclass(frozen=True, slots=True)
class ReleaseLine:
    """One engine's releases as kvtui knows them: the oldest and newest whose code was read."""

    engine: str  # "sglang", "vllm"
    oldest: Version
    newest: Version
    # Does a range's JSON name its engine? vLLM's does; SGLang's JSON (the what-if's
    # `version`, pinned byte for byte by tests/golden) was fixed before a second engine existed.
    json_names_engine: bool = False

    def any(self) -> VersionRange:
        """Every release kvtui knows: the range of a log without dating clues."""
        return VersionRange(self, self.oldest, self.newest)

    def between(self, lo: Version, hi: Version, reasons: tuple[str, ...] = ()) -> VersionRange:
        return VersionRange(self, lo, hi, reasons)

    def pinned(self, v: Version | None, flag: str) -> VersionRange:
        """The one release the user named with `flag` (the flag is the range's reason), or
        every release kvtui knows when none was named: a what-if without a log."""
        return self.any() if v is None else self.between(v, v, (f"{flag} {fmt(v)}",))


@dataclass(frozen=True, slots=True)
class VersionRange:
    """Inclusive range of one engine's releases, plus the clues that set each bound."""

    line: ReleaseLine
    lo: Version
    hi: Version
    reasons: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return self.lo > self.hi

    @property
    def undated(self) -> bool:
        """No clue narrowed it: every known release is still possible."""
        return self.lo == self.line.oldest and self.hi == self.line.newest

    def contains(self, v: Version) -> bool:
        return self.lo <= v <= self.hi

    def narrow(self, lo: Version | None, hi: Version | None, reason: str) -> VersionRange:
        new_lo = max(self.lo, lo) if lo else self.lo
        new_hi = min(self.hi, hi) if hi else self.hi
        if (new_lo, new_hi) == (self.lo, self.hi):
            return self
        if new_lo > new_hi:
            # Contradicting clues (a patched build, a copy-pasted mix): keep the earlier range.
            return VersionRange(self.line, self.lo, self.hi, (*self.reasons, f"ignored: {reason}"))
        return VersionRange(self.line, new_lo, new_hi, (*self.reasons, reason))

    def label(self) -> str:
        if self.undated:
            return UNDATED
        if self.lo == self.hi:
            return fmt(self.lo)
        if self.hi == self.line.newest:
            return f">= {fmt(self.lo)}"
        if self.lo == self.line.oldest:
            return f"<= {fmt(self.hi)}"
        return f"{fmt(self.lo)} - {fmt(self.hi)}"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"engine": self.line.engine} if self.line.json_names_engine else {}
        out.update({"min": fmt(self.lo), "max": fmt(self.hi), "label": self.label(),
                    "reasons": list(self.reasons)})
        return out
