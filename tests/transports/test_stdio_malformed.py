"""Malformed input on stdio: exactly one error reply each, and the server keeps serving.

``security.md`` R-01, R-02 and R-03 for stdio, with the codes issue 2 fixes: not JSON or
not UTF-8 -> -32700, id null; a well-formed value that is not a valid JSON-RPC message
(batch, bad id, wrong version, duplicate keys, nesting too deep) -> -32600, echoing the
id when it could be read. After every row the liveness probe must be the very next
answer, which also proves the bad line got exactly one reply.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import psutil
import pytest
import pytest_asyncio

from transports.wire import (
    META,
    TOOL_SERVER,
    Wire,
    call,
    encode,
    request,
    shared_tool_server,
    spawn,
    text_of,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602

GOOD = encode(request(1, "tools/list")).rstrip(b"\n")
META_JSON = encode(META).rstrip(b"\n")


def nested(depth: int) -> bytes:
    """A tools/list request whose params hold ``depth`` nested arrays."""
    return (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":'
        + META_JSON
        + b',"deep":'
        + b"[" * depth
        + b"]" * depth
        + b"}}"
    )


# (line, expected code, expected id)
ROWS: dict[str, tuple[bytes, int, Any]] = {
    "truncated-json": (GOOD[:-5], PARSE_ERROR, None),
    "trailing-comma": (b'{"jsonrpc":"2.0","id":1,"method":"tools/list",}', PARSE_ERROR, None),
    "nan": (b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"n":NaN}}', PARSE_ERROR, None),
    "bom-prefixed": (b"\xef\xbb\xbf" + GOOD, PARSE_ERROR, None),
    "invalid-utf8": (b'{"jsonrpc":"2.0","id":1,"method":"\xff"}', PARSE_ERROR, None),
    "overlong-utf8": (b'{"jsonrpc":"2.0","id":1,"method":"\xc0\xaf"}', PARSE_ERROR, None),
    "cesu-surrogate": (b'{"jsonrpc":"2.0","id":1,"method":"\xed\xa0\x80"}', PARSE_ERROR, None),
    "lone-surrogate-escape": (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"s":"\\ud800"}}',
        PARSE_ERROR,
        None,
    ),
    "bare-string": (b'"tools/list"', INVALID_REQUEST, None),
    "bare-number": (b"42", INVALID_REQUEST, None),
    "empty-object": (b"{}", INVALID_REQUEST, None),
    "id-null": (b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}', INVALID_REQUEST, None),
    "id-true": (b'{"jsonrpc":"2.0","id":true,"method":"tools/list"}', INVALID_REQUEST, None),
    "id-fraction": (b'{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', INVALID_REQUEST, None),
    "id-object": (b'{"jsonrpc":"2.0","id":{},"method":"tools/list"}', INVALID_REQUEST, None),
    "id-array": (b'{"jsonrpc":"2.0","id":[],"method":"tools/list"}', INVALID_REQUEST, None),
    "id-30-digits": (
        b'{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/list"}',
        INVALID_REQUEST,
        None,
    ),
    "batch": (b"[" + GOOD + b"]", INVALID_REQUEST, None),
    "empty-batch": (b"[]", INVALID_REQUEST, None),
    "jsonrpc-1.0": (b'{"jsonrpc":"1.0","id":5,"method":"tools/list"}', INVALID_REQUEST, 5),
    "jsonrpc-missing": (b'{"id":5,"method":"tools/list"}', INVALID_REQUEST, 5),
    "method-key-case": (b'{"jsonrpc":"2.0","id":6,"Method":"tools/list"}', INVALID_REQUEST, 6),
    "method-not-string": (b'{"jsonrpc":"2.0","id":7,"method":7}', INVALID_REQUEST, 7),
    "params-array": (
        b'{"jsonrpc":"2.0","id":8,"method":"tools/list","params":[]}',
        INVALID_REQUEST,
        8,
    ),
    "no-method-no-result": (b'{"jsonrpc":"2.0","id":9}', INVALID_REQUEST, 9),
    "duplicate-keys": (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call"}',
        INVALID_REQUEST,
        None,
    ),
    "depth-200": (nested(200), INVALID_REQUEST, None),
    "depth-5000": (nested(5000), INVALID_REQUEST, None),
    "depth-100000": (nested(100_000), INVALID_REQUEST, None),
    "params-long-s": (
        b'{"jsonrpc":"2.0","id":10,"method":"tools/list","param\xc5\xbf":{"_meta":'
        + META_JSON
        + b"}}",
        INVALID_PARAMS,
        10,
    ),
    "unknown-method": (encode(request(11, "tools/frobnicate"))[:-1], METHOD_NOT_FOUND, 11),
    "missing-meta": (b'{"jsonrpc":"2.0","id":12,"method":"tools/list"}', INVALID_PARAMS, 12),
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[Wire]:
    """One server for the whole table: each row must leave it serving for the next.

    At the end it must still exit cleanly on EOF, with nothing left unsaid on stdout and
    no traceback on stderr.
    """
    async with shared_tool_server() as wire:
        yield wire


@pytest.mark.parametrize("name", list(ROWS))
async def test_each_malformed_line_gets_exactly_one_error_and_the_server_keeps_serving(
    server: Wire, name: str
) -> None:
    line, code, expected_id = ROWS[name]
    sent = time.monotonic()
    await server.send_raw(line + b"\n")
    reply = await server.recv(timeout=1.0)
    assert time.monotonic() - sent < 0.5
    assert reply["id"] == expected_id, reply
    assert reply["error"]["code"] == code, reply
    assert isinstance(reply["error"]["message"], str)
    assert reply["error"]["message"]
    assert "result" not in reply
    await server.probe()


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":1,"result":{}}',
        b'{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}',
        b'{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"both"}}',
        b'{"jsonrpc":"2.0","id":null,"result":{}}',
        b'{"jsonrpc":"2.0","id":1,"error":"not an object"}',
    ],
    ids=["result", "error", "result-and-error", "null-id-result", "bad-error"],
)
async def test_a_response_from_the_client_is_logged_and_never_answered(
    server: Wire, line: bytes
) -> None:
    logged = "log mcpkit.transport WARNING"
    before = server.stderr.count(logged)
    await server.send_raw(line + b"\n")
    await server.probe()
    await server.wait_stderr(logged, timeout=1.0, count=before + 1)


async def test_a_blank_line_is_skipped_without_a_reply(server: Wire) -> None:
    await server.send_raw(b"\n   \n\r\n")
    await server.probe()


async def test_a_duplicate_in_flight_id_is_refused_and_never_answered_twice(
    server: Wire,
) -> None:
    await server.send(call("dup", "slow", {"seconds": 0.3}))
    await server.send(call("dup", "echo", {"text": "second"}))
    refusal = await server.recv()
    assert refusal["id"] == "dup"
    assert refusal["error"]["code"] == INVALID_REQUEST
    answer = await server.recv()
    assert answer["id"] == "dup"
    assert text_of(answer) == "slow"
    await server.probe()


# -- R-03: lines over the limit ------------------------------------------------------

LIMIT = 1024


def echo_line(request_id: Any, size: int) -> tuple[bytes, str]:
    """An echo request exactly ``size`` bytes long (newline excluded), and its text."""
    empty = encode(call(request_id, "echo", {"text": ""})).rstrip(b"\n")
    text = "a" * (size - len(empty))
    return encode(call(request_id, "echo", {"text": text})).rstrip(b"\n"), text


async def test_a_line_exactly_at_the_limit_is_answered() -> None:
    async with spawn(TOOL_SERVER, "--max-line", str(LIMIT)) as wire:
        line, text = echo_line("edge", LIMIT)
        assert len(line) == LIMIT
        await wire.send_raw(line + b"\n")
        reply = await wire.recv()
        assert reply["id"] == "edge"
        assert text_of(reply) == text


@pytest.mark.parametrize("size", [LIMIT + 1, 8 * LIMIT])
async def test_an_over_limit_line_gets_one_error_and_the_next_request_is_answered(
    size: int,
) -> None:
    async with spawn(TOOL_SERVER, "--max-line", str(LIMIT)) as wire:
        line, _ = echo_line("big", size)
        assert len(line) == size
        await wire.send_raw(line + b"\n")
        refusal = await wire.recv()
        assert refusal["id"] is None
        assert refusal["error"]["code"] == INVALID_REQUEST
        assert "limit" in refusal["error"]["message"]
        await wire.probe()
        await wire.close_stdin()
        assert await wire.read_to_eof() == []


async def test_the_excess_of_an_over_limit_line_is_discarded_as_it_streams_in() -> None:
    async with spawn(TOOL_SERVER, "--max-line", str(LIMIT)) as wire:
        await wire.probe()
        line, _ = echo_line("big", 64 * LIMIT)
        # The error comes as soon as the limit is passed, before the line has ended.
        await wire.send_raw(line[: 2 * LIMIT])
        refusal = await wire.recv(timeout=1.0)
        assert refusal["error"]["code"] == INVALID_REQUEST
        # The rest of the line, however it is cut, is dropped without another word.
        for start in range(2 * LIMIT, len(line), 3 * LIMIT + 1):
            await wire.send_raw(line[start : start + 3 * LIMIT + 1])
        await wire.send_raw(b"\n")
        await wire.probe()
        await wire.close_stdin()
        assert await wire.read_to_eof() == []


async def test_memory_stays_bounded_while_256_mib_arrive_without_a_newline() -> None:
    async with spawn(TOOL_SERVER) as wire:  # the default 4 MiB limit
        await wire.probe()
        process = psutil.Process(wire.pid)
        baseline = process.memory_info().rss
        peak = baseline
        chunk = b"x" * (1 << 20)
        for sent in range(1, 257):
            await wire.send_raw(chunk)
            if sent % 8 == 0:
                peak = max(peak, process.memory_info().rss)
        await wire.send_raw(b"\n")
        refusal = await wire.recv()
        assert refusal["error"]["code"] == INVALID_REQUEST
        await wire.probe()
        peak = max(peak, process.memory_info().rss)
        growth_mib = (peak - baseline) / (1 << 20)
        # security.md R-03: at most twice the 4 MiB limit, plus allocator slack.
        assert growth_mib < 10, f"RSS grew by {growth_mib:.1f} MiB"
