"""The engines' line catalogues: the shape of one kind of line, declared beside its parser.

A `Format` names a kind of the shared vocabulary (`parsers.kinds`), the phrases its messages
start with (`heads`), the phrases that find it anywhere in a message (`infixes`, for errors that
arrive inside traceback text), its parser, and its `Variant`s: the layouts the engine printed it
in, each with the releases that print it, where that was read (release and file:line in the
wheel, or the section of a reference that cites them), the fields that layout prints and one
sample line. Each engine's parser modules declare the formats they parse next to the parsing
code (a module-level `FORMATS`); the engine's `catalog` module assembles them in dispatch order.

A variant's `releases` are spans of one engine's release line (`Releases`): None when the
variant is recognised but its releases are unknown, `Releases.every` when every release read
prints it; neither dates a log (`Releases.dates`). `weak` marks a variant told apart only by a
column that is absent (a trimmed or cut paste looks the same), which counts half in the dating.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Version = tuple[int, int, int]
Span = tuple[Version, Version | None]  # inclusive; None: up to the newest release
Parser = Callable[[str], tuple[dict[str, Any], str | None] | None]


def _v(text: str) -> Version:
    a, b, c = (int(x) for x in text.split("."))
    return (a, b, c)


@dataclass(frozen=True, slots=True)
class Releases:
    """Span helpers over one engine's release line: `oldest` is the oldest release whose code
    was read, so a span from it reads "up to" and `every` (from it on) dates nothing."""

    oldest: Version

    def since(self, lo: str) -> tuple[Span, ...]:
        return ((_v(lo), None),)

    def until(self, hi: str) -> tuple[Span, ...]:
        return ((self.oldest, _v(hi)),)

    def between(self, lo: str, hi: str) -> tuple[Span, ...]:
        return ((_v(lo), _v(hi)),)

    @property
    def every(self) -> tuple[Span, ...]:
        return ((self.oldest, None),)

    def dates(self, variant: Variant) -> bool:
        """Some releases print the variant and others do not."""
        return variant.releases is not None and variant.releases != self.every


@dataclass(frozen=True, slots=True)
class Variant:
    """One layout of a format: `id` names it (SGLang's "<kind>:<name>", which travels on the
    event; vLLM's, the dating hint its line shows); `releases` None dates nothing."""

    id: str
    releases: tuple[Span, ...] | None
    text: str
    cite: str
    sample: str
    prints: tuple[str, ...] = ()
    weak: bool = False


@dataclass(frozen=True, slots=True)
class Format:
    kind: str
    heads: tuple[str, ...]
    # None: the engine's line parser reaches the kind by hand (vLLM's, `parsers.vllm.line`),
    # the heads then say which messages it reads, and a test holds the two together.
    parse: Parser | None
    variants: tuple[Variant, ...]
    # Cheap substring tests: a message that failed the dispatch by its start and contains one
    # of these is handed to `parse` whole (which then looks for the format anywhere in it).
    # Each costs every unrecognised line a `str.__contains__`, so keep them few and short.
    infixes: tuple[str, ...] = ()
