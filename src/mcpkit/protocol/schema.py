"""JSON Schema validation, compiled once, safe by default (spec ``basic/index.mdx`` §JSON
Schema Usage).

* The dialect is 2020-12 unless ``$schema`` names draft-04, draft-06, draft-07 or
  2019-09 (§Schema Dialect); any other ``$schema`` is refused with an error that names it
  and lists the supported ones.
* A ``$ref`` is never fetched: the retriever refuses every URI (network and ``file:``
  alike), so a schema that needs another document fails to compile instead of being
  treated as permissive (§$ref Resolution).
* Schemas are bounded (§Composition-Keyword Resource Use): at most ``MAX_SCHEMA_DEPTH``
  levels of nesting, ``MAX_SCHEMA_BYTES`` encoded, and ``MAX_SCHEMA_NODES`` subschemas
  *counting every use of a local* ``$ref`` -- a kilobyte of ``$defs`` whose ``anyOf``
  branches refer twice to the level below expands to millions of subschemas, and although
  checking an instance stays fast, listing why it failed does not (``security.md`` §0.2).
* jsonschema-rs checks in linear time what makes the pure-Python validator take seconds
  (``design.md`` §3.5). Describing the problems is the costly part (every error becomes a
  Python object), so :meth:`CompiledSchema.problems` lists each one only while the
  instance is small enough for the schema; beyond that it reports per top-level property
  and says which values were too large to itemise. At most ``MAX_PROBLEMS`` lines.

:meth:`CompiledSchema.problems` lists what is wrong with an instance in the order a
model reads best: missing required properties (in ``required`` order), then problems
per property (in schema property order), then unexpected properties.
"""

from __future__ import annotations

from typing import Any, NoReturn
from urllib.parse import unquote

import jsonschema_rs

from mcpkit.protocol import codec

MAX_SCHEMA_NODES = 10_000
MAX_SCHEMA_DEPTH = 64
MAX_SCHEMA_BYTES = 256 * 1024
# Instance values times subschemas above which problems are summarised, not itemised.
REPORT_BUDGET = 10_000
# Problems listed at most (then a line says how many more there are), and their length.
MAX_PROBLEMS = 100
MAX_PROBLEM_CHARS = 300

DIALECTS: dict[str, str] = {
    "json-schema.org/draft/2020-12/schema": "2020-12",
    "json-schema.org/draft/2019-09/schema": "2019-09",
    "json-schema.org/draft-07/schema": "draft-07",
    "json-schema.org/draft-06/schema": "draft-06",
    "json-schema.org/draft-04/schema": "draft-04",
}

__all__ = [
    "DIALECTS",
    "MAX_SCHEMA_BYTES",
    "MAX_SCHEMA_DEPTH",
    "MAX_SCHEMA_NODES",
    "CompiledSchema",
    "SchemaError",
    "compile_schema",
]


class SchemaError(ValueError):
    """The schema itself is unusable (invalid, unsupported dialect, remote $ref, too big)."""


def _refuse(uri: str) -> NoReturn:
    raise ValueError(f"fetching external $ref {uri!r} is disabled")


def _check_dialect(schema: dict[str, Any]) -> None:
    dialect = schema.get("$schema")
    if dialect is None:
        return
    if not isinstance(dialect, str):
        raise SchemaError("$schema must be a URI string")
    key = dialect.removesuffix("#").removeprefix("https://").removeprefix("http://")
    if key not in DIALECTS:
        supported = ", ".join(DIALECTS.values())
        raise SchemaError(
            f"unsupported JSON Schema dialect {dialect!r} (supported: {supported}; "
            "a schema without $schema is 2020-12)"
        )


def _measure(schema: Any) -> None:
    """Refuse a schema nested too deeply, or holding too many objects or values.

    Iterative, and it stops at the first bound passed, so a huge schema costs little to
    refuse. Every value takes at least two bytes when encoded (itself and a separator),
    so more than half of ``MAX_SCHEMA_BYTES`` values is already too large.
    """
    nodes = 0
    values = 0
    stack: list[tuple[Any, int]] = [(schema, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            nodes += 1
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > MAX_SCHEMA_DEPTH:
            raise SchemaError(f"schema nesting exceeds {MAX_SCHEMA_DEPTH} levels")
        if nodes > MAX_SCHEMA_NODES:
            raise SchemaError(f"schema has more than {MAX_SCHEMA_NODES} subschemas")
        values += len(children)
        if values > MAX_SCHEMA_BYTES // 2:
            raise SchemaError(f"schema is larger than {MAX_SCHEMA_BYTES} bytes")
        stack.extend((child, depth + 1) for child in children)
    try:
        size = len(codec.dumps(schema))
    except TypeError as exc:
        raise SchemaError(f"schema is not JSON: {exc}") from None
    if size > MAX_SCHEMA_BYTES:
        raise SchemaError(f"schema is larger than {MAX_SCHEMA_BYTES} bytes")


def _expanded_size(schema: dict[str, Any]) -> int:
    """Subschemas visited when every local ``$ref`` is followed where it is used.

    A reference back to a schema already being expanded on the same path (recursion) is
    not followed again: each such round consumes a level of the instance. Stops with a
    :class:`SchemaError` as soon as the count passes ``MAX_SCHEMA_NODES``.
    """
    count = 0
    stack: list[tuple[Any, frozenset[str]]] = [(schema, frozenset())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, list):
            stack.extend((child, path) for child in node)
            continue
        if not isinstance(node, dict):
            continue
        count += 1
        if count > MAX_SCHEMA_NODES:
            raise SchemaError(
                f"schema expands to more than {MAX_SCHEMA_NODES} subschemas "
                "when its $refs are followed"
            )
        stack.extend((child, path) for child in node.values())
        ref = node.get("$ref")
        if isinstance(ref, str) and ref not in path:
            target = _resolve_local(schema, ref)
            if target is not None:
                stack.append((target, path | {ref}))
    return count


def _resolve_local(root: dict[str, Any], ref: str) -> Any:
    """The node a ``#``-pointer names inside ``root``, or None for any other reference."""
    if not ref.startswith("#"):
        return None
    pointer = unquote(ref[1:])
    if not pointer:
        return root
    if not pointer.startswith("/"):
        return None
    node: Any = root
    for token in pointer[1:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def _within(instance: Any, limit: int) -> bool:
    """True when ``instance`` holds at most ``limit`` JSON values (stops early)."""
    count = 0
    stack: list[Any] = [instance]
    while stack:
        node = stack.pop()
        count += 1
        if count > limit:
            return False
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return True


class CompiledSchema:
    """A schema compiled once; cheap to apply many times."""

    __slots__ = (
        "_cap",
        "_keys",
        "_map",
        "_properties",
        "_required",
        "_validator",
        "schema",
    )

    def __init__(self, schema: dict[str, Any]) -> None:
        if not isinstance(schema, dict):
            raise SchemaError("a schema must be a JSON object")
        _check_dialect(schema)
        _measure(schema)
        expanded = _expanded_size(schema)
        self._validator = _compile(schema)
        self.schema = schema
        self._cap = max(1, REPORT_BUDGET // expanded)
        self._map: Any = None
        self._keys: Any = None
        properties = schema.get("properties")
        self._properties: dict[str, int] = (
            {name: index for index, name in enumerate(properties)}
            if isinstance(properties, dict)
            else {}
        )
        required = schema.get("required")
        self._required: dict[str, int] = (
            {name: index for index, name in enumerate(required) if isinstance(name, str)}
            if isinstance(required, list)
            else {}
        )

    def is_valid(self, instance: Any) -> bool:
        return bool(self._validator.is_valid(instance))

    def problems(self, instance: Any) -> list[str]:
        """Every problem with ``instance``, ordered for a reader; empty when valid."""
        if self._validator.is_valid(instance):
            return []
        if _within(instance, self._cap):
            found = self._ordered(self._validator.iter_errors(instance), [])
        else:
            found = self._summary(instance)
        if len(found) > MAX_PROBLEMS:
            more = len(found) - MAX_PROBLEMS + 1
            found[MAX_PROBLEMS - 1 :] = [f"... and {more} more problems"]
        return found

    def _ordered(self, errors: Any, prefix: list[Any]) -> list[str]:
        """Sort jsonschema-rs errors: missing, other, per property, unexpected."""
        missing: list[tuple[int, str]] = []
        per_property: list[tuple[int, int, str]] = []
        unexpected: list[str] = []
        other: list[str] = []
        for seq, error in enumerate(errors):
            kind = error.kind.name
            path = prefix + list(error.instance_path)
            if not path and kind == "required":
                name = error.kind.as_dict().get("property")
                missing.append(
                    (
                        self._required.get(str(name), len(self._required)),
                        f"missing required property {_quote(name)}",
                    )
                )
            elif not path and kind == "additionalProperties":
                unexpected.extend(
                    f"unexpected property {_quote(name)}"
                    for name in error.kind.as_dict().get("unexpected", [])
                )
            elif path:
                head = str(path[0])
                order = self._properties.get(head, len(self._properties))
                per_property.append((order, seq, f"{_pointer(path)}: {_shorten(error.message)}"))
            else:
                other.append(_shorten(error.message))
        missing.sort(key=lambda item: item[0])
        per_property.sort(key=lambda item: (item[0], item[1]))
        return [m for _, m in missing] + other + [m for _, _, m in per_property] + unexpected

    def _summary(self, instance: Any) -> list[str]:
        """Problems of an instance too large to itemise: one entry per top-level property."""
        found: list[str] = []
        if isinstance(instance, dict) and (self._properties or self._required):
            found.extend(
                f"missing required property {_quote(name)}"
                for name in self._required
                if name not in instance
            )
            for name in self._properties:
                if name in instance:
                    found.extend(self._property_problems(name, instance[name]))
            found.extend(self._unexpected(instance))
        if not found:
            found.append("the value does not match the schema (too large to list each problem)")
        return found

    def _property_problems(self, name: str, value: Any) -> list[str]:
        if self._map is None:
            self._map = _compile(self.schema, as_map=True)
        pointer = "#/properties/" + name.replace("~", "~0").replace("/", "~1")
        validator = self._map.get(pointer)
        if validator is None or validator.is_valid(value):
            return []
        if _within(value, self._cap):
            return self._ordered(validator.iter_errors(value), [name])
        return [f"{_pointer([name])}: does not match its schema (too large to list each problem)"]

    def _unexpected(self, instance: dict[str, Any]) -> list[str]:
        """Unexpected properties, judged on the keys alone (values play no part)."""
        if self.schema.get("additionalProperties") is not False:
            return []
        if self._keys is None:
            patterns = self.schema.get("patternProperties")
            self._keys = _compile(
                {
                    "properties": dict.fromkeys(self._properties, True),
                    "patternProperties": (
                        dict.fromkeys(patterns, True) if isinstance(patterns, dict) else {}
                    ),
                    "additionalProperties": False,
                }
            )
        keys_only = dict.fromkeys(instance)
        return self._ordered(self._keys.iter_errors(keys_only), [])


def _compile(schema: dict[str, Any], *, as_map: bool = False) -> Any:
    """Build a jsonschema-rs validator (or a map of them by pointer) that never fetches."""
    build = jsonschema_rs.validator_map_for if as_map else jsonschema_rs.validator_for
    try:
        return build(schema, retriever=_refuse)
    except jsonschema_rs.ValidationError as exc:
        raise SchemaError(_first_line(exc.message)) from None
    except (ValueError, TypeError) as exc:
        raise SchemaError(_first_line(str(exc))) from None


def compile_schema(schema: dict[str, Any]) -> CompiledSchema:
    """Compile ``schema`` or raise :class:`SchemaError` saying why it cannot be used."""
    return CompiledSchema(schema)


def _quote(value: Any) -> str:
    return f'"{value}"'


def _pointer(path: list[Any]) -> str:
    return ".".join(str(part) if isinstance(part, str) else f"[{part}]" for part in path).replace(
        ".[", "["
    )


def _shorten(message: str) -> str:
    """Keep a problem readable when it quotes a long value: its start and its end."""
    if len(message) <= MAX_PROBLEM_CHARS:
        return message
    return f"{message[:180]} … {message[-100:]}"


def _first_line(message: str) -> str:
    return message.strip().splitlines()[0] if message.strip() else "invalid schema"
