"""Nothing a log contains can crash the analysis: random mixes of real lines, mangled numbers
and garbage always give a JSON-serializable report."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvtui.core.pipeline import Options, Session
from tests.helpers import session_of

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
REAL = sorted({ln for p in SAMPLES.glob("*.log") for ln in p.read_text().splitlines()
               if "HTTP/1.1" not in ln})
NUMBER = re.compile(r"\d+(?:\.\d+)?")


def mangle(line: str, how: int) -> str:
    """Zeros, huge values, empty values or a cut: what pastes and odd builds produce."""
    if how == 0:
        return NUMBER.sub("0", line)
    if how == 1:
        return NUMBER.sub("99999999999999999999", line)
    if how == 2:
        return NUMBER.sub("", line)
    if how == 3:
        return line[: len(line) // 2]
    return line


lines = st.one_of(
    st.builds(mangle, st.sampled_from(REAL), st.integers(0, 4)),
    st.text(max_size=200),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(lines, max_size=60))
def test_any_mix_of_lines_gives_a_report(batch):
    a = session_of(batch, "fuzz")
    report = a.report().to_json()
    json.dumps(report)
    assert isinstance(report["alerts"], list)


DECODE = ("[2026-01-01 10:00:0{i} TP0] Decode batch, #running-req: 4, #token: 900, token usage: "
          "0.10, cuda graph: True, gen throughput (token/s): {g}, #queue-req: 0")


def test_non_finite_numbers_are_dropped_not_fatal():
    """A 400-digit number parses to inf and "nan" to nan; neither may crash or poison sums."""
    a = Session()
    a.feed_lines("x", [DECODE.format(i=1, g="100.00"), DECODE.format(i=2, g="9" * 400 + ".0"),
                      DECODE.format(i=3, g="nan"), DECODE.format(i=4, g="300.00")])
    rt = a.report().to_json()["runtime"]
    assert rt["decode_batches"] >= 3
    assert rt["mean_gen_throughput"] == 200.0
    json.dumps(a.report().to_json(), allow_nan=False)


def test_a_kv_dtype_the_calculator_does_not_model():
    pool = ("[2026-01-01 10:00:00 TP0] KV Cache is allocated. dtype: torch.int8, #tokens: 1000,"
            " K size: 1.00 GB, V size: 1.00 GB")
    dump = ("[2026-01-01 09:59:00] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B', "
            "tp_size=1, kv_cache_dtype='auto')")
    for lines in ([pool], [dump, pool]):
        a = session_of(lines, "x")
        report = a.report().to_json()
        json.dumps(report)
        assert report["whatif"] is None  # not modelled, rather than modelled wrongly


def test_odd_checkpoint_config_values_do_not_break_the_report():
    from kvtui.core.capacity.modelspec import from_hf_config
    from kvtui.core.checkpoint import CheckpointFacts

    bad = {"num_hidden_layers": 32, "num_attention_heads": 0, "hidden_size": 4096,
           "max_position_embeddings": "x"}
    try:
        from_hf_config(bad)
    except ValueError:
        pass
    else:
        raise AssertionError("a zero head count must be refused")
    a = Session(Options(checkpoint=CheckpointFacts(model_config=bad, model_path="/m",
                                                   source="gpu")))
    a.feed_lines("x", ["[2026-01-01 10:00:00 TP0] KV Cache is allocated. #tokens: 1000, "
                      "K size: 1.00 GB, V size: 1.00 GB"])
    json.dumps(a.report().to_json())
