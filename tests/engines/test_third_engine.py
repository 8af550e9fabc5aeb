"""A third engine joins through the seam alone (issue #41): ToyLM (tests/engines/toyengine/),
registered with `kvtui.core.engine.register`, is detected from its lines, dated from their
formats and sized, by the same Session, report and CLI code as SGLang and vLLM, with no edit
of kvtui/core, kvtui/ui or kvtui/commands."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from kvtui.core import engine as seam
from kvtui.core.pipeline import Options, Session

LOG_V1 = ["TOY/1 start model=toy-7b kv=fp8_e4m3 ctx=4096 tp=1",
          "TOY/1 pool tokens=32768"]
LOG_V2 = ["TOY/2 start model=toy-7b kv=bf16 ctx=8192 tp=1",
          "TOY/2 pool tokens=10000"]


@pytest.fixture
def toy() -> Iterator[seam.Engine]:
    seam.register("toyengine", "tests.engines.toyengine")
    try:
        yield seam.load("toyengine")
    finally:
        seam.unregister("toyengine")


def session(lines: list[str], **options: object) -> Session:
    s = Session(Options(**options))  # type: ignore[arg-type]
    s.feed_lines("toy.log", lines)
    return s


def test_the_toy_engine_satisfies_the_protocol(toy: seam.Engine) -> None:
    assert isinstance(toy.name, str) and toy.name == "toyengine"
    assert toy in seam.all_engines() and seam.all_engines()[-1] is toy


def test_unregistered_it_is_gone(toy: seam.Engine) -> None:
    seam.unregister("toyengine")
    try:
        assert "toyengine" not in seam.ENGINE_MODULES
        with pytest.raises(ValueError, match="unknown engine 'toyengine'"):
            seam.load("toyengine")
    finally:
        seam.register("toyengine", "tests.engines.toyengine")


def test_detected_from_its_lines_among_every_engine(toy: seam.Engine) -> None:
    s = session(LOG_V1)
    assert s.engine is toy
    report = s.report()
    assert report.engine == "toyengine"


def test_not_detected_in_a_log_of_another_engine(toy: seam.Engine) -> None:
    s = session(["[2026-05-13 02:15:17] server_args=ServerArgs(model_path='m', tp_size=1)"])
    assert s.engine is not None and s.engine.name == "sglang"


@pytest.mark.parametrize(("lines", "label"), [(LOG_V1, "<= 1.9.9"), (LOG_V2, ">= 2.0.0")])
def test_dated_from_its_line_formats(toy: seam.Engine, lines: list[str], label: str) -> None:
    s = session(lines)
    vr = toy.version_range(s.state.settled().current)
    assert vr.label() == label


def test_a_printed_release_pins_it(toy: seam.Engine) -> None:
    s = session([*LOG_V2, "TOY/2 version 2.1.0"])
    assert toy.version_range(s.state.settled().current).label() == "2.1.0"


def test_sized_through_the_seam(toy: seam.Engine) -> None:
    whatif = session(LOG_V1).report().whatif
    assert whatif is not None and whatif.engine == "toyengine"
    assert whatif.current.dtype == "fp8_e4m3" and whatif.current.tokens == 32768
    bf16 = whatif.scenario("bf16")
    assert bf16 is not None and bf16.tokens == 16384  # half the tokens at twice the bytes
    assert whatif.version["label"] == "<= 1.9.9"


def test_the_pinned_release_reaches_its_sizing(toy: seam.Engine) -> None:
    whatif = session(LOG_V2, releases=(("toyengine", "2.1.0"),)).report().whatif
    assert whatif is not None and whatif.version["label"] == "2.1.0"


def test_its_release_option_reaches_the_cli(toy: seam.Engine) -> None:
    from kvtui.commands import check

    p = argparse.ArgumentParser()
    check.configure(p)
    args = p.parse_args(["toy.log", "--toyengine-version", "2.0"])
    assert check._releases(args) == (("toyengine", "2.0.0"),)
    with pytest.raises(ValueError, match=r"kvtui knows 1\.0\.0 to 2\.1\.0"):
        check._releases(p.parse_args(["toy.log", "--toyengine-version", "3.0"]))


def test_a_plan_without_a_log(toy: seam.Engine) -> None:
    calc = toy.plan(None, "", current_dtype="bf16", tokens=1000, context_len=None, tp=1,
                    attn_dp=1, page_size=None, pool_gib=None, release="2.0")
    assert calc.report().scenario("fp8_e4m3").tokens == 2000
