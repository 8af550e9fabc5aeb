"""Generation throughput in every decode layout, and SGLang's oldest decode form (issue 36.4).

- Hybrid (SWA) pools print `#full token: N, full token usage: F, #swa token: N, swa token usage:
  F` (0.5.9 managers/scheduler_metrics_mixin.py:366; 0.4.10 :170 with `Decode batch.`) or, on
  0.4.9, `#token: full=N, swa=N, token usage: full=F, swa=F` (sglang-log-lines.md 7.2); a time-only
  head `[HH:MM:SS]` in front (a paste that cut the date, or a logging config). The throughput
  column of those lines is the report's last and mean, by the line route and the column route.
- 0.1.14 printed the decode stats with no head at all, under `logging.basicConfig(format=
  "%(message)s")` (managers/router/model_rpc.py:62-65): `#running-req: N, #token: N, token usage:
  F, #queue-req: N` (:226-231); 0.1.16 adds `gen throughput (token/s): F, ` (:245-249).
"""

from __future__ import annotations

import json

import pytest

from kvtui.core.pipeline import Session
from parsers.sglang.line import parse_line
from tests.test_cli_check import kvtui

SWA = [
    "[{t}] Decode batch, #running-req: 4, #full token: 7936, full token usage: 0.{u:02d}, "
    "#swa token: 512, swa token usage: 0.00, cuda graph: True, gen throughput (token/s): "
    "{g:.2f}, #queue-req: 0",
    "[{t}] Decode batch. #running-req: 4, #full token: 100, full token usage: 0.{u:02d}, "
    "#swa token: 50, swa token usage: 0.00, cuda graph: True, gen throughput (token/s): "
    "{g:.2f}, #queue-req: 0, ",
    "[{t}] Decode batch. #running-req: 4, #token: full=100, swa=50, token usage: full=0.{u:02d}, "
    "swa=0.00, cuda graph: True, gen throughput (token/s): {g:.2f}, #queue-req: 0",
    "[{t} TP0] Decode batch, #running-req: 4, #full token: 7936, full token usage: 0.{u:02d}, "
    "mamba num: 8, mamba usage: 0.00, cuda graph: True, gen throughput (token/s): {g:.2f}, "
    "#queue-req: 0",
]
PLAIN = ("[{t}] Decode batch, #running-req: 4, #token: 7936, token usage: 0.{u:02d}, cuda graph: "
         "True, gen throughput (token/s): {g:.2f}, #queue-req: 0")


def _lines(form: str, n: int, g0: float) -> list[str]:
    return [form.format(t=f"12:{i // 60 % 60:02d}:{i % 60:02d}", u=i % 9 + 1, g=g0 + i % 10)
            for i in range(n)]


def _runtime(lines: list[str], columns: bool) -> dict:
    s = Session()
    s.configure(columns=columns)
    s.feed_lines("paste.log", lines)
    return s.report().to_json()["runtime"]


@pytest.mark.parametrize("form", SWA)
@pytest.mark.parametrize("columns", [True, False])
def test_time_only_hybrid_lines_give_their_throughput(form, columns):
    ev = parse_line(form.format(t="12:00:01", u=5, g=6.73))
    assert ev is not None and ev.kind == "decode_batch" and ev.get("gen_throughput") == 6.73
    lines = _lines(form, 200, 300.0)  # 300.00 .. 309.00
    rt = _runtime(lines, columns)
    assert rt["decode_batches"] == 200
    assert rt["last_gen_throughput"] == 309.0
    assert rt["mean_gen_throughput"] == pytest.approx(304.5)


@pytest.mark.parametrize("form", SWA[:3])
def test_a_paste_of_both_layouts_means_over_both(form):
    plain, hybrid = _lines(PLAIN, 100, 50.0), _lines(form, 100, 300.0)
    mixed = [x for pair in zip(plain, hybrid, strict=True) for x in pair]
    for columns in (True, False):
        rt = _runtime(mixed, columns)
        assert rt["last_gen_throughput"] == 309.0
        assert rt["mean_gen_throughput"] == pytest.approx((54.5 + 304.5) / 2)


V0114 = "#running-req: {r}, #token: {t}, token usage: {u:.2f}, #queue-req: {q}"
V0116 = ("#running-req: {r}, #token: {t}, token usage: {u:.2f}, gen throughput (token/s): "
         "{g:.2f}, #queue-req: {q}")


@pytest.mark.parametrize(("form", "variant"), [(V0114, "decode_batch:bare_no_gen"),
                                               (V0116, "decode_batch:bare")])
def test_the_oldest_decode_form_is_read(form, variant):
    ev = parse_line(form.format(r=3, t=300, u=0.01, g=50.0, q=2))
    assert ev is not None and ev.kind == "decode_batch" and ev.variant == variant
    assert (ev.get("running_req"), ev.get("token"), ev.get("token_usage"),
            ev.get("queue_req")) == (3, 300, 0.01, 2)
    assert ev.get("gen_throughput") == (50.0 if "gen" in form else None)


def test_the_oldest_decode_form_makes_a_report(tmp_path):
    path = tmp_path / "old.log"
    path.write_text("\n".join(V0114.format(r=r, t=r * 100, u=r / 100, q=0) for r in range(1, 6))
                    + "\n")
    out = kvtui("check", "--json", str(path))
    doc = json.loads(out.stdout)
    assert doc["engine"] == "sglang"
    assert doc["runtime"]["decode_batches"] == 5 and doc["runtime"]["peak_token_usage"] == 0.05
    assert out.returncode == 0  # no alert: a pass, with its batches read


@pytest.mark.parametrize("text", [
    # the same file's flush warning names the running count, but is no batch (0.1.14 :164-167)
    "Cache not flushed because there are pending requests. #queue-req: 1, #running-req: 2",
    "#running-req: 2",
    "#running-req: 2, #queue-req: 1",
])
def test_other_lines_with_a_running_count_are_no_batch(text):
    assert parse_line(text) is None
