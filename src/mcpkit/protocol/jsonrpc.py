"""JSON-RPC 2.0 envelopes as MCP uses them (spec ``basic/index.mdx`` §Messages).

:func:`parse` turns bytes into one of four small typed messages, or raises a
:class:`~mcpkit.errors.ProtocolError` that says exactly what is wrong, carrying the id
when it could be read. No message is ever silently dropped:

* invalid JSON or invalid UTF-8 -> -32700, id null;
* not an object (a batch array included: batches were removed in 2025-06-18),
  ``jsonrpc`` other than ``"2.0"``, an id that is null, boolean, fractional, an object or
  an array, a method that is not a string, ``params`` that is not an object, both or
  neither of ``result`` and ``error`` -> -32600;
* duplicate keys and excessive nesting -> -32600 (see :mod:`mcpkit.protocol.codec`).

Members other than the ones JSON-RPC defines are ignored, and names match exactly: a
``"PARAMS"`` member, or ``"param"`` followed by a long s (U+017F), is never taken for
``params`` (``security.md`` R-02).
An error response may carry ``"id": null`` (or no id): that is how a peer answers a
message whose id it could not read (spec ``basic/index.mdx`` §Error Responses).

The builders (:func:`result_response`, :func:`error_response`, :func:`notification`,
:func:`request`) return plain dicts ready for :func:`mcpkit.protocol.codec.dumps`.
"""

from __future__ import annotations

from typing import Any

from mcpkit.errors import InvalidRequest, ProtocolError, RequestId
from mcpkit.protocol import codec

JSONRPC_VERSION = "2.0"

# Integer ids beyond what every JSON peer can represent exactly are refused rather than
# silently rounded (JavaScript peers lose precision above 2**53 - 1).
MAX_SAFE_INTEGER = 2**53 - 1

__all__ = [
    "ErrorResponse",
    "Message",
    "Notification",
    "Request",
    "Response",
    "error_response",
    "notification",
    "parse",
    "parse_message",
    "request",
    "result_response",
]


class Request:
    """A request: it has an id and expects exactly one response."""

    __slots__ = ("id", "method", "params")

    def __init__(self, id: RequestId, method: str, params: dict[str, Any] | None) -> None:
        self.id = id
        self.method = method
        self.params = params

    def __repr__(self) -> str:
        return f"Request(id={self.id!r}, method={self.method!r})"


class Notification:
    """A notification: no id, never answered."""

    __slots__ = ("method", "params")

    def __init__(self, method: str, params: dict[str, Any] | None) -> None:
        self.method = method
        self.params = params

    def __repr__(self) -> str:
        return f"Notification(method={self.method!r})"


class Response:
    """A successful response to a request we sent."""

    __slots__ = ("id", "result")

    def __init__(self, id: RequestId, result: dict[str, Any]) -> None:
        self.id = id
        self.result = result

    def __repr__(self) -> str:
        return f"Response(id={self.id!r})"


class ErrorResponse:
    """An error response; ``id`` is None when the peer could not read ours."""

    __slots__ = ("error", "id")

    def __init__(self, id: RequestId | None, error: dict[str, Any]) -> None:
        self.id = id
        self.error = error

    @property
    def exception(self) -> ProtocolError:
        return ProtocolError.from_wire(self.error)

    def __repr__(self) -> str:
        return f"ErrorResponse(id={self.id!r}, code={self.error.get('code')!r})"


Message = Request | Notification | Response | ErrorResponse


def parse(
    data: bytes | bytearray | memoryview | str, max_depth: int = codec.DEFAULT_MAX_DEPTH
) -> Message:
    """Decode and classify one message; raise a ProtocolError describing what is wrong."""
    return parse_message(codec.loads(data, max_depth))


def parse_message(value: Any) -> Message:
    """Classify an already-decoded JSON value as a JSON-RPC message."""
    if type(value) is not dict:
        if isinstance(value, list):
            raise InvalidRequest("Batch messages are not supported")
        raise InvalidRequest("A JSON-RPC message must be an object")
    has_id = "id" in value
    msg_id = value.get("id")
    # Read the id first so that every later error can echo it.
    if has_id and not _valid_id(msg_id) and not _unread_id_error(value, msg_id):
        raise InvalidRequest(_id_problem(msg_id))
    echo: RequestId | None = msg_id
    if value.get("jsonrpc") != JSONRPC_VERSION:
        raise InvalidRequest('The "jsonrpc" member must be exactly "2.0"', request_id=echo)
    if "method" in value:
        method = value["method"]
        if type(method) is not str:
            raise InvalidRequest('The "method" member must be a string', request_id=echo)
        if "result" in value or "error" in value:
            raise InvalidRequest("A request must not carry result or error", request_id=echo)
        params = value.get("params")
        if type(params) is not dict and "params" in value:
            raise InvalidRequest('The "params" member must be an object', request_id=echo)
        if echo is not None:
            return Request(echo, method, params)
        return Notification(method, params)
    return _parse_response(value, echo)


def _parse_response(value: dict[str, Any], echo: RequestId | None) -> Message:
    has_result = "result" in value
    has_error = "error" in value
    if has_result and has_error:
        raise InvalidRequest("A response must not carry both result and error", request_id=echo)
    if has_result:
        if echo is None:
            raise InvalidRequest("A result response must carry an id")
        result = value["result"]
        if type(result) is not dict:
            raise InvalidRequest('The "result" member must be an object', request_id=echo)
        return Response(echo, result)
    if has_error:
        error = value["error"]
        if (
            type(error) is not dict
            or type(error.get("code")) is not int
            or type(error.get("message")) is not str
        ):
            raise InvalidRequest(
                'The "error" member must be an object with an integer code and a string message',
                request_id=echo,
            )
        return ErrorResponse(echo, error)
    raise InvalidRequest(
        "A message must have a method (request or notification) or a result or error (response)",
        request_id=echo,
    )


def _unread_id_error(value: dict[str, Any], msg_id: Any) -> bool:
    """True for ``"id": null`` on an error response (the peer could not read our id)."""
    return msg_id is None and "error" in value and "method" not in value and "result" not in value


def _valid_id(value: Any) -> bool:
    kind = type(value)
    if kind is str:
        return True
    return kind is int and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER


def _id_problem(value: Any) -> str:
    if value is None:
        return "The request id must not be null"
    if type(value) is bool:
        return "The request id must be a string or an integer, not a boolean"
    if type(value) is float:
        return "The request id must be a string or an integer, not a fractional number"
    if type(value) is int:
        return "The request id is outside the range of exactly representable integers"
    return f"The request id must be a string or an integer, not {_json_kind(value)}"


def _json_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


def request(id: RequestId, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION, "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION, "method": method}
    if params is not None:
        message["params"] = params
    return message


def result_response(id: RequestId, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": JSONRPC_VERSION, "id": id, "result": result}


def error_response(id: RequestId | None, error: ProtocolError | dict[str, Any]) -> dict[str, Any]:
    """An error response; pass ``id=None`` when the request's id could not be read."""
    body = error.to_error() if isinstance(error, ProtocolError) else error
    return {"jsonrpc": JSONRPC_VERSION, "id": id, "error": body}
