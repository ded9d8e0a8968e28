"""The spec's own examples and schema (``../shared/spec/2026-07-28/schema/``): every example
JSON-RPC message parses as the right kind, and what the builders make validates.

The schema is checked with ``jsonschema`` through a ``referencing`` registry that holds
only the spec's document, so nothing is ever fetched (``security.md`` S-13).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from mcpkit.errors import (
    HeaderMismatch,
    InternalError,
    InvalidParams,
    MethodNotFound,
    MissingRequiredClientCapability,
    ParseError,
    ProtocolError,
    UnsupportedProtocolVersion,
)
from mcpkit.protocol import codec, jsonrpc, meta
from mcpkit.protocol.jsonrpc import ErrorResponse, Notification, Request, Response

SPEC = Path(__file__).resolve().parents[3] / "shared" / "spec" / "2026-07-28" / "schema"
EXAMPLES = SPEC / "examples"
URI = "urn:mcp:2026-07-28:schema"

DEFINITIONS: dict[str, Any] = codec.loads((SPEC / "schema.json").read_bytes(), max_depth=1_000)[
    "$defs"
]
REGISTRY: Registry[Any] = Registry().with_resource(
    URI,
    Resource.from_contents(
        codec.loads((SPEC / "schema.json").read_bytes(), max_depth=1_000),
        default_specification=DRAFT202012,
    ),
)


def check(definition: str, instance: Any) -> None:
    """Fail with the schema's reasons unless ``instance`` is a valid ``definition``."""
    validator = Draft202012Validator({"$ref": f"{URI}#/$defs/{definition}"}, registry=REGISTRY)
    problems = [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(instance)]
    assert not problems, f"not a valid {definition}: {problems}"


def _kind(definition: str) -> type | None:
    """What a JSON-RPC message of this schema type parses as (None: not a message)."""
    members = DEFINITIONS[definition].get("properties", {})
    if "jsonrpc" not in members:
        return None
    if "method" in members:
        return Request if "id" in members else Notification
    return Response if "result" in members else ErrorResponse


MESSAGE_EXAMPLES = [
    (folder.name, path)
    for folder in sorted(EXAMPLES.iterdir())
    if _kind(folder.name) is not None
    for path in sorted(folder.glob("*.json"))
]
ERROR_EXAMPLES = [
    (folder.name, path)
    for folder in sorted(EXAMPLES.iterdir())
    if _kind(folder.name) is None
    and set(DEFINITIONS[folder.name].get("required", []))
    == {
        "code",
        "message",
    }
    for path in sorted(folder.glob("*.json"))
]


def test_the_examples_cover_every_kind_of_message() -> None:
    kinds = {_kind(name) for name, _ in MESSAGE_EXAMPLES}
    assert kinds == {Request, Notification, Response, ErrorResponse}
    assert len(MESSAGE_EXAMPLES) >= 30
    assert len(ERROR_EXAMPLES) >= 5


@pytest.mark.parametrize(
    ("definition", "path"), MESSAGE_EXAMPLES, ids=[p.stem for _, p in MESSAGE_EXAMPLES]
)
def test_every_example_message_parses_as_its_kind(definition: str, path: Path) -> None:
    text = path.read_bytes()
    check(definition, codec.loads(text))
    message = jsonrpc.parse(text)
    kind = _kind(definition)
    assert kind is not None
    assert isinstance(message, kind)
    document = codec.loads(text)
    if isinstance(message, Request | Notification):
        assert message.method == document["method"]
        assert message.params == document.get("params")
    if isinstance(message, Request | Response):
        assert message.id == document["id"]
    if isinstance(message, ErrorResponse):
        assert message.id == document.get("id")
        assert message.exception.code == document["error"]["code"]


@pytest.mark.parametrize(
    ("definition", "path"), ERROR_EXAMPLES, ids=[p.stem for _, p in ERROR_EXAMPLES]
)
def test_every_example_error_member_rebuilds_the_matching_exception(
    definition: str, path: Path
) -> None:
    error = codec.loads(path.read_bytes())
    check(definition, error)
    rebuilt = ProtocolError.from_wire(error)
    assert definition.startswith(type(rebuilt).__name__)
    assert rebuilt.code == error["code"]
    assert rebuilt.to_error() == error


def test_every_example_request_carries_the_required_meta_fields() -> None:
    for definition, path in MESSAGE_EXAMPLES:
        message = jsonrpc.parse(path.read_bytes())
        if isinstance(message, Request) and definition != "JSONRPCRequest":
            read = meta.read_request_meta(message.params, ["2026-07-28"])
            assert read.protocol_version == "2026-07-28"


# -- what we build validates -----------------------------------------------------------------

REQUEST_META = meta.build_request_meta(
    "2026-07-28", {"elicitation": {}}, {"name": "mcpkit-test", "version": "0.1.0"}, "info"
)

BUILT: list[tuple[str, dict[str, Any]]] = [
    ("DiscoverRequest", jsonrpc.request("d-1", "server/discover", {"_meta": REQUEST_META})),
    (
        "CallToolRequest",
        jsonrpc.request(
            7,
            "tools/call",
            {"_meta": REQUEST_META, "name": "get_weather", "arguments": {"location": "Oslo"}},
        ),
    ),
    ("ListToolsRequest", jsonrpc.request(8, "tools/list", {"_meta": REQUEST_META})),
    (
        "CancelledNotification",
        jsonrpc.notification("notifications/cancelled", {"requestId": 7, "reason": "user"}),
    ),
    (
        "ProgressNotification",
        jsonrpc.notification(
            "notifications/progress", {"progressToken": "p", "progress": 1, "total": 2}
        ),
    ),
    (
        "ToolListChangedNotification",
        jsonrpc.notification(
            "notifications/tools/list_changed", {"_meta": {meta.SUBSCRIPTION_ID: "listen-1"}}
        ),
    ),
    (
        "CallToolResultResponse",
        jsonrpc.result_response(
            7,
            {
                "resultType": "complete",
                "content": [{"type": "text", "text": "line1\nline2"}],
                "isError": False,
                "_meta": {meta.SERVER_INFO: {"name": "mcpkit", "version": "0.1.0"}},
            },
        ),
    ),
    (
        "UnsupportedProtocolVersionError",
        jsonrpc.error_response(1, UnsupportedProtocolVersion(["2026-07-28"], "2025-01-01")),
    ),
    (
        "MissingRequiredClientCapabilityError",
        jsonrpc.error_response("r", MissingRequiredClientCapability({"elicitation": {}})),
    ),
    (
        "HeaderMismatchError",
        jsonrpc.error_response(2, HeaderMismatch("Mcp-Method does not match the body")),
    ),
    ("JSONRPCErrorResponse", jsonrpc.error_response(3, MethodNotFound("Method not found"))),
    ("JSONRPCErrorResponse", jsonrpc.error_response(4, InvalidParams("Unknown tool: x"))),
    ("JSONRPCErrorResponse", jsonrpc.error_response(5, InternalError())),
]


@pytest.mark.parametrize(
    ("definition", "built"), BUILT, ids=[f"{d}-{i}" for i, (d, _) in enumerate(BUILT)]
)
def test_what_the_builders_make_validates_against_the_spec_schema(
    definition: str, built: dict[str, Any]
) -> None:
    wire = codec.dumps(built)
    check(definition, codec.loads(wire))
    check("JSONRPCMessage", codec.loads(wire))


@pytest.mark.parametrize(
    ("error", "definition"),
    [
        (ParseError(), "ParseError"),
        (MethodNotFound(), "MethodNotFoundError"),
        (InvalidParams(), "InvalidParamsError"),
        (InternalError(), "InternalError"),
    ],
    ids=["parse", "method", "params", "internal"],
)
def test_each_error_member_we_build_validates_as_its_error_type(
    error: ProtocolError, definition: str
) -> None:
    check(definition, jsonrpc.error_response(1, error)["error"])


def test_the_reply_to_an_unreadable_message_differs_from_the_schema_only_by_id_null() -> None:
    """JSON-RPC 2.0 §5 says the id MUST be null when it could not be read, and the issue
    asks for exactly that; the spec schema types ``id`` as a RequestId and lets it be
    left out. Everything but the null id validates."""
    reply = jsonrpc.error_response(None, ParseError("Parse error: unexpected end of data"))
    assert reply["id"] is None
    check("JSONRPCErrorResponse", {key: value for key, value in reply.items() if key != "id"})
    check("ParseError", reply["error"])
    with pytest.raises(AssertionError, match="id"):
        check("JSONRPCErrorResponse", reply)
