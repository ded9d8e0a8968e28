"""Legacy session state and the session table (spec ``2025-11-25/basic/transports.mdx``
§Session Management, ``basic/lifecycle.mdx`` §Timeouts)."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import pytest

from mcpkit.errors import ConnectionClosed, ProtocolError, RequestTimeout
from mcpkit.protocol.jsonrpc import ErrorResponse, Response
from mcpkit.transports.session import MemorySessionStore, Session, new_session_id

VISIBLE_ASCII = re.compile(r"^[\x21-\x7e]+$")


def stored(session_id: str) -> Session:
    return Session("2025-11-25", {}, id=session_id)


def test_session_ids_are_visible_ascii_and_unguessable() -> None:
    ids = {new_session_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(VISIBLE_ASCII.match(i) and len(i) >= 32 for i in ids)


def test_a_full_table_evicts_the_longest_idle_session_and_closes_it() -> None:
    store = MemorySessionStore(max_sessions=2)
    first, second, third = stored("a"), stored("b"), stored("c")
    store.add(first)
    store.add(second)
    first.last_seen -= 10
    store.add(third)
    assert store.get("a") is None
    assert first.closed
    assert store.get("b") is second
    assert store.get("c") is third


def test_an_idle_session_expires_and_is_closed() -> None:
    store = MemorySessionStore(idle_timeout=60)
    session = stored("a")
    store.add(session)
    session.last_seen = time.monotonic() - 61
    assert store.get("a") is None
    assert session.closed
    assert len(store) == 0


def test_a_lookup_refreshes_the_idle_clock() -> None:
    store = MemorySessionStore(idle_timeout=60)
    session = stored("a")
    store.add(session)
    session.last_seen = time.monotonic() - 59
    assert store.get("a") is session
    assert time.monotonic() - session.last_seen < 1


def test_removing_a_session_closes_it() -> None:
    store = MemorySessionStore()
    session = stored("a")
    store.add(session)
    assert store.remove("a") is session
    assert session.closed
    assert store.remove("a") is None


def test_a_session_without_an_id_cannot_be_stored() -> None:
    with pytest.raises(ValueError, match="needs an id"):
        MemorySessionStore().add(Session("2025-11-25", {}))


@pytest.mark.parametrize(("count", "idle"), [(0, 1.0), (1, 0.0), (1, -1.0)])
def test_the_table_bounds_must_be_positive(count: int, idle: float) -> None:
    with pytest.raises(ValueError, match="must be"):
        MemorySessionStore(max_sessions=count, idle_timeout=idle)


async def test_a_request_resolves_with_the_clients_result() -> None:
    session = Session("2025-11-25", {})
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asking = asyncio.ensure_future(session.request("roots/list", None, send))
    await asyncio.sleep(0)
    assert sent[0]["method"] == "roots/list"
    assert session.resolve(Response(sent[0]["id"], {"roots": []}))
    assert await asking == {"roots": []}
    assert session.pending_requests == 0


async def test_an_error_response_raises_the_clients_error() -> None:
    session = Session("2025-11-25", {})
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asking = asyncio.ensure_future(session.request("sampling/createMessage", {}, send))
    await asyncio.sleep(0)
    session.resolve(ErrorResponse(sent[0]["id"], {"code": -1, "message": "no"}))
    with pytest.raises(ProtocolError) as caught:
        await asking
    assert caught.value.remote
    assert caught.value.message == "no"


async def test_a_request_that_times_out_tells_the_client_it_is_cancelled() -> None:
    session = Session("2025-11-25", {})
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    with pytest.raises(RequestTimeout):
        await session.request("roots/list", None, send, timeout=0.05)
    assert sent[1]["method"] == "notifications/cancelled"
    assert sent[1]["params"]["requestId"] == sent[0]["id"]


async def test_a_response_for_no_pending_request_is_refused() -> None:
    session = Session("2025-11-25", {})
    assert not session.resolve(Response("s-1", {}))


async def test_closing_fails_pending_requests_and_ends_the_standalone_stream() -> None:
    session = Session("2025-11-25", {})

    async def send(message: dict[str, Any]) -> None:
        return None

    asking = asyncio.ensure_future(session.request("roots/list", None, send))
    waiting = asyncio.ensure_future(session.next_pushed())
    await asyncio.sleep(0)
    session.close()
    with pytest.raises(ConnectionClosed):
        await asking
    assert await waiting is None
    assert await session.next_pushed() is None
    assert not session.push({"jsonrpc": "2.0", "method": "x"})


async def test_a_closed_session_sends_no_request() -> None:
    session = Session("2025-11-25", {})
    session.close()
    with pytest.raises(ConnectionClosed):
        await session.request("roots/list", None)


async def test_a_full_backlog_refuses_more_pushed_messages() -> None:
    session = Session("2025-11-25", {}, backlog=2)
    assert session.push({"n": 1})
    assert session.push({"n": 2})
    assert not session.push({"n": 3})
    assert await session.next_pushed() == {"n": 1}


async def test_close_callbacks_run_once_and_late_ones_at_once() -> None:
    session = Session("2025-11-25", {})
    calls: list[str] = []
    session.on_close(lambda: calls.append("early"))
    session.close()
    session.close()
    session.on_close(lambda: calls.append("late"))
    assert calls == ["early", "late"]


async def test_closing_cancels_the_calls_in_flight() -> None:
    session = Session("2025-11-25", {})
    task = asyncio.ensure_future(asyncio.sleep(30))
    session.inflight[1] = task
    session.close()
    with pytest.raises(asyncio.CancelledError):
        await task
