"""A batch line that ends at a complete number keeps that value (issue 36.10).

Other projects' parsers feed kvtui lines trimmed to their first columns: srtlog's test
(ishandhanani/srtlog tests/test_log_parser.py) parses `... Decode batch, #running-req: 7, #token:
7040, token usage: 0.00, gen throughput (token/s): 6.73` and `... Prefill batch, #new-seq: 18`.
SGLang prints every float of these lines with two decimals and every count as an int (0.5.23
managers/scheduler_components/metrics_reporter.py:783-1055, pool_stats_observer.py:108-141), so a
number of that shape at the end of a line was printed whole: the line was cut after it. One whose
shape is short of it (`0.0`, `6.7`) was cut inside it and stays unread.
"""

from __future__ import annotations

import pytest

from parsers.sglang.line import parse_line

HEAD = "[2025-11-04 05:32:32 DP31 TP31 EP31] "


@pytest.mark.parametrize(("line", "field", "value"), [
    ("Decode batch, #running-req: 7, #token: 7040, token usage: 0.00, gen throughput "
     "(token/s): 6.73", "gen_throughput", 6.73),
    ("Decode batch, #running-req: 7, #token: 100", "token", 100),
    ("Decode batch. #running-req: 7, #token: 100, token usage: 0.01", "token_usage", 0.01),
    ("Decode batch, #running-req: 4, #full token: 7936, full token usage: 0.00, #swa token: "
     "512, swa token usage: 0.05", "swa_token_usage", 0.05),
    ("Decode batch, #running-req: 4, #token: 9, token usage: 0.01, accept len: 3.50",
     "accept_len", 3.5),
    ("Prefill batch, #new-seq: 18", "new_seq", 18),
    ("Prefill batch, #new-seq: 18, #new-token: 16384, #cached-token: 0, cache hit rate: 12.50%",
     "cache_hit_rate", 12.5),
])
def test_a_whole_number_at_the_end_is_kept(line, field, value):
    ev = parse_line(HEAD + line)
    assert ev is not None and ev.get(field) == value


@pytest.mark.parametrize(("line", "field"), [
    ("Decode batch, #running-req: 7, #token: 7040, token usage: 0.00, gen throughput "
     "(token/s): 6.7", "gen_throughput"),
    ("Decode batch. #running-req: 11, #token: 14082, token usage: 0.0", "token_usage"),
    ("Decode batch, #running-req: 7, #token: 7040, token usage: 0.", "token_usage"),
    ("Prefill batch, #new-seq: 18, #new-token: 16384, #cached-token: 0, cache hit rate: 12.5",
     "cache_hit_rate"),
    ("Decode batch, #running-req: 4, #token: 9, token usage: 0.01, cuda graph: Tr", "cuda_graph"),
])
def test_a_value_cut_inside_stays_unread(line, field):
    ev = parse_line(HEAD + line)
    assert ev is not None and ev.get(field) is None
    assert (ev.get("running_req") or ev.get("new_seq")) is not None  # the columns before it
