"""A prefill/decode router's log, read beside the fleet (an entry with `role = "router"`).

Why not the pipeline: a router's log is no engine's, so it folds into no run and no report; what
it says that matters is which server failed which requests (its 5xx and transport errors per
prefill or decode URL, `parsers.router`) and which servers it pairs (its start line). This
module keeps a bounded count per URL with the first and last line as evidence, and matches a
URL to the fleet entry on that host (`match`), for `fleet-kv-transfer-failing`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kvtui.core.evidence import Evidence
from parsers.prefix import line_timestamp
from parsers.router import router_failure, router_workers

NO_ANSWER = "no answer"  # a failure with no HTTP status: the server did not answer


@dataclass(frozen=True, slots=True)
class RouterTarget:
    """One server the router saw fail requests: its side, its URL as the router printed it,
    how many lines, the answers (status -> lines, NO_ANSWER for a transport error), and the
    first and last line."""

    side: str  # prefill | decode
    url: str
    count: int
    answers: tuple[tuple[str, int], ...]
    evidence: tuple[Evidence, ...]

    @property
    def said(self) -> str:
        """`3 x 500, 1 x no answer`"""
        return ", ".join(f"{n} x {a}" for a, n in self.answers)

    def to_json(self) -> dict[str, Any]:
        return {"side": self.side, "url": self.url, "failures": self.count,
                "answers": dict(self.answers), "evidence": [e.to_dict() for e in self.evidence]}


@dataclass(frozen=True, slots=True)
class RouterFacts:
    """What a router's log said: its failed requests per server, and the servers its start
    line pairs (empty when the log holds no start line)."""

    failures: int = 0
    targets: tuple[RouterTarget, ...] = ()
    prefill_urls: tuple[str, ...] = ()
    decode_urls: tuple[str, ...] = ()

    def urls(self, side: str) -> tuple[str, ...]:
        return self.prefill_urls if side == "prefill" else self.decode_urls

    def to_json(self) -> dict[str, Any]:
        return {"failures": self.failures, "targets": [t.to_json() for t in self.targets],
                "prefill_urls": list(self.prefill_urls), "decode_urls": list(self.decode_urls)}


@dataclass(slots=True)
class _Target:
    count: int = 0
    answers: dict[str, int] = field(default_factory=dict)
    first: Evidence | None = None
    last: Evidence | None = None


@dataclass(slots=True)
class RouterWatch:
    """Count a router log's failure lines per (side, URL) and keep its latest start line's
    servers."""

    count: int = 0
    targets: dict[tuple[str, str], _Target] = field(default_factory=dict)
    prefill_urls: tuple[str, ...] = ()
    decode_urls: tuple[str, ...] = ()

    def feed(self, source: str, line_no: int, text: str) -> bool:
        """Read one raw line; True when it was a failure the router reported."""
        hit = router_failure(text)
        if hit is None:
            workers = router_workers(text)
            if workers is not None:
                self.prefill_urls, self.decode_urls = workers
            return False
        self.count += 1
        t = self.targets.setdefault((hit.side, hit.url), _Target())
        t.count += 1
        answer = str(hit.status) if hit.status is not None else NO_ANSWER
        t.answers[answer] = t.answers.get(answer, 0) + 1
        ev = Evidence.of(source, line_no, None, line_timestamp(text), text)
        if t.first is None:
            t.first = ev
        t.last = ev
        return True

    def feed_lines(self, source: str, lines: list[str], first_line_no: int = 1) -> None:
        for i, text in enumerate(lines):
            self.feed(source, first_line_no + i, text)

    def facts(self) -> RouterFacts:
        targets = []
        for (side, url), t in self.targets.items():
            ev = tuple(e for e in (t.first, t.last if t.last is not t.first else None)
                       if e is not None)
            targets.append(RouterTarget(side, url, t.count, tuple(sorted(t.answers.items())),
                                        ev))
        return RouterFacts(self.count, tuple(targets), self.prefill_urls, self.decode_urls)
