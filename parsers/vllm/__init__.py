"""vLLM's log grammar: one line in, one typed event (or None) out; pure, no IO.

`parse_line` reads any line of a vLLM server log (V0 0.5-0.6 and V1 0.7-0.33, every head form
of `parsers.prefix.vllm_head`); `hints` names the format features that date the release. The
kinds and their fields are the engine-neutral vocabulary of `parsers.kinds`: vLLM's "GPU KV cache
size" is the `capacity` kind's `max_total_num_tokens`, its scale-1.0 warning is
`fp8_scales_missing`, its stats line a `decode_batch`.
"""

from __future__ import annotations

from parsers.vllm.hints import hints
from parsers.vllm.line import parse_line, parse_unchecked

__all__ = ["hints", "parse_line", "parse_unchecked"]
