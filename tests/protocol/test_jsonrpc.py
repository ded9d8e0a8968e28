"""JSON-RPC 2.0 envelopes as MCP uses them (spec ``basic/index.mdx`` §Messages; the
``security.md`` R-02 table)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit import errors
from mcpkit.errors import (
    HeaderMismatch,
    InternalError,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    MissingRequiredClientCapability,
    ParseError,
    ProtocolError,
    UnsupportedProtocolVersion,
)
from mcpkit.protocol import codec, jsonrpc, meta
from mcpkit.protocol.jsonrpc import ErrorResponse, Notification, Request, Response

# -- what parses, and as what ----------------------------------------------------------------


def test_a_request_has_an_id_a_method_and_params() -> None:
    message = jsonrpc.parse(b'{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"a":1}}')
    assert isinstance(message, Request)
    assert (message.id, message.method, message.params) == (7, "tools/list", {"a": 1})


@pytest.mark.parametrize("request_id", ["abc", "", 0, -5, 2**53 - 1, -(2**53 - 1)])
def test_string_and_safe_integer_ids_are_accepted_as_sent(request_id: str | int) -> None:
    message = jsonrpc.parse_message({"jsonrpc": "2.0", "id": request_id, "method": "ping"})
    assert isinstance(message, Request)
    assert message.id == request_id
    assert type(message.id) is type(request_id)


def test_a_request_without_params_has_params_none() -> None:
    message = jsonrpc.parse(b'{"jsonrpc":"2.0","id":"x","method":"ping"}')
    assert isinstance(message, Request)
    assert message.params is None


def test_a_message_without_an_id_is_a_notification() -> None:
    message = jsonrpc.parse(b'{"jsonrpc":"2.0","method":"notifications/cancelled"}')
    assert isinstance(message, Notification)
    assert message.method == "notifications/cancelled"
    assert message.params is None


def test_a_result_is_a_response_to_the_id() -> None:
    message = jsonrpc.parse(b'{"jsonrpc":"2.0","id":3,"result":{"ok":true}}')
    assert isinstance(message, Response)
    assert (message.id, message.result) == (3, {"ok": True})


def test_an_error_is_an_error_response_that_rebuilds_the_exception() -> None:
    message = jsonrpc.parse(
        b'{"jsonrpc":"2.0","id":"r","error":{"code":-32601,"message":"Method not found"}}'
    )
    assert isinstance(message, ErrorResponse)
    assert message.id == "r"
    assert isinstance(message.exception, MethodNotFound)
    assert message.exception.remote


@pytest.mark.parametrize(
    "text",
    [
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
        b'{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"}}',
    ],
    ids=["id-null", "no-id"],
)
def test_an_error_response_to_an_unreadable_message_has_no_id(text: bytes) -> None:
    message = jsonrpc.parse(text)
    assert isinstance(message, ErrorResponse)
    assert message.id is None


def test_our_own_parse_error_reply_parses_back_as_an_error_response() -> None:
    wire = codec.dumps(jsonrpc.error_response(None, ParseError("Parse error: bad")))
    message = jsonrpc.parse(wire)
    assert isinstance(message, ErrorResponse)
    assert message.id is None
    assert isinstance(message.exception, ParseError)


# -- every malformed envelope gets a definite error -------------------------------------------

# name -> (line, code, id the error must echo)
ENVELOPES: dict[str, tuple[bytes, int, Any]] = {
    "invalid-json": (b'{"jsonrpc":"2.0","id":1,"method":', -32700, None),
    "invalid-utf8": (b'{"jsonrpc":"2.0","id":1,"method":"\xff"}', -32700, None),
    "lone-surrogate": (rb'{"jsonrpc":"2.0","id":1,"method":"\ud800"}', -32700, None),
    "nan": (b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":NaN}}', -32700, None),
    "bom": (b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"ping"}', -32700, None),
    "string": (b'"ping"', -32600, None),
    "number": (b"42", -32600, None),
    "null": (b"null", -32600, None),
    "batch": (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', -32600, None),
    "empty-batch": (b"[]", -32600, None),
    "empty-object": (b"{}", -32600, None),
    "jsonrpc-1.0": (b'{"jsonrpc":"1.0","id":1,"method":"ping"}', -32600, 1),
    "jsonrpc-number": (b'{"jsonrpc":2.0,"id":1,"method":"ping"}', -32600, 1),
    "jsonrpc-missing": (b'{"id":"a","method":"ping"}', -32600, "a"),
    "id-null": (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600, None),
    "id-true": (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600, None),
    "id-false": (b'{"jsonrpc":"2.0","id":false,"method":"ping"}', -32600, None),
    "id-fractional": (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', -32600, None),
    "id-float-integral": (b'{"jsonrpc":"2.0","id":1.0,"method":"ping"}', -32600, None),
    "id-object": (b'{"jsonrpc":"2.0","id":{},"method":"ping"}', -32600, None),
    "id-array": (b'{"jsonrpc":"2.0","id":[],"method":"ping"}', -32600, None),
    "id-above-2**53": (b'{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}', -32600, None),
    "id-30-digits": (
        b'{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}',
        -32600,
        None,
    ),
    "method-number": (b'{"jsonrpc":"2.0","id":2,"method":5}', -32600, 2),
    "method-null": (b'{"jsonrpc":"2.0","id":2,"method":null}', -32600, 2),
    "method-key-case": (b'{"jsonrpc":"2.0","id":2,"Method":"ping"}', -32600, 2),
    "params-array": (b'{"jsonrpc":"2.0","id":3,"method":"x","params":[1]}', -32600, 3),
    "params-string": (b'{"jsonrpc":"2.0","id":3,"method":"x","params":"a"}', -32600, 3),
    "params-null": (b'{"jsonrpc":"2.0","id":3,"method":"x","params":null}', -32600, 3),
    "notification-params-null": (b'{"jsonrpc":"2.0","method":"x","params":null}', -32600, None),
    "request-with-result": (b'{"jsonrpc":"2.0","id":4,"method":"x","result":{}}', -32600, 4),
    "result-and-error": (
        b'{"jsonrpc":"2.0","id":5,"result":{},"error":{"code":1,"message":"m"}}',
        -32600,
        5,
    ),
    "neither-method-nor-result": (b'{"jsonrpc":"2.0","id":6}', -32600, 6),
    "result-null-id": (b'{"jsonrpc":"2.0","id":null,"result":{}}', -32600, None),
    "result-no-id": (b'{"jsonrpc":"2.0","result":{}}', -32600, None),
    "result-not-object": (b'{"jsonrpc":"2.0","id":7,"result":[]}', -32600, 7),
    "error-not-object": (b'{"jsonrpc":"2.0","id":8,"error":"bad"}', -32600, 8),
    "error-code-string": (
        b'{"jsonrpc":"2.0","id":8,"error":{"code":"1","message":"m"}}',
        -32600,
        8,
    ),
    "error-code-boolean": (
        b'{"jsonrpc":"2.0","id":8,"error":{"code":true,"message":"m"}}',
        -32600,
        8,
    ),
    "error-without-message": (b'{"jsonrpc":"2.0","id":8,"error":{"code":1}}', -32600, 8),
    "duplicate-method": (
        b'{"jsonrpc":"2.0","id":9,"method":"tools/list","method":"tools/call"}',
        -32600,
        None,
    ),
    "duplicate-id": (b'{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}', -32600, None),
    "too-deep": (
        b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":' + b"[" * 200 + b"]" * 200 + b"}}",
        -32600,
        None,
    ),
}


@pytest.mark.parametrize("name", list(ENVELOPES))
def test_every_malformed_envelope_gets_a_definite_error(name: str) -> None:
    line, code, echo = ENVELOPES[name]
    with pytest.raises(ProtocolError) as caught:
        jsonrpc.parse(line)
    error = caught.value
    assert error.code == code
    assert error.request_id == echo
    assert error.message
    reply = jsonrpc.error_response(error.request_id, error)
    assert reply == {
        "jsonrpc": "2.0",
        "id": echo,
        "error": {"code": code, "message": error.message},
    }


@pytest.mark.parametrize(
    "name",
    ["param\u017f", "PARAMS", "Params", "params "],
    ids=["long-s", "upper", "title", "space"],
)
def test_a_key_that_only_resembles_params_is_never_taken_for_params(name: str) -> None:
    line = codec.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            name: {
                "_meta": meta.build_request_meta("2026-07-28", {}),
                "name": "danger",
            },
        }
    )
    message = jsonrpc.parse(line)
    assert isinstance(message, Request)
    assert message.params is None
    with pytest.raises(InvalidParams) as caught:
        meta.read_request_meta(message.params)
    assert caught.value.code == -32602
    assert caught.value.message == (
        "Missing required _meta field io.modelcontextprotocol/protocolVersion"
    )


def test_unknown_top_level_members_are_ignored() -> None:
    message = jsonrpc.parse(b'{"jsonrpc":"2.0","id":1,"method":"ping","extra":[1,2]}')
    assert isinstance(message, Request)
    assert message.method == "ping"


@settings(deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_either_parse_or_raise_a_protocol_error(data: bytes) -> None:
    outcome: object
    try:
        outcome = jsonrpc.parse(data)
    except ProtocolError as exc:
        outcome = exc.code
    assert outcome in (-32700, -32600) or isinstance(
        outcome, Request | Notification | Response | ErrorResponse
    )


# -- builders ----------------------------------------------------------------------------------


def test_builders_write_the_members_json_rpc_defines() -> None:
    assert jsonrpc.request(1, "ping") == {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert jsonrpc.request("a", "x", {"k": 1}) == {
        "jsonrpc": "2.0",
        "id": "a",
        "method": "x",
        "params": {"k": 1},
    }
    assert jsonrpc.notification("n") == {"jsonrpc": "2.0", "method": "n"}
    assert jsonrpc.notification("n", {}) == {"jsonrpc": "2.0", "method": "n", "params": {}}
    assert jsonrpc.result_response(2, {}) == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert jsonrpc.error_response(3, MethodNotFound("nope")) == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {"code": -32601, "message": "nope"},
    }
    assert jsonrpc.error_response(None, {"code": -32700, "message": "Parse error"}) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error"},
    }


@pytest.mark.parametrize(
    ("built", "kind"),
    [
        (
            jsonrpc.request(1, "tools/call", {"name": "t", "arguments": {"s": "a\nb"}}),
            Request,
        ),
        (
            jsonrpc.notification("notifications/progress", {"progressToken": "p", "progress": 1}),
            Notification,
        ),
        (jsonrpc.result_response("x", {"content": [], "resultType": "complete"}), Response),
        (
            jsonrpc.error_response(4, UnsupportedProtocolVersion(["2026-07-28"], "2025-01-01")),
            ErrorResponse,
        ),
    ],
    ids=["request", "notification", "result", "error"],
)
def test_what_the_builders_make_parses_back_as_the_same_kind_on_one_line(
    built: dict[str, Any], kind: type
) -> None:
    wire = codec.dumps(built)
    assert b"\n" not in wire
    assert isinstance(jsonrpc.parse(wire), kind)
    assert codec.loads(wire) == built


# -- error codes -------------------------------------------------------------------------------


def test_error_codes_are_named_constants() -> None:
    assert errors.PARSE_ERROR == -32700
    assert errors.INVALID_REQUEST == -32600
    assert errors.METHOD_NOT_FOUND == -32601
    assert errors.INVALID_PARAMS == -32602
    assert errors.INTERNAL_ERROR == -32603
    assert errors.HEADER_MISMATCH == -32020
    assert errors.MISSING_REQUIRED_CLIENT_CAPABILITY == -32021
    assert errors.UNSUPPORTED_PROTOCOL_VERSION == -32022


CLASSES: list[tuple[type[ProtocolError], int]] = [
    (ParseError, -32700),
    (InvalidRequest, -32600),
    (MethodNotFound, -32601),
    (InvalidParams, -32602),
    (InternalError, -32603),
    (HeaderMismatch, -32020),
    (MissingRequiredClientCapability, -32021),
    (UnsupportedProtocolVersion, -32022),
]


@pytest.mark.parametrize(("cls", "code"), CLASSES, ids=[c.__name__ for c, _ in CLASSES])
def test_from_wire_rebuilds_the_subclass_for_each_code(cls: type[ProtocolError], code: int) -> None:
    wire = {"code": code, "message": "as sent", "data": {"k": [1]}}
    rebuilt = ProtocolError.from_wire(wire)
    assert type(rebuilt) is cls
    assert rebuilt.code == code
    assert rebuilt.message == "as sent"
    assert rebuilt.data == {"k": [1]}
    assert rebuilt.remote
    assert rebuilt.to_error() == wire


@pytest.mark.parametrize(("cls", "code"), CLASSES, ids=[c.__name__ for c, _ in CLASSES])
def test_from_wire_adds_no_data_the_peer_did_not_send(cls: type[ProtocolError], code: int) -> None:
    rebuilt = ProtocolError.from_wire({"code": code, "message": "m"})
    assert type(rebuilt) is cls
    assert rebuilt.data is None
    assert rebuilt.to_error() == {"code": code, "message": "m"}


def test_from_wire_keeps_a_code_mcpkit_has_no_class_for() -> None:
    rebuilt = ProtocolError.from_wire({"code": -1234, "message": "custom"})
    assert type(rebuilt) is ProtocolError
    assert rebuilt.effective_code == -1234
    assert rebuilt.to_error() == {"code": -1234, "message": "custom"}
    assert "-1234" in repr(rebuilt)


def test_from_wire_tolerates_a_malformed_error_member() -> None:
    rebuilt = ProtocolError.from_wire({"code": "x", "message": 5})
    assert type(rebuilt) is ProtocolError
    assert rebuilt.message == ProtocolError.default_message
    assert rebuilt.effective_code == -32603


def test_unsupported_version_and_missing_capability_read_their_data_from_the_wire() -> None:
    version = ProtocolError.from_wire(
        {
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": ["2026-07-28"], "requested": "1900-01-01"},
        }
    )
    assert isinstance(version, UnsupportedProtocolVersion)
    assert version.supported == ["2026-07-28"]
    capability = ProtocolError.from_wire(
        {
            "code": -32021,
            "message": "needs elicitation",
            "data": {"requiredCapabilities": {"elicitation": {}}},
        }
    )
    assert isinstance(capability, MissingRequiredClientCapability)
    assert capability.required == {"elicitation": {}}


def test_an_error_response_builds_from_an_exception_with_its_data() -> None:
    error = MissingRequiredClientCapability({"sampling": {}})
    assert jsonrpc.error_response("q", error)["error"] == {
        "code": -32021,
        "message": "Missing required client capability",
        "data": {"requiredCapabilities": {"sampling": {}}},
    }
