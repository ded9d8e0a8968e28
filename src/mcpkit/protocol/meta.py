"""Per-request ``_meta`` (spec ``basic/index.mdx`` §_meta).

Every modern request carries ``io.modelcontextprotocol/protocolVersion`` and
``io.modelcontextprotocol/clientCapabilities``; ``clientInfo`` and ``logLevel`` are
optional. A missing required key is -32602 with a message naming the key; a version the
server does not support is -32022 listing the supported ones.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from mcpkit.errors import InvalidParams, UnsupportedProtocolVersion

PREFIX = "io.modelcontextprotocol/"
PROTOCOL_VERSION = PREFIX + "protocolVersion"
CLIENT_INFO = PREFIX + "clientInfo"
CLIENT_CAPABILITIES = PREFIX + "clientCapabilities"
LOG_LEVEL = PREFIX + "logLevel"
SERVER_INFO = PREFIX + "serverInfo"
SUBSCRIPTION_ID = PREFIX + "subscriptionId"
PROGRESS_TOKEN = "progressToken"

# RFC 5424 severities, least severe first (spec ``server/utilities/logging.mdx``).
LOG_LEVELS: tuple[str, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
LOG_SEVERITY: dict[str, int] = {level: rank for rank, level in enumerate(LOG_LEVELS)}

__all__ = [
    "CLIENT_CAPABILITIES",
    "CLIENT_INFO",
    "LOG_LEVEL",
    "LOG_LEVELS",
    "PROGRESS_TOKEN",
    "PROTOCOL_VERSION",
    "SERVER_INFO",
    "SUBSCRIPTION_ID",
    "RequestMeta",
    "build_request_meta",
    "check_version",
    "has_modern_meta",
    "progress_token",
    "read_request_meta",
]


class RequestMeta:
    """The protocol fields of one request's ``_meta``, read and checked."""

    __slots__ = (
        "client_capabilities",
        "client_info",
        "log_level",
        "progress_token",
        "protocol_version",
        "raw",
    )

    def __init__(
        self,
        protocol_version: str,
        client_capabilities: dict[str, Any],
        client_info: dict[str, Any] | None = None,
        log_level: str | None = None,
        progress_token: str | int | None = None,
        raw: dict[str, Any] | None = None,
    ) -> None:
        self.protocol_version = protocol_version
        self.client_capabilities = client_capabilities
        self.client_info = client_info
        self.log_level = log_level
        self.progress_token = progress_token
        self.raw = raw if raw is not None else {}


def has_modern_meta(params: dict[str, Any] | None) -> bool:
    """True when the request announces a modern revision in ``_meta``.

    A dual-era server uses this to route: modern ``_meta`` means stateless serving,
    its absence on ``initialize`` means a legacy session (``versioning.mdx``).
    """
    if not params:
        return False
    meta = params.get("_meta")
    return type(meta) is dict and PROTOCOL_VERSION in meta


def read_request_meta(
    params: dict[str, Any] | None, supported_versions: Collection[str] | None = None
) -> RequestMeta:
    """Check the required fields and, when ``supported_versions`` is given, the version.

    Streamable HTTP compares the headers with ``_meta`` between the two checks, so it
    passes ``None`` and calls :func:`check_version` itself.
    """
    meta = params.get("_meta") if params else None
    if meta is None:
        raise InvalidParams(f"Missing required _meta field {PROTOCOL_VERSION}")
    if type(meta) is not dict:
        raise InvalidParams("_meta must be an object")
    version = meta.get(PROTOCOL_VERSION)
    if version is None:
        raise InvalidParams(f"Missing required _meta field {PROTOCOL_VERSION}")
    if type(version) is not str:
        raise InvalidParams(f"_meta field {PROTOCOL_VERSION} must be a string")
    capabilities = meta.get(CLIENT_CAPABILITIES)
    if capabilities is None:
        raise InvalidParams(f"Missing required _meta field {CLIENT_CAPABILITIES}")
    if type(capabilities) is not dict:
        raise InvalidParams(f"_meta field {CLIENT_CAPABILITIES} must be an object")
    if supported_versions is not None:
        check_version(version, supported_versions)
    info = meta.get(CLIENT_INFO)
    if info is not None and type(info) is not dict:
        raise InvalidParams(f"_meta field {CLIENT_INFO} must be an object")
    level = meta.get(LOG_LEVEL)
    if level is not None and (type(level) is not str or level not in LOG_SEVERITY):
        raise InvalidParams(f"_meta field {LOG_LEVEL} must be one of {', '.join(LOG_LEVELS)}")
    # progress_token(meta), inlined: this runs on every modern request.
    token = meta.get(PROGRESS_TOKEN)
    if token is not None and type(token) is not str and type(token) is not int:
        raise InvalidParams(_BAD_PROGRESS_TOKEN)
    return RequestMeta(version, capabilities, info, level, token, meta)


def progress_token(meta: dict[str, Any]) -> str | int | None:
    """The ``progressToken`` of a request's ``_meta`` (both eras): -32602 unless it is a
    string or an integer (spec ``basic/patterns/progress.mdx``)."""
    token = meta.get(PROGRESS_TOKEN)
    if token is not None and type(token) is not str and type(token) is not int:
        raise InvalidParams(_BAD_PROGRESS_TOKEN)
    return token


_BAD_PROGRESS_TOKEN = "_meta field progressToken must be a string or an integer"


def check_version(version: str, supported_versions: Collection[str]) -> None:
    """-32022 with the supported list when ``version`` is not one of them."""
    if version not in supported_versions:
        raise UnsupportedProtocolVersion(list(supported_versions), version)


def build_request_meta(
    protocol_version: str,
    client_capabilities: dict[str, Any],
    client_info: dict[str, Any] | None = None,
    log_level: str | None = None,
) -> dict[str, Any]:
    """The ``_meta`` a modern client puts on every request."""
    meta: dict[str, Any] = {
        PROTOCOL_VERSION: protocol_version,
        CLIENT_CAPABILITIES: client_capabilities,
    }
    if client_info is not None:
        meta[CLIENT_INFO] = client_info
    if log_level is not None:
        meta[LOG_LEVEL] = log_level
    return meta
