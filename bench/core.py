"""The pure protocol core, in process: how many messages per second mcpkit itself handles.

Run by mcpkit's own interpreter (``.venv/bin/python bench/core.py``); prints one JSON
object. Every case is a ``timeit`` loop over one function, calibrated so a repeat takes
about ``--seconds``, repeated ``--repeats`` times; the report shows the median and the
spread of the repeats. No I/O and no event loop: this is the ceiling the protocol layer
puts on any transport.

Cases:

* ``parse``: bytes of a typical modern ``tools/call`` -> a classified ``Request``
  (``mcpkit.protocol.jsonrpc.parse``: orjson, depth and duplicate-key checks, envelope);
* ``serialize``: its response (result with ``resultType`` and ``_meta``) -> bytes
  (``mcpkit.protocol.codec.dumps``);
* ``parse + serialize``: one request in, one response out;
* ``parse + _meta + validate + serialize``: the whole protocol-core work of one call
  (``read_request_meta``, the ``add`` argument schema's ``is_valid``);
* ``frame 64 lines``: :class:`~mcpkit.protocol.framing.LineReader` splitting and
  decoding a 64-request chunk, per message;
* validation of a realistic tool schema (nested object, enum, pattern, bounds, array,
  ``additionalProperties: false``): ``is_valid`` and ``problems`` on valid arguments, and
  ``problems`` on arguments with eight problems (the ordered listing a model reads).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import timeit
from collections.abc import Callable
from typing import Any

from mcpkit.protocol import codec, jsonrpc, meta, versions
from mcpkit.protocol.framing import LineReader
from mcpkit.protocol.schema import compile_schema

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "mcpkit-bench", "version": "1.0.0"},
}
REQUEST = codec.dumps(
    {
        "jsonrpc": "2.0",
        "id": 42,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 2, "b": 3}, "_meta": META},
    }
)
RESULT_META = {"io.modelcontextprotocol/serverInfo": {"name": "calculator", "version": "1.0.0"}}

ADD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}

FLIGHT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "origin": {"type": "string", "pattern": "^[A-Z]{3}$", "description": "IATA code"},
        "destination": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "date": {"type": "string", "format": "date"},
        "passengers": {"type": "integer", "minimum": 1, "maximum": 9, "default": 1},
        "cabin": {"type": "string", "enum": ["economy", "premium", "business", "first"]},
        "flexible_days": {"type": "integer", "minimum": 0, "maximum": 3},
        "filters": {
            "type": "object",
            "properties": {
                "max_stops": {"type": "integer", "minimum": 0},
                "airlines": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 2, "maxLength": 3},
                    "maxItems": 10,
                    "uniqueItems": True,
                },
                "max_price": {"type": ["number", "null"], "exclusiveMinimum": 0},
            },
            "additionalProperties": False,
        },
    },
    "required": ["origin", "destination", "date"],
    "additionalProperties": False,
}
FLIGHT_VALID = {
    "origin": "CDG",
    "destination": "JFK",
    "date": "2026-09-14",
    "passengers": 2,
    "cabin": "economy",
    "filters": {"max_stops": 1, "airlines": ["AF", "DL"], "max_price": 900.0},
}
FLIGHT_INVALID = {
    "origin": "Paris",
    "passengers": 12,
    "cabin": "coach",
    "filters": {"airlines": ["AF", "AF"], "max_price": -1},
    "return": "2026-09-20",
}

__all__ = ["cases", "main", "measure"]


def _round_trip() -> bytes:
    request = jsonrpc.parse(REQUEST)
    assert isinstance(request, jsonrpc.Request)
    result = {
        "content": [{"type": "text", "text": "5"}],
        "resultType": "complete",
        "_meta": RESULT_META,
    }
    return codec.dumps(jsonrpc.result_response(request.id, result))


def _full_call(validator: Any) -> Callable[[], bytes]:
    supported = versions.MODERN_VERSIONS

    def call() -> bytes:
        request = jsonrpc.parse(REQUEST)
        assert isinstance(request, jsonrpc.Request)
        assert request.params is not None
        meta.read_request_meta(request.params, supported)
        arguments = request.params["arguments"]
        if not validator.is_valid(arguments):
            raise AssertionError("add arguments judged invalid")
        value = arguments["a"] + arguments["b"]
        result = {
            "content": [{"type": "text", "text": str(value)}],
            "resultType": "complete",
            "_meta": RESULT_META,
        }
        return codec.dumps(jsonrpc.result_response(request.id, result))

    return call


def _framing(batch: int) -> Callable[[], list[Any]]:
    chunk = (REQUEST + b"\n") * batch
    reader = LineReader()

    def feed() -> list[Any]:
        return reader.feed(chunk)

    return feed


def cases() -> list[tuple[str, Callable[[], object], int]]:
    """(name, function, messages per call) for every case, checked once before timing."""
    response = jsonrpc.result_response(
        42,
        {
            "content": [{"type": "text", "text": "5"}],
            "resultType": "complete",
            "_meta": RESULT_META,
        },
    )
    add = compile_schema(ADD_SCHEMA)
    flight = compile_schema(FLIGHT_SCHEMA)
    problems = flight.problems(FLIGHT_INVALID)
    if len(problems) != 8 or flight.problems(FLIGHT_VALID) or not flight.is_valid(FLIGHT_VALID):
        raise AssertionError(f"the realistic schema does not judge as expected: {problems}")
    return [
        ("parse tools/call request", lambda: jsonrpc.parse(REQUEST), 1),
        ("serialize tools/call response", lambda: codec.dumps(response), 1),
        ("parse + serialize (request in, response out)", _round_trip, 1),
        ("parse + _meta + validate + serialize", _full_call(add), 1),
        ("frame + decode 64 requests (LineReader)", _framing(64), 64),
        ("validate add args: is_valid", lambda: add.is_valid({"a": 2, "b": 3}), 1),
        ("validate flight args: is_valid", lambda: flight.is_valid(FLIGHT_VALID), 1),
        ("validate flight args: problems (valid)", lambda: flight.problems(FLIGHT_VALID), 1),
        ("validate flight args: problems (8 found)", lambda: flight.problems(FLIGHT_INVALID), 1),
    ]


def measure(
    function: Callable[[], object], per_call: int, seconds: float, repeats: int
) -> dict[str, Any]:
    """Operations per second over ``repeats`` timed loops of about ``seconds`` each."""
    timer = timeit.Timer(function)
    loops, elapsed = timer.autorange()
    number = max(1, int(loops * seconds / max(elapsed, 1e-9)))
    rates = [number * per_call / t for t in timer.repeat(repeat=repeats, number=number)]
    return {
        "ops_per_second": statistics.median(rates),
        "low": min(rates),
        "high": max(rates),
        "samples": rates,
        "loops": number,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=0.3, help="time per repeat")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    results = []
    for name, function, per_call in cases():
        function()
        outcome = measure(function, per_call, args.seconds, args.repeats)
        results.append({"case": name, "messages_per_call": per_call, **outcome})
    json.dump({"python": sys.version.split()[0], "cases": results}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
