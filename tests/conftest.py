"""Shared fixtures: where the repo, the sample logs and the real-world corpus live."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_logs"


def corpus_dir() -> Path:
    return Path(os.environ.get("KVTUI_CORPUS", ROOT.parent / "shared" / "corpus"))


@pytest.fixture
def samples() -> Path:
    return SAMPLES


@pytest.fixture
def repo_root() -> Path:
    return ROOT
