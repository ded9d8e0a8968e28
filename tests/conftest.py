"""Shared fixtures: paths to the examples, the interpreter, and free ports."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


@pytest.fixture
def python() -> str:
    return sys.executable


@pytest.fixture
def examples() -> Path:
    return EXAMPLES
