"""``x-mcp-header``: tool parameters mirrored into ``Mcp-Param-*`` HTTP headers
(spec ``server/tools.mdx`` §x-mcp-header, ``basic/transports/streamable-http.mdx``
§Custom Headers from Tool Parameters).

Annotate a parameter with :class:`Header` to mark it::

    @server.tool
    def execute_sql(region: Annotated[str, Header("Region")], query: str) -> str: ...

which puts ``"x-mcp-header": "Region"`` in that property's schema, so a client sends
``Mcp-Param-Region: <value>`` and intermediaries can route on it (an ``int`` parameter
also gets the IEEE 754 safe-integer bounds, so every client can mirror it exactly). A
schema given explicitly may carry the annotation itself; its bounds are the author's.
Either way, :func:`header_params` checks every annotation when the tool is registered and
refuses the tool with a clear error when one breaks the rules: the name must be a
non-empty HTTP token, unique case-insensitively within the schema, on a property of type
string, integer or boolean (optionally also null), and reachable from the root through
``properties`` only.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any

ANNOTATION = "x-mcp-header"

# RFC 9110 §5.6.2 tchar.
_TCHAR = frozenset("!#$%&'*+-.^_`|~" + string.ascii_letters + string.digits)
_PRIMITIVE = ("string", "integer", "boolean")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_MAPS = ("$defs", "definitions", "patternProperties", "dependentSchemas")
_SCHEMA_SINGLE = (
    "items",
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
)

__all__ = ["ANNOTATION", "Header", "HeaderAnnotationError", "header_params", "is_token"]


class HeaderAnnotationError(ValueError):
    """An ``x-mcp-header`` annotation breaks the spec's rules; the tool is refused."""


def is_token(name: object) -> bool:
    """True for a non-empty RFC 9110 token (no spaces, colons, controls or non-ASCII)."""
    return isinstance(name, str) and bool(name) and all(c in _TCHAR for c in name)


@dataclass(frozen=True, slots=True)
class Header:
    """Parameter metadata: mirror this argument into the ``Mcp-Param-<name>`` header."""

    name: str

    def __post_init__(self) -> None:
        if not is_token(self.name):
            raise HeaderAnnotationError(
                f"x-mcp-header name {self.name!r} is not an HTTP token "
                "(letters, digits and !#$%&'*+-.^_`|~ only, not empty)"
            )


def header_params(schema: dict[str, Any], tool: str = "") -> dict[str, tuple[str, ...]]:
    """Every ``x-mcp-header`` in an input schema, checked: header name -> property path."""
    found: dict[str, tuple[str, ...]] = {}
    seen: dict[str, str] = {}
    prefix = f"tool {tool!r}: " if tool else ""
    for path, node, static in _annotated(schema):
        name = node[ANNOTATION]
        where = ".".join(path) if path else "the schema root"
        if not static or not path:
            raise HeaderAnnotationError(
                f"{prefix}x-mcp-header on {where} is not reachable from the root through "
                "'properties' alone"
            )
        if not is_token(name):
            raise HeaderAnnotationError(
                f"{prefix}x-mcp-header {name!r} on {where} is not a non-empty HTTP token"
            )
        if not _primitive(node.get("type")):
            raise HeaderAnnotationError(
                f"{prefix}x-mcp-header on {where} needs type string, integer or boolean, "
                f"not {node.get('type')!r}"
            )
        folded = name.lower()
        if folded in seen:
            raise HeaderAnnotationError(
                f"{prefix}x-mcp-header {name!r} on {where} duplicates the one on "
                f"{seen[folded]} (names are case-insensitive)"
            )
        seen[folded] = where
        found[name] = path
    return found


def _primitive(kind: Any) -> bool:
    if isinstance(kind, str):
        return kind in _PRIMITIVE
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        return len(kinds) == 1 and kinds[0] in _PRIMITIVE
    return False


def _annotated(schema: Any) -> list[tuple[tuple[str, ...], dict[str, Any], bool]]:
    """(property path, schema node, statically reachable) for every annotated node."""
    result: list[tuple[tuple[str, ...], dict[str, Any], bool]] = []
    stack: list[tuple[Any, tuple[str, ...], bool]] = [(schema, (), True)]
    while stack:
        node, path, static = stack.pop()
        if not isinstance(node, dict):
            continue
        if ANNOTATION in node:
            result.append((path, node, static))
        properties = node.get("properties")
        if isinstance(properties, dict):
            for name, child in properties.items():
                stack.append((child, (*path, str(name)), static))
        for keyword in _SCHEMA_SINGLE:
            if keyword in node:
                stack.append((node[keyword], path, False))
        for keyword in _SCHEMA_LISTS:
            children = node.get(keyword)
            if isinstance(children, list):
                stack.extend((child, path, False) for child in children)
        for keyword in _SCHEMA_MAPS:
            children = node.get(keyword)
            if isinstance(children, dict):
                stack.extend((child, path, False) for child in children.values())
    result.sort(key=lambda item: item[0])
    return result
