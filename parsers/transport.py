"""The KV-transfer libraries' own failure lines: what a transfer backend prints into the log
of whichever engine loaded it (issue 38). Not an engine's wording, so it is read here once and
both engines' `transfer_failure` ask it (`parsers/sglang/disagg.py`, `parsers/vllm/disagg.py`).

Mooncake's transfer engine (the default backend of SGLang's disaggregation, and vLLM's
MooncakeConnector) logs through glog (`E0904 07:15:26.325699  5796 tcp_transport.cpp:172] ...`).
Its TCP transport's session failures, read from kvcache-ai/Mooncake
mooncake-transfer-engine/src/transport/tcp_transport/tcp_transport.cpp (the copy in the search
tool's index, commit 012d8077): "ServerSession::readHeader failed. Error: ...",
"ServerSession::writeBody failed. Attempt to write data ...", "ServerSession::readBody failed.
...", "ClientSession::writeHeader failed. ...", "ClientSession::readBody failed. ...",
"ClientSession::writeBody failed. ..."; older builds print "Session::readBody failed. Error: End
of file (value: 2)" (the decode log pasted in sgl-project/sglang issue #10001, where the router
logged the decode's 500 for the same requests) and "Session::writeBody failed. Error: Bad
address" (kvcache-ai/Mooncake issue #519). Its RDMA transport's lines are not read (not read
from its source yet).
"""

from __future__ import annotations

import regex

_SESSION = regex.compile(r"\b(?:Client|Server)?Session::(?:read|write)(?:Header|Body) failed\b")


def backend_failure(text: str) -> tuple[str, str] | None:
    """(kind, side) when the line is a transfer library's own failure, else None (kind
    "transfer", side "either": the library runs on both sides)."""
    if "Session::" not in text:
        return None
    if _SESSION.search(text) is None:
        return None
    return "transfer", "either"
