"""SGLang's prefill/decode disaggregation: the lines that say a KV transfer or its bootstrap
failed (issue 38). Not an event kind of the fold: only the fleet view reads them, line by line
(through `Engine.transfer_failure`, `kvtui.core.fleet.transfer`), so the per-log report is
unchanged.

Every text is SGLang 0.5.23's own (wheel sglang-0.5.23, sglang/srt/disaggregation/):
- decode.py:1159 "Decode handshake failed for request rank=..." (KVPoll.Failed while waiting)
- decode.py:2864 "Decode transfer failed for request rank=..."
- decode.py:1212 "Could not fetch prefill parallel info from {bootstrap_addr} after {n} attempts"
- prefill.py:1287 "Prefill transfer failed for request rank=..."
- prefill.py:1355 "Prefill bootstrap failed for request rank=..."
- common/conn.py:116 "KVTransferError(bootstrap_room=...): reason" (an exception's text, often
  appended to one of the above as "with exception ...", else in a traceback)
- common/conn.py:2397 "Some requests timed out when bootstrapping" (a warning_once)
The transfer library's own lines (Mooncake's glog, SGLang's default backend) are
`parsers.transport`'s.
"""

from __future__ import annotations

import re

from parsers.transport import backend_failure

# kind -> the side of the pair that prints it
_PATTERNS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("handshake", "decode", re.compile(r"Decode handshake failed for request")),
    ("transfer", "decode", re.compile(r"Decode transfer failed for request")),
    ("bootstrap", "decode", re.compile(r"Could not fetch prefill parallel info from")),
    ("transfer", "prefill", re.compile(r"Prefill transfer failed for request")),
    ("bootstrap", "prefill", re.compile(r"Prefill bootstrap failed for request")),
    ("bootstrap", "either", re.compile(r"Some requests timed out when bootstrapping")),
    ("transfer", "either", re.compile(r"KVTransferError\(bootstrap_room=")),
)
_ANY = re.compile("|".join(p.pattern for _, _, p in _PATTERNS))


def transfer_failure(text: str) -> tuple[str, str] | None:
    """(kind, side) when the line says a disaggregated KV transfer failed, else None. Kind:
    handshake | transfer | bootstrap; side: prefill | decode | either (who printed it)."""
    if ("fail" not in text and "KVTransferError" not in text and "timed out" not in text
            and "Could not fetch" not in text):
        return None
    if "Session::" in text:
        return backend_failure(text)
    if _ANY.search(text) is None:
        return None
    for kind, side, pat in _PATTERNS:
        if pat.search(text):
            return kind, side
    return None
