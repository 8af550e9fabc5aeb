"""The one reading of printed Python literals, shared by SGLang's dump and vLLM's args."""

from __future__ import annotations

import pytest

from parsers.literals import literal_scalar
from parsers.sglang.server_args import parse_server_args
from parsers.vllm.args import _scalar


@pytest.mark.parametrize(("raw", "value"), [
    ("'fp8_e4m3'", "fp8_e4m3"), ('"auto"', "auto"), ("None", None), ("", None),
    ("True", True), ("False", False), ("8", 8), ("0.88", 0.88), (" 4 ", 4),
    ("inf", "inf"), ("nan", "nan"), ("{'a': 1}", "{'a': 1}"), ("'", "'"),
])
def test_literal_scalar(raw, value):
    assert literal_scalar(raw) == value


def test_both_engines_read_values_alike():
    got = parse_server_args("server_args=ServerArgs(tp_size=8, mem_fraction_static=0.88, "
                              "kv_cache_dtype='fp8_e4m3', enable_dp_attention=False, "
                              "quantization=None)")
    assert got is not None
    sa = got[0]
    assert (sa["tp_size"], sa["mem_fraction_static"], sa["kv_cache_dtype"],
            sa["enable_dp_attention"], sa["quantization"]) == (8, 0.88, "fp8_e4m3", False, None)
    assert [_scalar(x) for x in ("8", "0.88", "'fp8_e4m3'", "False", "None")] == \
        [8, 0.88, "fp8_e4m3", False, None]
    assert _scalar("['served-a', 'served-b']") == "served-a"
