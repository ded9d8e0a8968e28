"""JSON in and out: the only module that imports a JSON library.

Decoding is strict where MCP needs it and fast where it can be:

* orjson parses (it rejects invalid UTF-8, lone surrogates, NaN/Infinity and a BOM);
* nesting deeper than ``max_depth`` is an :class:`~mcpkit.errors.InvalidRequest`: orjson
  itself stops at depth 1,024 (so depth 100,000 fails at once), and below that a
  level-by-level walk runs only when the text holds more brackets than the limit;
* duplicate object keys are an :class:`~mcpkit.errors.InvalidRequest`: a proxy that reads
  the first key and a server that reads the last must never disagree about a message
  (``security.md`` R-02). The check is exact and cheap. When re-encoding the decoded value
  gives back the very same bytes, the text is the canonical form of a value that has no
  duplicate keys (the common case: orjson and ``JSON.stringify`` peers write exactly
  that). Otherwise a parsed document holds ``K`` keys; when every key's closing quote is
  directly followed by ``:``, the text holds at least as many ``":`` pairs as keys, so
  ``count('":') == K`` proves there was no duplicate. Failing that, the stdlib parser with
  ``object_pairs_hook`` decides;
* integers are exact: orjson reads an integer outside the 64-bit range as a float, so a
  document with such a literal is decoded again by the stdlib parser, which keeps it
  exact (a 30-digit id is then refused for what it is, never silently rounded).

Invalid JSON is a :class:`~mcpkit.errors.ParseError` (-32700), except a document that
orjson gave up on because of its own depth limit, which is too deep (-32600).

Encoding is compact single-line UTF-8 (orjson escapes control characters, so a newline in
a string never reaches the wire raw) and never emits NaN or Infinity.
:func:`dumps_canonical` sorts object keys (digests, cache keys);
:func:`dumps_indented` is the readable form for people, so that no other module needs a
JSON library of its own.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from mcpkit.errors import InvalidRequest, ParseError

DEFAULT_MAX_DEPTH = 128

# A key followed by whitespace before its colon escapes the ``":`` count.
_SPACE_BEFORE_COLON = re.compile(rb'"[ \t\r\n]+:')
# orjson reads integer literals beyond 64 bits as floats; every such literal has at
# least 19 digits (the smallest is -9223372036854775809).
_LONG_DIGITS = re.compile(rb"[0-9]{19}")
# orjson refuses to encode values nested deeper than this.
_MAX_DUMP_DEPTH = 254

__all__ = ["DEFAULT_MAX_DEPTH", "dumps", "dumps_canonical", "dumps_indented", "loads"]


def loads(data: bytes | bytearray | memoryview | str, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """Decode one JSON document, enforcing the nesting limit, unique keys and exact integers."""
    raw = data if type(data) is bytes else _as_bytes(data)
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise _decode_error(raw, exc) from None
    kind = type(value)
    if kind is not dict and kind is not list:
        if kind is float and _LONG_DIGITS.search(raw):
            return _exact(raw)
        return value
    brackets = raw.count(b"[") + raw.count(b"{")
    if brackets <= max_depth:
        if brackets <= _MAX_DUMP_DEPTH and b'": ' not in raw and orjson.dumps(value) == raw:
            return value
        keys, floats = _inspect(value)
    else:
        keys, floats = _inspect_within(value, max_depth)
    if floats and _LONG_DIGITS.search(raw):
        return _exact(raw)
    if keys and (raw.count(b'":') != keys or _SPACE_BEFORE_COLON.search(raw)):
        _exact(raw)
    return value


def _as_bytes(data: bytes | bytearray | memoryview | str) -> bytes:
    if not isinstance(data, str):
        return bytes(data)
    try:
        return data.encode()
    except UnicodeEncodeError:
        raise ParseError("Parse error: text holds a lone surrogate") from None


def dumps(value: Any) -> bytes:
    """Encode compactly as UTF-8, on one line, never NaN/Infinity."""
    try:
        return orjson.dumps(value)
    except TypeError:
        # orjson refuses integers outside 64 bits; the stdlib writes them exactly.
        return json.dumps(
            value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_default
        ).encode()


def dumps_canonical(value: Any) -> bytes:
    """Like :func:`dumps`, with every object's keys sorted: equal values give equal bytes
    (for digests and cache keys)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return json.dumps(
            value,
            ensure_ascii=False,
            separators=(",", ":"),
            allow_nan=False,
            sort_keys=True,
            default=_default,
        ).encode()


def dumps_indented(value: Any) -> str:
    """Readable JSON for people (terminals, logs): two-space indent, UTF-8 text.

    Never for the wire, where one message must be one line.
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except TypeError:
        return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False, default=_default)


def _default(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _inspect(value: Any) -> tuple[int, bool]:
    """Count the object keys of a decoded document and note whether it holds a float.

    Iterative (no recursion): the caller knows the document is shallow enough.
    """
    keys = 0
    floats = False
    stack: list[Any] = [value]
    pop = stack.pop
    push = stack.append
    while stack:
        node = pop()
        if type(node) is dict:
            keys += len(node)
            node = node.values()
        for child in node:
            kind = type(child)
            if kind is dict or kind is list:
                push(child)
            elif kind is float:
                floats = True
    return keys, floats


def _inspect_within(value: Any, max_depth: int) -> tuple[int, bool]:
    """Like :func:`_inspect`, one nesting level at a time, refusing more than ``max_depth``."""
    keys = 0
    floats = False
    depth = 0
    level: list[Any] = [value]
    while level:
        depth += 1
        if depth > max_depth:
            raise InvalidRequest(f"Message nesting exceeds the limit of {max_depth} levels")
        below: list[Any] = []
        push = below.append
        for node in level:
            if type(node) is dict:
                keys += len(node)
                node = node.values()
            for child in node:
                kind = type(child)
                if kind is dict or kind is list:
                    push(child)
                elif kind is float:
                    floats = True
        level = below
    return keys, floats


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise InvalidRequest(f"Duplicate key in JSON object: {key!r}")
        result[key] = value
    return result


def _exact(raw: bytes) -> Any:
    """Decode with the stdlib: exact integers, and duplicate keys refused.

    Only documents orjson already accepted get here, so the text is valid JSON within
    orjson's depth limit.
    """
    try:
        return json.loads(raw.decode(), object_pairs_hook=_reject_duplicates)
    except RecursionError:
        raise InvalidRequest("Message nesting is too deep") from None
    except ValueError as exc:  # an integer beyond the interpreter's digit limit
        raise ParseError(f"Parse error: {exc}") from None


def _decode_error(raw: bytes, exc: orjson.JSONDecodeError) -> ParseError | InvalidRequest:
    """Classify a document orjson refused: too deep is -32600, anything else -32700."""
    reason = str(exc)
    if reason.startswith("depth limit exceeded"):
        return InvalidRequest("Message nesting is too deep")
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return ParseError("Parse error: message is not valid UTF-8")
    if reason.startswith("failed to allocate memory"):
        # What orjson reports for some truncated, deeply nested documents.
        return ParseError(f"Parse error: invalid JSON near char {exc.pos}")
    return ParseError(f"Parse error: {reason}")
