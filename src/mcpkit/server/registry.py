"""What a server offers: tools, each compiled once at registration.

A :class:`Tool` holds the function, its wire definition (built once and reused for every
``tools/list``), its compiled argument and output schemas, the parameters it mirrors into
HTTP headers, and how to turn its return value into a ``CallToolResult`` (spec
``server/tools.mdx``). Registration refuses what the spec forbids: a name outside
``[A-Za-z0-9_.-]{1,128}``, an ``inputSchema`` whose root is not ``type: "object"``, an
invalid ``x-mcp-header``, unknown tool annotations.

:class:`Registry` keeps any kind of offering by key, in registration order, and tells
its listeners when the set changes (the server turns that into ``list_changed`` events).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from typing import Any, Generic, Protocol, TypeVar

from mcpkit.errors import InvalidParams, ToolError
from mcpkit.protocol import codec
from mcpkit.protocol.schema import CompiledSchema, compile_schema
from mcpkit.server.headers import header_params
from mcpkit.server.signature import FunctionInfo, UserFunction, to_json
from mcpkit.types.content import Content, ToolResult

logger = logging.getLogger("mcpkit.server")

TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
_ANNOTATION_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")

__all__ = [
    "Registry",
    "Tool",
    "call_result",
    "check_icons",
    "check_tool_annotations",
]


def check_tool_annotations(annotations: dict[str, Any] | None) -> dict[str, Any] | None:
    """``ToolAnnotations`` checked: known keys only, hints boolean, title a string."""
    if annotations is None:
        return None
    if not isinstance(annotations, dict):
        raise TypeError("tool annotations must be a dict")
    for key, value in annotations.items():
        if key in _ANNOTATION_HINTS:
            if not isinstance(value, bool):
                raise TypeError(f"tool annotation {key} must be a boolean")
        elif key == "title":
            if not isinstance(value, str):
                raise TypeError("tool annotation title must be a string")
        else:
            raise ValueError(
                f"unknown tool annotation {key!r}; expected title, {', '.join(_ANNOTATION_HINTS)}"
            )
    return dict(annotations)


def check_icons(icons: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """Icons checked: each an object with a string ``src`` (spec ``Icon``)."""
    if icons is None:
        return None
    checked: list[dict[str, Any]] = []
    for icon in icons:
        if not isinstance(icon, dict) or not isinstance(icon.get("src"), str):
            raise TypeError("each icon must be a dict with a string 'src'")
        sizes = icon.get("sizes")
        if sizes is not None and not (
            isinstance(sizes, list) and all(isinstance(size, str) for size in sizes)
        ):
            raise TypeError("icon 'sizes' must be a list of strings")
        if icon.get("theme") not in (None, "light", "dark"):
            raise ValueError("icon 'theme' must be 'light' or 'dark'")
        checked.append(dict(icon))
    return checked


class Tool(UserFunction):
    """One registered tool."""

    __slots__ = (
        "_output_validator",
        "_validator",
        "_wire",
        "annotations",
        "bind",
        "description",
        "header_names",
        "header_params",
        "icons",
        "input_schema",
        "meta",
        "name",
        "output_schema",
        "required_capabilities",
        "title",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        info: FunctionInfo,
        *,
        name: str,
        description: str | None,
        input_schema: dict[str, Any],
        title: str | None = None,
        output_schema: dict[str, Any] | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        required_capabilities: dict[str, Any] | None = None,
    ) -> None:
        if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
            raise ValueError(
                f"invalid tool name {name!r}: use 1 to 128 of A-Z a-z 0-9 _ - . "
                "(spec server/tools.mdx §Tool Names)"
            )
        if not isinstance(input_schema, dict) or input_schema.get("type") != "object":
            raise ValueError(f'tool {name!r}: inputSchema must be an object with "type": "object"')
        super().__init__(fn, info)
        self.name = name
        self.title = title
        self.description = description
        self.input_schema = input_schema
        self.output_schema = output_schema
        self.annotations = check_tool_annotations(annotations)
        self.icons = check_icons(icons)
        self.meta = meta
        self.required_capabilities = required_capabilities or {}
        self.header_params = header_params(input_schema, name)
        self.header_names = frozenset(self.header_params)
        # Validated JSON arguments -> keyword arguments for :meth:`UserFunction.call`.
        self.bind: Callable[[dict[str, Any]], dict[str, Any]] = info.binder.bind
        self._validator: CompiledSchema = compile_schema(input_schema)
        self._output_validator: CompiledSchema | None = (
            compile_schema(output_schema) if output_schema is not None else None
        )
        self._wire = self._build_wire()

    def _build_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            wire["title"] = self.title
        wire["description"] = self.description or ""
        wire["inputSchema"] = self.input_schema
        if self.output_schema is not None:
            wire["outputSchema"] = self.output_schema
        if self.annotations:
            wire["annotations"] = self.annotations
        if self.icons:
            wire["icons"] = self.icons
        if self.meta:
            wire["_meta"] = self.meta
        return wire

    @property
    def wire(self) -> dict[str, Any]:
        """The ``Tool`` object for ``tools/list``."""
        return self._wire

    def problems(self, arguments: dict[str, Any]) -> list[str]:
        """What is wrong with ``arguments``, ordered for the model; empty when valid."""
        return self._validator.problems(arguments)

    def output_problems(self, result: dict[str, Any]) -> list[str]:
        """What is wrong with a successful result given the ``outputSchema``; empty if fine.

        A tool that declares an output schema must return conforming
        ``structuredContent`` (spec ``server/tools.mdx`` §Output Schema).
        """
        validator = self._output_validator
        if validator is None or result.get("isError") is True:
            return []
        if "structuredContent" not in result:
            return ["the result has no structuredContent"]
        return validator.problems(result["structuredContent"])


class _Keyed(Protocol):
    @property
    def wire(self) -> dict[str, Any]: ...


T = TypeVar("T", bound=_Keyed)


class Registry(Generic[T]):
    """Offerings by key, in registration order (a deterministic list), with listeners.

    The wire list is cached and rebuilt only after a change, so a list request costs no
    allocation per item.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._wires: list[dict[str, Any]] | None = None
        self._listeners: list[Callable[[], None]] = []

    def add(self, key: str, item: T) -> None:
        if key in self._items:
            raise ValueError(f"a {self.kind} {key!r} is already registered")
        self._items[key] = item
        self._changed()

    def remove(self, key: str) -> T:
        try:
            item = self._items.pop(key)
        except KeyError:
            raise KeyError(f"no {self.kind} {key!r}") from None
        self._changed()
        return item

    def get(self, key: str) -> T | None:
        return self._items.get(key)

    def find(self, name: Any, method: str) -> T:
        """The item a request names; -32602 for a name that is not a string or not
        registered (spec ``server/tools.mdx`` §Error Handling, and likewise prompts)."""
        if type(name) is not str:
            raise InvalidParams(f"{method} needs a string name")
        item = self._items.get(name)
        if item is None:
            raise InvalidParams(f"Unknown {self.kind}: {name}")
        return item

    def wires(self) -> list[dict[str, Any]]:
        """The wire form of every item, in order (a shared cached list: do not mutate)."""
        wires = self._wires
        if wires is None:
            wires = self._wires = [item.wire for item in list(self._items.values())]
        return wires

    def on_change(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)

    def _changed(self) -> None:
        self._wires = None
        for listener in self._listeners:
            listener()

    def __iter__(self) -> Iterator[T]:
        return iter(list(self._items.values()))

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items


def error_result(message: str) -> dict[str, Any]:
    """A tool execution error the model can read (``isError: true``)."""
    return {"content": [{"type": "text", "text": message}], "isError": True}


def call_result(value: Any) -> dict[str, Any]:
    """Turn a tool's return value into a ``CallToolResult`` (without ``resultType``).

    ``str`` -> one text block; numbers and booleans -> their JSON text; ``None`` -> no
    content; a :class:`Content` or a list of them -> passed through; a
    :class:`ToolResult` -> exactly as given; dicts, lists, dataclasses and pydantic
    models -> ``structuredContent`` plus a text copy for clients that only read text.
    """
    kind = type(value)
    if kind is str:
        return {"content": [{"type": "text", "text": value}]}
    if kind is int or kind is float or kind is bool:
        return {"content": [{"type": "text", "text": codec.dumps(value).decode()}]}
    if value is None:
        return {"content": []}
    if isinstance(value, ToolResult):
        return _explicit(value)
    if isinstance(value, Content):
        return {"content": [value.wire]}
    if isinstance(value, list | tuple) and value and all(isinstance(v, Content) for v in value):
        return {"content": [v.wire for v in value]}
    data = to_json(value)
    return {
        "content": [{"type": "text", "text": codec.dumps(data).decode()}],
        "structuredContent": data,
    }


def _explicit(result: ToolResult) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "content": [c.wire if isinstance(c, Content) else c for c in result.content]
    }
    if result.structured is not None:
        wire["structuredContent"] = to_json(result.structured)
    if result.is_error:
        wire["isError"] = True
    if result.meta:
        wire["_meta"] = result.meta
    return wire


def exception_result(exc: BaseException, tool: str) -> dict[str, Any]:
    """The ``isError`` result for a tool that raised; unexpected exceptions are logged."""
    if not isinstance(exc, ToolError):
        logger.exception("tool %r raised", tool, exc_info=exc)
    message = str(exc) or type(exc).__name__
    return error_result(message)
