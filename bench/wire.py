"""What the harness says to a server, pre-encoded, and how every answer is checked.

No MCP library is used on the measuring side: requests are JSON built here once and
turned into byte templates, so a request costs one bytes concatenation in the hot loop.
Each check raises :class:`WrongAnswer` with the offending message, so a server that
answers wrongly, with the wrong id, or with an error fails the run loudly.

Two eras (spec ``basic/versioning.mdx``):

* ``modern`` (2026-07-28): no handshake; every request carries ``_meta`` with the
  protocol version and client capabilities. The opening request is ``server/discover``
  (or the first ``tools/call`` for a server that has no discover).
* ``legacy`` (2025-11-25): ``initialize``, then ``notifications/initialized``, then plain
  requests without ``_meta``.
"""

from __future__ import annotations

import math
from typing import Any

import orjson

MODERN_VERSION = "2026-07-28"
LEGACY_VERSION = "2025-11-25"
ERAS: tuple[str, ...] = ("modern", "legacy")

CLIENT_INFO = {"name": "mcpkit-bench", "version": "1.0.0"}
ADD_ARGUMENTS = {"a": 2, "b": 3}
ADD_EXPECTED = 5.0

_ID_PLACEHOLDER = 987654321987654
_ID_BYTES = b"987654321987654"

__all__ = [
    "ERAS",
    "Dialect",
    "WrongAnswer",
    "decode",
]


class WrongAnswer(AssertionError):
    """A server's answer was missing, malformed, an error, or not the expected value."""


def decode(line: bytes) -> dict[str, Any]:
    """One JSON-RPC message from a line; anything but an object is a wrong answer."""
    try:
        message = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise WrongAnswer(f"not JSON ({exc}): {line[:300]!r}") from None
    if type(message) is not dict:
        raise WrongAnswer(f"not a JSON object: {line[:300]!r}")
    return message


def _template(message: dict[str, Any]) -> tuple[bytes, bytes]:
    """Split an encoded request around its id: ``prefix + b"%d" % id + suffix``."""
    encoded = orjson.dumps(message) + b"\n"
    prefix, found, suffix = encoded.partition(_ID_BYTES)
    if not found:
        raise ValueError("the id placeholder is missing from the encoded request")
    return prefix, suffix


class Dialect:
    """The requests of one protocol era, and the checks for their answers."""

    def __init__(self, era: str, *, discover: bool = True) -> None:
        if era not in ERAS:
            raise ValueError(f"unknown era {era!r}; expected one of {ERAS}")
        self.era = era
        self.discover = discover
        params: dict[str, Any] = {"name": "add", "arguments": ADD_ARGUMENTS}
        if era == "modern":
            params["_meta"] = {
                "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
            }
        self._call_prefix, self._call_suffix = _template(
            {"jsonrpc": "2.0", "id": _ID_PLACEHOLDER, "method": "tools/call", "params": params}
        )

    # -- the opening exchange (cold start) ------------------------------------------------

    def opening(self, request_id: int) -> bytes:
        """The first request: discover, initialize, or (no discover) a tools/call."""
        if self.era == "legacy":
            params: dict[str, Any] = {
                "protocolVersion": LEGACY_VERSION,
                "capabilities": {},
                "clientInfo": CLIENT_INFO,
            }
            return orjson.dumps(_request(request_id, "initialize", params)) + b"\n"
        if not self.discover:
            return self.call(request_id)
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        }
        return orjson.dumps(_request(request_id, "server/discover", {"_meta": meta})) + b"\n"

    def check_opening(self, message: dict[str, Any], request_id: int) -> None:
        """The opening answer is a result for our id that names a version we speak."""
        if self.era == "modern" and not self.discover:
            self.check_call(message, request_id)
            return
        result = _result(message, request_id)
        if self.era == "legacy":
            if result.get("protocolVersion") != LEGACY_VERSION:
                raise WrongAnswer(f"initialize did not settle on {LEGACY_VERSION}: {message}")
        elif MODERN_VERSION not in (result.get("supportedVersions") or ()):
            raise WrongAnswer(f"server/discover does not list {MODERN_VERSION}: {message}")

    def after_opening(self) -> bytes:
        """What follows the opening answer before ordinary requests (legacy: initialized)."""
        if self.era == "legacy":
            return b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
        return b""

    # -- tools/call add -------------------------------------------------------------------

    def call(self, request_id: int) -> bytes:
        """``tools/call add {"a": 2, "b": 3}`` with this id, newline included."""
        return self._call_prefix + b"%d" % request_id + self._call_suffix

    def check_call(self, message: dict[str, Any], request_id: int) -> None:
        """A result for ``request_id`` whose first text block reads 5 (``"5"`` or ``"5.0"``)."""
        result = _result(message, request_id)
        if result.get("isError"):
            raise WrongAnswer(f"the tool reported an error: {message}")
        content = result.get("content")
        first = content[0] if type(content) is list and content else None
        text = first.get("text") if type(first) is dict else None
        try:
            value = float(text) if type(text) is str else math.nan
        except ValueError:
            value = math.nan
        if math.isnan(value):
            raise WrongAnswer(f"no numeric text block in the result: {message}")
        if not math.isclose(value, ADD_EXPECTED, rel_tol=0, abs_tol=1e-12):
            raise WrongAnswer(f"add(2, 3) returned {text!r}: {message}")


def _request(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def _result(message: dict[str, Any], request_id: int) -> dict[str, Any]:
    if message.get("id") != request_id or type(message.get("id")) is not int:
        raise WrongAnswer(f"expected an answer to id {request_id}, got: {message}")
    if "error" in message:
        raise WrongAnswer(f"request {request_id} failed: {message['error']}")
    result = message.get("result")
    if type(result) is not dict:
        raise WrongAnswer(f"no result object in the answer to {request_id}: {message}")
    return result
