"""Fixtures for client tests: the scripted stdio peer, and what it recorded."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mcpkit.client import EraCache

PEER = Path(__file__).with_name("peers") / "stdio_peer.py"


class Recorder:
    """The messages the peer process(es) received, in order, with the receiving pid."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def entries(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text().splitlines() if line]

    def messages(self) -> list[dict[str, Any]]:
        return [entry["message"] for entry in self.entries()]

    def methods(self) -> list[str]:
        return [m.get("method", "<response>") for m in self.messages()]

    def calls(self, tool: str) -> list[dict[str, Any]]:
        return [
            m
            for m in self.messages()
            if m.get("method") == "tools/call" and m["params"].get("name") == tool
        ]


@pytest.fixture
def record(tmp_path: Path) -> Recorder:
    return Recorder(tmp_path / "record.jsonl")


@pytest.fixture
def peer(record: Recorder) -> Callable[..., list[str]]:
    """The command line of a scripted peer: ``peer("--era", "legacy", ...)``."""

    def command(*args: str) -> list[str]:
        return [sys.executable, str(PEER), "--record", str(record.path), *args]

    return command


@pytest.fixture
def era_cache() -> EraCache:
    """A private era cache, so no test sees another's verdicts."""
    return EraCache()
