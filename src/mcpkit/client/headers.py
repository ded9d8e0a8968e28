"""``x-mcp-header``: tool parameters mirrored into ``Mcp-Param-*`` HTTP headers.

Spec ``server/tools.mdx`` §x-mcp-header and ``basic/transports/streamable-http.mdx``
§Custom Headers from Tool Parameters. :func:`header_plan` reads a tool's ``inputSchema``
once and either returns where each annotated value lives and which header carries it, or
says why the tool must be rejected (the client drops such tools from ``tools/list`` and
logs a warning). :func:`param_headers` applies a plan to one call's arguments.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpkit.protocol.jsonrpc import MAX_SAFE_INTEGER
from mcpkit.transports.http_client import encode_header_value

__all__ = ["HeaderPlan", "InvalidHeaderAnnotation", "header_plan", "param_headers"]

ANNOTATION = "x-mcp-header"
# RFC 9110 §5.6.2 tchar.
_TCHAR = frozenset("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_PRIMITIVES = frozenset({"string", "integer", "boolean"})
# Keywords whose subschemas are not statically reachable through `properties` alone.
_NESTING = (
    "items",
    "prefixItems",
    "additionalProperties",
    "patternProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "oneOf",
    "anyOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "$defs",
    "definitions",
)


class InvalidHeaderAnnotation(ValueError):
    """A tool's ``x-mcp-header`` annotations break the rules; the tool is unusable."""


@dataclass(frozen=True, slots=True)
class HeaderPlan:
    """Where each mirrored value sits in the arguments, and its header name."""

    fields: tuple[tuple[tuple[str, ...], str, str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.fields)


def header_plan(input_schema: Any) -> HeaderPlan:
    """The header plan of a tool, or InvalidHeaderAnnotation saying what is wrong."""
    if not isinstance(input_schema, Mapping):
        return HeaderPlan()
    if ANNOTATION in input_schema:
        raise InvalidHeaderAnnotation("x-mcp-header belongs on a property, not the schema root")
    fields: list[tuple[tuple[str, ...], str, str]] = []
    _walk_reachable(input_schema, (), fields)
    _reject_unreachable(input_schema, reachable=True)
    seen: dict[str, str] = {}
    for _path, name, _kind in fields:
        folded = name.lower()
        if folded in seen:
            raise InvalidHeaderAnnotation(
                f"x-mcp-header {name!r} duplicates {seen[folded]!r} (case-insensitively)"
            )
        seen[folded] = name
    return HeaderPlan(tuple(fields))


def _walk_reachable(
    schema: Mapping[str, Any],
    path: tuple[str, ...],
    fields: list[tuple[tuple[str, ...], str, str]],
) -> None:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return
    for key, prop in properties.items():
        if not isinstance(prop, Mapping):
            continue
        here = (*path, str(key))
        if ANNOTATION in prop:
            fields.append((here, _check_name(prop[ANNOTATION]), _check_type(prop, here)))
        _walk_reachable(prop, here, fields)


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not name:
        raise InvalidHeaderAnnotation("x-mcp-header must be a non-empty string")
    bad = [ch for ch in name if ch not in _TCHAR]
    if bad:
        raise InvalidHeaderAnnotation(
            f"x-mcp-header {name!r} is not an HTTP field-name token (bad: {bad[0]!r})"
        )
    return name


def _check_type(prop: Mapping[str, Any], path: tuple[str, ...]) -> str:
    """The primitive type of an annotated property; one that may also be ``null`` is fine
    (a null value simply sends no header, spec ``streamable-http.mdx`` §Server Behavior)."""
    kind = prop.get("type")
    if isinstance(kind, str) and kind in _PRIMITIVES:
        return kind
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        if len(kinds) == 1 and isinstance(kinds[0], str) and kinds[0] in _PRIMITIVES:
            return kinds[0]
    where = ".".join(path)
    raise InvalidHeaderAnnotation(
        f"x-mcp-header on {where!r} needs type string, integer or boolean, not {kind!r}"
    )


def _reject_unreachable(schema: Any, *, reachable: bool) -> None:
    """An annotation anywhere but a chain of ``properties`` makes the tool invalid."""
    if isinstance(schema, list):
        for item in schema:
            _reject_unreachable(item, reachable=False)
        return
    if not isinstance(schema, Mapping):
        return
    if ANNOTATION in schema and not reachable:
        raise InvalidHeaderAnnotation(
            "x-mcp-header is only allowed on properties reachable through `properties`"
        )
    if "$ref" in schema and ANNOTATION in schema:
        raise InvalidHeaderAnnotation("x-mcp-header cannot sit beside $ref")
    for key, value in schema.items():
        if key == "properties" and isinstance(value, Mapping):
            for prop in value.values():
                _reject_unreachable(prop, reachable=reachable)
        elif key in _NESTING or isinstance(value, Mapping | list):
            if key == ANNOTATION:
                continue
            _reject_unreachable(value, reachable=False)


def param_headers(plan: HeaderPlan, arguments: Mapping[str, Any] | None) -> dict[str, str]:
    """The ``Mcp-Param-*`` headers for one call; absent or null values send no header."""
    headers: dict[str, str] = {}
    if not plan or not isinstance(arguments, Mapping):
        return headers
    for path, name, _kind in plan.fields:
        value: Any = arguments
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        text = _header_text(value)
        if text is not None:
            headers[f"Mcp-Param-{name}"] = encode_header_value(text)
    return headers


def _header_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise ValueError(f"integer {value} is outside the safe range for a header")
        return str(value)
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
        return str(int(value))
    if isinstance(value, str):
        return value
    return None
