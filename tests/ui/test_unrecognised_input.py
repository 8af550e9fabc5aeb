"""Input with no SGLang or vLLM line, in the TUI and `whatif --from-log` (issue 36.7).

`check` says "none recognised: no line of sglang or vllm was found; this does not look like an
LLM-server log" and exits 3 (tests/test_cli_gate.py). The TUI on such a file, or an empty one,
said `KV ? -> ?` and "no alerts (yet)" as if the facts were still to come, and `whatif
--from-log` blamed a missing pool line. Each now says what `check` says.
"""

from __future__ import annotations

import random

import pytest

from kvtui.core.render import unrecognised_words
from kvtui.ui.panes import facts_text
from tests.test_cli_check import SAMPLES, kvtui
from tests.ui.ui_helpers import replay_app, settle

CONTENTS = [b"", b"hello\nworld\n", b'{"level": "info", "msg": "nginx started"}\n']


@pytest.mark.parametrize("content", CONTENTS)
def test_whatif_from_log_says_what_check_says(tmp_path, content):
    path = tmp_path / "other.log"
    path.write_bytes(content)
    check = kvtui("check", str(path))
    whatif = kvtui("whatif", "--from-log", str(path))
    assert check.returncode == whatif.returncode == 3
    assert unrecognised_words() in check.stdout
    assert whatif.stderr.strip() == f"kvtui: {path}: {unrecognised_words()}"
    assert kvtui("whatif", "--from-log", str(path), "--json").returncode == 3


async def _panes(path):
    app = replay_app(path)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        header = app.query_one("HeaderBar")
        return (header.build().plain,
                [str(o.prompt) for o in app.alerts_pane._options],
                facts_text(header.report).plain)


# Seeded bytes, not os.urandom: pytest-xdist workers must collect the same test ids.
@pytest.mark.parametrize("content", [b"", b"hello\nworld\n", random.Random(3).randbytes(2048)])
async def test_the_tui_says_no_engine_was_recognised(tmp_path, content):
    path = tmp_path / "other.log"
    path.write_bytes(content)
    header, alerts, facts = await _panes(path)
    assert "no SGLang or vLLM line recognised" in header
    assert "KV ?" not in header and "TP=?" not in header
    assert alerts == [f"no alerts: {unrecognised_words()}"]
    assert unrecognised_words() in facts


async def test_a_server_log_keeps_its_verdict():
    header, alerts, _ = await _panes(SAMPLES / "llama31-70b-tp8.log")
    assert "KV auto -> bf16" in header and "recognised" not in header
    assert alerts == ["no alerts (yet)"]
