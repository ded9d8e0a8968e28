"""Pagination of list results with opaque cursors (spec ``server/utilities/pagination.mdx``).

A cursor names a position in one list method's results: it is base64url text the client
must echo unchanged. A cursor that does not decode, or that was issued for another list
method, is -32602 ``Invalid cursor``. A cursor past the end of a list that has shrunk
since it was issued gives an empty last page rather than an error: the position was
valid when the server handed it out.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any, TypeVar

from mcpkit.errors import InvalidParams, ProtocolError
from mcpkit.protocol import codec

T = TypeVar("T")

_MAX_CURSOR = 256

__all__ = ["decode_cursor", "encode_cursor", "paginate"]


def encode_cursor(method: str, offset: int) -> str:
    """The cursor for the page of ``method`` that starts at ``offset``."""
    payload = codec.dumps({"m": method, "o": offset})
    return base64.urlsafe_b64encode(payload).rstrip(b"=").decode("ascii")


def decode_cursor(method: str, cursor: Any) -> int:
    """The offset a cursor names; -32602 when it is not one of ours for ``method``."""
    if type(cursor) is not str or not cursor or len(cursor) > _MAX_CURSOR:
        raise InvalidParams("Invalid cursor")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        payload = codec.loads(raw)
    except (binascii.Error, ValueError, ProtocolError):
        raise InvalidParams("Invalid cursor") from None
    if type(payload) is not dict or payload.get("m") != method:
        raise InvalidParams("Invalid cursor")
    offset = payload.get("o")
    if type(offset) is not int or offset < 0:
        raise InvalidParams("Invalid cursor")
    return offset


def paginate(
    items: Sequence[T], params: dict[str, Any], method: str, page_size: int | None
) -> tuple[Sequence[T], str | None]:
    """The page ``params["cursor"]`` asks for, and the cursor of the next page (or None)."""
    cursor = params.get("cursor")
    offset = 0 if cursor is None else decode_cursor(method, cursor)
    if page_size is None:
        return (items[offset:] if offset else items), None
    end = offset + page_size
    page = items[offset:end]
    return page, (encode_cursor(method, end) if end < len(items) else None)
