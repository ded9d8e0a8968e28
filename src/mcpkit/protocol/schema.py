"""JSON Schema validation, compiled once, safe by default (spec ``basic/index.mdx`` §JSON
Schema Usage).

* The dialect is 2020-12 unless ``$schema`` names another one jsonschema-rs implements
  (draft 4, 6, 7, 2019-09); an unknown ``$schema`` is refused with a clear error.
* A ``$ref`` is never fetched from the network: the retriever refuses every URI, so a
  schema that needs a remote document fails to compile instead of being treated as
  permissive (§$ref Resolution).
* Schemas are bounded: at most ``MAX_SCHEMA_NODES`` subschemas and ``MAX_SCHEMA_DEPTH``
  levels (§Composition-Keyword Resource Use). jsonschema-rs validates in linear time
  what makes the pure-Python validator take seconds (``design.md`` §3.5).

:meth:`CompiledSchema.problems` lists what is wrong with an instance in the order a
model reads best: missing required properties (in ``required`` order), then problems
per property (in schema property order), then unexpected properties.
"""

from __future__ import annotations

from typing import Any, NoReturn

import jsonschema_rs

MAX_SCHEMA_NODES = 10_000
MAX_SCHEMA_DEPTH = 64

__all__ = ["CompiledSchema", "SchemaError", "compile_schema"]


class SchemaError(ValueError):
    """The schema itself is unusable (invalid, unsupported dialect, remote $ref, too big)."""


def _refuse(uri: str) -> NoReturn:
    raise ValueError(f"fetching external $ref {uri!r} is disabled")


def _measure(schema: Any) -> None:
    nodes = 0
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
        stack.extend((child, depth + 1) for child in children)


class CompiledSchema:
    """A schema compiled once; cheap to apply many times."""

    __slots__ = ("_properties", "_required", "_validator", "schema")

    def __init__(self, schema: dict[str, Any]) -> None:
        if not isinstance(schema, dict):
            raise SchemaError("a schema must be a JSON object")
        _measure(schema)
        try:
            self._validator = jsonschema_rs.validator_for(schema, retriever=_refuse)
        except jsonschema_rs.ValidationError as exc:
            raise SchemaError(_first_line(exc.message)) from None
        except (ValueError, TypeError) as exc:
            raise SchemaError(_first_line(str(exc))) from None
        self.schema = schema
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
        missing: list[tuple[int, str]] = []
        per_property: list[tuple[int, int, str]] = []
        unexpected: list[str] = []
        other: list[str] = []
        for seq, error in enumerate(self._validator.iter_errors(instance)):
            kind = error.kind.name
            path = list(error.instance_path)
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
                per_property.append((order, seq, f"{_pointer(path)}: {error.message}"))
            else:
                other.append(error.message)
        missing.sort(key=lambda item: item[0])
        per_property.sort(key=lambda item: (item[0], item[1]))
        return [m for _, m in missing] + other + [m for _, _, m in per_property] + unexpected


def compile_schema(schema: dict[str, Any]) -> CompiledSchema:
    """Compile ``schema`` or raise :class:`SchemaError` saying why it cannot be used."""
    return CompiledSchema(schema)


def _quote(value: Any) -> str:
    return f'"{value}"'


def _pointer(path: list[Any]) -> str:
    return ".".join(str(part) if isinstance(part, str) else f"[{part}]" for part in path).replace(
        ".[", "["
    )


def _first_line(message: str) -> str:
    return message.strip().splitlines()[0] if message.strip() else "invalid schema"
