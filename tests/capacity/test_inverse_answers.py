"""The knob-neutral inverse answer (kvtui.core.capacity.answers), the core's inverse searches
(kvtui.core.capacity.inverse) and SGLang's running cap read alone (engines/sglang/running.py),
on the bundled samples, against the engines' own answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtui.core.capacity.answers import knob_answer, knob_answers
from kvtui.core.capacity.calculator import Calculator
from kvtui.core.capacity.inverse import least_step, smallest_tp
from kvtui.core.capacity.parallel import TP_CHOICES
from kvtui.engines.sglang.running import max_running

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
QWEN = SAMPLES / "qwen35-397b-nvfp4-tp8-fp8.log"  # SGLang, mem_fraction_static
VLLM = SAMPLES / "vllm-llama31-8b-tp2-fp8-unscaled.log"  # vLLM, gpu_memory_utilization


def _calc(path: Path) -> Calculator:
    from kvtui.core.pipeline import Session
    from kvtui.sources.readers import iter_lines

    a = Session()
    a.feed_lines(str(path), iter_lines(str(path)))
    assert a.engine is not None
    c = a.engine.calculator(a.state.current)
    assert c is not None
    return c


@pytest.fixture(scope="module")
def sglang() -> Calculator:
    return _calc(QWEN)


@pytest.fixture(scope="module")
def vllm() -> Calculator:
    return _calc(VLLM)


def _too_many(calc: Calculator) -> tuple[int, float]:
    """A question the logged pool does not hold, a little more memory would: a fifth more
    requests than fit at the context length, and one."""
    assert calc.context_len and calc.tokens
    return calc.context_len, int(1.2 * calc.tokens / calc.context_len) + 1


@pytest.mark.parametrize("which", ["sglang", "vllm", "vllm-bytes"])
def test_one_answer_per_knob_is_the_engines_own(which: str, request: pytest.FixtureRequest
                                                ) -> None:
    calc: Calculator = request.getfixturevalue(which.split("-")[0])
    if which == "vllm-bytes":
        by_bytes = calc.sized_by_kv_bytes()
        assert by_bytes is not None
        calc = by_bytes
    ctx, conc = _too_many(calc)
    inv = calc.inverse(calc.current_dtype, ctx, conc)
    assert not inv.fits_now
    knob = calc.memory_knob()
    answer = knob_answer(inv, knob.name)
    expected = inv.to_json()
    assert answer.name == knob.name
    assert answer.needed == expected.get(f"{knob.name}_needed")
    assert answer.current == expected.get(f"{knob.name}_current")
    assert answer.feasible == expected.get(f"{knob.name}_feasible")
    assert answer.needed is not None and answer.needed > (answer.current or 0)
    tp = knob_answer(inv, "tp")
    assert (tp.needed, tp.note) == (inv.tp_needed, inv.tp_note)
    # every other memory knob is silent on this engine's inverse
    others = [a for a in knob_answers(inv) if a.name not in (knob.name, "tp")]
    assert others and all(a.needed is None and a.current is None for a in others)


def test_a_knob_asked_at_a_target_is_its_target(sglang: Calculator, vllm: Calculator) -> None:
    for calc, value in ((sglang, 0.9), (vllm, 0.95)):
        ctx, conc = _too_many(calc)
        inv = calc.inverse(calc.current_dtype, ctx, conc, mem_fraction_static=value)
        assert knob_answer(inv, calc.memory_knob().name).target == value
        assert knob_answer(inv, "no such knob").needed is None


def test_the_engines_ask_their_tp_through_the_core_search(sglang: Calculator) -> None:
    """SGLang's inverse TP is the smallest shardable TP whose pool holds the requests: with
    more memory per GPU than it has, the logged TP itself."""
    ctx, _ = _too_many(sglang)
    inv = sglang.inverse(sglang.current_dtype, ctx, 1)
    assert inv.fits_now and inv.tp_needed == sglang.parallel.tp


@pytest.mark.parametrize("threshold", [1, 2, 17, 500, 9_998, 9_999])
def test_least_step_is_the_first_step_that_holds(threshold: int) -> None:
    seen: list[int] = []

    def holds(step: int) -> bool:
        seen.append(step)
        return step >= threshold

    assert least_step(holds, 1, 9_999) == next(s for s in range(1, 10_000) if s >= threshold)
    assert len(seen) <= 16  # a bisection, not a scan


def test_least_step_without_an_answer() -> None:
    assert least_step(lambda step: False, 1, 9_999) is None


def test_smallest_tp_skips_what_the_engine_will_not_shard() -> None:
    def shardable(tp: int) -> bool:
        return tp != 4

    def holds(tp: int) -> bool:
        return tp >= 3

    assert smallest_tp(2, shardable, holds) == min(t for t in TP_CHOICES
                                                   if t >= 3 and shardable(t))
    assert smallest_tp(1, shardable, lambda tp: False) is None


@pytest.mark.parametrize(("dtype", "tp", "mf"), [
    ("bf16", None, None), ("fp8_e4m3", None, None), ("bf16", None, 0.9),
    ("fp8_e4m3", 16, None), ("bf16", 4, 0.88), ("nvfp4", 3, None)])
def test_running_cap_alone_is_the_rows(sglang: Calculator, dtype: str, tp: int | None,
                                       mf: float | None) -> None:
    from kvtui.engines.sglang.calculator import Calculator as SglCalculator

    assert isinstance(sglang, SglCalculator)
    row = sglang.scenario(dtype, tp=tp, mem_fraction_static=mf)
    assert max_running(sglang, dtype, tp, mf) == row.max_running_requests


@pytest.mark.parametrize(("dtype", "conc", "asked"), [
    ("fp8_e4m3", 10.58, 10), ("fp8_e4m3", 0.4, 1), ("bf16", 10.58, 22), ("bf16", 3.0, 6)])
def test_default_question_keeps_or_doubles(dtype: str, conc: float, asked: int) -> None:
    """Keep today's requests in BF16 (whole ones, at least one); already BF16: twice them."""
    from kvtui.core.capacity.inverse import default_question

    assert default_question(dtype, conc) == ("bf16", asked)


def test_both_engines_ask_the_report_the_default_question(sglang: Calculator,
                                                          vllm: Calculator) -> None:
    from kvtui.core.capacity.inverse import default_question

    for calc in (sglang, vllm):
        inv = calc.report().inverse
        assert inv is not None and calc.context_len and calc.tokens
        dtype, _ = default_question(calc.current_dtype, calc.tokens / calc.context_len)
        assert (inv.dtype, inv.context_len) == (dtype, calc.context_len)
        assert inv.to_json() == calc.inverse(dtype, calc.context_len, inv.concurrency).to_json()
