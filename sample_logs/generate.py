"""Writes the bundled sample logs (deterministic: same bytes every run).

The SGLang logs come from `sglang_samples.py`, the vLLM logs from `vllm_samples.py`, each
modelled line for line on the engine's own format strings, and the restarted servers' logs from
`restarts.py`. Run `python sample_logs/generate.py [DIR]` to rewrite them;
`tests/test_sample_logs.py` checks the files on disk are what this script produces.

Why a module of its own: the restarts build on the SGLang helpers, so the one place that names
every sample must sit above all three (no import circle between the generators).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # imported from elsewhere (tests/test_sample_logs.py)
    sys.path.insert(0, str(HERE))

import restarts  # noqa: E402  (the generators, beside this file)
import sglang_samples  # noqa: E402
import vllm_samples  # noqa: E402


def render_all() -> Iterator[tuple[str, str]]:
    for name, make in sglang_samples.SAMPLES.items():
        yield name, make()
    yield from vllm_samples.render_all()
    yield from restarts.render_all()


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else HERE
    for name, text in render_all():
        (out / name).write_text(text, encoding="utf-8")
        print(f"{name}: {text.count(chr(10))} lines")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
