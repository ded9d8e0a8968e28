"""A sanity check, not a benchmark: reading a typical ``tools/call`` and writing its result
costs microseconds. The bounds leave well over 10x headroom over what a loaded 2-core
machine measures (a few microseconds per round trip); ``make bench`` has the figures."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from mcpkit.protocol import codec, framing, jsonrpc, meta, versions

REQUEST: dict[str, Any] = jsonrpc.request(
    41,
    "tools/call",
    {
        "_meta": meta.build_request_meta(
            versions.LATEST, {}, {"name": "ExampleClient", "version": "1.0.0"}
        ),
        "name": "get_weather",
        "arguments": {"location": "New York", "days": 3, "units": "c"},
    },
)
RESULT: dict[str, Any] = {
    "content": [{"type": "text", "text": "Sunny, 21 °C\nLight wind"}],
    "structuredContent": {"temperature": 21, "conditions": "sunny"},
    "isError": False,
    "resultType": "complete",
    "_meta": {meta.SERVER_INFO: {"name": "weather", "version": "1.0.0"}},
}


def _round_trip(line: bytes) -> bytes:
    message = jsonrpc.parse(line)
    assert isinstance(message, jsonrpc.Request)
    meta.read_request_meta(message.params, versions.MODERN_VERSIONS)
    return framing.encode(jsonrpc.result_response(message.id, RESULT))


def _best_per_call(work: Callable[[], object], calls: int = 1_000, rounds: int = 5) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(calls):
            work()
        best = min(best, (time.perf_counter() - started) / calls)
    return best


def test_a_tools_call_round_trip_takes_microseconds() -> None:
    line = codec.dumps(REQUEST)
    reply = _round_trip(line)
    assert json.loads(reply) == {"jsonrpc": "2.0", "id": 41, "result": RESULT}
    assert _best_per_call(lambda: _round_trip(line)) < 100e-6


def test_a_spaced_request_from_another_writer_is_not_much_slower() -> None:
    line = json.dumps(REQUEST).encode()
    assert b'": ' in line
    assert _best_per_call(lambda: _round_trip(line)) < 200e-6


def test_framing_a_burst_of_requests_takes_microseconds_per_message() -> None:
    burst = framing.encode(REQUEST) * 64

    def read_burst() -> None:
        frames = framing.LineReader().feed(burst)
        assert len(frames) == 64

    assert _best_per_call(read_burst, calls=50) / 64 < 100e-6
