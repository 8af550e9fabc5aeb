"""A report's `server_args` carries its own engine's arguments, never the other engine's names.

The shared names (parsers.kinds KIND_FIELDS["server_args"]) are the settings both engines state;
what only SGLang has (its dump's `parsers.sglang.server_args.SERVER_ARG_FIELDS` beyond them)
and what only vLLM has are optional fields of the kind. A vLLM report once listed SGLang's 27
own names as nulls.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from parsers import KIND_FIELDS, OPTIONAL_FIELDS
from parsers.kinds import ACCURACY_ARGS
from parsers.sglang.server_args import SERVER_ARG_FIELDS
from parsers.vllm import args as vllm_args
from tests.helpers import session_of

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
SHARED = tuple(k for k in KIND_FIELDS["server_args"] if k != "form")
# What SGLang's dump names and no vLLM argument maps to (parsers/vllm/args.py `_SHARED`).
SGLANG_OWN = set(SERVER_ARG_FIELDS) - set(vllm_args._SHARED.values())


def _server_args(name: str) -> tuple[str, dict]:
    s = session_of((SAMPLES / name).read_text().splitlines(), name)
    report = s.report().to_json()
    return report["engine"], report["server_args"]


def test_the_key_sets_agree():
    assert set(SHARED) <= set(SERVER_ARG_FIELDS), "SGLang's dump states every shared name"
    assert not SGLANG_OWN & set(SHARED), "a name only SGLang fills is not a shared field"
    assert SGLANG_OWN.issubset(OPTIONAL_FIELDS["server_args"])
    assert set(vllm_args._SHARED.values()) <= set(SHARED)
    assert set(vllm_args._OWN.values()) <= set(OPTIONAL_FIELDS["server_args"])
    assert not set(vllm_args._OWN.values()) & SGLANG_OWN


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.glob("vllm-*.log")))
def test_a_vllm_report_names_no_sglang_argument(name):
    engine, sa = _server_args(name)
    assert engine == "vllm"
    assert not sa.keys() & SGLANG_OWN, sorted(sa.keys() & SGLANG_OWN)
    assert list(sa)[: len(SHARED)] == list(SHARED)  # the shared names first, in one order
    assert sa["tp_size"] and sa["context_length"]


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.glob("*.log")
                                        if not p.name.startswith("vllm-")
                                        # its last start printed no dump
                                        and "no-dump" not in p.name))
def test_an_sglang_report_keeps_its_whole_dump(name):
    engine, sa = _server_args(name)
    assert engine == "sglang"
    assert list(sa)[:len(SERVER_ARG_FIELDS)] == list(SERVER_ARG_FIELDS)
    # then the accuracy checklist's arguments the dump printed (parsers.kinds ACCURACY_ARGS)
    # and where it serves /metrics (`port`, `enable_metrics`: Engine.metrics_endpoint)
    assert set(list(sa)[len(SERVER_ARG_FIELDS):]) <= {*ACCURACY_ARGS, "port", "enable_metrics"}
