"""Colours pasted as `cat -v` / `less` show them: ESC is printed as the two characters `^[`, so
`\\x1b[0;36m` reaches the paste as `^[[0;36m` (vllm-project/vllm#33155,
https://github.com/vllm-project/vllm/issues/33155, a vLLM 0.14.1 start-up pasted so). The one
sanitizer of parsed text (`parsers.text.normalize`) reads an SGR sequence in caret form as the
real one, for every engine; caret text that is not an SGR sequence is left as it is."""

from __future__ import annotations

import pytest

from parsers import sglang, vllm
from parsers.text import normalize


@pytest.mark.parametrize(("caret", "plain"), [
    ("^[[0;36m(EngineCore_DP0 pid=70073)^[[0;0m INFO 01-27 00:31:44 [core.py:1] x",
     "(EngineCore_DP0 pid=70073) INFO 01-27 00:31:44 [core.py:1] x"),
    ("^[[32mINFO^[[0m ^[[90m05-01 16:27:56^[[0m msg", "INFO 05-01 16:27:56 msg"),
    ("^[[m^[[1;31mred^[[39;49m", "red"),
])
def test_caret_sgr_reads_as_the_escape(caret: str, plain: str) -> None:
    assert normalize(caret) == plain
    assert normalize(caret.replace("^[", "\x1b")) == plain


@pytest.mark.parametrize("text", [
    "grep -E '^[[:alpha:]]+' prompt.txt",  # a POSIX class in a regex a prompt quotes
    "the pattern ^[[A-Z] matches",  # not SGR: no digits-and-m
    "keys: ^[[A is the up arrow",  # a cursor key, not a colour
    "^[ alone", "a ^[[12 without its final", "x^[[", "^^[[0",
])
def test_caret_text_that_is_not_a_colour_is_left_alone(text: str) -> None:
    assert normalize(text) == text


VLLM = ("(EngineCore_DP0 pid=7) INFO 01-27 00:31:59 [gpu_model_runner.py:3905] Model loading "
        "took 60.25 GiB memory and 14.380607 seconds")
SGLANG = ("[2026-03-01 12:00:09 TP0] Load weight end. elapsed=4.00 s, type=Qwen3ForCausalLM, "
          "avail mem=60.12 GB, mem usage=18.31 GB.")


@pytest.mark.parametrize(("parse", "line", "cut"), [(vllm.parse_line, VLLM, 22),
                                                    (sglang.parse_line, SGLANG, 1)])
def test_both_engines_read_a_caret_coloured_head(parse, line: str, cut: int) -> None:
    want = parse(line)
    assert want is not None
    for form in (f"^[[0;36m{line[:cut]}^[[0;0m{line[cut:]}", f"^[[32m{line}^[[0m"):
        got = parse(form)
        assert got is not None, form
        assert (got.kind, got.fields, got.ts, got.rank) == (want.kind, want.fields, want.ts,
                                                            want.rank), form


def test_what_is_shown_drops_caret_colours_too():
    """The one display sanitizer (`kvtui.core.text.inert`) reads a caret-form colour as the
    parsers do; other caret text stays."""
    from kvtui.core.text import inert

    assert inert("^[[0;36m(EngineCore_DP0 pid=70073)^[[0;0m INFO x") == \
        "(EngineCore_DP0 pid=70073) INFO x"
    assert inert("grep '^[[:alpha:]]' ^[[A") == "grep '^[[:alpha:]]' ^[[A"
