"""Shared fixtures: where the repo, the sample logs and the real-world corpus live; and the
markers that cut the suite (`python3 dev.py test --fast` is `-m "not ssh and not corpus and not
slow"`), set here from what a test uses rather than written on each test."""

from __future__ import annotations

import os
import types
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_logs"
TESTS = ROOT / "tests"
UI_TESTS = ROOT / "tests" / "ui"


def corpus_dir() -> Path:
    return Path(os.environ.get("KVTUI_CORPUS", ROOT.parent / "shared" / "corpus"))


@pytest.fixture
def samples() -> Path:
    return SAMPLES


@pytest.fixture
def repo_root() -> Path:
    return ROOT


def _is_corpus_path(value: object, corpus: Path) -> bool:
    if isinstance(value, Path):
        return value.is_relative_to(corpus)
    if isinstance(value, list | tuple | set | frozenset):
        return any(isinstance(v, Path) and v.is_relative_to(corpus) for v in value)
    return False


def _in_tests(func: types.FunctionType) -> bool:
    return Path(func.__code__.co_filename).is_relative_to(ROOT / "tests")


def _reads_corpus(code: types.CodeType, names: dict[str, object], corpus: Path,
                  seen: set[int]) -> bool:
    """Whether this code, or a function of the test suite it names (followed through its own
    module), reaches the corpus: it calls `corpus_dir`, names a constant called *CORPUS* or a
    path (or a list of paths) in the corpus.
    Read from the compiled code, so a test that starts reading the corpus is marked with no
    edit to it; a miss shows in the fast run, which hides the corpus (dev.py)."""
    if id(code) in seen:
        return False
    seen.add(id(code))
    for const in code.co_consts:  # nested functions, lambdas, comprehensions
        if isinstance(const, types.CodeType) and _reads_corpus(const, names, corpus, seen):
            return True
    for name in code.co_names:
        if name == "corpus_dir" or "CORPUS" in name:  # also imported in the function itself
            return True
        if name not in names:
            continue
        value = names[name]
        if _is_corpus_path(value, corpus):
            return True
        if (isinstance(value, types.FunctionType) and _in_tests(value)
                and _reads_corpus(value.__code__, value.__globals__, corpus, seen)):
            return True
    return False


def _functions(item: pytest.Function) -> Iterable[types.FunctionType]:
    """The test function and the fixture functions it asks for (a fixture may read the corpus)."""
    yield item.function  # type: ignore[misc]
    for defs in item._fixtureinfo.name2fixturedefs.values():
        for fixturedef in defs:
            func = getattr(fixturedef.func, "__wrapped__", fixturedef.func)
            if isinstance(func, types.FunctionType) and _in_tests(func):
                yield func


def _uses_textual(item: pytest.Function) -> bool:
    if Path(item.path).is_relative_to(UI_TESTS) or "snap_compare" in item.fixturenames:
        return True
    return any(getattr(v, "__module__", "").startswith(("textual", "kvtui.ui"))
               for v in vars(item.module).values())


SERIAL = ("ssh", "slow")  # the markers whose tests one worker runs in order (see below)


@pytest.hookimpl(tryfirst=True)  # before -m deselects and before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """ssh: a test under tests/ssh/ (real sshd). corpus: a test that reads the real-log corpus.
    tui: a test that drives Textual (tests/ui/, snapshots, a module importing the UI). slow is
    written on the test or its module (tests/test_installed_wheel.py, the real log clients, a
    pytest run inside a test).

    Parallel runs (`dev.py test`, pytest-xdist with `--dist loadgroup`): every ssh and slow
    test is in one group, so one worker runs them one after another as a serial run did (the
    sshd fixtures are session-scoped and their ports are probed free, then bound: two workers
    could race for one; the netns tests use fixed namespace names; the wheel is built in the
    checkout's build/); the other workers share the rest, the TUI tests too (each app has its
    own Pilot and size, its files in its own tmp_path: they passed spread over two workers in
    the fast run and in a full run)."""
    corpus = corpus_dir()
    for item in items:
        if "ssh" in Path(item.path).relative_to(TESTS).parts[:-1]:
            item.add_marker(pytest.mark.ssh)  # tests/ssh/, tests/fleet/ssh/: real sshd
        if not isinstance(item, pytest.Function):
            continue
        callspec = getattr(item, "callspec", None)
        params = callspec.params.values() if callspec is not None else ()
        if any(_is_corpus_path(p, corpus) for p in params) or any(
                _reads_corpus(f.__code__, f.__globals__, corpus, set())
                for f in _functions(item)):
            item.add_marker(pytest.mark.corpus)
        if _uses_textual(item):
            item.add_marker(pytest.mark.tui)
    for item in items:
        if any(item.get_closest_marker(m) for m in SERIAL):
            item.add_marker(pytest.mark.xdist_group("serial"))
