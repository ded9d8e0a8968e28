"""Sealing requestState (design §3.2; ``security.md`` S-05): every mutation is refused
with one message, and opening is cheap."""

from __future__ import annotations

import logging
import string
import time
from typing import Any

import pytest

from mcpkit.errors import InvalidParams
from mcpkit.server import request_state
from mcpkit.server.request_state import (
    INVALID_STATE,
    RequestStateSealer,
    params_digest,
    principal_id,
    resolve_state_key,
)

KEY = b"s" * 32
PARAMS = {"name": "greet", "arguments": {"b": 2, "a": 1}}


def sealer(audience: str = "srv", key: bytes = KEY, ttl: float = 600) -> RequestStateSealer:
    return RequestStateSealer(key, audience=audience, ttl=ttl)


def seal(s: RequestStateSealer, answers: dict[str, Any] | None = None) -> str:
    return s.seal(
        method="tools/call",
        digest=params_digest(PARAMS),
        principal="alice",
        answers=answers or {"k": {"action": "accept"}},
    )


def open_(s: RequestStateSealer, token: Any, **overrides: Any) -> dict[str, Any]:
    options = {"method": "tools/call", "digest": params_digest(PARAMS), "principal": "alice"}
    options.update(overrides)
    return s.open(token, **options)


def test_a_sealed_state_opens_to_its_answers() -> None:
    s = sealer()
    assert open_(s, seal(s)) == {"k": {"action": "accept"}}


def test_every_single_character_substitution_is_refused() -> None:
    s = sealer()
    token = seal(s)
    alphabet = string.ascii_letters + string.digits + "-_.="
    refused = 0
    for index in range(len(token)):
        for replacement in alphabet[(index * 7) % 40 : (index * 7) % 40 + 12]:
            if replacement == token[index]:
                continue
            mutated = token[:index] + replacement + token[index + 1 :]
            with pytest.raises(InvalidParams) as caught:
                open_(s, mutated)
            assert caught.value.message == INVALID_STATE
            refused += 1
    assert refused > 10 * len(token)


@pytest.mark.parametrize(
    "overrides",
    [
        {"method": "prompts/get"},
        {"digest": params_digest({**PARAMS, "arguments": {"a": 1, "b": 3}})},
        {"principal": "mallory"},
    ],
)
def test_state_opened_for_another_request_or_caller_is_refused(
    overrides: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    s = sealer()
    with caplog.at_level(logging.INFO, logger="mcpkit.server"), pytest.raises(InvalidParams):
        open_(s, seal(s), **overrides)
    assert "rejected requestState" in caplog.text


def test_state_from_another_server_sharing_the_key_is_refused() -> None:
    with pytest.raises(InvalidParams, match=INVALID_STATE):
        open_(sealer("other"), seal(sealer("srv")))


def test_state_sealed_with_another_key_is_refused() -> None:
    with pytest.raises(InvalidParams, match=INVALID_STATE):
        open_(sealer(key=b"t" * 32), seal(sealer()))


class Clock:
    def __init__(self, offset: float) -> None:
        self.offset = offset

    def time(self) -> float:
        return time.time() + self.offset


def test_expired_state_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    s = sealer(ttl=60)
    token = seal(s)
    monkeypatch.setattr(request_state, "time", Clock(61))
    with pytest.raises(InvalidParams, match=INVALID_STATE):
        open_(s, token)


def test_state_issued_in_the_future_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    s = sealer(ttl=600)
    monkeypatch.setattr(request_state, "time", Clock(3600))
    token = seal(s)
    monkeypatch.setattr(request_state, "time", Clock(0))
    with pytest.raises(InvalidParams, match=INVALID_STATE):
        open_(s, token)


def test_params_digest_ignores_meta_responses_state_and_key_order() -> None:
    noisy = {
        "arguments": {"a": 1, "b": 2},
        "name": "greet",
        "_meta": {"progressToken": 1},
        "inputResponses": {"x": 1},
        "requestState": "abc",
    }
    assert params_digest(noisy) == params_digest(PARAMS)
    assert params_digest({**PARAMS, "name": "other"}) != params_digest(PARAMS)


@pytest.mark.parametrize(
    ("principal", "identity"),
    [
        (None, ""),
        ("alice", "alice"),
        ({"sub": "u-1"}, "u-1"),
        (type("P", (), {"subject": "s-9"})(), "s-9"),
        (type("Q", (), {"identity": "iss\x1fs-9\x1fapp", "subject": "s-9"})(), "iss\x1fs-9\x1fapp"),
    ],
)
def test_the_principal_identity_is_stable(principal: Any, identity: str) -> None:
    assert principal_id(principal) == identity


def test_without_a_configured_key_a_process_key_is_used_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("MCPKIT_STATE_KEY", raising=False)
    monkeypatch.setattr(request_state, "_process_key", None)
    with caplog.at_level(logging.WARNING, logger="mcpkit.server"):
        first = resolve_state_key()
        second = resolve_state_key()
    assert first == second
    assert len(first) == 32
    assert caplog.text.count("replicas") == 1


def test_opening_takes_well_under_a_millisecond() -> None:
    s = sealer()
    token = seal(s, {f"key{i}": {"action": "accept", "content": {"n": i}} for i in range(20)})
    timings = []
    for _ in range(300):
        started = time.perf_counter()
        open_(s, token)
        timings.append(time.perf_counter() - started)
    timings.sort()
    # The median is the figure (the machine is shared: the tail measures the neighbours).
    assert timings[len(timings) // 2] < 0.001


def test_an_oversized_state_is_refused_before_any_work() -> None:
    with pytest.raises(InvalidParams, match=INVALID_STATE):
        open_(sealer(), "v1." + "A" * (2 << 20) + ".AAAA")


def test_the_process_key_is_made_only_when_state_is_first_sealed(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("MCPKIT_STATE_KEY", raising=False)
    monkeypatch.setattr(request_state, "_process_key", None)
    with caplog.at_level(logging.WARNING, logger="mcpkit.server"):
        lazy = RequestStateSealer(None, audience="srv")
        assert caplog.text == ""
        token = seal(lazy)
        assert "MCPKIT_STATE_KEY is not set" in caplog.text
    assert open_(RequestStateSealer(None, audience="srv"), token) == {"k": {"action": "accept"}}


def test_an_auth_principal_binds_state_to_issuer_subject_and_client() -> None:
    from mcpkit.auth.verifiers import Principal

    first = Principal("user-1", frozenset({"read"}), client_id="app", issuer="https://a")
    same_caller = Principal("user-1", frozenset({"write"}), client_id="app", issuer="https://a")
    other_issuer = Principal("user-1", frozenset({"read"}), client_id="app", issuer="https://b")
    assert principal_id(first) == principal_id(same_caller)
    assert principal_id(first) != principal_id(other_issuer)
