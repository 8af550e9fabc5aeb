"""SGLang's log grammar: one line in, one typed event (or None) out; pure, no IO.

`parse_line` reads any line; `runtime_rows` recognises the dominant decode and prefill layouts of
a whole block in one pass (the column route); `hints` names the format features that date the
release. The kinds and their fields are the engine-neutral vocabulary of `parsers.kinds`.
"""

from __future__ import annotations

from parsers.sglang.bulk import head_facts, runtime_rows
from parsers.sglang.hints import hints
from parsers.sglang.line import parse_line, parse_unchecked

__all__ = ["head_facts", "hints", "parse_line", "parse_unchecked", "runtime_rows"]
