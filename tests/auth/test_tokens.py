"""Token stores (spec ``security-considerations.mdx`` §Token Theft; ``security.md`` A-11)."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from mcpkit.auth.tokens import (
    AuthState,
    ClientRegistration,
    FileTokenStore,
    MemoryTokenStore,
    TokenSet,
)

SECRET = "canary-secret-5f1e"
ACCESS = "canary-access-91ab"
REFRESH = "canary-refresh-77cd"


def sample() -> AuthState:
    return AuthState(
        registrations={
            "https://as.example": ClientRegistration(
                "https://as.example",
                "client-1",
                "client_secret_basic",
                client_secret=SECRET,
                redirect_uris=("http://127.0.0.1:3000/cb",),
            )
        },
        tokens={
            "https://mcp.example/mcp": TokenSet(
                "https://mcp.example/mcp",
                "https://as.example",
                "https://as.example/token",
                ACCESS,
                expires_at=2000.0,
                refresh_token=REFRESH,
                scope=("a", "b"),
                requested_scope=("a",),
            )
        },
    )


def test_state_round_trips_through_json() -> None:
    state = sample()
    assert AuthState.from_json(state.to_json()) == state


@pytest.mark.parametrize("document", [None, [], {"format": 2}, {"format": 1, "tokens": {}}])
def test_foreign_documents_are_refused(document: object) -> None:
    with pytest.raises(ValueError, match="auth state"):
        AuthState.from_json(document)


def test_secrets_never_appear_in_reprs() -> None:
    text = repr(sample())
    for canary in (SECRET, ACCESS, REFRESH):
        assert canary not in text


def test_expiry_has_a_safety_margin() -> None:
    tokens = sample().tokens["https://mcp.example/mcp"]
    assert not tokens.expired(1000.0)
    assert tokens.expired(1975.0)
    assert not TokenSet("r", "i", "t", "x").expired(10**12)


async def test_memory_store_keeps_a_copy() -> None:
    store = MemoryTokenStore()
    state = sample()
    await store.save(state)
    state.tokens.clear()
    assert (await store.load()) == sample()


async def test_file_store_writes_0600_in_a_0700_directory(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "tokens.json"
    store = FileTokenStore(path)
    assert await store.load() == AuthState()
    await store.save(sample())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert await FileTokenStore(path).load() == sample()
    assert sorted(os.listdir(path.parent)) == ["tokens.json"]  # no temporary files left


async def test_file_store_expands_the_home_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    store = FileTokenStore("~/app/tokens.json")
    await store.save(sample())
    assert (tmp_path / "app" / "tokens.json").is_file()
    assert await FileTokenStore(tmp_path / "app" / "tokens.json").load() == sample()


async def test_file_store_replaces_atomically(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    store = FileTokenStore(path)
    await store.save(sample())
    inode = path.stat().st_ino
    state = sample()
    state.tokens.clear()
    await store.save(state)
    assert path.stat().st_ino != inode  # a new file renamed over the old one
    assert await store.load() == state


async def test_file_store_tightens_loose_permissions(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "tokens.json"
    await FileTokenStore(path).save(sample())
    path.chmod(0o644)
    with caplog.at_level(logging.WARNING, logger="mcpkit.auth"):
        assert await FileTokenStore(path).load() == sample()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "readable by others" in caplog.text


async def test_a_corrupt_file_starts_empty_without_leaking_its_content(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "tokens.json"
    path.write_text('{"format": 1, "tokens": "' + ACCESS)
    path.chmod(0o600)
    with caplog.at_level(logging.WARNING, logger="mcpkit.auth"):
        assert await FileTokenStore(path).load() == AuthState()
    assert ACCESS not in caplog.text
