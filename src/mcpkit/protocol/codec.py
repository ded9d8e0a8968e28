"""JSON in and out: the only module that imports a JSON library.

Decoding is strict where MCP needs it and fast where it can be:

* orjson parses (it rejects invalid UTF-8, lone surrogates, NaN/Infinity and a BOM);
* nesting deeper than ``max_depth`` is an :class:`~mcpkit.errors.InvalidRequest`: orjson
  itself stops at depth 1,024 (so depth 100,000 fails at once), and below that an
  iterative walk runs only when the text holds more brackets than the limit;
* duplicate object keys are an :class:`~mcpkit.errors.InvalidRequest`: a proxy that reads
  the first key and a server that reads the last must never disagree about a message
  (``security.md`` R-02). The check is exact and cheap: a parsed document holds ``K``
  keys; when every key's closing quote is directly followed by ``:``, the text holds at
  least as many ``":`` pairs as keys, so ``count('":') == K`` proves there was no
  duplicate. Otherwise the stdlib parser with ``object_pairs_hook`` decides.

Encoding is compact single-line UTF-8 (orjson escapes control characters, so a newline in
a string never reaches the wire raw) and never emits NaN or Infinity.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from mcpkit.errors import InvalidRequest, ParseError

DEFAULT_MAX_DEPTH = 128

_SPACE_BEFORE_COLON = re.compile(rb'"[ \t\r\n]+:')

__all__ = ["DEFAULT_MAX_DEPTH", "dumps", "loads"]


def loads(data: bytes | bytearray | memoryview | str, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """Decode one JSON document, enforcing the nesting limit and unique keys."""
    raw = data.encode() if isinstance(data, str) else bytes(data)
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise _decode_error(raw, exc) from None
    if raw.count(b"[") + raw.count(b"{") > max_depth:
        keys = _count_keys_within(value, max_depth)
    else:
        keys = _count_keys(value)
    if keys and (raw.count(b'":') != keys or _SPACE_BEFORE_COLON.search(raw)):
        _check_duplicates(raw)
    return value


def dumps(value: Any) -> bytes:
    """Encode compactly as UTF-8, on one line, never NaN/Infinity."""
    try:
        return orjson.dumps(value)
    except TypeError:
        # orjson refuses integers outside 64 bits; the stdlib writes them exactly.
        return json.dumps(
            value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_default
        ).encode()


def _default(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _count_keys(value: Any) -> int:
    """Total number of object keys in a decoded document (iterative, no recursion)."""
    if type(value) is dict:
        total = 0
        stack: list[Any] = [value]
    elif type(value) is list:
        total = 0
        stack = [value]
    else:
        return 0
    while stack:
        node = stack.pop()
        if type(node) is dict:
            total += len(node)
            for child in node.values():
                kind = type(child)
                if kind is dict or kind is list:
                    stack.append(child)
        else:
            for child in node:
                kind = type(child)
                if kind is dict or kind is list:
                    stack.append(child)
    return total


def _count_keys_within(value: Any, max_depth: int) -> int:
    """Like :func:`_count_keys`, also rejecting nesting deeper than ``max_depth``."""
    total = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        kind = type(node)
        if kind is not dict and kind is not list:
            continue
        if depth > max_depth:
            raise InvalidRequest(f"Message nesting exceeds the limit of {max_depth} levels")
        if kind is dict:
            total += len(node)
            children = node.values()
        else:
            children = node
        stack.extend((child, depth + 1) for child in children)
    return total


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise InvalidRequest(f"Duplicate key in JSON object: {key!r}")
        result[key] = value
    return result


def _check_duplicates(raw: bytes) -> None:
    try:
        json.loads(raw, object_pairs_hook=_reject_duplicates)
    except RecursionError as exc:  # pragma: no cover - orjson refuses such depth first
        raise InvalidRequest("Message nesting is too deep") from exc


def _decode_error(raw: bytes, exc: orjson.JSONDecodeError) -> ParseError | InvalidRequest:
    """Classify a document orjson refused: too deep is -32600, anything else -32700."""
    reason = str(exc)
    if reason.startswith("depth limit exceeded"):
        return InvalidRequest("Message nesting is too deep")
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return ParseError("Parse error: message is not valid UTF-8")
    return ParseError(f"Parse error: {reason}")
