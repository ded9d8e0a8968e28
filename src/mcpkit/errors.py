"""The one exception tree of mcpkit.

::

    MCPError
    ├── ProtocolError              an error with a JSON-RPC code; becomes an error response
    │   ├── ParseError                 -32700
    │   ├── InvalidRequest             -32600
    │   ├── MethodNotFound             -32601
    │   ├── InvalidParams              -32602
    │   ├── InternalError              -32603
    │   ├── HeaderMismatch             -32020
    │   ├── MissingRequiredClientCapability  -32021
    │   └── UnsupportedProtocolVersion -32022
    ├── ToolError                  raised by a tool: a result with ``isError: true``
    ├── TransportError             local: the connection to the peer failed
    │   └── ConnectionClosed
    ├── RequestTimeout             local: no answer in time
    └── ServerMisbehaved           local: the server's answer breaks the protocol

A server raises a :class:`ProtocolError` to answer a request with a JSON-RPC error.
A client raises the same classes when the *peer* answered with an error response
(built by :meth:`ProtocolError.from_wire`, with ``remote`` set); failures that never
reached the peer are :class:`TransportError` or :class:`RequestTimeout`, so a local
problem is never mistaken for the peer's answer (spec ``basic/index.mdx`` §Error Codes).
"""

from __future__ import annotations

from typing import Any, ClassVar

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022

RequestId = str | int


class MCPError(Exception):
    """Base of every exception mcpkit raises on purpose."""


class ProtocolError(MCPError):
    """An error that has a JSON-RPC code and becomes an error response.

    ``request_id`` is the id to echo when the error is raised before the request
    could be fully read (for instance an envelope with a valid id and a bad method).
    ``http_status`` is the status a Streamable HTTP server answers with.
    """

    code: ClassVar[int] = INTERNAL_ERROR
    http_status: ClassVar[int] = 500
    default_message: ClassVar[str] = "Internal error"

    def __init__(
        self,
        message: str | None = None,
        data: Any = None,
        *,
        request_id: RequestId | None = None,
        remote: bool = False,
    ) -> None:
        self.message = message if message is not None else self.default_message
        self.data = data
        self.request_id = request_id
        self.remote = remote
        super().__init__(self.message)

    def to_error(self) -> dict[str, Any]:
        """The JSON-RPC ``error`` member for this exception."""
        error: dict[str, Any] = {"code": self.effective_code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @staticmethod
    def from_wire(error: dict[str, Any]) -> ProtocolError:
        """Rebuild the matching exception from an ``error`` member received from a peer."""
        code = error.get("code")
        message = error.get("message")
        wire_code: int | None = code if type(code) is int else None
        cls = ProtocolError if wire_code is None else _BY_CODE.get(wire_code, ProtocolError)
        text = message if isinstance(message, str) else None
        # The base initialiser, so that a subclass never fills in data the peer did not send.
        exc = cls.__new__(cls)
        ProtocolError.__init__(exc, text, error.get("data"), remote=True)
        if cls is ProtocolError:
            exc.wire_code = wire_code
        return exc

    wire_code: int | None = None

    @property
    def effective_code(self) -> int:
        """The code as received (for codes mcpkit has no class for) or the class code."""
        return self.wire_code if self.wire_code is not None else self.code

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.effective_code}, {self.message!r})"


class ParseError(ProtocolError):
    """The bytes are not valid JSON (or not UTF-8)."""

    code = PARSE_ERROR
    http_status = 400
    default_message = "Parse error"


class InvalidRequest(ProtocolError):
    """The JSON is not a valid JSON-RPC 2.0 message for MCP."""

    code = INVALID_REQUEST
    http_status = 400
    default_message = "Invalid request"


class MethodNotFound(ProtocolError):
    """The method does not exist (on this revision)."""

    code = METHOD_NOT_FOUND
    http_status = 404
    default_message = "Method not found"


class InvalidParams(ProtocolError):
    """The params are wrong: missing ``_meta`` fields, an unknown tool, a bad cursor..."""

    code = INVALID_PARAMS
    http_status = 400
    default_message = "Invalid params"


class InternalError(ProtocolError):
    """The server failed while handling a valid request."""

    code = INTERNAL_ERROR
    http_status = 500
    default_message = "Internal error"


class HeaderMismatch(ProtocolError):
    """An HTTP header is missing or disagrees with the body (``streamable-http.mdx``)."""

    code = HEADER_MISMATCH
    http_status = 400
    default_message = "Header mismatch"


class MissingRequiredClientCapability(ProtocolError):
    """The request needs a client capability the client did not declare."""

    code = MISSING_REQUIRED_CLIENT_CAPABILITY
    http_status = 400
    default_message = "Missing required client capability"

    def __init__(
        self,
        required: dict[str, Any] | None = None,
        message: str | None = None,
        *,
        request_id: RequestId | None = None,
        remote: bool = False,
        data: Any = None,
    ) -> None:
        if data is None:
            data = {"requiredCapabilities": required or {}}
        super().__init__(message, data, request_id=request_id, remote=remote)

    @property
    def required(self) -> dict[str, Any]:
        data = self.data if isinstance(self.data, dict) else {}
        required = data.get("requiredCapabilities")
        return required if isinstance(required, dict) else {}


class UnsupportedProtocolVersion(ProtocolError):
    """The requested protocol version is not one the server supports."""

    code = UNSUPPORTED_PROTOCOL_VERSION
    http_status = 400
    default_message = "Unsupported protocol version"

    def __init__(
        self,
        supported: list[str] | None = None,
        requested: Any = None,
        message: str | None = None,
        *,
        request_id: RequestId | None = None,
        remote: bool = False,
        data: Any = None,
    ) -> None:
        if data is None:
            data = {"supported": list(supported or []), "requested": requested}
        super().__init__(message, data, request_id=request_id, remote=remote)

    @property
    def supported(self) -> list[str]:
        data = self.data if isinstance(self.data, dict) else {}
        supported = data.get("supported")
        return [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []


_BY_CODE: dict[int, type[ProtocolError]] = {
    cls.code: cls
    for cls in (
        ParseError,
        InvalidRequest,
        MethodNotFound,
        InvalidParams,
        InternalError,
        HeaderMismatch,
        MissingRequiredClientCapability,
        UnsupportedProtocolVersion,
    )
}
# The status a Streamable HTTP server answers each known code with (others: 500).
HTTP_STATUS_BY_CODE: dict[int, int] = {code: cls.http_status for code, cls in _BY_CODE.items()}


class ToolError(MCPError):
    """Raise inside a tool to return ``isError: true`` with this message.

    Any other exception a tool raises is reported the same way; this class exists so
    a tool can fail on purpose without logging a traceback.
    """


class TransportError(MCPError):
    """The connection to the peer failed; the peer never answered."""


class ConnectionClosed(TransportError):
    """The peer closed the connection (or its process exited)."""


class RequestTimeout(MCPError):
    """No answer arrived within the request's timeout (a local error, never from the peer)."""


class ServerMisbehaved(MCPError):
    """The server's answer breaks the protocol (a local verdict, not the server's error):
    an unknown ``resultType``, ``input_required`` where it is not allowed, endless rounds,
    structured content that contradicts the tool's ``outputSchema``."""
