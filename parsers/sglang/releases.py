"""SGLang's release line as the catalogue entries beside each parser write it, and the head of
their sample lines.

Releases before 0.2.15 (the oldest the reference read) have no range (`releases=None`): their
lines are recognised but date nothing.
"""

from __future__ import annotations

from parsers.catalogue import Releases, Span

SGLANG = Releases((0, 2, 15))
since = SGLANG.since
until = SGLANG.until
between = SGLANG.between
EVERY: tuple[Span, ...] = SGLANG.every

P = "[2026-03-01 12:00:00 TP0] "  # the prefix of the sample lines
